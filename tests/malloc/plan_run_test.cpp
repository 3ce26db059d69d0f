// `rtmem run --plan`: a program with known sites (programs/plan_sites.cpp) is recorded, a plan
// is written from its trace's frames, and the program is run with it: every planned site is
// served by its strategy (the exit summary's counters), the output is the program's own, a
// stale plan matches nothing, a corrupt one is refused with a clear error.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "plan_helpers.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "run_helpers.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::plan;
using rtmem::analyze::plan_frame;
using rtmem::analyze::plan_site;
using rtmem::analyze::plan_strategy;
using rtmem::test::site_summary;
using rtmem::test::slurp;

const std::string program = std::string(RTMEM_PROGRAMS) + "/rtmem_plan_sites";

// Allocations per site in plan_sites.cpp.
constexpr std::uint64_t nodes = 20000, texts = 12000, keepers = 3000, buffers = 500;

struct recorded {
    fs::path dir;
    std::string native_out;
    plan p;  // the four planned sites (ids 1..4) from the trace
    std::uint64_t planned_in_trace = 0;  // allocations of those sites in the trace
};

plan_frame relative(const rtmem::analyze::trace_reader& r, std::uint64_t ip) {
    for (const auto& m : r.modules())
        if (ip - 1 >= m.start && ip - 1 < m.end) return {m.path, ip - m.bias};
    ADD_FAILURE() << "frame " << std::hex << ip << " in no module";
    return {};
}

// Site by request size: 48 node (pool), 100..227 text (region), 300 keeper (region),
// 72 buffer_a (pool, two frames: frame 0 is shared with buffer_b's 88).
plan plan_from_trace(const std::string& trace, std::uint64_t& planned_allocations) {
    rtmem::analyze::trace_reader r(trace);
    std::map<std::uint32_t, std::set<std::uint64_t>> sizes_by_stack;
    std::map<std::uint32_t, std::uint64_t> count_by_stack;
    rtmem::analyze::event e;
    while (r.next(e))
        if (e.kind == rtmem::analyze::op::malloc || e.kind == rtmem::analyze::op::calloc ||
            e.kind == rtmem::analyze::op::new_scalar) {
            sizes_by_stack[e.stack].insert(e.size);
            ++count_by_stack[e.stack];
        }
    planned_allocations = 0;
    plan p;
    p.program = program;
    p.trace = trace;
    p.depth = 2;
    auto add = [&](std::uint32_t id, plan_strategy s, std::uint64_t block,
                   std::span<const std::uint64_t> ips, std::size_t depth) {
        for (const auto& site : p.sites)
            if (site.id == id) return;  // the same site seen through another stack
        plan_site site;
        site.id = id;
        site.strategy = s;
        site.block_size = block;
        site.block_align = block != 0 ? 16 : 0;
        site.chunk_bytes = s == plan_strategy::region ? 64 * 1024 : 0;
        for (std::size_t k = 0; k < depth && k < ips.size(); ++k)
            site.frames.push_back(relative(r, ips[k]));
        p.sites.push_back(site);
    };
    for (const auto& [stack, sizes] : sizes_by_stack) {
        const auto ips = r.stack(stack);
        const std::uint64_t lo = *sizes.begin(), hi = *sizes.rbegin();
        const std::uint64_t n = count_by_stack[stack];
        if (lo == 48 && hi == 48) add(1, plan_strategy::pool, 48, ips, 1);
        else if (lo >= 100 && hi <= 227) add(2, plan_strategy::region, 0, ips, 1);
        else if (lo == 300 && hi == 300) add(3, plan_strategy::region, 0, ips, 1);
        else if (lo == 72 && hi == 72) add(4, plan_strategy::pool, 72, ips, 2);
        else continue;
        planned_allocations += n;
    }
    std::sort(p.sites.begin(), p.sites.end(),
              [](const plan_site& a, const plan_site& b) { return a.id < b.id; });
    return p;
}

const recorded& recording() {
    static const recorded rec = [] {
        recorded r;
        r.dir = fs::temp_directory_path() / ("rtmem-plan-run-" + std::to_string(getpid()));
        fs::create_directories(r.dir);
        static const fs::path dir = r.dir;  // removed at exit, after every test used it
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(dir, ec);
        });
        r.native_out = rtmem::test::run_shell(program).out;
        const std::string trace = (r.dir / "sites.rtt").string();
        const auto rc = rtmem::test::run_shell(std::string(RTMEM_CLI) + " record -o " + trace +
                                                " -- " + program + " 2>/dev/null");
        EXPECT_EQ(rc.status, 0);
        r.p = plan_from_trace(trace, r.planned_in_trace);
        return r;
    }();
    return rec;
}

fs::path write_plan(const plan& p, const std::string& name) {
    const fs::path path = recording().dir / name;
    std::ofstream(path) << rtmem::analyze::plan_to_json(p);
    return path;
}

struct run_with_plan {
    rtmem::test::run_result result;
    std::string summary;  // stderr
};

run_with_plan run_plan(const fs::path& plan_path) {
    const fs::path err = recording().dir / "stderr.txt";
    run_with_plan r;
    r.result = rtmem::test::run_under_rtmem(program + " 2>" + err.string(),
                                            "--stats --plan " + plan_path.string());
    r.summary = slurp(err);
    return r;
}

TEST(PlanRun, TheTraceHasEveryKnownSite) {
    const plan& p = recording().p;
    ASSERT_EQ(p.sites.size(), 4u) << rtmem::analyze::plan_to_json(p);
    EXPECT_EQ(p.sites[3].frames.size(), 2u);
    ASSERT_FALSE(recording().native_out.empty());
}

TEST(PlanRun, EveryPlannedSiteIsServedByItsStrategy) {
    const auto r = run_plan(write_plan(recording().p, "plan.json"));
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    const auto node = site_summary(r.summary, 1);
    const auto text = site_summary(r.summary, 2);
    const auto keeper = site_summary(r.summary, 3);
    const auto buffer = site_summary(r.summary, 4);
    ASSERT_TRUE(node.found && text.found && keeper.found && buffer.found) << r.summary;
    EXPECT_EQ(node.state, "matched");
    // Every node served by the pool, half of them freed by the other thread; more made by the
    // thread that allocates there while the program forks.
    EXPECT_GE(node.served, nodes) << r.summary;
    EXPECT_EQ(node.freed, node.served);
    EXPECT_EQ(node.declined, 0u);
    EXPECT_EQ(text.served, texts);
    EXPECT_EQ(text.freed, texts);  // the realloc'd ones left the region when they grew
    EXPECT_EQ(keeper.served, keepers);
    EXPECT_EQ(keeper.freed, keepers);  // the kept one at exit
    // Two frames: only buffer_a's calls, not buffer_b's through the same frame 0.
    EXPECT_EQ(buffer.served, buffers) << r.summary;
    EXPECT_EQ(buffer.freed, buffers);
    EXPECT_NE(r.summary.find("plan: 4 of 4 sites matched"), std::string::npos) << r.summary;
}

// The advisor's own plan (rtmem advise --plan) runs: the program's output unchanged, most of
// what the plan names served by its strategies. Priced as if the heap cost what glibc does
// (--set plan_*): against rt_heap these small sites save nothing and the plan stays empty.
TEST(PlanRun, TheAdvisorsPlanRuns) {
    const fs::path plan_path = recording().dir / "advised.json";
    const auto advise = rtmem::test::run_shell(
        std::string(RTMEM_CLI) + " advise --plan " + plan_path.string() +
        rtmem::test::glibc_like_plan_costs +
        (recording().dir / "sites.rtt").string() + " >/dev/null 2>&1");
    ASSERT_EQ(advise.status, 0);
    const plan advised = rtmem::analyze::read_plan_file(plan_path.string());
    ASSERT_FALSE(advised.sites.empty());
    const auto r = run_plan(plan_path);
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    const std::size_t total = r.summary.find("plan: ");
    ASSERT_NE(total, std::string::npos) << r.summary;
    const std::size_t served_at = r.summary.find("served: pool ", total);
    ASSERT_NE(served_at, std::string::npos) << r.summary;
    unsigned long long matched = 0, sites = 0, pool = 0, region = 0, stack = 0;
    ASSERT_EQ(std::sscanf(r.summary.c_str() + total, "plan: %llu of %llu sites matched", &matched,
                          &sites),
              2)
        << r.summary;
    ASSERT_EQ(std::sscanf(r.summary.c_str() + served_at,
                          "served: pool %llu, region %llu, thread_stack %llu", &pool, &region,
                          &stack),
              3)
        << r.summary;
    EXPECT_GE(matched, 1u) << r.summary;
    EXPECT_EQ(sites, advised.sites.size());
    // The four known sites alone make 35500 allocations; the advisor plans at least some.
    EXPECT_GE(pool + region + stack, 10000u) << r.summary;
}

// The replay routes the same allocations to the same strategies as the run.
TEST(PlanRun, ReplayWithThePlanRoutesWhatTheRunRoutes) {
    const fs::path plan_path = write_plan(recording().p, "replay-plan.json");
    const auto r = rtmem::test::run_shell(std::string(RTMEM_CLI) + " replay -r 1 --json --plan " +
                                          plan_path.string() + " " +
                                          (recording().dir / "sites.rtt").string());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("\"plan_sites_matched\": 4"), std::string::npos) << r.out;
    // Every allocation of the four sites in the trace (the run serves all of them too).
    EXPECT_GE(recording().planned_in_trace, nodes + texts + keepers + buffers);
    EXPECT_NE(r.out.find("\"served\": " + std::to_string(recording().planned_in_trace)),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\"name\": \"plan + rt_heap\""), std::string::npos) << r.out;
}

TEST(PlanRun, AStalePlanMatchesNothingAndChangesNothing) {
    plan stale = recording().p;
    for (auto& s : stale.sites)
        for (auto& f : s.frames) f.offset += 3;  // another build: every address moved
    const auto r = run_plan(write_plan(stale, "stale.json"));
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    EXPECT_NE(r.summary.find("plan: 0 of 4 sites matched (4 resolved"), std::string::npos)
        << r.summary;
}

// Without --stats, a stale plan still says once that it served nothing; the output is unchanged.
TEST(PlanRun, AStalePlanIsReportedEvenWithoutStats) {
    plan stale = recording().p;
    for (auto& s : stale.sites)
        for (auto& f : s.frames) f.offset += 3;
    const fs::path plan_path = write_plan(stale, "stale-quiet.json");
    const fs::path err = recording().dir / "stderr-quiet.txt";
    const auto r = rtmem::test::run_under_rtmem(program + " 2>" + err.string(),
                                                "--plan " + plan_path.string());
    const std::string said = slurp(err);
    ASSERT_EQ(r.status, 0) << said;
    EXPECT_EQ(r.out, recording().native_out);
    EXPECT_NE(said.find("plan: none of its 4 sites allocated in this process"), std::string::npos)
        << said;
    // A plan that is used says nothing without --stats.
    const fs::path used_err = recording().dir / "stderr-used.txt";
    const auto used = rtmem::test::run_under_rtmem(
        program + " 2>" + used_err.string(),
        "--plan " + write_plan(recording().p, "used-quiet.json").string());
    ASSERT_EQ(used.status, 0);
    EXPECT_EQ(slurp(used_err).find("rtmem run:"), std::string::npos) << slurp(used_err);
}

TEST(PlanRun, APlanForAnotherProgramResolvesNothing) {
    plan other = recording().p;
    for (auto& s : other.sites)
        for (auto& f : s.frames) f.module = "/nonexistent/other-program";
    const auto r = run_plan(write_plan(other, "other.json"));
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    EXPECT_NE(r.summary.find("plan: 0 of 4 sites matched (0 resolved; 0 of 1 modules loaded)"),
              std::string::npos)
        << r.summary;
}

// What `rtmem tune` writes when no site pays: every site "heap". The plan is not loaded at all,
// so the program pays no site probe; the warning says so and --stats shows no plan summary.
TEST(PlanRun, APlanRoutingNoSiteIsNotLoaded) {
    plan all_heap = recording().p;
    for (auto& s : all_heap.sites) s.strategy = plan_strategy::heap;
    const auto r = run_plan(write_plan(all_heap, "all-heap.json"));
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    EXPECT_NE(r.summary.find("routes no site"), std::string::npos) << r.summary;
    EXPECT_EQ(r.summary.find("sites matched"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("rt_heap"), std::string::npos) << r.summary;  // --stats still on
}

TEST(PlanRun, ACorruptPlanIsRefusedWithAClearError) {
    const fs::path bad = recording().dir / "corrupt.json";
    std::ofstream(bad) << "{\"format\": \"rtmem-plan\", \"version\": 1, \"sites\": [{\"strat";
    const auto r = rtmem::test::run_shell(std::string(RTMEM_CLI) + " run --plan " +
                                          bad.string() + " -- " + program + " 2>&1");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("rtmem: error: --plan: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("corrupt.json"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("checksum"), std::string::npos);  // the program never ran

    const auto missing = rtmem::test::run_shell(std::string(RTMEM_CLI) +
                                                " run --plan /nonexistent.json -- true 2>&1");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.out.find("cannot open /nonexistent.json"), std::string::npos) << missing.out;
}

TEST(PlanRun, APlanWithRealTimeModeIsRefused) {
    const fs::path p = write_plan(recording().p, "rt.json");
    const auto r = rtmem::test::run_shell(std::string(RTMEM_CLI) + " run --realtime 64M --plan " +
                                          p.string() + " -- true 2>&1");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("--plan and --realtime cannot be combined"), std::string::npos) << r.out;
}

TEST(PlanRun, ACorruptCompiledPlanIsIgnoredWithAWarning) {
    const auto r = rtmem::test::run_shell("RTMEM_MALLOC_PLAN='rtmem-plan-run 1\nmodules x' "
                                          "LD_PRELOAD=" RTMEM_MALLOC_LIB " " + program + " 2>&1");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("rtmem run: ignoring the plan: bad module count"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(recording().native_out), std::string::npos);
}

}  // namespace
