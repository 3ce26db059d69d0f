// `rtmem run --plan` on a program whose every allocation goes through a wrapper
// (programs/plan_wrappers.cpp): the sites are told apart above frame 0 by the stack walk at
// learned offsets. Recorded, planned (by hand from the trace, and by the advisor), run: each
// wrapper site is served as planned, the exit summary says so, the output is the program's
// own; a frame whose size varies and a plan that names the wrong sites stay correct. A site in
// a module dlopen'ed later is routed once the module is loaded.
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

const std::string program = std::string(RTMEM_PROGRAMS) + "/rtmem_plan_wrappers";
constexpr std::uint64_t rounds = 4000;  // the program's default: allocations per site

// Each site's frames (module-relative, innermost first), by its request size.
struct recorded {
    fs::path dir;
    std::string native_out;
    std::map<std::uint64_t, std::vector<plan_frame>> frames_by_size;
};

const recorded& recording() {
    static const recorded rec = [] {
        recorded r;
        r.dir = fs::temp_directory_path() / ("rtmem-plan-wrappers-" + std::to_string(getpid()));
        fs::create_directories(r.dir);
        static const fs::path dir = r.dir;
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(dir, ec);
        });
        r.native_out = rtmem::test::run_shell(program).out;
        const std::string trace = (r.dir / "wrappers.rtt").string();
        EXPECT_EQ(rtmem::test::run_shell(std::string(RTMEM_CLI) + " record -o " + trace + " -- " +
                                         program + " 2>/dev/null")
                      .status,
                  0);
        rtmem::analyze::trace_reader reader(trace);
        std::map<std::uint32_t, std::set<std::uint64_t>> sizes;
        rtmem::analyze::event e;
        while (reader.next(e))
            if (e.size != 0 && e.kind != rtmem::analyze::op::free) sizes[e.stack].insert(e.size);
        for (const auto& [stack, s] : sizes) {
            if (s.size() != 1) continue;
            std::vector<plan_frame> frames;
            for (std::uint64_t ip : reader.stack(stack))
                for (const auto& m : reader.modules())
                    if (ip - 1 >= m.start && ip - 1 < m.end &&
                        m.path.find("rtmem-") == std::string::npos)
                        frames.push_back({m.path, ip - m.bias});
            r.frames_by_size[*s.begin()] = frames;
        }
        return r;
    }();
    return rec;
}

plan_site site_of(std::uint32_t id, std::uint64_t size, std::size_t depth, plan_strategy s,
                  std::uint64_t block) {
    plan_site site;
    site.id = id;
    site.strategy = s;
    site.block_size = block;
    site.block_align = block != 0 ? 16 : 0;
    site.chunk_bytes = s == plan_strategy::region ? 64 * 1024 : 0;
    const auto& f = recording().frames_by_size.at(size);
    site.frames.assign(f.begin(),
                       f.begin() + static_cast<std::ptrdiff_t>(std::min(depth, f.size())));
    return site;
}

struct plan_run {
    rtmem::test::run_result result;
    std::string summary;
};
plan_run run_plan(const plan& p, const std::string& name) {
    const fs::path path = recording().dir / name;
    std::ofstream(path) << rtmem::analyze::plan_to_json(p);
    const fs::path err = recording().dir / (name + ".stderr");
    plan_run r;
    r.result = rtmem::test::run_under_rtmem(program + " 2>" + err.string(),
                                            "--stats --plan " + path.string());
    r.summary = slurp(err);
    return r;
}

unsigned long long offsets_learned(const std::string& summary) {
    const std::size_t at = summary.find("deeper frames: ");
    unsigned long long n = 0;
    if (at != std::string::npos) std::sscanf(summary.c_str() + at, "deeper frames: %llu", &n);
    return n;
}

TEST(PlanWrappers, EverySiteIsBehindTheWrapper) {
    const auto& f = recording().frames_by_size;
    ASSERT_FALSE(recording().native_out.empty());
    for (std::uint64_t size : {48, 80, 112, 144, 160, 176, 192, 208})
        ASSERT_GE(f.count(size), 1u) << size;
    // One frame 0 for the xmalloc sites: only the callers tell them apart.
    EXPECT_EQ(f.at(48)[0], f.at(80)[0]);
    EXPECT_EQ(f.at(48)[0], f.at(112)[0]);
    EXPECT_EQ(f.at(112)[1], f.at(144)[1]);  // helper: the third frame decides
    EXPECT_EQ(f.at(160)[0], f.at(176)[0]);
}

TEST(PlanWrappers, WrapperSitesAreServedAsPlanned) {
    plan p;
    p.program = program;
    p.depth = 3;
    p.sites = {
        site_of(1, 48, 2, plan_strategy::pool, 48), site_of(2, 112, 3, plan_strategy::region, 0),
        site_of(3, 144, 3, plan_strategy::pool, 144), site_of(4, 192, 2, plan_strategy::region, 0),
        site_of(5, 208, 2, plan_strategy::pool, 208)};
    const auto r = run_plan(p, "wrappers.json");
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    for (std::uint32_t id = 1; id <= 5; ++id) {
        const auto s = site_summary(r.summary, id);
        ASSERT_TRUE(s.found) << id << "\n" << r.summary;
        EXPECT_EQ(s.state, "matched") << id;
        // Every call of the site, none of its siblings' (node_b's 80 B would not fit the
        // 48 B pool: a sibling misrouted there would show as sent to the general heap).
        EXPECT_EQ(s.served, rounds) << id << "\n" << r.summary;
        EXPECT_EQ(s.declined, 0u) << id;
        EXPECT_EQ(s.freed, rounds) << id;
    }
    EXPECT_NE(r.summary.find("plan: 5 of 5 sites matched"), std::string::npos) << r.summary;
    // Told apart by stack slots read at learned offsets, not by unwinding each call.
    EXPECT_GE(offsets_learned(r.summary), 2u) << r.summary;
    EXPECT_NE(r.summary.find("0 walks through the caller-frame cache"), std::string::npos)
        << r.summary;
}

// xmalloc_dynamic's frame size changes with its alloca: the offset learned on one call misreads
// on calls with another pad. Those calls go to the general heap; the output is unchanged.
TEST(PlanWrappers, AFrameWhoseSizeVariesCostsSpeedNotCorrectness) {
    plan p;
    p.program = program;
    p.depth = 2;
    p.sites = {site_of(1, 160, 2, plan_strategy::pool, 160)};
    const auto r = run_plan(p, "dynamic.json");
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    const auto s = site_summary(r.summary, 1);
    ASSERT_TRUE(s.found) << r.summary;
    EXPECT_GT(s.served, 0u) << r.summary;      // the calls whose frame has the learned size
    EXPECT_LT(s.served, rounds) << r.summary;  // the others were not recognised
    EXPECT_EQ(s.freed, s.served);
}

// A plan naming the wrong sites: the 48 B pool given node_b's frames (80 B requests), a region
// given frames the program never has above frame 0. Nothing is misserved: declined, or
// unmatched, and the output is the program's own.
TEST(PlanWrappers, AWrongMatchStaysCorrect) {
    plan p;
    p.program = program;
    p.depth = 3;
    plan_site wrong_size = site_of(1, 80, 2, plan_strategy::pool, 48);
    plan_site wrong_caller = site_of(2, 112, 3, plan_strategy::region, 0);
    wrong_caller.frames[2].offset += 1;  // not a return address any call makes
    p.sites = {wrong_size, wrong_caller};
    const auto r = run_plan(p, "wrong.json");
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    const auto a = site_summary(r.summary, 1);
    const auto b = site_summary(r.summary, 2);
    ASSERT_TRUE(a.found && b.found) << r.summary;
    EXPECT_EQ(a.served, 0u);
    EXPECT_EQ(a.declined, rounds) << r.summary;  // recognised, too large: the general heap
    EXPECT_EQ(b.state, "not matched") << r.summary;
}

// The advisor's own plan names the wrappers' callers with two or three frames and the run
// serves them. Priced as if the heap cost what glibc does (--set plan_*): against rt_heap these
// small sites save nothing and the plan stays empty.
TEST(PlanWrappers, TheAdvisorPlansTheWrapperSites) {
    const fs::path path = recording().dir / "advised.json";
    const auto adv =
        rtmem::test::run_shell(std::string(RTMEM_CLI) + " advise --plan " + path.string() +
                               rtmem::test::glibc_like_plan_costs +
                               (recording().dir / "wrappers.rtt").string() + " >/dev/null 2>&1");
    ASSERT_EQ(adv.status, 0);
    const plan advised = rtmem::analyze::read_plan_file(path.string());
    std::size_t deep = 0;
    for (const auto& s : advised.sites)
        if (s.strategy != plan_strategy::heap && s.frames.size() >= 2) ++deep;
    EXPECT_GE(deep, 4u) << rtmem::analyze::plan_to_json(advised);
    const auto r = run_plan(advised, "advised-run.json");
    ASSERT_EQ(r.result.status, 0) << r.summary;
    EXPECT_EQ(r.result.out, recording().native_out);
    const std::size_t at = r.summary.find("served: pool ");
    ASSERT_NE(at, std::string::npos) << r.summary;
    unsigned long long pool = 0, region = 0, stack = 0;
    ASSERT_EQ(
        std::sscanf(r.summary.c_str() + at, "served: pool %llu, region %llu, thread_stack %llu",
                    &pool, &region, &stack),
        3);
    EXPECT_GE(pool + region + stack, 4 * rounds) << r.summary;
}

}  // namespace

namespace {

// A plan site inside a module the program dlopens after start-up (python3's extension modules
// are loaded so): resolved when the module is loaded, then served.
TEST(PlanDlopen, ASiteInAModuleLoadedLaterIsRouted) {
    const std::string host = std::string(RTMEM_PROGRAMS) + "/rtmem_malloc_dlopen";
    const std::string command = host + " " + RTMEM_MALLOC_PLUGIN;
    const fs::path dir = recording().dir;
    const std::string trace = (dir / "dlopen.rtt").string();
    const std::string native = rtmem::test::run_shell(command).out;
    ASSERT_EQ(rtmem::test::run_shell(std::string(RTMEM_CLI) + " record -o " + trace + " -- " +
                                     command + " >/dev/null 2>&1")
                  .status,
              0);
    // plugin_make's malloc("abc"): 4 bytes, frame 0 in the plugin.
    rtmem::analyze::trace_reader reader(trace);
    const std::string plugin = fs::path(RTMEM_MALLOC_PLUGIN).filename().string();
    plan p;
    p.program = host;
    p.depth = 1;
    rtmem::analyze::event e;
    while (reader.next(e) && p.sites.empty()) {
        if (e.kind != rtmem::analyze::op::malloc || e.size != 4) continue;
        const auto ips = reader.stack(e.stack);
        for (std::uint64_t ip : ips) {
            const rtmem::analyze::module* in = nullptr;
            for (const auto& m : reader.modules())
                if (ip - 1 >= m.start && ip - 1 < m.end) in = &m;
            if (in == nullptr || in->path.find("rtmem-") != std::string::npos) continue;
            if (in->path.find(plugin) == std::string::npos) break;  // not the plugin's call
            plan_site s;
            s.id = 1;
            s.strategy = plan_strategy::region;
            s.chunk_bytes = 64 * 1024;
            s.frames.push_back({in->path, ip - in->bias});
            p.sites.push_back(s);
            break;
        }
    }
    ASSERT_EQ(p.sites.size(), 1u) << "no 4-byte malloc from the plugin in the trace";
    const fs::path path = dir / "dlopen.json";
    std::ofstream(path) << rtmem::analyze::plan_to_json(p);
    const fs::path err = dir / "dlopen.stderr";
    const auto r = rtmem::test::run_under_rtmem(command + " 2>" + err.string(),
                                                "--stats --plan " + path.string());
    const std::string summary = slurp(err);
    ASSERT_EQ(r.status, 0) << summary;
    EXPECT_EQ(r.out, native);
    const auto s = site_summary(summary, 1);
    ASSERT_TRUE(s.found) << summary;
    EXPECT_EQ(s.state, "matched") << summary;
    EXPECT_GE(s.served, 1000u) << summary;  // a round's calls at least (each round reloads it)
    EXPECT_NE(summary.find("1 of 1 modules loaded"), std::string::npos) << summary;
}

}  // namespace
