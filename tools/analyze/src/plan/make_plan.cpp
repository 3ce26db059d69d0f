// From advice to a plan: each advised site gets the safe strategy its class allows, sized from
// what the trace showed, where that strategy saves against rt_heap (the heap the plan runs in
// front of) net of the pages its chunks touch and of recognising it (docs/advisor.md "Plans").
#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "../../../malloc/plan/site_strategies.hpp"
#include "plan_frames.hpp"
#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/units.hpp"
#include "site_price.hpp"

namespace rtmem::analyze {

namespace {

constexpr std::uint64_t page = 4096;
constexpr std::uint64_t min_chunk = page;
constexpr std::uint64_t max_chunk = 1024 * 1024;  // a larger peak takes several chunks

std::string ns_text(double ns) {
    const auto whole = static_cast<long long>(ns);
    return std::to_string(whole) + " ns";
}

std::string number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) {
    return (std::max<std::uint64_t>(v, 1) + to - 1) / to * to;
}

/// A chunk holds `live` bytes (within [4 KiB, 1 MiB]) and at least the largest request seen.
std::uint64_t chunk_for(std::uint64_t live, std::uint64_t max_size) {
    const std::uint64_t c = round_up(std::clamp(live, min_chunk, max_chunk), page);
    return std::max(c, round_up(bump_bytes(std::min(max_size, max_chunk)), page));
}

/// A region chunk's bytes for `bytes` of blocks: each block also carries its size in front, and
/// the chunk starts with its span's header.
std::uint64_t with_prefixes(std::uint64_t bytes, const site_profile& p) {
    const std::uint64_t mean = bump_bytes(p.bytes / std::max<std::uint64_t>(p.allocations, 1));
    return site_plan::span_header_bytes + bytes +
           site_plan::region_prefix * ((bytes + mean - 1) / mean);
}

/// Requests up to this go to the site's chunks; a chunk's eighth or the largest request seen,
/// whichever is more, so a different input's somewhat larger requests still fit.
std::uint64_t max_request_for(std::uint64_t chunk, std::uint64_t max_size) {
    return std::min(chunk, std::max(max_size, chunk / 8));
}

/// Strategy, sizes and reason from the class. False: no safe strategy saves anything here.
bool choose(plan_site& s, const recommendation& r, const site_profile& p, bool markers) {
    const std::string because =
        std::string(to_string(r.cls)) + " (" + r.allocator + " " + r.config + "): " + r.evidence;
    switch (r.cls) {
        case site_class::pool:
            s.strategy = plan_strategy::pool;
            s.block_size = r.block_size;
            s.block_align = r.block_align;
            s.max_request = r.block_size;
            s.chunk_bytes = round_up(std::clamp(r.capacity_bytes, min_chunk, max_chunk), page);
            s.reason = because;
            return true;
        case site_class::stack:
            s.strategy = plan_strategy::thread_stack;
            s.chunk_bytes = chunk_for(r.capacity_bytes, p.max_size);
            s.max_request = max_request_for(s.chunk_bytes, p.max_size);
            s.reason = because + "; an out-of-order free stays correct";
            return true;
        case site_class::linear:
        case site_class::long_lived:
            s.strategy = plan_strategy::region;
            s.chunk_bytes = chunk_for(with_prefixes(p.bump_peak, p), p.max_size);
            s.max_request = max_request_for(s.chunk_bytes, p.max_size);
            s.reason = because + "; a region: a chunk is recycled when its last block is freed";
            return true;
        case site_class::frame:
            s.strategy = plan_strategy::region;
            s.chunk_bytes = chunk_for(with_prefixes(p.frame_peak_bytes, p), p.max_size);
            s.max_request = max_request_for(s.chunk_bytes, p.max_size);
            if (markers && !p.period_detected) {
                s.frame_chunks = true;
                s.reason = because +
                           "; a frame region: a new chunk at each rtmem_trace_frame(), recycled "
                           "when its last block is freed";
            } else {
                s.reason = because +
                           "; fallback: the trace has no rtmem_trace_frame() markers, so a "
                           "region whose chunks are recycled when empty instead of a frame region";
            }
            return true;
        case site_class::general:
            s.strategy = plan_strategy::heap;
            s.reason = because + "; no safe strategy beats the general heap here";
            return false;
    }
    return false;
}

plan plan_sites(const advice& a, const site_map& sites, const std::vector<module>& modules,
                const plan_options& o, const std::function<std::string(std::uint32_t)>& label) {
    plan out;
    out.program = o.program;
    out.trace = o.trace;
    out.frame_markers = a.result.frames > 0;
    const plan_detail::module_index index(modules);

    // Every allocating site's usable frames: the ones a planned site must be told apart from.
    std::unordered_map<std::uint32_t, plan_detail::usable_frames> frames;
    std::unordered_map<std::uint32_t, const site_profile*> profiles;
    std::vector<const std::vector<std::uint64_t>*> all;
    for (const auto& p : a.result.sites) {
        if (p.site == 0 || p.allocations == 0) continue;
        profiles[p.site] = &p;
        auto& f = frames[p.site] =
            plan_detail::usable(sites.frames(p.site), index, o.recorded_depth, o.site_depth);
        if (!f.ips.empty()) all.push_back(&f.ips);
    }
    const plan_detail::distinguishing_depth depth(all);

    // Candidates in the advice's order; frame0 is the innermost usable return address.
    struct candidate {
        plan_site site;
        std::uint64_t frame0 = 0;
        bool routed = false;
    };
    std::vector<candidate> candidates;
    std::unordered_map<std::uint64_t, std::uint64_t> allocations_at;  // by frame 0, every site
    for (const auto& [id, f] : frames)
        if (!f.ips.empty()) allocations_at[f.ips[0]] += profiles[id]->allocations;
    for (const auto& r : a.ranked) {
        auto pit = profiles.find(r.site);
        if (pit == profiles.end()) continue;
        const site_profile& p = *pit->second;
        const auto& f = frames[r.site];
        if (f.ips.empty()) continue;  // no frame outside the tracer and allocators to match
        candidate c;
        plan_site& s = c.site;
        s.id = r.site;
        if (label) s.label = label(r.site);
        s.allocations = p.allocations;
        s.bytes = p.bytes;
        c.frame0 = f.ips[0];
        c.routed = choose(s, r, p, out.frame_markers);
        if (c.routed) {
            // Priced against rt_heap, not the advice's glibc costs: its calls on either, and
            // the pages its spans or chunks touch beyond its live bytes on the heap.
            const plan_detail::site_price price = plan_detail::price_site(s, p, o.costs);
            s.expected_saved_ns = price.net_ns();
            if (price.net_ns() < o.costs.min_saved_ns) {
                c.routed = false;
                s.reason = "stays on the heap: " + price.text() +
                           (price.net_ns() > 0 ? " (below plan_min_saved_ns, " +
                                                     ns_text(o.costs.min_saved_ns) + ")"
                                               : "") +
                           "; " + s.reason;
            } else {
                s.reason += "; " + price.text();
            }
        }
        const auto d = depth.of(f.ips);
        if (d.whole_stack && (d.ambiguous || !f.complete)) {
            // Even every frame the trace has is shared with another site: a matcher would route
            // both. Never routed; listed as heap with the reason.
            s.reason = "its " + std::to_string(f.ips.size()) +
                       " usable frames are shared with another site (the recorded stack was cut "
                       "or identical): not planned; " +
                       s.reason;
            c.routed = false;
        } else if (c.routed && d.whole_stack) {
            s.whole_stack = true;
            s.reason += "; needs its whole stack (" + std::to_string(d.depth) +
                        " frames): a longer stack starts with the same frames";
        }
        s.frames = plan_detail::relative_frames(f.ips, d.depth, index);
        candidates.push_back(std::move(c));
    }

    // Telling sites apart beyond their first frame costs a stack walk on every allocation made
    // at that first frame, planned or not: one learned stack slot read and one table probe per
    // frame above it, up to the deepest planned site there. Where that costs more than the
    // sites there save, they stay on the heap; otherwise their expected saving is net of their
    // share of it.
    std::unordered_map<std::uint64_t, double> deep_saving;
    std::unordered_map<std::uint64_t, std::size_t> deep_levels;
    auto needs_walk = [](const candidate& c) {
        return c.site.frames.size() > 1 || c.site.whole_stack;
    };
    for (const auto& c : candidates)
        if (c.routed && needs_walk(c)) {
            deep_saving[c.frame0] += c.site.expected_saved_ns;
            auto& levels = deep_levels[c.frame0];
            levels = std::max(levels, std::max<std::size_t>(c.site.frames.size(), 2) - 1);
        }
    for (auto& c : candidates) {
        if (!c.routed || !needs_walk(c)) continue;
        const std::size_t levels = deep_levels[c.frame0];
        const double cost = o.unwind_ns * static_cast<double>(levels) *
                            static_cast<double>(allocations_at[c.frame0]);
        const double saving = deep_saving[c.frame0];
        const double share = cost * c.site.expected_saved_ns / saving;
        if (cost >= saving || c.site.expected_saved_ns - share < o.costs.min_saved_ns) {
            c.routed = false;
            const std::string walk = "a stack walk of " + std::to_string(levels) +
                                     (levels == 1 ? " frame" : " frames") + " on each of the " +
                                     std::to_string(allocations_at[c.frame0]) +
                                     " allocations made at its first frame";
            c.site.reason =
                "needs " + std::to_string(c.site.frames.size()) + " frames to be told apart: " +
                (cost >= saving
                     ? walk + " would cost more (" + ns_text(cost) + " at " +
                           number_text(o.unwind_ns) + " ns a frame) than the sites there save (" +
                           ns_text(saving) + ")"
                     : "its share of " + walk + " (" + ns_text(share) + " of " + ns_text(cost) +
                           ") leaves it under plan_min_saved_ns (" + ns_text(o.costs.min_saved_ns) +
                           ")") +
                "; " + c.site.reason;
        } else {
            c.site.expected_saved_ns -= share;
        }
    }

    // Ranked by the saving against rt_heap, largest first; the heap sites (listed with
    // --plan-heap) after them.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const candidate& x, const candidate& y) {
                         if (x.routed != y.routed) return x.routed;
                         return x.routed && x.site.expected_saved_ns > y.site.expected_saved_ns;
                     });
    // Once a plan is loaded, every call of the program probes its table: the sites planned
    // must together save more than that, or the plan stays empty.
    double calls = 0, planned_saving = 0;
    for (const auto& p : a.result.sites) calls += static_cast<double>(p.allocations + p.frees);
    std::size_t routed = 0;
    for (const auto& c : candidates)
        if (c.routed && (o.max_sites == 0 || routed++ < o.max_sites))
            planned_saving += c.site.expected_saved_ns;
    const double probe = calls * o.costs.probe_ns;
    if (planned_saving > 0 && planned_saving <= probe) {
        for (auto& c : candidates) {
            if (!c.routed) continue;
            c.routed = false;
            c.site.reason = "the plan stays empty: its sites together save " +
                            ns_text(planned_saving) + ", no more than the site probe every call " +
                            "of the program pays once a plan is loaded (" +
                            std::to_string(static_cast<long long>(calls)) + " calls at " +
                            number_text(o.costs.probe_ns) + " ns = " + ns_text(probe) + "); " +
                            c.site.reason;
        }
    }

    std::size_t chosen = 0;
    for (auto& c : candidates) {
        plan_site& s = c.site;
        if (c.routed && (o.max_sites == 0 || chosen < o.max_sites)) {
            ++chosen;
            out.depth = std::max(out.depth, static_cast<std::uint32_t>(s.frames.size()));
        } else {
            if (!o.keep_heap_sites) continue;
            s.strategy = plan_strategy::heap;
            s.block_size = s.block_align = s.chunk_bytes = s.max_request = 0;
            s.frame_chunks = s.whole_stack = false;
        }
        out.sites.push_back(std::move(s));
    }
    return out;
}

}  // namespace

plan make_plan(const advice& a, const site_map& sites, const std::vector<module>& modules,
               const plan_options& o, const std::function<std::string(std::uint32_t)>& label) {
    plan out = plan_sites(a, sites, modules, o, label);
    if (o.costs.grouped_page_ns == 0 && o.costs.large_page_ns == 0) return out;
    // The same plan without the packing credit: the sites it leaves on the heap are planned
    // only for where their blocks go (the walk and the probe included, which a site's own
    // price leaves out).
    plan_options bare = o;
    bare.costs.grouped_page_ns = bare.costs.large_page_ns = 0;
    const plan without = plan_sites(a, sites, modules, bare, {});
    for (auto& s : out.sites) {
        if (s.strategy == plan_strategy::heap) continue;
        const auto it = std::find_if(without.sites.begin(), without.sites.end(),
                                     [&](const plan_site& w) { return w.id == s.id; });
        s.placement_only = it == without.sites.end() || it->strategy == plan_strategy::heap;
    }
    return out;
}

}  // namespace rtmem::analyze
