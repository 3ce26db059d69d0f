// The HTML report is one self-contained file, and a real browser (headless Chromium) draws
// every chart from it. Skipped when chromium is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/report_sections.hpp"
#include "trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::op;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class html_test : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("rtmem_html_" + std::to_string(getpid()));
        fs::create_directories(dir_);
        rtmem::testing::trace_writer w((dir_ / "t.rtt").string());
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        w.stack(1, {0x1100, 0x1200});
        w.stack(2, {0x1300, 0x1200});
        for (std::uint64_t i = 0; i < 5000; ++i) {
            w.event(0, op::malloc, i * 1000, 0x100000 + i * 64, 16 << (i % 8), 1 + i % 2);
            if (i % 3 != 0) w.event(0, op::free, i * 1000 + 500, 0x100000 + i * 64, 0);
        }
        w.finish();
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(html_test, page_is_self_contained_and_carries_every_section_with_html) {
    using namespace rtmem::analyze;
    trace_reader r((dir_ / "t.rtt").string());
    report_data d = analyze_events(r);
    site_names names(r, nullptr);
    std::string page = to_html(describe(r), d, names, r, 10);
    EXPECT_EQ(page.find("http://"), std::string::npos);
    EXPECT_EQ(page.find("https://"), std::string::npos);
    EXPECT_EQ(page.find(" src="), std::string::npos) << "no external scripts or images";
    for (const auto& section : report_sections()) {
        if (section.html == nullptr || !section.titled) continue;
        EXPECT_NE(page.find("<h2>" + escape_html(section.name) + "</h2>"), std::string::npos)
            << section.name;
    }
    EXPECT_NE(page.find("Allocation advice (rtmem advise)"), std::string::npos);
}

TEST_F(html_test, headless_chromium_draws_every_chart) {
    if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "chromium not installed";
    }
    fs::path html = dir_ / "r.html";
    std::string cmd = std::string(RTMEM_CLI) + " report --no-symbols " + (dir_ / "t.rtt").string() +
                      " --html " + html.string() + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    fs::path dom = dir_ / "dom.html";
    std::string browse =
        "timeout 120 chromium --headless --no-sandbox --disable-gpu "
        "--user-data-dir=" +
        (dir_ / "profile").string() + " --virtual-time-budget=5000 --dump-dom file://" +
        html.string() + " >" + dom.string() + " 2>/dev/null";
    ASSERT_EQ(std::system(browse.c_str()), 0);
    std::string out = slurp(dom);
    // 4 canvases, the site table and the flame graph mark themselves drawn.
    EXPECT_NE(out.find("data-rendered=\"6\""), std::string::npos);
    for (const char* id : {"memory", "rate", "sizes", "lifetimes"}) {
        std::size_t at = out.find(std::string("<canvas id=\"") + id + "\"");
        ASSERT_NE(at, std::string::npos) << id;
        std::string tag = out.substr(at, out.find('>', at) - at);
        EXPECT_NE(tag.find("data-drawn=\"1\""), std::string::npos) << id << " not drawn: " << tag;
    }
    EXPECT_NE(out.find("class=\"fg\""), std::string::npos) << "flame graph boxes";
    EXPECT_NE(out.find("<th data-k=\"calls\">"), std::string::npos) << "sortable table";
}

}  // namespace
