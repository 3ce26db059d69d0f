// A planned site's price against rt_heap: its calls on either, and the pages its strategy
// touches beyond the heap (docs/advisor.md, "What a site saves against rt_heap").
#include "site_price.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../../../malloc/plan/site_strategies.hpp"
#include "../../../malloc/plan/span_arena.hpp"
#include "rtmem/analyze/units.hpp"

namespace rtmem::analyze::plan_detail {

namespace {

constexpr double page = 4096;
// A pool thread's first refill carves half its cache from the site's span and links every
// block: the cache holds 16 KiB of blocks, 8..256 of them (site_strategies.cpp).
constexpr double pool_cache_bytes = 16 << 10;
// Blocks up to this are credited for being kept together (large_page_ns).
constexpr std::uint64_t max_packed_block = 16 << 10;
// rt_heap's block: the request in 16-byte granules plus its 8-byte size slot.
constexpr double heap_block_overhead = 8;

double ceil_pages(double bytes) {
    return std::ceil(bytes / page);
}

std::string ns_text(double ns) {
    const auto whole = std::llround(ns);
    std::string t;
    if (whole < 0) t.push_back('-');
    t += with_commas(static_cast<std::uint64_t>(whole < 0 ? -whole : whole));
    t += " ns";
    return t;
}

/// Calls rt_heap's size-class lists cannot serve, the site taken alone: a list holds
/// heap_list_blocks blocks, so when the site's live count rises by more than that between two
/// drains, the rise beyond it is allocated from TLSF, and freeing it overflows the list into
/// TLSF again.
std::uint64_t list_misses(const site_profile& p, const plan_costs& c) {
    const double cycles = std::max<double>(static_cast<double>(p.drains), 1);
    const double per_cycle = static_cast<double>(p.allocations) / cycles;
    const double rise = std::min(static_cast<double>(p.max_live_count), per_cycle);
    const double misses = cycles * std::max(0.0, rise - c.heap_list_blocks);
    // A free by another thread than the allocating one goes to the owner's queue, which takes
    // it back when its list runs dry: a miss, whatever the counts.
    const double frees = static_cast<double>(p.frees);
    const double remote = std::min(static_cast<double>(p.cross_thread_frees), frees);
    return static_cast<std::uint64_t>(std::min(misses, static_cast<double>(p.allocations)) +
                                      std::min(frees, std::max(misses, remote)));
}

}  // namespace

site_price price_site(const plan_site& s, const site_profile& p, const plan_costs& c) {
    using namespace rtmem::site_plan;
    site_price out;
    out.calls = p.allocations + p.frees;
    out.large = static_cast<double>(p.mode_size) > c.heap_list_max_request;
    out.heap_misses = out.large ? out.calls : list_misses(p, c);
    const double calls = static_cast<double>(out.calls);
    const double misses = static_cast<double>(out.heap_misses);
    out.heap_ns = out.large ? calls * c.heap_large_ns
                            : (calls - misses) * c.heap_list_ns + misses * c.heap_miss_ns;
    out.strategy_ns = calls * (s.strategy == plan_strategy::pool ? c.call_ns : c.region_call_ns);

    out.heap_pages = (static_cast<double>(p.max_live_bump) +
                      heap_block_overhead * static_cast<double>(p.max_live_count)) /
                     page;
    if (s.strategy == plan_strategy::pool) {
        const double block = static_cast<double>(std::max<std::uint64_t>(s.block_size, 16));
        const double batch = std::clamp(std::floor(pool_cache_bytes / block), 8.0, 256.0) / 2;
        out.site_pages = ceil_pages(span_header_bytes +
                                    std::max(static_cast<double>(p.max_live_count), batch) * block);
        out.chunks_held = 1;
    } else if (s.strategy != plan_strategy::heap) {
        // A region (thread_stack runs as one): each block carries a size prefix; the chunk is
        // bumped until the site drains (then reused from its start) or it is full: then a new
        // span, and the full one is held until its last block is freed.
        const double chunk = static_cast<double>(
            s.chunk_bytes == 0 || s.chunk_bytes > span_bytes ? span_bytes : s.chunk_bytes);
        const double usable = chunk - span_header_bytes;
        const double allocations = std::max<double>(static_cast<double>(p.allocations), 1);
        const double mean_bump =
            static_cast<double>(bump_bytes(p.bytes / std::max<std::uint64_t>(p.allocations, 1)));
        const double with_prefix = (mean_bump + region_prefix) / mean_bump;
        const double peak = static_cast<double>(p.bump_peak) * with_prefix;
        if (peak <= usable) {
            out.chunks_held = 1;
            out.site_pages = ceil_pages(span_header_bytes + peak);
        } else {
            const double cycled = std::ceil(allocations * (mean_bump + region_prefix) / usable);
            const double live = static_cast<double>(p.max_live_bump) +
                                region_prefix * static_cast<double>(p.max_live_count);
            // Live blocks fill ceil(live / usable) chunks, one more is being bumped, and each
            // long-lived block (never freed, or living half the trace) can pin another.
            const double held =
                std::min(cycled, std::ceil(live / usable) + 1 + static_cast<double>(p.long_lived));
            out.chunks_held = static_cast<std::uint64_t>(held);
            // A chunk's pages are touched only as far as it was bumped.
            out.site_pages = std::min(held * ceil_pages(chunk),
                                      ceil_pages(allocations * (mean_bump + region_prefix)) + held);
        }
    }
    out.memory_ns = out.extra_pages() * c.page_ns;
    // Blocks above rt_heap's lists come from its TLSF heap interleaved with every other block
    // that misses a list; in the site's own spans they lie together, page after page. (A block
    // of several pages is contiguous pages on any heap: no credit.)
    if (out.large && p.mode_size <= max_packed_block) {
        out.packed_pages = static_cast<double>(p.max_live_bump) / page;
        out.packing_ns = out.packed_pages * c.large_page_ns;
    } else if (!out.large && s.strategy == plan_strategy::region && out.heap_misses > 0 &&
               (p.cls == site_class::linear || p.cls == site_class::long_lived)) {
        // Smaller blocks that pile up beyond the lists and go together (bulk-freed, or kept to
        // the end): on rt_heap they come from TLSF among whatever other sites allocated
        // meanwhile, in the region one after another in the order the program made them (a
        // parser's tree, an interpreter's arenas), which is the order it reads them back in.
        out.grouped = true;
        out.packed_pages = static_cast<double>(p.max_live_bump) / page;
        out.packing_ns = out.packed_pages * c.grouped_page_ns;
    }
    return out;
}

std::string site_price::text() const {
    char per_call[32];
    std::snprintf(per_call, sizeof per_call, "%.1f",
                  calls == 0 ? 0.0 : call_saving_ns() / static_cast<double>(calls));
    std::string t = std::string("against rt_heap: saves ") + per_call + " ns a call over " +
                    with_commas(calls) + " calls (" +
                    (large ? std::string("blocks above rt_heap's size-class lists")
                           : with_commas(heap_misses) + " of them list misses on rt_heap") +
                    ") = " + ns_text(call_saving_ns());
    char pages[32];
    std::snprintf(pages, sizeof pages, "%.1f", extra_pages());
    t += std::string("; memory: ") + pages + " pages beyond its live bytes on the heap (" +
         std::to_string(static_cast<long long>(site_pages)) + " touched";
    if (chunks_held > 1) t += ", " + with_commas(chunks_held) + " chunks held at once";
    t += ") = " + ns_text(memory_ns);
    if (packing_ns > 0) {
        std::snprintf(pages, sizeof pages, "%.1f", packed_pages);
        t += std::string("; packing: ") + pages +
             (grouped ? " pages of bulk-freed blocks kept in allocation order instead of among "
                        "other sites' TLSF blocks = "
                      : " pages of large blocks kept together instead of among rt_heap's TLSF "
                        "blocks = ") +
             ns_text(packing_ns);
    }
    t += "; net " + ns_text(net_ns());
    return t;
}

}  // namespace rtmem::analyze::plan_detail
