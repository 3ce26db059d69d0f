// `rtmem record --sample`: exact counts beside a sample of the events, estimates that match
// the truth of a full trace of the same program, and the in-process control API from C
// (tests/trace/programs/sampled_subject.c). Sampling uses a fixed seed (RTMEM_TRACE_SEED), so
// a run samples the same blocks every time; the tolerances are ~4 standard deviations anyway.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "run_program.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::event;
using rtmem::analyze::op;
using rtmem::analyze::trace_reader;

// Runs `args` with `extra_env` added; returns stdout (stderr goes to a file in `dir`).
std::string run(const std::vector<std::string>& args, const fs::path& dir,
                const std::vector<std::string>& extra_env = {}, int* status = nullptr) {
    const auto r = rtmem::test::run_program(args, dir, extra_env);
    if (status != nullptr) *status = r.status;
    return r.out;
}

// The subject's `basic` mode allocates one block of a distinct size through each entry point;
// at a 1-byte interval every one of them is sampled: each must appear exactly once, by kind.
void expect_each_entry_point_of_basic_once(trace_reader& r) {
    std::map<std::pair<op, std::uint64_t>, int> seen;
    event e;
    while (r.next(e)) ++seen[{e.kind, e.size}];
    EXPECT_EQ((seen[{op::malloc, 12345}]), 1);
    EXPECT_EQ((seen[{op::calloc, 12345}]), 1);
    EXPECT_EQ((seen[{op::realloc, 23456}]), 1);
    EXPECT_EQ((seen[{op::aligned_alloc, 34567}]), 1);
    EXPECT_EQ((seen[{op::new_array, 321 * sizeof(int)}]), 1);
    EXPECT_EQ((seen[{op::new_scalar, 64}]), 1);
    EXPECT_EQ((seen[{op::new_array, 4321}]), 1);
}

class sampled_test : public ::testing::Test {
  protected:
    void SetUp() override {
        if (std::string(RTMEM_SAMPLED_SUBJECT).empty()) GTEST_SKIP() << "no subject (sanitized build)";
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("rtmem_sampled_" + std::to_string(getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        if (!HasFailure() && !dir_.empty()) fs::remove_all(dir_);
    }

    // Estimated bytes per site, by the site's module+offset key (stable across runs).
    static std::map<std::string, rtmem::analyze::site_stats> sites_by_key(trace_reader& r) {
        rtmem::analyze::symbolizer sym(r);
        rtmem::analyze::site_names names(r, &sym);
        auto rep = rtmem::analyze::analyze_events(r);
        std::map<std::string, rtmem::analyze::site_stats> out;
        for (const auto& s : rep.sites) {
            auto& o = out[names.key(s.stack)];
            o.bytes += s.bytes;
            o.calls += s.calls;
            o.bytes_variance += s.bytes_variance;
        }
        return out;
    }

    fs::path dir_;
};

TEST_F(sampled_test, exact_counts_match_a_full_trace_and_estimates_match_the_truth) {
    std::string full = (dir_ / "full.rtt").string(), sampled = (dir_ / "sampled.rtt").string();
    EXPECT_EQ(run({RTMEM_CLI, "record", "-o", full, "--", RTMEM_SAMPLED_SUBJECT, "sizes"}, dir_),
              "sizes done\n");
    EXPECT_EQ(run({RTMEM_CLI, "record", "--sample", "64K", "-o", sampled, "--",
                   RTMEM_SAMPLED_SUBJECT, "sizes"},
                  dir_, {"RTMEM_TRACE_SEED=7"}),
              "sizes done\n");
    trace_reader f(full), s(sampled);
    EXPECT_EQ(f.sample_interval(), 0u);
    EXPECT_EQ(s.sample_interval(), 65536u);
    ASSERT_NE(f.exact_counts(), nullptr);
    ASSERT_NE(s.exact_counts(), nullptr);
    // Every call counted, recorded or not: the same in both runs, and what the full trace holds.
    auto truth = rtmem::analyze::analyze_events(f);
    for (std::size_t k = 0; k < rtmem::analyze::op_count; ++k) {
        if (static_cast<op>(k) == op::frame) continue;
        EXPECT_EQ(s.exact_counts()->calls[k], f.exact_counts()->calls[k]) << op_name(static_cast<op>(k));
        EXPECT_EQ(s.exact_counts()->bytes[k], f.exact_counts()->bytes[k]) << op_name(static_cast<op>(k));
        EXPECT_EQ(f.exact_counts()->calls[k], truth.calls[k]) << op_name(static_cast<op>(k));
    }
    EXPECT_GE(f.exact_counts()->calls[static_cast<std::size_t>(op::malloc)], 225400u);
    EXPECT_LT(s.event_count() * 20, f.event_count()) << "a sample, not every call";

    // Totals: within ~4 standard deviations of the truth.
    auto est = rtmem::analyze::analyze_events(s);
    auto sd4 = [](double variance) { return 4 * std::sqrt(variance); };
    EXPECT_TRUE(est.exact_calls);
    EXPECT_EQ(est.calls[static_cast<std::size_t>(op::malloc)], truth.calls[static_cast<std::size_t>(op::malloc)]);
    EXPECT_GT(est.bytes_allocated_variance, 0);
    EXPECT_NEAR(static_cast<double>(est.bytes_allocated), static_cast<double>(truth.bytes_allocated),
                sd4(est.bytes_allocated_variance));
    EXPECT_NEAR(static_cast<double>(est.allocations), static_cast<double>(truth.allocations),
                sd4(est.allocations_variance));
    EXPECT_NEAR(static_cast<double>(est.leaked_bytes), static_cast<double>(truth.leaked_bytes),
                sd4(est.leaked_bytes_variance) + 1024);

    // Per site (the four sites of sampled_subject.c and the realloc one): within 4 standard
    // deviations, and within 10% for sites of 10 MiB or more.
    auto truth_sites = sites_by_key(f), est_sites = sites_by_key(s);
    int checked = 0;
    for (const auto& [key, t] : truth_sites) {
        if (t.bytes < (1u << 20)) continue;
        auto it = est_sites.find(key);
        ASSERT_NE(it, est_sites.end()) << "site of " << t.bytes << " B not sampled";
        auto tb = static_cast<double>(t.bytes), eb = static_cast<double>(it->second.bytes);
        EXPECT_NEAR(eb, tb, sd4(it->second.bytes_variance) + 1) << key;
        if (t.bytes >= (10u << 20)) {
            EXPECT_NEAR(eb, tb, 0.1 * tb) << key;
        }
        ++checked;
    }
    EXPECT_GE(checked, 4);

    // The outputs say what is estimated, and replay refuses a sample.
    std::string text = run({RTMEM_CLI, "report", "--no-symbols", sampled}, dir_);
    EXPECT_NE(text.find("sampled trace: one sample per 64.0 KiB"), std::string::npos) << text;
    EXPECT_NE(text.find("bytes allocated ~"), std::string::npos) << text;
    EXPECT_NE(text.find("calls (exact):"), std::string::npos) << text;
    std::string advice = run({RTMEM_CLI, "advise", sampled}, dir_);
    EXPECT_NE(advice.find("Sampled trace (one sample per 64.0 KiB"), std::string::npos) << advice;
    int status = 0;
    run({RTMEM_CLI, "replay", sampled}, dir_, {}, &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

TEST_F(sampled_test, start_stop_and_dump_from_c) {
    std::string trace = (dir_ / "t.rtt").string(), dump = (dir_ / "dump.rtt").string();
    std::string out = run({RTMEM_CLI, "record", "--sample", "4K", "--paused", "-o", trace, "--",
                           RTMEM_SAMPLED_SUBJECT, "control", dump},
                          dir_, {"RTMEM_TRACE_SEED=3"});
    EXPECT_EQ(out,
              "start ok \n"
              "dump ok \n"
              "dump(NULL) failed a NULL or empty argument\n"
              "dump(bad dir) failed the trace could not be written\n"
              "stop ok \n"
              "start ok \n");
    auto sized = [](trace_reader& r, op kind, std::uint64_t size) {
        std::size_t n = 0;
        event e;
        r.rewind();
        while (r.next(e)) n += e.kind == kind && e.size == size ? 1 : 0;
        return n;
    };
    auto freed = [](trace_reader& r) {  // frees of the 300 recorded 256 KiB blocks
        std::map<std::uint64_t, int> live;
        std::size_t n = 0;
        event e;
        r.rewind();
        while (r.next(e)) {
            if (e.kind == op::malloc && e.size == 256 * 1024) live[e.ptr] = 1;
            if (e.kind == op::free && live.erase(e.ptr) != 0) ++n;
        }
        return n;
    };
    trace_reader t(trace);
    EXPECT_TRUE(t.complete());
    EXPECT_EQ(sized(t, op::malloc, 128 * 1024), 0u) << "allocated before start";
    EXPECT_EQ(sized(t, op::malloc, 192 * 1024), 0u) << "allocated while stopped";
    EXPECT_EQ(sized(t, op::malloc, 256 * 1024), 300u);
    EXPECT_EQ(freed(t), 300u) << "frees of sampled blocks are recorded while stopped";
    auto rep = rtmem::analyze::analyze_events(t);
    EXPECT_EQ(rep.unknown_frees, 0u);
    // Counted only while recording: the 300 recorded blocks (and stdio's buffer), not the 200
    // made before start or while stopped.
    std::uint64_t mallocs = t.exact_counts()->calls[static_cast<std::size_t>(op::malloc)];
    EXPECT_GE(mallocs, 300u);
    EXPECT_LT(mallocs, 310u);

    // The dump: complete and readable, everything up to the call, nothing after.
    trace_reader d(dump);
    EXPECT_TRUE(d.complete());
    EXPECT_EQ(d.end(), rtmem::analyze::trace_end::dump);
    EXPECT_EQ(d.sample_interval(), 4096u);
    EXPECT_EQ(sized(d, op::malloc, 256 * 1024), 300u);
    EXPECT_EQ(freed(d), 0u);
    ASSERT_NE(d.exact_counts(), nullptr);
    EXPECT_GE(d.exact_counts()->calls[static_cast<std::size_t>(op::malloc)], 300u);

    // Not traced: every call fails with its error, and the program goes on.
    out = run({RTMEM_SAMPLED_SUBJECT, "control", dump + ".native"}, dir_);
    EXPECT_NE(out.find("start failed the process is not being recorded"), std::string::npos) << out;
    EXPECT_NE(out.find("dump(NULL) failed a NULL or empty argument"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dump + ".native"));
}

// Interval 1 byte: every block of 40 bytes or more is sampled (p = 1 - e^-40), so each entry
// point's events are there, new/delete kept apart from malloc/free, every free matched.
TEST_F(sampled_test, every_entry_point_records_when_sampled) {
    std::string trace = (dir_ / "t.rtt").string();
    run({RTMEM_CLI, "record", "--sample", "1", "-o", trace, "--", RTMEM_TRACE_SUBJECT, "basic"}, dir_);
    trace_reader r(trace);
    EXPECT_EQ(r.sample_interval(), 1u);
    expect_each_entry_point_of_basic_once(r);
    auto rep = rtmem::analyze::analyze_events(r);
    EXPECT_EQ(rep.unknown_frees, 0u);
    ASSERT_NE(r.exact_counts(), nullptr);
    EXPECT_GE(r.exact_counts()->calls[static_cast<std::size_t>(op::new_scalar)], 2u);
    EXPECT_GE(r.exact_counts()->calls[static_cast<std::size_t>(op::delete_array)], 1u);
}

// A large interval keeps almost every call on the fast path (thread_gate.hpp): its counts are
// still every call's, per entry point, threads, sized deletes and a followed fork included.
TEST_F(sampled_test, the_fast_path_counts_every_entry_point_exactly) {
    for (const char* mode : {"basic", "threads", "fork"}) {
        std::string full = (dir_ / (std::string(mode) + "_full.rtt")).string();
        std::string sampled = (dir_ / (std::string(mode) + "_sampled.rtt")).string();
        run({RTMEM_CLI, "record", "--follow-fork", "-o", full, "--", RTMEM_TRACE_SUBJECT, mode},
            dir_);
        run({RTMEM_CLI, "record", "--follow-fork", "--sample", "1G", "-o", sampled, "--",
             RTMEM_TRACE_SUBJECT, mode},
            dir_);
        std::vector<std::pair<std::string, std::string>> pairs{{full, sampled}};
        if (std::string(mode) == "fork") {  // the child's traces: <path>.<pid>
            std::string child_full, child_sampled;
            for (const auto& entry : fs::directory_iterator(dir_)) {
                const std::string name = entry.path().string();
                if (name.starts_with(full + ".")) child_full = name;
                if (name.starts_with(sampled + ".")) child_sampled = name;
            }
            ASSERT_FALSE(child_full.empty());
            ASSERT_FALSE(child_sampled.empty());
            pairs.emplace_back(child_full, child_sampled);
        }
        for (const auto& [f_path, s_path] : pairs) {
            trace_reader f(f_path), s(s_path);
            ASSERT_NE(f.exact_counts(), nullptr) << f_path;
            ASSERT_NE(s.exact_counts(), nullptr) << s_path;
            EXPECT_EQ(s.sample_interval(), 1u << 30);
            for (std::size_t k = 0; k < rtmem::analyze::op_count; ++k) {
                if (static_cast<op>(k) == op::frame) continue;
                EXPECT_EQ(s.exact_counts()->calls[k], f.exact_counts()->calls[k])
                    << s_path << " " << op_name(static_cast<op>(k));
                EXPECT_EQ(s.exact_counts()->bytes[k], f.exact_counts()->bytes[k])
                    << s_path << " " << op_name(static_cast<op>(k));
            }
        }
    }
}

TEST_F(sampled_test, a_pause_reaches_threads_already_on_the_fast_path) {
    std::string trace = (dir_ / "t.rtt").string();
    EXPECT_EQ(run({RTMEM_CLI, "record", "--sample", "1G", "-o", trace, "--", RTMEM_SAMPLED_SUBJECT,
                   "pause-threads"},
                  dir_),
              "stop ok \nstart ok \n");
    trace_reader t(trace);
    ASSERT_NE(t.exact_counts(), nullptr);
    const auto malloc_index = static_cast<std::size_t>(op::malloc);
    // The worker's 1500 counted blocks of 1000 B, and a few small ones of the C runtime; the
    // 700 made while stopped would add 700,000 B.
    EXPECT_GE(t.exact_counts()->bytes[malloc_index], 1500u * 1000u);
    EXPECT_LT(t.exact_counts()->bytes[malloc_index], 1500u * 1000u + 100000u);
    EXPECT_GE(t.exact_counts()->calls[static_cast<std::size_t>(op::free)], 1500u);
    EXPECT_LT(t.exact_counts()->calls[static_cast<std::size_t>(op::free)], 1600u);
}

// `--heap rtmem`: the program runs on rt_heap with the sampler inside librtmem-malloc-sampled.so.
// Same trace as the preload writes: exact counts equal a full trace's, estimates near the
// truth, sites named as the preload names them, pauses reaching running threads.
TEST_F(sampled_test, sampling_inside_rt_heap_writes_the_same_trace) {
    std::string full = (dir_ / "full.rtt").string(), heap = (dir_ / "heap.rtt").string();
    std::string glibc = (dir_ / "glibc.rtt").string();
    EXPECT_EQ(run({RTMEM_CLI, "record", "-o", full, "--", RTMEM_SAMPLED_SUBJECT, "sizes"}, dir_),
              "sizes done\n");
    const auto on_heap =
        rtmem::test::run_program({RTMEM_CLI, "record", "--sample", "64K", "--heap", "rtmem", "-o",
                                  heap, "--", RTMEM_SAMPLED_SUBJECT, "sizes"},
                                 dir_, {"RTMEM_TRACE_SEED=7", "RTMEM_MALLOC_STATS=1"});
    EXPECT_EQ(on_heap.out, "sizes done\n");
    // rt_heap served the program (the stats line of librtmem-malloc at exit).
    EXPECT_NE(on_heap.err.find("rtmem run: pid"), std::string::npos) << on_heap.err;
    EXPECT_NE(on_heap.err.find("rt_heap"), std::string::npos) << on_heap.err;
    run({RTMEM_CLI, "record", "--sample", "64K", "-o", glibc, "--", RTMEM_SAMPLED_SUBJECT, "sizes"},
        dir_, {"RTMEM_TRACE_SEED=7"});
    trace_reader f(full), h(heap);
    EXPECT_TRUE(h.complete());
    EXPECT_EQ(h.sample_interval(), 65536u);
    ASSERT_NE(f.exact_counts(), nullptr);
    ASSERT_NE(h.exact_counts(), nullptr);
    for (std::size_t k = 0; k < rtmem::analyze::op_count; ++k) {
        if (static_cast<op>(k) == op::frame) continue;
        EXPECT_EQ(h.exact_counts()->calls[k], f.exact_counts()->calls[k])
            << op_name(static_cast<op>(k));
        EXPECT_EQ(h.exact_counts()->bytes[k], f.exact_counts()->bytes[k])
            << op_name(static_cast<op>(k));
    }
    auto truth = rtmem::analyze::analyze_events(f);
    auto est = rtmem::analyze::analyze_events(h);
    EXPECT_EQ(est.unknown_frees, 0u);
    EXPECT_LT(h.event_count() * 20, f.event_count()) << "a sample, not every call";
    EXPECT_NEAR(static_cast<double>(est.bytes_allocated),
                static_cast<double>(truth.bytes_allocated), 4 * std::sqrt(est.bytes_allocated_variance));
    EXPECT_NEAR(static_cast<double>(est.leaked_bytes), static_cast<double>(truth.leaked_bytes),
                4 * std::sqrt(est.leaked_bytes_variance) + 1024);
    // Stacks: the sites are the subject's, keyed as in the preload's sampled trace (the 1 MiB
    // site is recorded almost surely in both: ~400 MiB of it).
    trace_reader g(glibc);
    auto heap_sites = sites_by_key(h), glibc_sites = sites_by_key(g);
    std::string large_key;
    for (const auto& [key, site] : glibc_sites) {
        if (site.bytes > 300u << 20) large_key = key;
    }
    ASSERT_FALSE(large_key.empty());
    ASSERT_TRUE(heap_sites.contains(large_key)) << large_key;
    EXPECT_NEAR(static_cast<double>(heap_sites[large_key].bytes), 400.0 * (1 << 20),
                40.0 * (1 << 20));

    // A pause reaches a thread already on the fast path here too.
    std::string paused = (dir_ / "paused.rtt").string();
    EXPECT_EQ(run({RTMEM_CLI, "record", "--sample", "1G", "--heap", "rtmem", "-o", paused, "--",
                   RTMEM_SAMPLED_SUBJECT, "pause-threads"},
                  dir_),
              "stop ok \nstart ok \n");
    trace_reader p(paused);
    ASSERT_NE(p.exact_counts(), nullptr);
    EXPECT_GE(p.exact_counts()->bytes[static_cast<std::size_t>(op::malloc)], 1500u * 1000u);
    EXPECT_LT(p.exact_counts()->bytes[static_cast<std::size_t>(op::malloc)],
              1500u * 1000u + 100000u);
}

// Every entry point of librtmem-malloc-sampled.so counts and records as the preload does.
TEST_F(sampled_test, sampling_inside_rt_heap_counts_every_entry_point) {
    for (const char* mode : {"basic", "threads"}) {
        std::string full = (dir_ / (std::string(mode) + "_full.rtt")).string();
        std::string heap = (dir_ / (std::string(mode) + "_heap.rtt")).string();
        run({RTMEM_CLI, "record", "-o", full, "--", RTMEM_TRACE_SUBJECT, mode}, dir_);
        run({RTMEM_CLI, "record", "--sample", "1G", "--heap", "rtmem", "-o", heap, "--",
             RTMEM_TRACE_SUBJECT, mode},
            dir_);
        trace_reader f(full), h(heap);
        ASSERT_NE(f.exact_counts(), nullptr);
        ASSERT_NE(h.exact_counts(), nullptr) << heap;
        for (std::size_t k = 0; k < rtmem::analyze::op_count; ++k) {
            if (static_cast<op>(k) == op::frame) continue;
            EXPECT_EQ(h.exact_counts()->calls[k], f.exact_counts()->calls[k])
                << mode << " " << op_name(static_cast<op>(k));
            EXPECT_EQ(h.exact_counts()->bytes[k], f.exact_counts()->bytes[k])
                << mode << " " << op_name(static_cast<op>(k));
        }
    }
    // Interval 1 byte: each entry point's blocks recorded, every free matched.
    std::string every = (dir_ / "every.rtt").string();
    run({RTMEM_CLI, "record", "--sample", "1", "--heap", "rtmem", "-o", every, "--",
         RTMEM_TRACE_SUBJECT, "basic"},
        dir_);
    trace_reader r(every);
    expect_each_entry_point_of_basic_once(r);
    EXPECT_EQ(rtmem::analyze::analyze_events(r).unknown_frees, 0u);
}

TEST_F(sampled_test, heap_rtmem_needs_sample_and_a_known_heap) {
    int status = 0;
    for (std::vector<std::string> extra :
         {std::vector<std::string>{"--heap", "rtmem"},
          std::vector<std::string>{"--sample", "4K", "--heap", "tcmalloc"}}) {
        std::vector<std::string> args{RTMEM_CLI, "record"};
        args.insert(args.end(), extra.begin(), extra.end());
        for (const char* a : {"-o", "", "--", RTMEM_SAMPLED_SUBJECT, "sizes"}) args.emplace_back(a);
        args[args.size() - 4] = (dir_ / "x.rtt").string();
        const auto r = rtmem::test::run_program(args, dir_);
        status = r.status;
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << extra.back();
        EXPECT_FALSE(fs::exists(dir_ / "x.rtt"));
        if (extra.size() == 2) {
            EXPECT_NE(r.err.find("--heap rtmem needs --sample"), std::string::npos) << r.err;
        }
    }
}

TEST_F(sampled_test, bad_sample_sizes_are_refused_before_the_run) {
    int status = 0;
    for (const char* bad : {"0", "12X", "K", "-5", "99999999999999"}) {
        run({RTMEM_CLI, "record", "--sample", bad, "-o", (dir_ / "x.rtt").string(), "--",
             RTMEM_SAMPLED_SUBJECT, "sizes"},
            dir_, {}, &status);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << bad;
        EXPECT_FALSE(fs::exists(dir_ / "x.rtt")) << bad;
    }
}

}  // namespace
