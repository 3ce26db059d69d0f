// `rtmem tune`: what it writes and says whatever the timings (which are not tested here: the
// verdict's rules are, in tests/analyze/paired_rounds_test.cpp). One round can never be
// significant, so with --rounds 1 every planned site is left on the heap, with the figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "plan_helpers.hpp"
#include "rtmem/analyze/plan.hpp"
#include "run_helpers.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::plan;
using rtmem::analyze::plan_site;
using rtmem::analyze::plan_strategy;
using rtmem::test::run_shell;

fs::path scratch() {
    const fs::path d =
        fs::temp_directory_path() /
        ("rtmem-tune-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

plan two_site_plan(bool second_routed) {
    plan p;
    p.program = "/bin/sh";
    p.depth = 1;
    plan_site pool;
    pool.id = 1;
    pool.strategy = plan_strategy::pool;
    pool.block_size = 48;
    pool.block_align = 16;
    pool.reason = "one size";
    pool.frames = {{"/bin/sh", 0x1234}};
    p.sites.push_back(pool);
    plan_site region;
    region.id = 2;
    region.strategy = second_routed ? plan_strategy::region : plan_strategy::heap;
    region.chunk_bytes = 65536;
    region.placement_only = true;
    region.reason = "allocation order";
    region.frames = {{"/bin/sh", 0x5678}};
    p.sites.push_back(region);
    return p;
}

std::string write(const fs::path& dir, const std::string& name, const plan& p) {
    const fs::path path = dir / name;
    std::ofstream(path) << rtmem::analyze::plan_to_json(p);
    return path.string();
}

std::string tune(const std::string& args) {
    return std::string(RTMEM_CLI) + " tune " + args + " 2>&1";
}

TEST(RtmemTune, OneRoundCannotShowAGainSoEverySiteGoesToTheHeapWithTheFigures) {
    const fs::path dir = scratch();
    const std::string in = write(dir, "plan.json", two_site_plan(true));
    const std::string out = (dir / "tuned.json").string();
    const auto r =
        run_shell(tune(in + " -o " + out + " --rounds 1 --repeat 1 -- /bin/sh -c 'echo same'"));
    ASSERT_EQ(r.status, 0) << r.out;
    // Two steps: the pool the trace justifies, then with the [placement] region too.
    EXPECT_NE(r.out.find("the sites the trace justifies (1)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("every planned site (2)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("median of 1 paired rounds"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0 of 2 planned sites kept"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("warning: --rounds 1 cannot show a step faster"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("printed something else"), std::string::npos) << r.out;  // same output
    const plan t = rtmem::analyze::read_plan_file(out);
    ASSERT_EQ(t.sites.size(), 2u);
    for (const auto& s : t.sites) {
        EXPECT_EQ(s.strategy, plan_strategy::heap);
        EXPECT_NE(s.reason.find("rtmem tune: left on rt_heap"), std::string::npos) << s.reason;
        EXPECT_NE(s.reason.find("sign test p = "), std::string::npos) << s.reason;
    }
    EXPECT_EQ(t.sites[0].frames, two_site_plan(true).sites[0].frames);
    EXPECT_TRUE(t.sites[1].placement_only);
    fs::remove_all(dir);
}

// A measurement is --repeat runs: one warm-up run, then per step and round one measurement of
// the base and one of the candidate.
TEST(RtmemTune, AMeasurementRunsTheProgramRepeatTimes) {
    const fs::path dir = scratch();
    const std::string in = write(dir, "plan.json", two_site_plan(true));
    const fs::path log = dir / "runs";
    const auto r =
        run_shell(tune(in + " -o " + (dir / "t.json").string() +
                       " --rounds 1 --repeat 3 -- /bin/sh -c 'echo run >> " + log.string() + "'"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("a measurement is 3 runs"), std::string::npos) << r.out;
    const std::string runs = rtmem::test::slurp(log);
    EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 1 + 2 * 2 * 3) << r.out;
    fs::remove_all(dir);
}

TEST(RtmemTune, APlanRoutingNothingIsCopiedWithoutRunningTheProgram) {
    const fs::path dir = scratch();
    plan p = two_site_plan(false);
    p.sites[0].strategy = plan_strategy::heap;
    const std::string in = write(dir, "plan.json", p);
    const std::string out = (dir / "tuned.json").string();
    const fs::path marker = dir / "ran";
    const auto r =
        run_shell(tune(in + " -o " + out + " -- /bin/sh -c 'touch " + marker.string() + "'"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("routes no site"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(marker));
    EXPECT_EQ(rtmem::analyze::read_plan_file(out).sites.size(), 2u);
    fs::remove_all(dir);
}

TEST(RtmemTune, OutputThatDiffersBetweenRunsIsReported) {
    const fs::path dir = scratch();
    const std::string in = write(dir, "plan.json", two_site_plan(false));
    const auto r = run_shell(tune(in + " -o " + (dir / "t.json").string() +
                                  " --rounds 1 --repeat 1 -- /bin/sh -c 'echo $$'"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("warning: /bin/sh printed something else under"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("than on its first run, under rt_heap alone"), std::string::npos) << r.out;
    const std::size_t first = r.out.find("printed something else");
    EXPECT_EQ(r.out.find("printed something else", first + 1), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(RtmemTune, AFailingProgramABadPlanAndBadOptionsAreClearErrors) {
    const fs::path dir = scratch();
    const std::string in = write(dir, "plan.json", two_site_plan(true));
    const std::string out = (dir / "t.json").string();

    auto r = run_shell(tune(in + " -o " + out + " -- /bin/sh -c 'echo oops >&2; exit 3'"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("exited with 3 under rt_heap alone"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--exit-status"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("oops"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
    // A Ctrl-C reaches the program (tune ignores it while one runs, as system() does): tune
    // then stops, says so, and writes nothing.
    r = run_shell(tune(in + " -o " + out + " -- /bin/sh -c 'kill -INT $$'"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("interrupted: no plan written"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
    // The same program, its status expected: timed like any other.
    r = run_shell(tune(in + " -o " + out + " --rounds 1 --exit-status 3 -- /bin/sh -c 'exit 3'"));
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(fs::exists(out));
    fs::remove(out);

    std::ofstream(dir / "bad.json") << "{\"format\":\"rtmem-plan\",\"version\":1,\"sites\":[{}]}";
    r = run_shell(tune((dir / "bad.json").string() + " -o " + out + " -- /bin/true"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("sites[0]"), std::string::npos) << r.out;

    r = run_shell(tune(in + " -o " + out + " --by speed -- /bin/true"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("--by speed: cpu or wall"), std::string::npos) << r.out;

    r = run_shell(tune(in + " -o /nonexistent-dir/t.json -- /bin/true"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("-o /nonexistent-dir/t.json: directory /nonexistent-dir does not exist"),
              std::string::npos)
        << r.out;

    r = run_shell(tune(in + " -o " + out + " -- /no/such/program"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("/no/such/program"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

}  // namespace
