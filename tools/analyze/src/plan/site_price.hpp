// What planning a site is worth against the general heap the plan runs in front of (rt_heap
// under `rtmem run --plan`): its calls priced on rt_heap and on the strategy, and the pages the
// strategy's chunks touch beyond what the site's live blocks would on the heap
// (docs/advisor.md, "What a site saves against rt_heap").
#pragma once
#include <cstdint>
#include <string>

#include "rtmem/analyze/classify.hpp"
#include "rtmem/analyze/plan.hpp"

namespace rtmem::analyze::plan_detail {

struct site_price {
    std::uint64_t calls = 0;        ///< allocations and frees of the site in the trace
    std::uint64_t heap_misses = 0;  ///< of them, calls rt_heap's size-class lists cannot serve
    bool large = false;             ///< blocks above the lists' largest: TLSF on every call
    double heap_ns = 0;             ///< the calls on rt_heap
    double strategy_ns = 0;         ///< the calls on the plan's strategy
    double site_pages = 0;          ///< pages the strategy's spans or chunks touch at most
    double heap_pages = 0;          ///< pages the site's live blocks take on the heap
    std::uint64_t chunks_held = 0;  ///< region: chunks held at once (pinned by live blocks)
    double memory_ns = 0;           ///< (site_pages - heap_pages) x page_ns, at least 0
    double packed_pages = 0;        ///< large or grouped blocks: pages of them kept together
    bool grouped = false;           ///< packed_pages are of bulk-freed blocks below the lists
    double packing_ns = 0;          ///< packed_pages x large_page_ns (grouped_page_ns)

    [[nodiscard]] double call_saving_ns() const noexcept { return heap_ns - strategy_ns; }
    [[nodiscard]] double net_ns() const noexcept {
        return call_saving_ns() - memory_ns + packing_ns;
    }
    [[nodiscard]] double extra_pages() const noexcept {
        return site_pages > heap_pages ? site_pages - heap_pages : 0;
    }
    /// "against rt_heap: saves 4.1 ns a call over 3,000 calls (2,800 list misses on rt_heap) =
    /// 12,300 ns; memory: 2 pages beyond its live bytes (chunks of 4 KiB, 2 held at once) =
    /// 4,000 ns; net 8,300 ns"
    [[nodiscard]] std::string text() const;
};

/// The price of planning `s` (its strategy and sizes chosen) for the site profiled as `p`.
[[nodiscard]] site_price price_site(const plan_site& s, const site_profile& p, const plan_costs& c);

}  // namespace rtmem::analyze::plan_detail
