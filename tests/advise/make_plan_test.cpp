// make_plan on synthetic traces with known sites: the strategy per class, module-relative
// frames cut to the fewest that tell a site apart, allocator frames never planned.
#include <gtest/gtest.h>

#include <algorithm>

#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::frame_trace;
using rtmem::testing::mixed_trace;
using rtmem::testing::synthetic_trace;

const std::vector<module> program_modules = {
    {"/opt/prog/bin/prog", 0x400000, 0x600000, 0x400000},
    {"/opt/prog/lib/libwork.so", 0x7f0000100000, 0x7f0000200000, 0x7f0000100000},
    {"/usr/lib/librtmem-trace.so", 0x7f0000300000, 0x7f0000340000, 0x7f0000300000},
    {"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", 0x7f0000400000, 0x7f0000440000,
     0x7f0000400000},
};

/// Costs under which every safe strategy pays (the heap as costly as glibc, memory free): for
/// the tests of strategies, sizes and frames. The price against rt_heap is tested below.
plan_options priced_like_glibc() {
    plan_options o;
    o.costs.heap_list_ns = o.costs.heap_miss_ns = o.costs.heap_large_ns = 20;
    o.costs.page_ns = o.costs.large_page_ns = 0;
    o.costs.min_saved_ns = o.costs.probe_ns = 0;
    return o;
}

plan plan_of(synthetic_trace& t, plan_options o = priced_like_glibc()) {
    site_map sites(t);
    const advice a = advise(classify(t, sites));
    return make_plan(a, sites, program_modules, o,
                     [](std::uint32_t s) { return "site " + std::to_string(s); });
}

const plan_site* find(const plan& p, std::uint32_t site) {
    for (const auto& s : p.sites)
        if (s.id == site) return &s;
    return nullptr;
}

TEST(MakePlan, EachClassGetsItsSafeStrategy) {
    mixed_trace m;
    site_map sites(m.trace);
    const plan p = plan_of(m.trace);
    const auto* pool = find(p, sites.site_of(m.pool_site));
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(pool->strategy, plan_strategy::pool);
    EXPECT_EQ(pool->block_size, 48u);  // the largest request, rounded to its alignment
    EXPECT_EQ(pool->block_align, 16u);
    EXPECT_EQ(pool->max_request, 48u);
    const auto* stack = find(p, sites.site_of(m.stack_site));
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack->strategy, plan_strategy::thread_stack);
    EXPECT_GE(stack->chunk_bytes, 4096u);
    EXPECT_GE(stack->max_request, 2000u);  // every request the trace made fits
    for (auto id : {m.linear_site, m.long_lived_site}) {
        const auto* s = find(p, sites.site_of(id));
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->strategy, plan_strategy::region);
        EXPECT_EQ(s->chunk_bytes % 4096, 0u);
        EXPECT_FALSE(s->frame_chunks);
    }
    // Long-lived: 50 blocks of up to 4000 B never freed; one chunk holds them (up to 1 MiB).
    const auto* kept = find(p, sites.site_of(m.long_lived_site));
    EXPECT_GE(kept->chunk_bytes, 50u * 16);
    EXPECT_LE(kept->chunk_bytes, 1024u * 1024);
    // The general sites (random, linear bad) save nothing: not in the plan.
    EXPECT_EQ(find(p, sites.site_of(m.random_site)), nullptr);
    EXPECT_EQ(find(p, sites.site_of(m.linear_bad_site)), nullptr);
    for (const auto& s : p.sites) EXPECT_GT(s.expected_saved_ns, 0) << s.label;
    EXPECT_EQ(p.sites.size(), 5u);
    // Ranked by the expected saving, largest first.
    for (std::size_t i = 1; i < p.sites.size(); ++i)
        EXPECT_GE(p.sites[i - 1].expected_saved_ns, p.sites[i].expected_saved_ns);
}

TEST(MakePlan, FrameSiteWithoutMarkersFallsBackToRegionAndSaysSo) {
    mixed_trace m;  // the periodic burst: frame class by its drain period, no markers
    site_map sites(m.trace);
    const plan p = plan_of(m.trace);
    EXPECT_FALSE(p.frame_markers);
    const auto* s = find(p, sites.site_of(m.periodic_site));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->strategy, plan_strategy::region);
    EXPECT_FALSE(s->frame_chunks);
    EXPECT_NE(s->reason.find("fallback"), std::string::npos) << s->reason;
    EXPECT_NE(s->reason.find("rtmem_trace_frame()"), std::string::npos) << s->reason;
    EXPECT_GE(s->chunk_bytes, mixed_trace::burst_bump);
}

TEST(MakePlan, FrameSiteWithMarkersGetsAFrameRegion) {
    frame_trace f;
    site_map sites(f.trace);
    const plan p = plan_of(f.trace);
    EXPECT_TRUE(p.frame_markers);
    const auto* s = find(p, sites.site_of(f.per_frame_site));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->strategy, plan_strategy::region);
    EXPECT_TRUE(s->frame_chunks);
    EXPECT_EQ(s->reason.find("fallback"), std::string::npos) << s->reason;
    EXPECT_GE(s->chunk_bytes, frame_trace::bytes_per_frame);
    EXPECT_EQ(find(p, sites.site_of(f.slow_site)), nullptr);  // general
}

TEST(MakePlan, FramesAreModuleRelative) {
    mixed_trace m;
    site_map sites(m.trace);
    const plan p = plan_of(m.trace);
    const auto* pool = find(p, sites.site_of(m.pool_site));
    ASSERT_NE(pool, nullptr);
    ASSERT_EQ(pool->frames.size(), 1u);  // the innermost frames differ between all sites
    EXPECT_EQ(pool->frames[0].module, "/opt/prog/bin/prog");
    EXPECT_EQ(pool->frames[0].offset, 0x431000u - 0x400000u);
    EXPECT_EQ(p.depth, 1u);
}

/// A site with pool behaviour: 10 live blocks of `size`, 200 replaced in turn.
void churn(synthetic_trace& t, std::uint32_t stack, std::uint64_t size) {
    std::vector<std::uint64_t> live;
    for (int i = 0; i < 10; ++i) live.push_back(t.alloc(stack, size));
    for (int i = 0; i < 200; ++i) {
        const std::size_t k = static_cast<std::size_t>(i * 7) % live.size();
        t.free(live[k]);
        live[k] = t.alloc(stack, size);
    }
    for (auto q : live) t.free(q);
}

TEST(MakePlan, EachSiteKeepsTheFewestFramesThatTellItApart) {
    synthetic_trace t;
    // A helper (0x401000) called from two places (0x402000 then two callers, and 0x405000).
    const auto a = t.add_stack({0x401000, 0x402000, 0x403000});
    const auto b = t.add_stack({0x401000, 0x402000, 0x404000});
    const auto c = t.add_stack({0x401000, 0x405000});
    // d's whole stack is the start of e's: d is only told apart by ending there.
    const auto d = t.add_stack({0x406000});
    const auto e = t.add_stack({0x406000, 0x407000});
    // f differs at its first frame but g, a general site, must still be told apart from h.
    const auto g = t.add_stack({0x408000, 0x409000});
    const auto h = t.add_stack({0x408000, 0x40a000});
    for (auto s : {a, b, c, d, e, h}) churn(t, s, 32);
    t.free(t.alloc(g, 100));  // too few allocations: general, never planned
    site_map sites(t);
    plan_options free_unwind = priced_like_glibc();
    free_unwind.unwind_ns = 0;  // the recognition cost is tested below
    const plan p = plan_of(t, free_unwind);
    auto depth_of = [&](std::uint32_t stack) {
        const auto* s = find(p, sites.site_of(stack));
        return s == nullptr ? std::size_t{99} : s->frames.size();
    };
    EXPECT_EQ(depth_of(a), 3u);
    EXPECT_EQ(depth_of(b), 3u);
    EXPECT_EQ(depth_of(c), 2u);
    EXPECT_EQ(depth_of(d), 1u);
    EXPECT_EQ(depth_of(e), 2u);
    EXPECT_EQ(depth_of(h), 2u);  // apart from g, although g is not planned
    EXPECT_TRUE(find(p, sites.site_of(d))->whole_stack);
    EXPECT_NE(find(p, sites.site_of(d))->reason.find("whole stack"), std::string::npos);
    EXPECT_FALSE(find(p, sites.site_of(e))->whole_stack);
    EXPECT_FALSE(find(p, sites.site_of(a))->whole_stack);
    EXPECT_EQ(p.depth, 3u);
}

TEST(MakePlan, MergedSitesAreToldApartAtTheirMergeDepth) {
    synthetic_trace t;
    const auto ab1 = t.add_stack({0x401000, 0x402000, 0x403000});
    const auto ab2 = t.add_stack({0x401000, 0x402000, 0x404000});  // merged with ab1 at depth 2
    const auto a = t.add_stack({0x401000});                          // a stack that ends there
    for (auto s : {ab1, ab2, a}) churn(t, s, 48);
    site_map sites(t, 2);
    const advice adv = advise(classify(t, sites));
    plan_options o = priced_like_glibc();
    o.site_depth = 2;
    o.unwind_ns = 0;
    const plan p = make_plan(adv, sites, program_modules, o);
    ASSERT_EQ(p.sites.size(), 2u);
    const auto* merged = find(p, sites.site_of(ab1));
    ASSERT_NE(merged, nullptr);
    EXPECT_EQ(merged->frames.size(), 2u);
    EXPECT_FALSE(merged->whole_stack);
    EXPECT_EQ(merged->allocations, 2 * 210u);  // both stacks' calls
    const auto* shorter = find(p, sites.site_of(a));
    ASSERT_NE(shorter, nullptr);
    EXPECT_EQ(shorter->frames.size(), 1u);
    EXPECT_TRUE(shorter->whole_stack);
}

TEST(MakePlan, TracerAndAllocatorFramesAreNeverPlanned) {
    synthetic_trace t;
    // Innermost frames inside the tracer and mimalloc: dropped; the caller is frames[0].
    const auto a = t.add_stack({0x7f0000300100, 0x7f0000400200, 0x401000, 0x402000});
    // A libwork.so frame, then an allocator frame further out: the stack is cut there, so the
    // site has one usable frame, shared with b2: only the whole (cut) stack could tell them
    // apart, which a cut stack cannot: not planned.
    const auto b1 = t.add_stack({0x7f0000100500, 0x7f0000300100, 0x403000});
    const auto b2 = t.add_stack({0x7f0000100500, 0x404000});
    // Only allocator frames: nothing to recognise it by.
    const auto c = t.add_stack({0x7f0000300100, 0x7f0000400200});
    for (auto s : {a, b1, b2, c}) churn(t, s, 64);
    site_map sites(t);
    plan_options free_unwind = priced_like_glibc();
    free_unwind.unwind_ns = 0;
    const plan p = plan_of(t, free_unwind);
    for (const auto& s : p.sites)
        for (const auto& f : s.frames) EXPECT_FALSE(allocator_module(f.module)) << f.module;
    const auto* pa = find(p, sites.site_of(a));
    ASSERT_NE(pa, nullptr);
    ASSERT_EQ(pa->frames.size(), 1u);
    EXPECT_EQ(pa->frames[0], (plan_frame{"/opt/prog/bin/prog", 0x1000}));
    EXPECT_EQ(find(p, sites.site_of(b1)), nullptr);
    const auto* pb2 = find(p, sites.site_of(b2));
    ASSERT_NE(pb2, nullptr);
    EXPECT_EQ(pb2->frames.size(), 2u);
    EXPECT_EQ(pb2->frames[0].module, "/opt/prog/lib/libwork.so");
    EXPECT_EQ(pb2->frames[0].offset, 0x500u);
    EXPECT_EQ(find(p, sites.site_of(c)), nullptr);
    // With --plan-heap the unplannable site is listed as heap, with the reason.
    plan_options o = priced_like_glibc();
    o.keep_heap_sites = true;
    o.unwind_ns = 0;
    const plan q = plan_of(t, o);
    const auto* qb1 = find(q, sites.site_of(b1));
    ASSERT_NE(qb1, nullptr);
    EXPECT_EQ(qb1->strategy, plan_strategy::heap);
    EXPECT_NE(qb1->reason.find("shared with another site"), std::string::npos) << qb1->reason;
}

TEST(MakePlan, SitesNeedingAnUnwindArePlannedOnlyWhereTheSavingPaysForIt) {
    synthetic_trace t;
    const auto a = t.add_stack({0x401000, 0x402000});  // a helper called from two places
    const auto b = t.add_stack({0x401000, 0x403000});
    const auto c = t.add_stack({0x404000});  // its own first frame: no unwind needed
    for (auto s : {a, b, c}) churn(t, s, 32);
    site_map sites(t);
    // Each pool site's 420 calls save 420 x (20 - plan_call_ns 4.6) = 6,468 ns at these costs;
    // a one-frame stack walk on each of the 420 allocations at 0x401000 costs 420 x unwind_ns.
    plan_options o = priced_like_glibc();
    const double saving = 420 * (20 - o.costs.call_ns);
    o.unwind_ns = 150;  // 63,000 ns > 12,936 ns: a and b stay on the heap
    o.keep_heap_sites = true;
    plan p = plan_of(t, o);
    EXPECT_EQ(find(p, sites.site_of(a))->strategy, plan_strategy::heap);
    EXPECT_NE(find(p, sites.site_of(a))->reason.find(
                  "a stack walk of 1 frame on each of the 420 allocations"),
              std::string::npos)
        << find(p, sites.site_of(a))->reason;
    EXPECT_EQ(find(p, sites.site_of(b))->strategy, plan_strategy::heap);
    EXPECT_EQ(find(p, sites.site_of(c))->strategy, plan_strategy::pool);
    EXPECT_EQ(p.depth, 1u);
    o.unwind_ns = 10;  // 4,200 ns < 12,936 ns: planned, each saving net of half the cost
    p = plan_of(t, o);
    const auto* pa = find(p, sites.site_of(a));
    EXPECT_EQ(pa->strategy, plan_strategy::pool);
    EXPECT_NEAR(pa->expected_saved_ns, saving - 2100.0, 1e-6);
    EXPECT_NEAR(find(p, sites.site_of(c))->expected_saved_ns, saving, 1e-6);
    EXPECT_EQ(p.depth, 2u);
    // A walk that leaves a site's share under plan_min_saved_ns also keeps it on the heap.
    o.costs.min_saved_ns = 5000;
    p = plan_of(t, o);
    EXPECT_EQ(find(p, sites.site_of(a))->strategy, plan_strategy::heap);
    EXPECT_NE(find(p, sites.site_of(a))->reason.find(
                  "its share of a stack walk of 1 frame on each of the 420 allocations made at its "
                  "first frame (2100 ns of 4200 ns) leaves it under plan_min_saved_ns (5000 ns)"),
              std::string::npos)
        << find(p, sites.site_of(a))->reason;
    EXPECT_EQ(find(p, sites.site_of(c))->strategy, plan_strategy::pool);
    EXPECT_EQ(p.depth, 1u);
}

TEST(MakePlan, AllocatorModulesByName) {
    EXPECT_TRUE(allocator_module("/usr/lib/librtmem-trace.so"));
    EXPECT_TRUE(allocator_module("/x/build/tools/malloc/librtmem-malloc.so"));
    EXPECT_TRUE(allocator_module("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0"));
    EXPECT_TRUE(allocator_module("libjemalloc.so.2"));
    EXPECT_TRUE(allocator_module("/usr/lib/libtcmalloc_minimal.so.4"));
    EXPECT_FALSE(allocator_module("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    EXPECT_FALSE(allocator_module("/usr/bin/python3.11"));
}

TEST(MakePlan, MaxSitesKeepsTheBestAndHeapSitesOnRequest) {
    mixed_trace m;
    plan_options o = priced_like_glibc();
    o.max_sites = 2;
    const plan best = plan_of(m.trace, o);
    const plan all = plan_of(m.trace);
    ASSERT_EQ(best.sites.size(), 2u);
    EXPECT_EQ(best.sites[0].id, all.sites[0].id);
    EXPECT_EQ(best.sites[1].id, all.sites[1].id);
    o = priced_like_glibc();
    o.keep_heap_sites = true;
    const plan with_heap = plan_of(m.trace, o);
    site_map sites(m.trace);
    const auto* random = find(with_heap, sites.site_of(m.random_site));
    ASSERT_NE(random, nullptr);
    EXPECT_EQ(random->strategy, plan_strategy::heap);
    EXPECT_NE(random->reason.find("general"), std::string::npos);
    EXPECT_EQ(random->chunk_bytes, 0u);
    // The plan survives its own file format.
    const plan back = plan_from_json(plan_to_json(with_heap));
    EXPECT_EQ(back.sites.size(), with_heap.sites.size());
}

// ---- priced against rt_heap (the default costs) ---------------------------------------------

plan_options against_rt_heap() {
    plan_options o;
    o.keep_heap_sites = true;
    o.unwind_ns = 0;
    return o;
}

TEST(MakePlanAgainstRtHeap, ASiteThatSavesAgainstGlibcButNotRtHeapStaysOnTheHeapAndSaysWhy) {
    synthetic_trace t;
    const auto pool_like = t.add_stack({0x401000});  // 10 live blocks of 32 B, replaced in turn
    for (int round = 0; round < 50; ++round) churn(t, pool_like, 32);
    site_map sites(t);
    const advice a = advise(classify(t, sites));
    ASSERT_FALSE(a.ranked.empty());
    EXPECT_GT(a.ranked.front().saved_ns(), 0);  // the advice's glibc costs: a saving
    const plan p = plan_of(t, against_rt_heap());
    const auto* s = find(p, sites.site_of(pool_like));
    ASSERT_NE(s, nullptr);
    // rt_heap's size-class lists serve every call (never more than 10 live): a planned call
    // costs more than the list's pop or push, and the pool's span touches pages of its own.
    EXPECT_EQ(s->strategy, plan_strategy::heap);
    EXPECT_LT(s->expected_saved_ns, 0);
    // plan_heap_list_ns 4.0 - plan_call_ns 4.6 (docs/advisor.md, bench/plan_run/plan_costs.py)
    EXPECT_NE(s->reason.find("stays on the heap: against rt_heap: saves -0.6 ns a call over "
                             "21,000 calls (0 of them list misses on rt_heap)"),
              std::string::npos)
        << s->reason;
    EXPECT_NE(s->reason.find("memory: "), std::string::npos) << s->reason;
    EXPECT_NE(s->reason.find("pool ("), std::string::npos) << s->reason;  // and its class
    EXPECT_EQ(p.depth, 0u);
}

TEST(MakePlanAgainstRtHeap, AThreadStackOfOneLiveBlockStaysOnTheHeapUnlessTheHeapCostsMore) {
    synthetic_trace t;
    const auto scratch = t.add_stack({0x401000});
    for (int i = 0; i < 50000; ++i) t.free(t.alloc(scratch, 40));  // one block live at a time
    site_map sites(t);
    plan p = plan_of(t, against_rt_heap());
    const auto* s = find(p, sites.site_of(scratch));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->strategy, plan_strategy::heap) << s->reason;
    // plan_heap_list_ns 4.0 - plan_region_call_ns 4.9
    EXPECT_NE(s->reason.find("saves -0.9 ns a call over 100,000 calls"), std::string::npos)
        << s->reason;
    EXPECT_NE(s->reason.find("stack ("), std::string::npos) << s->reason;
    // Its calls are many: were rt_heap's list as slow as glibc's malloc, it would pay.
    plan_options o = against_rt_heap();
    ASSERT_TRUE(set_plan_cost(o.costs, "plan_heap_list_ns", 20));
    p = plan_of(t, o);
    EXPECT_EQ(find(p, sites.site_of(scratch))->strategy, plan_strategy::thread_stack);
}

/// Bursts of `blocks` blocks of `size` B freed in reverse; with `keep`, the first block of each
/// burst is never freed (it pins the chunk it was bumped into).
void bursts(synthetic_trace& t, std::uint32_t stack, int n, int blocks, std::uint64_t size,
            bool keep) {
    for (int r = 0; r < n; ++r) {
        std::vector<std::uint64_t> b;
        for (int i = 0; i < blocks; ++i) b.push_back(t.alloc(stack, size));
        for (int i = blocks - 1; i >= (keep ? 1 : 0); --i) t.free(b[static_cast<std::size_t>(i)]);
    }
}

TEST(MakePlanAgainstRtHeap, BurstsBeyondTheHeapsListsArePlannedAsRegions) {
    synthetic_trace t;
    const auto burst = t.add_stack({0x401000});
    bursts(t, burst, 200, 256, 64, false);  // 256 live at a time: rt_heap's lists hold 32
    site_map sites(t);
    const plan p = plan_of(t, against_rt_heap());
    const auto* s = find(p, sites.site_of(burst));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->strategy, plan_strategy::region) << s->reason;
    // (256 - 32) x 2 of each burst's 512 calls miss the lists: 89,600 of 102,400.
    EXPECT_NE(s->reason.find("over 102,400 calls (89,600 of them list misses on rt_heap)"),
              std::string::npos)
        << s->reason;
    EXPECT_GE(s->expected_saved_ns, plan_costs{}.min_saved_ns);
    EXPECT_FALSE(s->placement_only);  // its calls pay for it
    // The chunk holds a burst's blocks with their size prefixes: one chunk, reused.
    EXPECT_GE(s->chunk_bytes, 256u * (64 + 16));
    EXPECT_EQ(s->reason.find("chunks held at once"), std::string::npos) << s->reason;
    // Were the probe every call pays with a plan loaded dearer than that saving, no plan.
    plan_options o = against_rt_heap();
    o.costs.probe_ns = 10;  // 102,400 calls: 1,024,000 ns
    const plan empty = plan_of(t, o);
    EXPECT_EQ(empty.depth, 0u);
    const auto* e = find(empty, sites.site_of(burst));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->strategy, plan_strategy::heap);
    EXPECT_NE(e->reason.find("the plan stays empty"), std::string::npos) << e->reason;
    EXPECT_NE(e->reason.find("102400 calls at 10 ns = 1024000 ns"), std::string::npos)
        << e->reason;
}

TEST(MakePlanAgainstRtHeap, ATreeOfSmallBlocksFreedTogetherIsCreditedForItsOrder) {
    // A parser's tree: 50,000 nodes of 64 B, each followed by a string from another site, all
    // freed at the end. rt_heap's lists hold 32 blocks, so nearly every call misses them.
    synthetic_trace t;
    const auto node = t.add_stack({0x401000});
    const auto text = t.add_stack({0x402000});
    std::vector<std::uint64_t> nodes, texts;
    for (int i = 0; i < 50000; ++i) {
        nodes.push_back(t.alloc(node, 64));
        texts.push_back(t.alloc(text, 24 + static_cast<std::uint64_t>(i % 5) * 16));
    }
    for (auto q : nodes) t.free(q);
    for (auto q : texts) t.free(q);
    site_map sites(t);
    // Calls that cost the same on the region as a list miss on rt_heap: only the order pays.
    plan_options o = against_rt_heap();
    o.costs.region_call_ns = o.costs.heap_miss_ns;
    o.costs.grouped_page_ns = 1500;
    const plan p = plan_of(t, o);
    const auto* s = find(p, sites.site_of(node));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->strategy, plan_strategy::region) << s->reason;
    // 50,000 x 64 B = 781.25 pages, each credited 1,500 ns.
    EXPECT_NE(s->reason.find("packing: 781.2 pages of bulk-freed blocks kept in allocation order"),
              std::string::npos)
        << s->reason;
    EXPECT_TRUE(s->placement_only);  // the order is all it is planned for
    // Without the credit the same site saves nothing and stays on the heap.
    o.costs.grouped_page_ns = 0;
    const plan none = plan_of(t, o);
    const auto* h = find(none, sites.site_of(node));
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->strategy, plan_strategy::heap) << h->reason;
    EXPECT_EQ(h->reason.find("packing: "), std::string::npos) << h->reason;
}

TEST(MakePlanAgainstRtHeap, ChunksPinnedByLongLivedBlocksAreChargedAndKeepTheSiteOnTheHeap) {
    synthetic_trace t;
    // Blocks above rt_heap's lists (3,000 B), 100 a burst: the same calls at both sites; the
    // second keeps one block of every burst forever.
    const auto freed = t.add_stack({0x401000});
    const auto pinned = t.add_stack({0x402000});
    bursts(t, freed, 300, 100, 3000, false);
    bursts(t, pinned, 300, 100, 3000, true);
    site_map sites(t);
    const plan p = plan_of(t, against_rt_heap());
    const auto* f = find(p, sites.site_of(freed));
    const auto* k = find(p, sites.site_of(pinned));
    ASSERT_NE(f, nullptr);
    ASSERT_NE(k, nullptr);
    EXPECT_NE(f->strategy, plan_strategy::heap) << f->reason;
    EXPECT_NE(f->reason.find("blocks above rt_heap's size-class lists"), std::string::npos);
    EXPECT_NE(f->reason.find("packing: "), std::string::npos) << f->reason;
    // Each kept block holds its chunk (bumped full) until the end: hundreds of chunks.
    EXPECT_EQ(k->strategy, plan_strategy::heap) << k->reason;
    EXPECT_NE(k->reason.find("chunks held at once"), std::string::npos) << k->reason;
    EXPECT_LT(k->expected_saved_ns, 0);
}

TEST(MakePlanAgainstRtHeap, FreesFromAnotherThreadMissTheHeapsLists) {
    synthetic_trace t;
    const auto local = t.add_stack({0x401000});
    const auto handed_over = t.add_stack({0x402000});  // allocated on thread 0, freed on 1
    for (int i = 0; i < 30000; ++i) {
        t.free(t.alloc(local, 48));
        t.free(t.alloc(handed_over, 48), 1);
    }
    site_map sites(t);
    const plan p = plan_of(t, against_rt_heap());
    const auto* l = find(p, sites.site_of(local));
    const auto* h = find(p, sites.site_of(handed_over));
    ASSERT_NE(l, nullptr);
    ASSERT_NE(h, nullptr);
    EXPECT_NE(l->reason.find("(0 of them list misses on rt_heap)"), std::string::npos)
        << l->reason;
    EXPECT_NE(h->reason.find("(30,000 of them list misses on rt_heap)"), std::string::npos)
        << h->reason;
    EXPECT_GT(h->expected_saved_ns, l->expected_saved_ns);
}

TEST(MakePlanAgainstRtHeap, PlanCostsAreSetByName) {
    plan_costs c;
    EXPECT_TRUE(set_plan_cost(c, "plan_page_ns", 500));
    EXPECT_EQ(c.page_ns, 500);
    EXPECT_TRUE(set_plan_cost(c, "plan_region_call_ns", 6));
    EXPECT_TRUE(set_plan_cost(c, "plan_grouped_page_ns", 0));
    EXPECT_EQ(c.grouped_page_ns, 0);
    EXPECT_EQ(c.region_call_ns, 6);
    EXPECT_FALSE(set_plan_cost(c, "page_ns", 1));
    EXPECT_FALSE(set_plan_cost(c, "malloc_ns", 1));  // the advice's cost model, not the plan's
    const auto names = plan_cost_names();
    EXPECT_EQ(names.size(), 12u);
    for (auto n : names) EXPECT_EQ(n.substr(0, 5), "plan_") << n;
}

}  // namespace
