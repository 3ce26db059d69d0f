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
    EXPECT_GE(r.total_ns, 0);
    EXPECT_LE(r.total_ns, r.wall_ns);  // the floor is subtracted from the wall time
    EXPECT_EQ(r.site_ns.size(), sites.size());
    EXPECT_GT(r.events_per_second, 0);
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
        EXPECT_EQ(r.repetition_ns.size(), 1u) << b.name;
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
    ASSERT_EQ(r.results.size(), 3u);  // glibc, the dispatch layer alone, the mixed replay
    EXPECT_EQ(r.results[1].name.rfind("mixed, no advice", 0), 0u);
    EXPECT_TRUE(r.results[1].violations.empty());
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

namespace {

/// Two programs with the same sites: `lifo` keeps the stack site LIFO and the pool site at 16
/// live blocks; the other frees one stack block out of order per round and holds 40 pool blocks.
rtmem::testing::synthetic_trace program(bool keeps_advice) {
    rtmem::testing::synthetic_trace t;
    const auto stack = t.add_stack({0x10, 0x11});
    const auto pool = t.add_stack({0x20, 0x21});
    std::vector<std::uint64_t> pooled;
    const std::size_t pool_live = keeps_advice ? 16 : 40;
    for (int round = 0; round < 50; ++round) {
        const auto a = t.alloc(stack, 100), b = t.alloc(stack, 200);
        t.free(b);
        const auto c = t.alloc(stack, 300);
        if (keeps_advice) {
            t.free(c);
            t.free(a);
        } else {
            t.free(a);  // while c is on top
            t.free(c);
        }
        while (pooled.size() < pool_live) pooled.push_back(t.alloc(pool, 32));
        for (int i = 0; i < 4; ++i) {
            const std::size_t k = static_cast<std::size_t>(round * 7 + i * 3) % pooled.size();
            t.free(pooled[k]);
            pooled.erase(pooled.begin() + static_cast<std::ptrdiff_t>(k));
        }
    }
    for (auto p : pooled) t.free(p);
    return t;
}

const site_violations* violations_of(const backend_result& r, std::uint32_t site) {
    for (const auto& v : r.violations) {
        if (v.site == site) return &v;
    }
    return nullptr;
}

}  // namespace

TEST(MixedReplay, BrokenAdviceIsRecordedAndFallsBackWithoutCrashing) {
    auto good = program(true);
    site_map good_sites(good);
    const auto a = advise(classify(good, good_sites));
    ASSERT_EQ(a.ranked.size(), 2u);
    for (const auto& r : a.ranked) EXPECT_NE(r.cls, site_class::general) << r.site;

    auto bad = program(false);
    site_map bad_sites(bad);
    ASSERT_EQ(bad_sites.size(), good_sites.size());
    const auto prog = compile_replay(bad, bad_sites);
    replay_options o;
    o.repetitions = 1;
    o.backends = {"glibc"};
    const auto r = replay(prog, &a, o);
    ASSERT_FALSE(r.advised.empty()) << r.results.back().note;
    const auto& mixed = r.results.back();
    EXPECT_EQ(mixed.failures, 0u);  // every block found memory somewhere
    const auto stack_site = bad_sites.site_of(1), pool_site = bad_sites.site_of(2);
    const auto* sv = violations_of(mixed, stack_site);
    const auto* pv = violations_of(mixed, pool_site);
    ASSERT_NE(sv, nullptr);
    ASSERT_NE(pv, nullptr);
    EXPECT_EQ(sv->non_lifo, 50u);  // one per round
    EXPECT_EQ(sv->reported, 0u);   // caught before the allocator saw it
    EXPECT_GT(pv->overflow, 0u);   // 40 live blocks in a pool advised for 16
    EXPECT_EQ(pv->fallbacks, pv->overflow);

    // The same advice on the program it came from is never broken.
    const auto ok = replay(compile_replay(good, good_sites), &a, o);
    for (const auto& v : ok.results.back().violations) EXPECT_EQ(v.total(), 0u) << v.site;
}
