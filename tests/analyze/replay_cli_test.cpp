// `rtmem replay` and `rtmem advise --measure` from the command line: the progress bar goes to
// stderr only (stdout stays parseable JSON), and only when asked for or on a terminal.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "scratch_dir_test.hpp"
#include "trace_writer.hpp"

namespace {

using rtmem::analyze::op;
using rtmem::testing::trace_writer;

class replay_cli_test : public rtmem::testing::scratch_dir_test {
  protected:
    /// Two sites: one frees its blocks in LIFO order (stack advice), one churns a fixed size.
    std::string write_trace() {
        std::string p = path("replay.rtt");
        trace_writer w(p);
        w.stack(1, {0x1100, 0x1200});
        w.stack(2, {0x2100, 0x2200});
        std::uint64_t t = 10, ptr = 0x10000;
        for (int round = 0; round < 200; ++round) {
            std::uint64_t held[8];
            for (auto& h : held) {
                h = ptr += 0x100;
                w.event(0, op::malloc, t += 10, h, 64 + 8 * static_cast<std::uint64_t>(round % 4), 1,
                        0, 20);
            }
            for (int k = 7; k >= 0; --k) w.event(0, op::free, t += 10, held[k], 0, 0, 0, 15);
            const std::uint64_t q = ptr += 0x100;
            w.event(0, op::malloc, t += 10, q, 48, 2, 0, 20);
            w.event(0, op::free, t += 10, q, 0, 0, 0, 15);
        }
        w.finish();
        return p;
    }
    int run(const std::string& args, std::string& out, std::string& err) {
        const std::string cmd = std::string(RTMEM_CLI) + " " + args + " >" + path("out.txt") +
                                " 2>" + path("err.txt");
        const int status = std::system(cmd.c_str());
        out = slurp(path("out.txt"));
        err = slurp(path("err.txt"));
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    static std::string slurp(const std::string& file) {
        std::ifstream in(file);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
};

TEST_F(replay_cli_test, progress_goes_to_stderr_and_json_stays_clean) {
    const std::string trace = write_trace();
    std::string out, err;
    ASSERT_EQ(run("replay " + trace + " --json --progress -r 2 --backends glibc", out, err), 0)
        << err;
    const auto j = nlohmann::json::parse(out);  // throws (fails) if the bar leaked into stdout
    EXPECT_EQ(j.at("repetitions").get<unsigned>(), 2u);
    EXPECT_EQ(out.find("rtmem replay ["), std::string::npos);
    EXPECT_NE(err.find("rtmem replay ["), std::string::npos) << err;
    EXPECT_NE(err.find("100%"), std::string::npos) << err;
}

TEST_F(replay_cli_test, no_progress_bar_when_stderr_is_not_a_terminal) {
    const std::string trace = write_trace();
    std::string out, err;
    ASSERT_EQ(run("replay " + trace + " -r 1 --backends glibc", out, err), 0) << err;
    EXPECT_EQ(err.find("rtmem replay ["), std::string::npos) << err;
    EXPECT_NE(out.find("medians of 1 repetitions"), std::string::npos) << out;
}

TEST_F(replay_cli_test, advise_measure_ranks_by_the_replay) {
    const std::string trace = write_trace();
    std::string out, err;
    ASSERT_EQ(run("advise " + trace + " --measure --json --progress -r 2", out, err), 0) << err;
    const auto j = nlohmann::json::parse(out);
    EXPECT_EQ(j.at("ranking").get<std::string>(), "replay");
    EXPECT_EQ(j.at("measurement").at("baseline").get<std::string>(), "glibc");
    EXPECT_EQ(j.at("measurement").at("repetitions").get<unsigned>(), 2u);
    EXPECT_EQ(j.at("recorded_ns").get<std::uint64_t>(), 200u * (9 * 20 + 9 * 15));
    bool any_measured = false;
    for (const auto& s : j.at("sites")) any_measured |= s.contains("measured_saved_ns");
    EXPECT_TRUE(any_measured) << out;
    EXPECT_NE(err.find("rtmem advise --measure ["), std::string::npos) << err;

    ASSERT_EQ(run("advise " + trace + " --json", out, err), 0) << err;
    EXPECT_EQ(nlohmann::json::parse(out).at("ranking").get<std::string>(), "model estimate");
    ASSERT_EQ(run("advise " + trace, out, err), 0) << err;
    EXPECT_NE(out.find("Time in the allocator as recorded: "), std::string::npos) << out;
    EXPECT_NE(out.find("saved (model)"), std::string::npos) << out;
}

/// The text after `prefix` up to the next space or newline.
std::string word_after(const std::string& text, const std::string& prefix) {
    const auto at = text.find(prefix);
    if (at == std::string::npos) return "(missing: " + prefix + ")";
    const auto from = at + prefix.size();
    return text.substr(from, text.find_first_of(" \n", text.find(' ', from) + 1) - from);
}

TEST_F(replay_cli_test, report_and_advise_show_one_recorded_allocator_time) {
    const std::string trace = write_trace();
    std::string report, advice, err;
    ASSERT_EQ(run("report " + trace, report, err), 0) << err;
    ASSERT_EQ(run("advise " + trace, advice, err), 0) << err;
    const std::string in_report = word_after(report, "measured time in the allocator ");
    EXPECT_EQ(in_report, "63.0 us") << report;  // 200 rounds x (9 x 20 + 9 x 15) ns
    EXPECT_EQ(word_after(advice, "Time in the allocator as recorded: "), in_report) << advice;
    EXPECT_NE(report.find(in_report + " as recorded"), std::string::npos) << report;
}

}  // namespace
