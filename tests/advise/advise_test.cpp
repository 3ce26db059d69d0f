#include "rtmem/analyze/advise.hpp"

#include <gtest/gtest.h>

#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::frame_trace;
using rtmem::testing::mixed_trace;

const recommendation& find(const advice& a, std::uint32_t site) {
    for (const auto& r : a.ranked) {
        if (r.site == site) return r;
    }
    throw std::runtime_error("site not found");
}

class Advice : public ::testing::Test {
  protected:
    mixed_trace m;
    site_map sites{m.trace};
    advice a = advise(classify(m.trace, sites));
};

TEST_F(Advice, PoolSiteGetsBlockAndCapacity) {
    const auto& r = find(a, sites.site_of(m.pool_site));
    EXPECT_EQ(r.allocator, "pool_allocator");
    EXPECT_EQ(r.block_size, 48u);
    EXPECT_EQ(r.block_align, 16u);
    EXPECT_EQ(r.capacity_blocks, 200u);
    EXPECT_EQ(r.config, "block 48 B, capacity 200");
    EXPECT_NE(r.sketch.find("rtmem::pool_allocator site_pool{48, 16, 200}"), std::string::npos);
}

TEST_F(Advice, EachClassGetsItsAllocator) {
    EXPECT_EQ(find(a, sites.site_of(m.stack_site)).allocator, "stack_allocator");
    EXPECT_EQ(find(a, sites.site_of(m.linear_site)).allocator, "linear_allocator");
    EXPECT_EQ(find(a, sites.site_of(m.long_lived_site)).allocator, "arena");
    const auto& f = find(a, sites.site_of(m.periodic_site));
    EXPECT_EQ(f.allocator, "frame_allocator<1>");
    EXPECT_EQ(f.capacity_bytes, 4096u);  // 2,384 B per period, rounded to a page
    EXPECT_EQ(find(a, sites.site_of(m.random_site)).calls_saved, 0u);  // general: no claim
}

TEST_F(Advice, LinearRemovesFreesAndStackCapacityCoversPeakDepth) {
    const auto& l = find(a, sites.site_of(m.linear_site));
    const auto& lp = *std::find_if(a.result.sites.begin(), a.result.sites.end(),
                                   [&](const site_profile& p) { return p.site == l.site; });
    EXPECT_EQ(l.frees_removed, lp.frees);
    EXPECT_GE(l.capacity_bytes, lp.bump_peak);
    EXPECT_LT(l.capacity_bytes, lp.bump_peak + 4096);
    const auto& s = find(a, sites.site_of(m.stack_site));
    const auto& sp = *std::find_if(a.result.sites.begin(), a.result.sites.end(),
                                   [&](const site_profile& p) { return p.site == s.site; });
    EXPECT_GE(s.capacity_bytes, sp.max_live_bump);
    EXPECT_NE(s.config.find("per thread"), std::string::npos);
}

TEST_F(Advice, LinearEvidenceNamesTrubsGrade) {
    EXPECT_NE(find(a, sites.site_of(m.linear_site)).evidence.find("used: linear good"),
              std::string::npos);
    // The wasteful site (25% used) becomes linear once 25% is accepted; 25% < 80%: satisfactory.
    thresholds t;
    t.linear_min_efficiency = 0.2;
    const advice relaxed = advise(classify(m.trace, sites, t));
    const auto& r = find(relaxed, sites.site_of(m.linear_bad_site));
    EXPECT_EQ(r.allocator, "linear_allocator");
    EXPECT_NE(r.evidence.find("used: linear satisfactory"), std::string::npos) << r.evidence;
    EXPECT_NE(format_json(relaxed, address_namer(sites)).find("\"linear_satisfactory\": true"), std::string::npos);
}

TEST_F(Advice, RankedByEstimatedTimeSaved) {
    ASSERT_GE(a.ranked.size(), 2u);
    for (std::size_t i = 1; i < a.ranked.size(); ++i) {
        EXPECT_GE(a.ranked[i - 1].saved_ns(), a.ranked[i].saved_ns());
    }
    EXPECT_GT(a.saved_ns, 0);
    EXPECT_LT(a.saved_ns, a.baseline_ns);
}

TEST_F(Advice, OutputsNameEverySiteAndParseableJson) {
    const auto name = address_namer(sites);
    format_options all;
    all.top = 0;
    const std::string text = format_text(a, name, all);
    EXPECT_NE(text.find("pool_allocator"), std::string::npos);
    EXPECT_NE(text.find("block 48 B, capacity 200"), std::string::npos);
    EXPECT_NE(text.find("0x431000 <- 0x432000"), std::string::npos);
    EXPECT_EQ(text.find("tlsf_allocator"), std::string::npos);  // general sites hidden by default
    const std::string json = format_json(a, name);
    EXPECT_NE(json.find("\"class\": \"pool\""), std::string::npos);
    EXPECT_NE(json.find("\"capacity_blocks\": 200"), std::string::npos);
    int depth = 0;
    for (char ch : json) {
        depth += ch == '{' || ch == '[';
        depth -= ch == '}' || ch == ']';
        ASSERT_GE(depth, 0);
    }
    EXPECT_EQ(depth, 0);
    const std::string html = format_html(a, name);
    EXPECT_EQ(html.rfind("<section id=\"advice\">", 0), 0u);
    EXPECT_NE(html.find("&lt;-"), std::string::npos);  // escaped
}

TEST(AdviceFrames, PerFrameSiteGetsFrameAllocatorWithBytesPerFrame) {
    frame_trace f;
    site_map sites(f.trace);
    const auto a = advise(classify(f.trace, sites));
    const auto& r = find(a, sites.site_of(f.per_frame_site));
    EXPECT_EQ(r.allocator, "frame_allocator<2>");
    EXPECT_EQ(r.frames, 2u);
    EXPECT_EQ(r.capacity_bytes, 12u * 1024);  // 10,080 B per frame rounded to pages
    EXPECT_EQ(r.config, "12.0 KiB per frame");
}

TEST(Units, HumanReadable) {
    EXPECT_EQ(with_commas(3200), "3,200");
    EXPECT_EQ(with_commas(1234567), "1,234,567");
    EXPECT_EQ(with_commas(12), "12");
    EXPECT_EQ(human_bytes(1536 * 1024), "1.5 MiB");
    EXPECT_EQ(human_bytes(48), "48 B");
    EXPECT_EQ(human_ns(12.3e6), "12.3 ms");
    EXPECT_EQ(human_ns(-2500.0), "-2500 ns");
    EXPECT_EQ(human_ns(std::uint64_t{9999}), "9999 ns");
    EXPECT_EQ(human_ns(std::uint64_t{10000}), "10.0 us");
}

}  // namespace
