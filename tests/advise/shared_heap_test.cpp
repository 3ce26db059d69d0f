// General sites shared across threads get rt_heap; single-threaded ones keep tlsf_allocator; the
// rt_heap replay backend is listed and replays multi-threaded traces.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <random>

#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/replay.hpp"
#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::synthetic_trace;

/// Three general sites (random sizes 16..8192 B, random free order, up to 100 live):
/// `handed_over` allocates on thread 0 and thread 1 frees, `per_thread` allocates and frees on
/// threads 0 and 1 (each its own blocks), `single` stays on thread 0.
struct shared_trace {
    synthetic_trace trace;
    std::uint32_t handed_over = trace.add_stack({0x610000, 0x611000});
    std::uint32_t per_thread = trace.add_stack({0x620000, 0x621000});
    std::uint32_t single = trace.add_stack({0x630000, 0x631000});

    shared_trace() {
        std::mt19937 rng(7);
        std::vector<std::uint64_t> live[4];  // handed_over, per_thread t0, per_thread t1, single
        auto take = [&](std::vector<std::uint64_t>& v) {
            const std::size_t i = std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng);
            const std::uint64_t p = v[i];
            v[i] = v.back();
            v.pop_back();
            return p;
        };
        auto size = [&] { return std::uniform_int_distribution<std::uint64_t>(16, 8192)(rng); };
        auto step = [&](std::vector<std::uint64_t>& v, std::uint32_t stack, std::uint32_t by,
                        std::uint32_t freed_by) {
            if (!v.empty() && (v.size() >= 100 || rng() % 2 == 0))
                trace.free(take(v), freed_by);
            else
                v.push_back(trace.alloc(stack, size(), by));
        };
        for (int i = 0; i < 2000; ++i) {
            step(live[0], handed_over, 0, 1);
            step(live[1], per_thread, 0, 0);
            step(live[2], per_thread, 1, 1);
            step(live[3], single, 0, 0);
        }
        while (!live[0].empty()) trace.free(take(live[0]), 1);
        for (std::uint32_t t = 0; t < 2; ++t) {
            while (!live[1 + t].empty()) trace.free(take(live[1 + t]), t);
        }
        while (!live[3].empty()) trace.free(take(live[3]), 0);
    }
};

const recommendation& find(const advice& a, std::uint32_t site) {
    for (const auto& r : a.ranked) {
        if (r.site == site) return r;
    }
    throw std::runtime_error("site not found");
}

const site_profile& profile(const advice& a, std::uint32_t site) {
    for (const auto& p : a.result.sites) {
        if (p.site == site) return p;
    }
    throw std::runtime_error("site not found");
}

class SharedHeapAdvice : public ::testing::Test {
  protected:
    shared_trace s;
    site_map sites{s.trace};
    advice a = advise(classify(s.trace, sites));
};

TEST_F(SharedHeapAdvice, SiteFreedByAnotherThreadGetsRtHeap) {
    const auto id = sites.site_of(s.handed_over);
    const auto& p = profile(a, id);
    EXPECT_EQ(p.cls, site_class::general);
    EXPECT_FALSE(p.multi_thread);
    EXPECT_EQ(p.cross_thread_frees, p.frees);
    const auto& r = find(a, id);
    EXPECT_EQ(r.allocator, "rt_heap");
    EXPECT_NE(r.evidence.find("shared across threads: " + with_commas(p.frees) + " of " +
                              with_commas(p.frees) + " frees by another thread"),
              std::string::npos)
        << r.evidence;
    EXPECT_EQ(r.evidence.find("allocated on several threads"), std::string::npos);
    EXPECT_NE(r.sketch.find("rtmem::rt_heap shared_heap;"), std::string::npos);
    EXPECT_EQ(r.calls_saved, 0u);  // a bound, not a saving, is claimed
    EXPECT_EQ(r.saved_ns(), 0.0);
    EXPECT_EQ(r.capacity_bytes % (1024 * 1024), 0u);
    EXPECT_GE(r.capacity_bytes, 2 * p.max_live_bump);
}

TEST_F(SharedHeapAdvice, SiteAllocatedOnSeveralThreadsGetsRtHeap) {
    const auto id = sites.site_of(s.per_thread);
    const auto& p = profile(a, id);
    EXPECT_EQ(p.cls, site_class::general);
    EXPECT_TRUE(p.multi_thread);
    EXPECT_EQ(p.cross_thread_frees, 0u);
    const auto& r = find(a, id);
    EXPECT_EQ(r.allocator, "rt_heap");
    EXPECT_NE(r.evidence.find("0 of " + with_commas(p.frees) +
                              " frees by another thread than the allocating one, allocated on "
                              "several threads"),
              std::string::npos)
        << r.evidence;
}

TEST_F(SharedHeapAdvice, SingleThreadedGeneralSiteKeepsTlsf) {
    const auto& r = find(a, sites.site_of(s.single));
    EXPECT_EQ(r.cls, site_class::general);
    EXPECT_EQ(r.allocator, "tlsf_allocator");
    EXPECT_EQ(r.evidence.find("shared across threads"), std::string::npos);
    EXPECT_NE(r.sketch.find("rtmem::tlsf_allocator site_tlsf{"), std::string::npos);
}

TEST_F(SharedHeapAdvice, SharedSitesListedByDefaultWithJsonField) {
    const auto name = address_namer(sites);
    const std::string text = format_text(a, name);
    EXPECT_NE(text.find("rt_heap"), std::string::npos);
    EXPECT_NE(text.find("0x610000"), std::string::npos);
    EXPECT_NE(text.find("0x620000"), std::string::npos);
    EXPECT_EQ(text.find("0x630000"), std::string::npos);  // single-threaded general: hidden
    EXPECT_EQ(text.find("tlsf_allocator"), std::string::npos);
    format_options all;
    all.include_general = true;
    EXPECT_NE(format_text(a, name, all).find("tlsf_allocator"), std::string::npos);

    format_options one;
    one.top = 1;  // the shared sites rank after every site that claims a saving
    const std::string short_text = format_text(a, name, one);
    EXPECT_NE(short_text.find("+ 1 general site shared across threads, rt_heap advised"),
              std::string::npos)
        << short_text;
    EXPECT_EQ(format_text(a, name).find("+ "), std::string::npos);  // all listed: no summary

    const auto json = nlohmann::json::parse(format_json(a, name));
    auto entry = [&](std::uint32_t stack) {
        for (const auto& e : json.at("sites")) {
            if (e.at("site").get<std::uint32_t>() == sites.site_of(stack)) return e;
        }
        ADD_FAILURE() << "site of stack " << stack << " not in the JSON";
        return nlohmann::json::object();
    };
    for (std::uint32_t stack : {s.handed_over, s.per_thread}) {
        const auto e = entry(stack);
        EXPECT_EQ(e.value("allocator", ""), "rt_heap") << e;
        EXPECT_TRUE(e.value("shared_across_threads", false)) << e;
    }
    const auto single = entry(s.single);
    EXPECT_FALSE(single.value("shared_across_threads", true)) << single;
    EXPECT_FALSE(single.at("profile").value("multi_thread", true)) << single;
    EXPECT_TRUE(entry(s.per_thread).at("profile").value("multi_thread", false));
}

TEST(SharedHeapReplay, RtHeapBackendIsListedAndReplaysThreadedTrace) {
    EXPECT_NE(backend_names().find("rt_heap"), std::string::npos);
    const auto all = whole_program_backends();
    const auto* b = find_backend(all, "rt_heap");
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(b->make) << b->note;  // rtmem's own: available in every build
    shared_trace s;
    site_map sites(s.trace);
    const auto prog = compile_replay(s.trace, sites);
    std::uint64_t cross = 0;
    for (const auto& o : prog.ops) cross += o.cross_thread ? 1 : 0;
    EXPECT_GT(cross, 0u);  // the trace does carry cross-thread frees into the replay
    const auto r = replay_through(prog, *b, 2);
    EXPECT_TRUE(r.available);
    EXPECT_EQ(r.name, "rt_heap");
    EXPECT_EQ(r.failures, 0u);
    EXPECT_EQ(r.repetition_ns.size(), 2u);
    EXPECT_EQ(r.site_ns.size(), sites.size());
    // Segments granted (1 MiB each) hold at least the peak of live bytes.
    EXPECT_GE(r.peak_footprint, prog.peak_live_bytes);
    EXPECT_EQ(r.peak_footprint % (1024 * 1024), 0u);
}

TEST(SharedHeapReplay, ReplayChoosesRtHeapByName) {
    shared_trace s;
    site_map sites(s.trace);
    const auto prog = compile_replay(s.trace, sites);
    const auto adv = advise(classify(s.trace, sites));
    replay_options o;
    o.repetitions = 1;
    o.backends = {"rt_heap"};
    o.mixed = false;
    const auto rep = replay(prog, &adv, o);
    ASSERT_EQ(rep.results.size(), 2u);  // the baseline (glibc) always runs
    EXPECT_EQ(rep.results[0].name, "glibc");
    EXPECT_EQ(rep.results[1].name, "rt_heap");
    EXPECT_GT(rep.results[1].wall_ns, 0);
    EXPECT_NE(format_replay_text(rep, address_namer(sites)).find("rt_heap"), std::string::npos);
}

}  // namespace
