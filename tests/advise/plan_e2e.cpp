// `rtmem advise --plan` end to end: e2e_plan.cpp recorded (with and without frame markers),
// planned, and every planned site checked: its strategy, its frames symbolised back from
// module + offset to the right functions, and the fewest frames that tell it apart.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "rtmem/analyze/classify.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/symbolizer.hpp"

namespace {

using namespace rtmem::analyze;

struct result {
    int status = -1;
    std::string output;  // stdout and stderr
};

result run(const std::string& command) {
    result r;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int status = ::pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

const std::string work = PLAN_WORK;

/// The plan's costs as if the heap cost what glibc does and memory were free (`--set`).
const std::string every_site_pays =
    " --set plan_heap_list_ns=20 --set plan_heap_miss_ns=20 --set plan_heap_large_ns=20"
    " --set plan_page_ns=0 --set plan_large_page_ns=0 --set plan_min_saved_ns=0";

/// Records e2e_plan (with --frames or not) and plans it; returns the plan.
plan record_and_plan(const std::string& name, bool frames) {
    std::filesystem::create_directories(work);
    const std::string trace = work + "/" + name + ".rtt", file = work + "/" + name + ".json";
    const auto rec = run(std::string(RTMEM_CLI) + " record -o " + trace + " -- " + PLAN_PROGRAM +
                         (frames ? " --frames" : ""));
    EXPECT_EQ(rec.status, 0) << rec.output;
    // period_max_cv: the drain period of the frame site must not depend on this machine's load.
    // --plan-unwind-ns 0 and every_site_pays: every site planned however many frames it needs
    // and whatever it saves against rt_heap (both priced apart, below and in make_plan_test).
    const auto adv = run(std::string(RTMEM_CLI) + " advise " + trace + " --plan " + file +
                         " --set period_max_cv=100 --plan-unwind-ns 0" + every_site_pays);
    EXPECT_EQ(adv.status, 0) << adv.output;
    EXPECT_NE(adv.output.find("rtmem: wrote plan " + file), std::string::npos) << adv.output;
    return read_plan_file(file);
}

/// The function a module-relative return address is in (the call is at offset - 1).
std::string function_at(const plan_frame& f) {
    symbolizer sym({module{f.module, 0, ~std::uint64_t{0} >> 1, 0}});
    const auto& frames = sym.frames(f.offset);
    return frames.empty() ? "??" : frames.back().function;  // the outer (non-inlined) function
}

const plan_site& site(const plan& p, const std::string& function) {
    for (const auto& s : p.sites)
        if (s.label.find(function + " (") != std::string::npos) return s;
    throw std::runtime_error("no planned site for " + function);
}

class PlanEndToEnd : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        with_frames = new plan(record_and_plan("frames", true));
        without_frames = new plan(record_and_plan("no_frames", false));
    }
    static void TearDownTestSuite() {
        delete with_frames;
        delete without_frames;
    }
    static plan* with_frames;
    static plan* without_frames;
};
plan* PlanEndToEnd::with_frames = nullptr;
plan* PlanEndToEnd::without_frames = nullptr;

TEST_F(PlanEndToEnd, EachKnownSiteGetsItsStrategy) {
    const plan& p = *with_frames;
    EXPECT_TRUE(p.frame_markers);
    bool tree_seen = false, list_seen = false;
    for (const auto& s : p.sites) {
        if (s.label.find("tree_node") != std::string::npos) {
            EXPECT_EQ(s.strategy, plan_strategy::pool) << s.reason;
            EXPECT_EQ(s.block_size, 32u);
            tree_seen = true;
        }
        if (s.label.find("list_node") != std::string::npos) {
            EXPECT_EQ(s.strategy, plan_strategy::region) << s.reason;
            EXPECT_NE(s.reason.find("long-lived"), std::string::npos) << s.reason;
            list_seen = true;
        }
    }
    EXPECT_TRUE(tree_seen && list_seen);
    EXPECT_EQ(site(p, "scope_block").strategy, plan_strategy::thread_stack);
    EXPECT_EQ(site(p, "token").strategy, plan_strategy::region);
    EXPECT_NE(site(p, "token").reason.find("linear"), std::string::npos);
    const auto& scratch = site(p, "frame_scratch");
    EXPECT_EQ(scratch.strategy, plan_strategy::region);
    EXPECT_TRUE(scratch.frame_chunks) << scratch.reason;
}

TEST_F(PlanEndToEnd, FramesResolveToTheRightFunctionsAtTheFewestFrames) {
    const plan& p = *with_frames;
    for (const auto& s : p.sites) {
        ASSERT_FALSE(s.frames.empty());
        for (const auto& f : s.frames) {
            EXPECT_FALSE(allocator_module(f.module)) << f.module;
            EXPECT_EQ(f.module, PLAN_PROGRAM) << s.label;
        }
    }
    // Innermost frame: the function that called malloc; the next ones: its callers.
    for (const char* f : {"scope_block", "token", "frame_scratch"}) {
        const auto& s = site(p, f);
        EXPECT_EQ(function_at(s.frames[0]), f);
        if (s.frames.size() > 1) {
            EXPECT_EQ(function_at(s.frames[1]), "main");
        }
        EXPECT_FALSE(s.whole_stack);
    }
    std::size_t deepest = 0;
    for (const char* caller : {"tree_node", "list_node"}) {
        for (const auto& s : p.sites) {
            if (s.label.find(caller) == std::string::npos) continue;
            // make_node's frame is shared by both callers: at least the caller's frame too.
            ASSERT_GE(s.frames.size(), 2u) << s.label;
            EXPECT_EQ(function_at(s.frames[0]), "make_node");
            EXPECT_EQ(function_at(s.frames[1]), caller);
            if (s.frames.size() > 2) {
                EXPECT_EQ(function_at(s.frames[2]), "main");
            }
        }
    }
    // Minimal: with one frame fewer a site would share its frames with another allocating
    // stack of the trace; with its frames, with none (checked on the trace's own stacks).
    trace_reader trace(work + "/frames.rtt");
    std::vector<std::vector<plan_frame>> allocating;
    {
        site_map all(trace);
        const auto c = classify(trace, all);
        for (const auto& prof : c.sites) {
            if (prof.site == 0 || prof.allocations == 0) continue;
            std::vector<plan_frame> frames;
            for (auto ip : all.frames(prof.site)) {
                for (const auto& m : trace.modules())
                    if (ip - 1 >= m.start && ip - 1 < m.end) frames.push_back({m.path, ip - m.bias});
            }
            allocating.push_back(std::move(frames));
        }
    }
    auto sharing = [&](const std::vector<plan_frame>& prefix) {
        std::size_t n = 0;
        for (const auto& f : allocating)
            if (f.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), f.begin())) ++n;
        return n;
    };
    for (const auto& s : p.sites) {
        EXPECT_EQ(sharing(s.frames), 1u) << s.label;
        std::vector<plan_frame> shorter(s.frames.begin(), s.frames.end() - 1);
        if (!shorter.empty()) {
            EXPECT_GT(sharing(shorter), 1u) << s.label;
        }
        deepest = std::max(deepest, s.frames.size());
    }
    EXPECT_EQ(p.depth, deepest);
}

TEST_F(PlanEndToEnd, FrameSiteWithoutMarkersFallsBackWithAReason) {
    const plan& p = *without_frames;
    EXPECT_FALSE(p.frame_markers);
    const auto& scratch = site(p, "frame_scratch");
    EXPECT_EQ(scratch.strategy, plan_strategy::region);
    EXPECT_FALSE(scratch.frame_chunks);
    EXPECT_NE(scratch.reason.find("fallback"), std::string::npos) << scratch.reason;
    EXPECT_NE(scratch.reason.find("no rtmem_trace_frame() markers"), std::string::npos);
}

TEST_F(PlanEndToEnd, SitesNeedingAStackWalkStayOnTheHeapWhenItCostsMore) {
    const std::string file = work + "/priced_walk.json";
    // 150 ns a frame: what recognising a deeper site cost when it took libunwind.
    const auto adv = run(std::string(RTMEM_CLI) + " advise " + work + "/frames.rtt --plan " + file +
                         " --plan-heap --plan-unwind-ns 150" + every_site_pays);
    ASSERT_EQ(adv.status, 0) << adv.output;
    const plan p = read_plan_file(file);
    // make_node's two callers save a few us by the cost model; a walk on each of their ~1,250
    // allocations at 150 ns costs more: heap, and the reason says why.
    bool pool_site_priced_out = false;
    for (const auto& s : p.sites) {
        if (s.label.find("tree_node") == std::string::npos) continue;
        EXPECT_EQ(s.strategy, plan_strategy::heap) << s.reason;
        if (s.reason.find("pool_allocator") != std::string::npos) {
            EXPECT_NE(s.reason.find("stack walk"), std::string::npos) << s.reason;
            pool_site_priced_out = true;
        }
    }
    EXPECT_TRUE(pool_site_priced_out);
    // Sites told apart by their first frame pay no walk: planned as before.
    for (const char* f : {"token", "frame_scratch"}) {
        const auto& s = site(p, f);
        if (s.frames.size() == 1) {
            EXPECT_EQ(s.strategy, plan_strategy::region) << f;
        }
    }
    for (const auto& s : p.sites) {
        if (s.strategy != plan_strategy::heap) {
            EXPECT_EQ(s.frames.size(), 1u) << s.label;  // here no deep site pays for its walk
        }
    }
}

TEST_F(PlanEndToEnd, PricedAgainstRtHeapEverySiteLeftOnTheHeapSaysWhy) {
    const std::string file = work + "/against_rt_heap.json";
    const auto adv = run(std::string(RTMEM_CLI) + " advise " + work + "/frames.rtt --plan " + file +
                         " --plan-heap --set plan_page_ns=3000");  // a plan cost by --set
    ASSERT_EQ(adv.status, 0) << adv.output;
    const plan p = read_plan_file(file);
    ASSERT_FALSE(p.sites.empty());
    std::size_t priced = 0;
    for (const auto& s : p.sites) {
        if (s.strategy == plan_strategy::heap) {
            EXPECT_FALSE(s.reason.empty()) << s.label;
            // The printed list gives the same reason.
            EXPECT_NE(adv.output.find(s.reason), std::string::npos) << s.reason;
        }
        if (s.reason.find("against rt_heap: saves ") != std::string::npos) ++priced;
        if (s.strategy != plan_strategy::heap) {
            EXPECT_GE(s.expected_saved_ns, plan_costs{}.min_saved_ns) << s.reason;
        }
    }
    EXPECT_GT(priced, 0u);  // every plannable site is priced, planned or not
    const auto bad = run(std::string(RTMEM_CLI) + " advise " + work + "/frames.rtt --plan " +
                         file + " --set plan_no_such_cost=1");
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.output.find("unknown threshold or cost 'plan_no_such_cost'"), std::string::npos)
        << bad.output;
}

// A site planned only for its blocks' placement is marked, and the summary says the trace
// cannot confirm that: rt_heap's calls priced at nothing, so the plan's calls only cost, and
// only the packing credit can pay for a site.
TEST_F(PlanEndToEnd, SitesPlannedOnlyForPlacementAreMarkedAndTheSummarySaysToTimeThem) {
    const std::string file = work + "/placement.json";
    const std::string heap_free =
        " --set plan_heap_list_ns=0 --set plan_heap_miss_ns=0 --set plan_heap_large_ns=0"
        " --set plan_probe_ns=0 --set plan_page_ns=0 --set plan_min_saved_ns=0"
        " --plan-unwind-ns 0";
    const auto placed = run(std::string(RTMEM_CLI) + " advise " + work + "/no_frames.rtt --plan " +
                            file + heap_free + " --set plan_grouped_page_ns=100000");
    ASSERT_EQ(placed.status, 0) << placed.output;
    EXPECT_NE(placed.output.find("planned only for where their blocks go"), std::string::npos)
        << placed.output;
    EXPECT_NE(placed.output.find("[placement]"), std::string::npos) << placed.output;
    // Sites whose calls pay are not marked.
    const auto paid = run(std::string(RTMEM_CLI) + " advise " + work + "/no_frames.rtt --plan " +
                          file + " --set period_max_cv=100 --plan-unwind-ns 0" + every_site_pays +
                          " --set plan_grouped_page_ns=0");
    ASSERT_EQ(paid.status, 0) << paid.output;
    EXPECT_NE(paid.output.find("rtmem: wrote plan"), std::string::npos) << paid.output;
    EXPECT_EQ(paid.output.find("[placement]"), std::string::npos) << paid.output;
    EXPECT_EQ(paid.output.find("planned only for where"), std::string::npos) << paid.output;
}

TEST_F(PlanEndToEnd, ReplayOnAnAgedHeapSaysSo) {
    const std::string cli = RTMEM_CLI;
    auto r = run(cli + " replay " + work + "/frames.rtt --aged --backends glibc,tlsf -r 1 --no-mixed");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("kept"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("aged: "), std::string::npos) << r.output;
    r = run(cli + " replay " + work + "/frames.rtt --aged --aged-keep 2");
    EXPECT_NE(r.status, 0) << r.output;
}

TEST(PlanArguments, UnwritablePlanPathFailsBeforeTheAnalysis) {
    // The trace does not exist either: the --plan error comes first, so nothing was analysed.
    const std::string cli = RTMEM_CLI;
    auto r = run(cli + " advise /no/such/trace.rtt --plan /no/such/dir/plan.json");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--plan /no/such/dir/plan.json: directory /no/such/dir does not exist"),
              std::string::npos)
        << r.output;
    r = run(cli + " advise /no/such/trace.rtt --plan " + std::filesystem::temp_directory_path().string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;
    r = run(cli + " advise /no/such/trace.rtt --plan-sites -1 --plan x.json");
    EXPECT_NE(r.status, 0) << r.output;
}

}  // namespace
