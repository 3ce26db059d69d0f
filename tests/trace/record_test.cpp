// End-to-end tests of `rtmem record`: each runs tests/trace/programs/trace_subject in one mode,
// natively and traced, then reads the trace back with trace_reader.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "run_program.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::event;
using rtmem::analyze::op;
using rtmem::analyze::trace_reader;

using rtmem::test::run_result;

run_result run(const std::vector<std::string>& args, const fs::path& dir) {
    return rtmem::test::run_program(args, dir);
}

class record_test : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("rtmem_record_" + std::to_string(getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }

    // Runs the subject natively and under `rtmem record`; output and status must match.
    run_result record(const std::vector<std::string>& mode_args,
                      const std::vector<std::string>& record_flags = {}) {
        std::vector<std::string> native{RTMEM_TRACE_SUBJECT};
        native.insert(native.end(), mode_args.begin(), mode_args.end());
        run_result n = run(native, dir_);
        std::vector<std::string> traced{RTMEM_CLI, "record", "-o", trace_path().string()};
        traced.insert(traced.end(), record_flags.begin(), record_flags.end());
        traced.push_back("--");
        traced.insert(traced.end(), native.begin(), native.end());
        run_result t = run(traced, dir_);
        EXPECT_EQ(n.out, t.out) << "the traced program's output changed";
        EXPECT_EQ(WIFEXITED(n.status), WIFEXITED(t.status));
        if (WIFEXITED(n.status)) {
            EXPECT_EQ(WEXITSTATUS(n.status), WEXITSTATUS(t.status));
        }
        if (WIFSIGNALED(n.status)) {
            EXPECT_TRUE(WIFSIGNALED(t.status));
            if (WIFSIGNALED(t.status)) {
                EXPECT_EQ(WTERMSIG(n.status), WTERMSIG(t.status));
            }
        }
        return t;
    }
    fs::path trace_path() const { return dir_ / "t.rtt"; }

    static std::vector<event> events_of(trace_reader& r) {
        std::vector<event> out;
        event e;
        while (r.next(e)) out.push_back(e);
        return out;
    }
    static std::size_t count(const std::vector<event>& ev, op kind, std::uint64_t size) {
        return static_cast<std::size_t>(std::count_if(ev.begin(), ev.end(), [&](const event& e) {
            return e.kind == kind && e.size == size;
        }));
    }
    static std::size_t count_size(const std::vector<event>& ev, std::uint64_t size) {
        return static_cast<std::size_t>(std::count_if(
            ev.begin(), ev.end(), [&](const event& e) { return e.size == size && e.ptr != 0; }));
    }
    std::vector<fs::path> child_traces() const {
        std::vector<fs::path> out;
        for (const auto& f : fs::directory_iterator(dir_)) {
            if (f.path().filename().string().rfind("t.rtt.", 0) == 0) out.push_back(f.path());
        }
        return out;
    }

    fs::path dir_;
};

TEST_F(record_test, every_entry_point_is_recorded_with_its_kind_size_and_alignment) {
    record({"basic"});
    trace_reader r(trace_path().string());
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.end(), rtmem::analyze::trace_end::exit);
    auto ev = events_of(r);
    EXPECT_EQ(count(ev, op::malloc, 12345), 1u);
    EXPECT_EQ(count(ev, op::calloc, 12345), 1u);
    EXPECT_EQ(count(ev, op::realloc, 23456), 1u);
    EXPECT_EQ(count(ev, op::aligned_alloc, 34567), 1u);
    EXPECT_EQ(count(ev, op::aligned_alloc, 12800), 1u);
    EXPECT_EQ(count(ev, op::aligned_alloc, 45678), 1u);
    EXPECT_EQ(count(ev, op::malloc, 5678), 1u);   // valloc
    EXPECT_EQ(count(ev, op::realloc, 5670), 1u);  // reallocarray
    EXPECT_EQ(count(ev, op::new_scalar, sizeof(int)), 1u);
    EXPECT_EQ(count(ev, op::new_array, 321 * sizeof(int)), 1u);
    EXPECT_EQ(count(ev, op::new_scalar, 64), 1u);              // aligned new
    EXPECT_EQ(count(ev, op::new_array, 4321), 1u);             // nothrow new[]
    EXPECT_EQ(count(ev, op::delete_scalar, sizeof(int)), 1u);  // sized delete
    bool aligned_seen = false;
    for (const auto& e : ev) {
        if (e.kind == op::aligned_alloc && e.size == 34567) {
            EXPECT_EQ(e.align, 64u);
        }
        if (e.kind == op::new_scalar && e.size == 64 && e.align == 64) aligned_seen = true;
    }
    EXPECT_TRUE(aligned_seen) << "operator new(size, align_val_t) keeps its alignment";
    // Time order, and the realloc names the block it replaced.
    for (std::size_t i = 1; i < ev.size(); ++i) EXPECT_LE(ev[i - 1].time_ns, ev[i].time_ns);
    auto m = std::find_if(ev.begin(), ev.end(),
                          [](const event& e) { return e.kind == op::malloc && e.size == 12345; });
    auto re = std::find_if(ev.begin(), ev.end(),
                           [](const event& e) { return e.kind == op::realloc && e.size == 23456; });
    ASSERT_NE(m, ev.end());
    ASSERT_NE(re, ev.end());
    EXPECT_EQ(re->old_ptr, m->ptr);
    // The call site symbolises to the function that called malloc.
    rtmem::analyze::symbolizer sym(r);
    auto stack = r.stack(m->stack);
    ASSERT_FALSE(stack.empty());
    EXPECT_NE(sym.symbolize(stack[0]).find("run_basic"), std::string::npos)
        << sym.symbolize(stack[0]);
}

TEST_F(record_test, threads_and_cross_thread_frees) {
    record({"threads"});
    trace_reader r(trace_path().string());
    EXPECT_GE(r.thread_count(), 5u);
    auto rep = rtmem::analyze::analyze_events(r);
    r.rewind();
    auto ev = events_of(r);
    EXPECT_EQ(count(ev, op::malloc, 777), 20000u);
    EXPECT_GE(rep.cross_thread_frees, 20000u);
    EXPECT_EQ(rep.unknown_frees, 0u);
}

TEST_F(record_test, fork_without_follow_keeps_the_child_out) {
    record({"fork"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    EXPECT_EQ(count_size(ev, 4242), 1u);
    EXPECT_EQ(count_size(ev, 6161), 1u);
    EXPECT_EQ(count_size(ev, 5151), 0u);
    EXPECT_TRUE(child_traces().empty());
}

TEST_F(record_test, fork_with_follow_traces_the_child_into_its_own_file) {
    record({"fork"}, {"--follow-fork"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    EXPECT_EQ(count_size(ev, 4242), 1u);
    EXPECT_EQ(count_size(ev, 5151), 0u);
    auto children = child_traces();
    ASSERT_EQ(children.size(), 1u);
    trace_reader c(children[0].string());
    auto cev = events_of(c);
    EXPECT_EQ(count_size(cev, 5151), 1u);
    EXPECT_EQ(count_size(cev, 4242), 0u) << "the parent's events stay in the parent's file";
    EXPECT_TRUE(c.complete());
}

TEST_F(record_test, exec_ends_the_trace_and_the_new_image_is_followed_only_on_request) {
    record({"exec"});
    {
        trace_reader r(trace_path().string());
        EXPECT_EQ(r.end(), rtmem::analyze::trace_end::exec);
        auto ev = events_of(r);
        EXPECT_EQ(count_size(ev, 3131), 1u);
        EXPECT_EQ(count_size(ev, 3232), 0u);
        EXPECT_TRUE(child_traces().empty());
    }
    record({"exec"}, {"--follow-fork"});
    auto children = child_traces();
    ASSERT_EQ(children.size(), 1u);
    trace_reader c(children[0].string());
    EXPECT_EQ(count_size(events_of(c), 3232), 1u);
}

TEST_F(record_test, vfork_and_exec_in_the_child_leave_the_parent_trace_running) {
    record({"vfork"});
    {
        trace_reader r(trace_path().string());
        EXPECT_EQ(r.end(), rtmem::analyze::trace_end::exit) << "the child's exec ended it";
        auto ev = events_of(r);
        EXPECT_EQ(count_size(ev, 3636), 1u);
        EXPECT_EQ(count_size(ev, 3737), 1u) << "allocations after the vfork child exec'd";
        EXPECT_EQ(count_size(ev, 3232), 0u);
        EXPECT_TRUE(child_traces().empty());
    }
    record({"vfork"}, {"--follow-fork"});
    auto children = child_traces();
    ASSERT_EQ(children.size(), 1u);
    trace_reader c(children[0].string());
    EXPECT_EQ(count_size(events_of(c), 3232), 1u);
    trace_reader r(trace_path().string());
    EXPECT_EQ(count_size(events_of(r), 3737), 1u);
}

TEST_F(record_test, posix_spawn_child_is_not_traced_into_the_parent_file) {
    record({"spawn"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    EXPECT_EQ(count_size(ev, 3434), 1u);
    EXPECT_EQ(count_size(ev, 3535), 1u);
    EXPECT_EQ(count_size(ev, 3333), 0u);
}

TEST_F(record_test, dlopened_code_is_recorded_and_symbolised_after_dlclose) {
    record({"dlopen", RTMEM_TRACE_PLUGIN});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    auto it = std::find_if(ev.begin(), ev.end(), [](const event& e) {
        return e.kind == op::new_scalar && e.size == sizeof(std::vector<char>);
    });
    auto data = std::find_if(ev.begin(), ev.end(), [](const event& e) { return e.size == 2727; });
    ASSERT_NE(it, ev.end());
    ASSERT_NE(data, ev.end());
    rtmem::analyze::symbolizer sym(r);
    std::string all;
    for (auto ip : r.stack(it->stack)) all += sym.symbolize(ip) + "\n";
    EXPECT_NE(all.find("trace_plugin_work"), std::string::npos) << all;
}

// The stack cache recognises a stack by re-reading return-address slots instead of
// unwinding; one call site reached through different chains must still get one stack each.
TEST_F(record_test, every_call_chain_to_one_site_gets_its_own_stack) {
    record({"chains"});
    trace_reader r(trace_path().string());
    rtmem::analyze::symbolizer sym(r);
    std::map<std::uint32_t, std::size_t> by_stack_4343, by_stack_4545, by_stack_4747;
    for (const auto& e : events_of(r)) {
        if (e.kind != op::malloc) continue;
        if (e.size == 4343) ++by_stack_4343[e.stack];
        if (e.size == 4545) ++by_stack_4545[e.stack];
        if (e.size == 4747) ++by_stack_4747[e.stack];
    }
    auto frames = [&](std::uint32_t stack) {
        std::string all;
        for (auto ip : r.stack(stack)) all += sym.symbolize(ip) + "\n";
        return all;
    };
    auto occurrences = [](const std::string& text, const std::string& word) {
        std::size_t n = 0;
        for (auto pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1))
            ++n;
        return n;
    };
    auto dump = [&](const std::map<std::uint32_t, std::size_t>& m) {
        std::string out;
        for (const auto& [stack, calls] : m) {
            out += std::to_string(calls) + " calls:\n" + frames(stack);
        }
        return out;
    };
    // chain_from_first is called from two lines of run_chains: two stacks; chain_from_second one.
    ASSERT_EQ(by_stack_4343.size(), 3u) << dump(by_stack_4343);
    std::size_t first_calls = 0, second_calls = 0;
    for (const auto& [stack, calls] : by_stack_4343) {
        std::string f = frames(stack);
        bool first = f.find("chain_from_first") != std::string::npos;
        bool second = f.find("chain_from_second") != std::string::npos;
        EXPECT_NE(first, second) << f;
        (first ? first_calls : second_calls) += calls;
    }
    EXPECT_EQ(first_calls, 4000u);
    EXPECT_EQ(second_calls, 3000u);
    ASSERT_EQ(by_stack_4545.size(), 4u) << "recursion depths 0..3\n" << dump(by_stack_4545);
    std::set<std::size_t> depths;
    for (const auto& [stack, calls] : by_stack_4545) {
        EXPECT_EQ(calls, 750u);
        depths.insert(occurrences(frames(stack), "chain_recurse"));
    }
    EXPECT_EQ(depths, (std::set<std::size_t>{1, 2, 3, 4}));
    ASSERT_EQ(by_stack_4747.size(), 2u) << dump(by_stack_4747);
    for (const auto& [stack, calls] : by_stack_4747) EXPECT_EQ(calls, 4000u) << frames(stack);
}

TEST_F(record_test, exceptions_and_failed_new_are_recorded) {
    auto t = record({"exceptions"});
    EXPECT_EQ(t.out, "caught 101\n");
    trace_reader r(trace_path().string());
    auto rep = rtmem::analyze::analyze_events(r);
    EXPECT_GE(rep.failed, 1u) << "new of 2^62 bytes threw bad_alloc and is counted as failed";
    EXPECT_GE(rep.allocations, 100u);
}

TEST_F(record_test, signals_interrupting_the_recorder_lose_nothing) {
    record({"signals"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    std::size_t n = 0;
    for (const auto& e : ev) n += e.kind == op::malloc && e.size >= 1000 && e.size < 1007;
    EXPECT_EQ(n, 100000u);
}

TEST_F(record_test, static_constructors_and_thread_local_destructors_are_recorded) {
    record({"tls"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    EXPECT_EQ(count_size(ev, 9191), 1u);
    EXPECT_EQ(count_size(ev, 8181), 1u);
    EXPECT_EQ(count_size(ev, 9292), 1u);
}

TEST_F(record_test, frame_markers_from_the_hook_are_recorded_in_order) {
    record({"frames"});
    trace_reader r(trace_path().string());
    auto ev = events_of(r);
    std::vector<op> kinds;
    for (const auto& e : ev) {
        if (e.kind == op::frame || e.size == 6060) kinds.push_back(e.kind);
    }
    std::vector<op> expected;
    for (int i = 0; i < 3; ++i) {
        expected.push_back(op::malloc);
        expected.push_back(op::frame);
    }
    EXPECT_EQ(kinds, expected);
}

TEST_F(record_test, death_by_an_unhandled_sigint_leaves_a_readable_incomplete_trace) {
    record({"sigint"});
    trace_reader r(trace_path().string());  // must not throw
    EXPECT_FALSE(r.complete());
    EXPECT_NO_THROW((void)rtmem::analyze::analyze_events(r));
}

struct ending {
    const char* mode;
    rtmem::analyze::trace_end end;
};
class record_end_test : public record_test, public ::testing::WithParamInterface<ending> {};

TEST_P(record_end_test, the_trace_is_readable_however_the_program_ends) {
    record({GetParam().mode});
    trace_reader r(trace_path().string());
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.end(), GetParam().end);
    EXPECT_EQ(count_size(events_of(r), 1111), 1u);
}
INSTANTIATE_TEST_SUITE_P(endings, record_end_test,
                         ::testing::Values(ending{"exit", rtmem::analyze::trace_end::exit},
                                           ending{"_exit", rtmem::analyze::trace_end::quick_exit},
                                           ending{"abort", rtmem::analyze::trace_end::signal},
                                           ending{"sigterm", rtmem::analyze::trace_end::signal},
                                           ending{"segv", rtmem::analyze::trace_end::signal}),
                         [](const auto& param_info) {
                             std::string n = param_info.param.mode;
                             std::replace(n.begin(), n.end(), '_', 'q');
                             return n;
                         });

// SIGKILL cannot be caught: what reaches the file is what the writer thread flushed, which
// it does at least every 0.1 s even for a thread that records little.
TEST_F(record_test, sigkill_keeps_what_was_recorded_until_shortly_before) {
    fs::path out = dir_ / "stdout.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args{RTMEM_CLI,           "record", "-o", trace_path().string(), "--",
                                  RTMEM_TRACE_SUBJECT, "kill-me"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t cli = 0;
    ASSERT_EQ(posix_spawn(&cli, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    int subject = 0;
    for (int i = 0; i < 1000 && subject == 0; ++i) {
        usleep(10000);
        std::ifstream in(out);
        std::string word;
        if (in >> word >> subject && word != "ready") subject = 0;
    }
    ASSERT_GT(subject, 0) << "the subject never said it was ready";
    usleep(400000);  // a few writer flush periods
    ASSERT_EQ(kill(subject, SIGKILL), 0);
    int status = 0;
    waitpid(cli, &status, 0);
    trace_reader r(trace_path().string());
    EXPECT_FALSE(r.complete());
    std::size_t n = 0;
    event e;
    while (r.next(e)) n += e.kind == op::malloc && e.size == 6161;
    EXPECT_EQ(n, 100u);
}

// The end of the trace races with threads that keep allocating: every event the tracer
// counted as recorded is in the file, and the rest are counted as dropped, not lost.
TEST_F(record_test, exit_while_threads_allocate_loses_no_recorded_event) {
    auto t = record({"exit-while-busy"});
    EXPECT_EQ(t.out, "exiting\n");
    trace_reader r(trace_path().string());
    EXPECT_TRUE(r.complete());
    std::uint64_t n = 0;
    event e;
    while (r.next(e)) ++n;
    EXPECT_GT(n, 10000u);
    EXPECT_EQ(n, r.recorded_events());
}

TEST_F(record_test, bad_command_line_exits_2_with_a_message) {
    auto r = run({RTMEM_CLI, "record", "--depth", "999", "--", "true"}, dir_);
    EXPECT_TRUE(WIFEXITED(r.status));
    EXPECT_EQ(WEXITSTATUS(r.status), 2);
    auto missing = run({RTMEM_CLI, "report", (dir_ / "missing.rtt").string()}, dir_);
    EXPECT_EQ(WEXITSTATUS(missing.status), 2);
}

static std::size_t occurrences(const std::string& text, const std::string& word) {
    std::size_t n = 0;
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
    return n;
}

TEST_F(record_test, an_unwritable_output_fails_before_the_program_runs) {
    fs::path ran = dir_ / "ran";
    for (const fs::path& out : {dir_ / "missing_dir" / "x.rtt", dir_}) {
        auto r = run({RTMEM_CLI, "record", "-o", out.string(), "--", "/bin/sh", "-c",
                      "touch " + ran.string()},
                     dir_);
        ASSERT_TRUE(WIFEXITED(r.status));
        EXPECT_EQ(WEXITSTATUS(r.status), 2);
        EXPECT_FALSE(fs::exists(ran)) << "the program ran untraced";
        EXPECT_NE(r.err.find("cannot write the trace"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    }
}

TEST_F(record_test, a_static_program_is_refused_with_the_reason) {
    auto r = run({RTMEM_CLI, "record", "-o", trace_path().string(), "--", RTMEM_STATIC_SUBJECT},
                 dir_);
    ASSERT_TRUE(WIFEXITED(r.status));
    EXPECT_EQ(WEXITSTATUS(r.status), 2);
    EXPECT_NE(r.err.find("statically linked"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "it ran";
    EXPECT_EQ(r.err.find("no readable trace"), std::string::npos) << r.err;
}

TEST_F(record_test, a_script_run_by_a_static_interpreter_says_why_nothing_was_recorded) {
    fs::path script = dir_ / "script";
    std::ofstream(script) << "#!" << RTMEM_STATIC_SUBJECT << "\n";
    fs::permissions(script, fs::perms::owner_all);
    auto r = run({RTMEM_CLI, "record", "-o", trace_path().string(), "--", script.string()}, dir_);
    ASSERT_TRUE(WIFEXITED(r.status));
    EXPECT_EQ(WEXITSTATUS(r.status), 0);
    EXPECT_EQ(r.out, "static subject ran\n");
    EXPECT_NE(r.err.find("did not load the tracer"), std::string::npos) << r.err;
}

TEST_F(record_test, a_missing_program_gives_one_error) {
    for (std::string prog : {(dir_ / "no-such-program").string(), std::string("no-such-program-rtmem")}) {
        auto r = run({RTMEM_CLI, "record", "-o", trace_path().string(), "--", prog}, dir_);
        ASSERT_TRUE(WIFEXITED(r.status));
        EXPECT_EQ(WEXITSTATUS(r.status), 127);
        EXPECT_EQ(occurrences(r.err, "\nrtmem: ") + (r.err.rfind("rtmem: ", 0) == 0 ? 1u : 0u), 1u) << r.err;
        EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    }
}

TEST_F(record_test, the_summary_comes_from_the_end_record_and_names_every_trace) {
    auto r = record({"fork"}, {"--follow-fork"});
    trace_reader t(trace_path().string());
    auto children = child_traces();
    ASSERT_EQ(children.size(), 1u);
    EXPECT_NE(r.err.find(std::to_string(t.recorded_events()) + " events"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(trace_path().string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(children[0].string()), std::string::npos) << r.err;
}

}  // namespace
