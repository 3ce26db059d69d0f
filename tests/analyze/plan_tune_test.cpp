// rtmem tune's steps: which plans it times, and the tuned plan it writes.
#include <gtest/gtest.h>

#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/plan_tune.hpp"

namespace rtmem::analyze {
namespace {

plan_site site(std::uint32_t id, plan_strategy s, bool placement) {
    plan_site out;
    out.id = id;
    out.strategy = s;
    out.placement_only = placement;
    out.reason = "advised";
    out.frames = {{"/usr/bin/prog", 0x100u + id}};
    out.chunk_bytes = s == plan_strategy::pool ? 0 : 65536;
    out.block_size = s == plan_strategy::pool ? 48 : 0;
    return out;
}

TEST(PlanTune, JustifiedSitesFirstThenEveryPlannedSite) {
    plan p;
    p.sites = {site(1, plan_strategy::pool, false), site(2, plan_strategy::region, true),
               site(3, plan_strategy::heap, false), site(4, plan_strategy::region, false)};
    const auto steps = tune_steps(p);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].sites, (std::vector<std::size_t>{0, 3}));
    EXPECT_EQ(steps[1].sites, (std::vector<std::size_t>{0, 1, 3}));
}

TEST(PlanTune, OneStepWhenEverySiteIsOfOneKind) {
    plan only_placement;
    only_placement.sites = {site(1, plan_strategy::region, true),
                            site(2, plan_strategy::pool, true)};
    ASSERT_EQ(tune_steps(only_placement).size(), 1u);
    EXPECT_EQ(tune_steps(only_placement)[0].name, "every planned site");
    plan no_placement;
    no_placement.sites = {site(1, plan_strategy::pool, false)};
    EXPECT_EQ(tune_steps(no_placement).size(), 1u);
    plan nothing_routed;
    nothing_routed.sites = {site(1, plan_strategy::heap, true)};
    EXPECT_TRUE(tune_steps(nothing_routed).empty());
    EXPECT_TRUE(tune_steps(plan{}).empty());
}

TEST(PlanTune, DroppedSitesGoToTheHeapWithTheReason) {
    plan p;
    p.sites = {site(1, plan_strategy::pool, false), site(2, plan_strategy::region, true),
               site(3, plan_strategy::heap, false)};
    const plan t = plan_keeping(p, {0}, "kept: faster", "left: not faster");
    ASSERT_EQ(t.sites.size(), 3u);
    EXPECT_EQ(t.sites[0].strategy, plan_strategy::pool);
    EXPECT_EQ(t.sites[0].reason, "advised; kept: faster");
    EXPECT_EQ(t.sites[1].strategy, plan_strategy::heap);
    EXPECT_EQ(t.sites[1].reason, "advised; left: not faster");
    EXPECT_TRUE(t.sites[1].placement_only);   // still says why it was planned at all
    EXPECT_EQ(t.sites[2].reason, "advised");  // already on the heap: untouched
    // The tuned plan is a valid plan file.
    const plan back = plan_from_json(plan_to_json(t));
    EXPECT_EQ(back.sites[1].strategy, plan_strategy::heap);
    EXPECT_EQ(back.sites[1].frames, p.sites[1].frames);
}

}  // namespace
}  // namespace rtmem::analyze
