#include "rtmem/analyze/replay.hpp"

#include <gtest/gtest.h>

#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::mixed_trace;

TEST(CompileReplay, DenseSlotsAndSkippedUnknownFrees) {
    rtmem::testing::synthetic_trace t;
    const auto s = t.add_stack({0x10});
    const auto a = t.alloc(s, 10);
    const auto b = t.alloc(s, 20);
    t.free(a);
    t.free(0x999990);  // never allocated
    const auto c = t.realloc(s, b, 40);
    t.free(c);
    site_map sites(t);
    const auto prog = compile_replay(t, sites);
    EXPECT_EQ(prog.events, 6u);
    EXPECT_EQ(prog.unknown_frees, 1u);
    ASSERT_EQ(prog.ops.size(), 5u);
    EXPECT_EQ(prog.slots, 2u);  // at most two blocks live at once
    EXPECT_EQ(prog.ops[3].kind, replay_op::reallocate);
    EXPECT_EQ(prog.ops[3].size, 40u);
    EXPECT_EQ(prog.peak_live_bytes, 40u + 0u + 20u - 20u);  // a freed before b grew to 40
}

TEST(Replay, GlibcReplaysEveryOperationAndTimesEverySite) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const auto prog = compile_replay(m.trace, sites);
    const auto all = whole_program_backends();
    const auto* glibc = find_backend(all, "glibc");
    ASSERT_NE(glibc, nullptr);
    ASSERT_TRUE(glibc->make) << glibc->note;
    const auto r = replay_through(prog, *glibc, 3);
    EXPECT_TRUE(r.available);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_EQ(r.repetition_ns.size(), 3u);
    EXPECT_GT(r.total_ns, 0);
    EXPECT_GE(r.wall_ns, r.total_ns * 0.5);
    double sum = 0;
    for (double ns : r.site_ns) sum += ns;
    EXPECT_GT(r.site_ns[sites.site_of(m.pool_site)], 0);
    EXPECT_NEAR(sum, r.total_ns, r.total_ns * 0.5);  // medians per site vs median of totals
}

TEST(Replay, EveryAvailablePeerReplaysWithoutFailures) {
    mixed_trace m(3, 50);
    site_map sites(m.trace);
    const auto prog = compile_replay(m.trace, sites);
    for (const auto& b : whole_program_backends()) {
        if (!b.make) continue;
        const auto r = replay_through(prog, b, 1);
        EXPECT_TRUE(r.available) << b.name;
        EXPECT_EQ(r.failures, 0u) << b.name;
        EXPECT_GT(r.total_ns, 0) << b.name;
    }
}

TEST(Replay, MixedReplayAppliesAdviceOrSaysWhyNot) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const auto a = advise(classify(m.trace, sites));
    const auto prog = compile_replay(m.trace, sites);
    replay_options o;
    o.repetitions = 1;
    o.backends = {"glibc"};
    const auto r = replay(prog, &a, o);
    ASSERT_EQ(r.results.size(), 2u);
    const auto& mixed = r.results.back();
    EXPECT_EQ(mixed.name.rfind("mixed", 0), 0u);
    EXPECT_TRUE(mixed.available);
    EXPECT_EQ(mixed.failures, 0u);
    if (r.advised.empty()) {
        EXPECT_FALSE(mixed.note.empty());  // no rtmem allocator built: it says which
    }
    for (const auto& v : mixed.violations) EXPECT_EQ(v.total(), 0u) << v.site;  // advice is valid
    const auto text = format_replay_text(r, address_namer(sites));
    EXPECT_NE(text.find("glibc"), std::string::npos);
    const auto json = format_replay_json(r, address_namer(sites));
    EXPECT_NE(json.find("\"name\": \"glibc\""), std::string::npos);
}

}  // namespace

TEST(ReplayDemo, DISABLED_Print) {
    mixed_trace m(1, 400);
    site_map sites(m.trace);
    const auto a = advise(classify(m.trace, sites));
    const auto prog = compile_replay(m.trace, sites);
    replay_options o;
    const auto r = replay(prog, &a, o);
    std::printf("%s\n%s", format_text(a, address_namer(sites)).c_str(),
                format_replay_text(r, address_namer(sites)).c_str());
}
