// `rtmem` option checks: --version, and counts out of range rejected with a short message that
// names the option (CLI11's own range check printed a 309-digit bound).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "scratch_dir_test.hpp"

namespace {

class cli_options_test : public rtmem::testing::scratch_dir_test {};

TEST_F(cli_options_test, version_prints_the_project_version) {
    std::string out = path("version.txt");
    int status = std::system((std::string(RTMEM_CLI) + " --version >" + out).c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    std::ifstream in(out);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_EQ(text.rfind("rtmem ", 0), 0u) << text;
    EXPECT_NE(text.find('.'), std::string::npos) << text;
}

TEST_F(cli_options_test, counts_out_of_range_exit_2_with_a_short_message) {
    struct bad_case {
        const char* args;
        const char* option;
    };
    // The trace does not exist: the option must be refused before the file is looked at.
    std::string trace = path("none.rtt");
    for (bad_case c : {bad_case{"report --top 0", "--top"}, bad_case{"diff --top 0", "--top"},
                       bad_case{"replay -r 0", "--repetitions"},
                       bad_case{"advise --site-depth -1", "--site-depth"},
                       bad_case{"replay --site-depth -1", "--site-depth"},
                       bad_case{"advise --top -2", "--top"}}) {
        std::string args = c.args;
        std::string files = args.rfind("diff", 0) == 0 ? trace + " " + trace : trace;
        std::string cmd =
            std::string(RTMEM_CLI) + " " + args + " " + files + " >/dev/null 2>" + path("err.txt");
        int status = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(status)) << c.args;
        EXPECT_EQ(WEXITSTATUS(status), 2) << c.args;
        std::ifstream in(path("err.txt"));
        std::string err{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        EXPECT_NE(err.find(c.option), std::string::npos) << c.args << ": " << err;
        EXPECT_NE(err.find("must be at least"), std::string::npos) << c.args << ": " << err;
        EXPECT_EQ(err.find("17976931"), std::string::npos) << c.args << ": " << err;
        EXPECT_LT(err.size(), 200u) << c.args << ": " << err;
    }
}

}  // namespace
