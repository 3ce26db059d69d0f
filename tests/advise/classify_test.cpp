#include "rtmem/analyze/classify.hpp"

#include <gtest/gtest.h>

#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::frame_trace;
using rtmem::testing::mixed_trace;

const site_profile& find(const classification& c, std::uint32_t site) {
    for (const auto& p : c.sites) {
        if (p.site == site) return p;
    }
    throw std::runtime_error("site not found");
}

class MixedTrace : public ::testing::Test {
  protected:
    mixed_trace m;
    site_map sites{m.trace};
    classification c = classify(m.trace, sites);
    // Stack ids and site ids coincide here (one stack per site, depth 0).
    const site_profile& of(std::uint32_t stack) { return find(c, sites.site_of(stack)); }
};

TEST_F(MixedTrace, LifoSiteOnTwoInterleavedThreadsIsStack) {
    const auto& p = of(m.stack_site);
    EXPECT_EQ(p.cls, site_class::stack);
    EXPECT_EQ(p.lifo_frees, p.frees);  // every free was the thread's most recent block
    EXPECT_TRUE(p.multi_thread);
}

TEST_F(MixedTrace, BulkFreedSiteIsLinearGood) {
    const auto& p = of(m.linear_site);
    EXPECT_EQ(p.cls, site_class::linear);
    EXPECT_FALSE(p.linear_bad);
    EXPECT_FALSE(p.linear_satisfactory);
    EXPECT_EQ(p.bulk_frees, p.frees);
    EXPECT_GE(p.linear_efficiency(), 0.85);
    EXPECT_LT(p.lifo_fraction(), 0.2);  // freed in allocation order, not LIFO
    EXPECT_GT(p.period_cv, 0.25);       // irregular: not mistaken for a frame
}

TEST_F(MixedTrace, BulkFreedSiteThatWastesABumpAllocatorIsLinearBadAndGeneral) {
    const auto& p = of(m.linear_bad_site);
    EXPECT_EQ(p.cls, site_class::general);
    EXPECT_TRUE(p.linear_bad);
    EXPECT_DOUBLE_EQ(p.bulk_fraction(), 21.0 / 25.0);
    EXPECT_EQ(p.bump_peak, 4 * 4096 + 21 * 16u);
    EXPECT_EQ(p.max_live_bytes, 4096 + 16u);
    EXPECT_EQ(p.linear_waste(), p.bump_peak - p.max_live_bytes);
}

TEST_F(MixedTrace, FixedSizeChurnIsPoolWithExactCapacity) {
    const auto& p = of(m.pool_site);
    EXPECT_EQ(p.cls, site_class::pool);
    EXPECT_EQ(p.max_live_count, mixed_trace::pool_capacity);
    EXPECT_EQ(p.max_size, mixed_trace::pool_block);
    EXPECT_GE(p.min_size, 40u);
    EXPECT_LT(p.lifo_fraction(), 0.1);
}

TEST_F(MixedTrace, NeverFreedSiteIsLongLived) {
    const auto& p = of(m.long_lived_site);
    EXPECT_EQ(p.cls, site_class::long_lived);
    EXPECT_EQ(p.live_at_end, 50u);
    EXPECT_EQ(p.frees, 0u);
}

TEST_F(MixedTrace, RandomSiteIsGeneral) {
    const auto& p = of(m.random_site);
    EXPECT_EQ(p.cls, site_class::general);
    EXPECT_FALSE(p.linear_bad);
}

TEST_F(MixedTrace, RegularlyDrainedSiteIsFrameByDetectedPeriod) {
    const auto& p = of(m.periodic_site);
    EXPECT_EQ(p.cls, site_class::frame);
    EXPECT_TRUE(p.period_detected);
    EXPECT_DOUBLE_EQ(p.period_ns, 100'000.0);
    EXPECT_EQ(p.frame_span, 1u);
    EXPECT_EQ(p.frame_peak_bytes, mixed_trace::burst_bump);
    EXPECT_EQ(p.drains, 400u);
}

TEST_F(MixedTrace, TotalsMatchTheTrace) {
    EXPECT_EQ(c.events, m.trace.size());
    EXPECT_EQ(c.unknown_frees, 0u);
    EXPECT_EQ(c.frames, 0u);
    EXPECT_EQ(c.sites.size(), 7u);
    EXPECT_EQ(c.allocations - c.frees, 50u);  // only the long-lived blocks stay
}

TEST_F(MixedTrace, ThresholdsAreConfigurable) {
    site_profile p = of(m.stack_site);
    thresholds strict;
    strict.stack_min_lifo = 1.01;  // nothing can be this LIFO
    EXPECT_NE(decide(p, strict, false), site_class::stack);
    site_profile q = of(m.pool_site);
    strict.pool_min_churn = 1e9;
    EXPECT_EQ(decide(q, strict, false), site_class::general);
    site_profile r = of(m.linear_bad_site);
    strict.linear_min_efficiency = 0.1;  // accept more waste: now linear
    EXPECT_EQ(decide(r, strict, false), site_class::linear);
}

// Trub's grades of a bulk-freed site, by linear efficiency (peak live bytes / bump peak):
// good >= linear_good_efficiency > satisfactory >= linear_min_efficiency > bad.
TEST(LinearGrades, GoodSatisfactoryAndBadByEfficiency) {
    const auto graded = [](std::uint64_t live, std::uint64_t bump) {
        site_profile p;
        p.allocations = p.frees = p.bulk_frees = 100;
        p.bulk_runs = p.drains = 10;
        p.max_live_count = 10;
        p.max_size = p.min_size = 64;
        p.max_live_bytes = live;
        p.bump_peak = bump;
        (void)decide(p, thresholds{}, false);
        return p;
    };
    const auto good = graded(900, 1000);
    EXPECT_EQ(good.cls, site_class::linear);
    EXPECT_FALSE(good.linear_satisfactory);
    EXPECT_FALSE(good.linear_bad);
    const auto edge = graded(800, 1000);  // exactly linear_good_efficiency: good
    EXPECT_FALSE(edge.linear_satisfactory);
    const auto satisfactory = graded(600, 1000);
    EXPECT_EQ(satisfactory.cls, site_class::linear);
    EXPECT_TRUE(satisfactory.linear_satisfactory);
    EXPECT_FALSE(satisfactory.linear_bad);
    const auto low_edge = graded(500, 1000);  // exactly linear_min_efficiency: satisfactory
    EXPECT_EQ(low_edge.cls, site_class::linear);
    EXPECT_TRUE(low_edge.linear_satisfactory);
    const auto bad = graded(300, 1000);
    EXPECT_NE(bad.cls, site_class::linear);
    EXPECT_TRUE(bad.linear_bad);
    EXPECT_FALSE(bad.linear_satisfactory);
    thresholds t;
    EXPECT_TRUE(set_threshold(t, "linear_good_efficiency", 0.5));  // every linear site is good
    auto p = graded(600, 1000);
    (void)decide(p, t, false);
    EXPECT_FALSE(p.linear_satisfactory);
}

TEST_F(MixedTrace, ClassificationIsStableAcrossSeeds) {
    for (unsigned seed = 2; seed < 6; ++seed) {
        mixed_trace other(seed);
        site_map s(other.trace);
        const auto k = classify(other.trace, s);
        EXPECT_EQ(find(k, s.site_of(other.stack_site)).cls, site_class::stack) << seed;
        EXPECT_EQ(find(k, s.site_of(other.linear_site)).cls, site_class::linear) << seed;
        EXPECT_EQ(find(k, s.site_of(other.pool_site)).cls, site_class::pool) << seed;
        EXPECT_EQ(find(k, s.site_of(other.pool_site)).max_live_count, 200u) << seed;
        EXPECT_EQ(find(k, s.site_of(other.periodic_site)).cls, site_class::frame) << seed;
        EXPECT_EQ(find(k, s.site_of(other.random_site)).cls, site_class::general) << seed;
    }
}

TEST(FrameMarkers, PerFrameSiteIsFrameAllocatorTwoWithBytesPerFrame) {
    frame_trace f;
    site_map sites(f.trace);
    const auto c = classify(f.trace, sites);
    EXPECT_EQ(c.frames, 61u);
    const auto& p = find(c, sites.site_of(f.per_frame_site));
    EXPECT_EQ(p.cls, site_class::frame);
    EXPECT_FALSE(p.period_detected);
    EXPECT_EQ(p.frame_span, 2u);
    EXPECT_EQ(p.frame_peak_bytes, frame_trace::bytes_per_frame);
    EXPECT_EQ(p.frame_fit, p.allocations);
    EXPECT_EQ(find(c, sites.site_of(f.slow_site)).cls, site_class::general);
    EXPECT_EQ(find(c, sites.site_of(f.long_lived_site)).cls, site_class::long_lived);
}

TEST(SiteMap, DepthMergesStacksSharingInnerFrames) {
    rtmem::testing::synthetic_trace t;
    const auto a = t.add_stack({0x10, 0x20, 0x30});
    const auto b = t.add_stack({0x10, 0x20, 0x40});
    const auto c = t.add_stack({0x11, 0x20, 0x30});
    site_map full(t);
    EXPECT_EQ(full.size(), 4u);  // unknown + 3
    EXPECT_NE(full.site_of(a), full.site_of(b));
    site_map two(t, 2);
    EXPECT_EQ(two.site_of(a), two.site_of(b));
    EXPECT_NE(two.site_of(a), two.site_of(c));
    EXPECT_EQ(two.frames(two.site_of(a)).size(), 2u);
    EXPECT_EQ(two.site_of(9999), 0u);  // out of range: unknown
}

TEST(SiteMap, MergedSitesPoolTheirLiveCounts) {
    rtmem::testing::synthetic_trace t;
    const auto a = t.add_stack({0x10, 0x20});
    const auto b = t.add_stack({0x10, 0x30});
    std::vector<std::uint64_t> live;
    for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 5; ++i) live.push_back(t.alloc(a, 24));
        for (int i = 0; i < 5; ++i) live.push_back(t.alloc(b, 24));
        for (std::size_t i = 0; i < live.size(); i += 2) t.free(live[i]);  // every other block
        std::vector<std::uint64_t> rest;
        for (std::size_t i = 1; i < live.size(); i += 2) rest.push_back(live[i]);
        for (std::uint64_t p : rest) t.free(p);
        live.clear();
    }
    site_map merged(t, 1);
    const auto c = classify(t, merged);
    ASSERT_EQ(c.sites.size(), 1u);
    EXPECT_EQ(c.sites[0].max_live_count, 10u);
    EXPECT_EQ(c.sites[0].allocations, 200u);
}

TEST(Realloc, CountsAsFreeOfOldAndAllocationOfNew) {
    rtmem::testing::synthetic_trace t;
    const auto s = t.add_stack({0x10});
    std::uint64_t p = t.alloc(s, 16);
    for (int i = 0; i < 10; ++i) p = t.realloc(s, p, 32u * static_cast<unsigned>(i + 1));
    t.free(p);
    t.free(0xdead0);  // never allocated
    site_map m(t);
    const auto c = classify(t, m);
    ASSERT_EQ(c.sites.size(), 1u);
    EXPECT_EQ(c.sites[0].allocations, 11u);
    EXPECT_EQ(c.sites[0].reallocs, 10u);
    EXPECT_EQ(c.sites[0].frees, 11u);
    EXPECT_EQ(c.sites[0].max_live_count, 1u);
    EXPECT_EQ(c.unknown_frees, 1u);
}

}  // namespace
