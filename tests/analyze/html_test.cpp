// The HTML report is one self-contained file whose data (call trees, site table, per-site
// details) says what the page shows. html_browser_test.py drives the page in Chromium.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/report_sections.hpp"
#include "trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using rtmem::analyze::op;

class html_test : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("rtmem_html_" + std::to_string(getpid()));
        fs::create_directories(dir_);
        rtmem::testing::trace_writer w((dir_ / "t.rtt").string());
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        w.stack(1, {0x1100, 0x1200});
        w.stack(2, {0x1300, 0x1200});
        std::vector<std::uint64_t> deep;  // as deep as the recorded depth (16): cut short
        for (std::uint64_t f = 0; f < 16; ++f) deep.push_back(0x2000 + f * 0x100);
        w.stack(3, deep);
        for (std::uint64_t i = 0; i < 5000; ++i) {
            w.event(0, op::malloc, i * 1000, 0x100000 + i * 64, 16 << (i % 8),
                    static_cast<std::uint32_t>(1 + i % 3));
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

// The page's data, as the script reads it.
nlohmann::json page_data(const std::string& page) {
    const std::string open = "const DATA=";
    const std::size_t at = page.find(open);
    if (at == std::string::npos) return {};
    const std::size_t from = at + open.size();
    return nlohmann::json::parse(page.substr(from, page.find(";\n", from) - from));
}

// The names of a node's children in a {"f","p",...} tree.
std::vector<std::string> children(const nlohmann::json& tree, const nlohmann::json& frames, int node) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < tree["p"].size(); ++i) {
        if (tree["p"][i].get<int>() == node) out.push_back(frames[tree["f"][i].get<std::size_t>()]);
    }
    return out;
}
int find_child(const nlohmann::json& tree, const nlohmann::json& frames, int node, const std::string& name) {
    for (std::size_t i = 0; i < tree["p"].size(); ++i) {
        if (tree["p"][i].get<int>() == node && frames[tree["f"][i].get<std::size_t>()] == name)
            return static_cast<int>(i);
    }
    return -1;
}

TEST_F(html_test, call_trees_merge_from_the_root_and_set_truncated_stacks_apart) {
    using namespace rtmem::analyze;
    trace_reader r((dir_ / "t.rtt").string());
    report_data d = analyze_events(r);
    site_names names(r, nullptr);
    const nlohmann::json data = page_data(to_html(describe(r), d, names, r, 10));
    ASSERT_FALSE(data.is_null());
    const auto& frames = data["frames"];
    const auto& down = data["down"];
    // Top-down: both stacks share their outermost frame 0x1200, so it is one node.
    EXPECT_EQ(frames[down["f"][0].get<std::size_t>()], "all allocations");
    EXPECT_EQ(down["b"][0].get<std::uint64_t>(), d.bytes_allocated);
    const int outer = find_child(down, frames, 0, "0x1200");
    ASSERT_GE(outer, 0);
    auto inner = children(down, frames, outer);
    std::sort(inner.begin(), inner.end());
    EXPECT_EQ(inner, (std::vector<std::string>{"0x1100", "0x1300"}));
    // The 16-frame stack filled the recorded depth: it hangs under the marker node.
    const auto top = children(down, frames, 0);
    ASSERT_EQ(top.size(), 2u);
    const int cut = find_child(down, frames, 0,
                               "[outer frames not recorded: stack deeper than --depth 16]");
    ASSERT_GE(cut, 0);
    EXPECT_EQ(children(down, frames, cut), (std::vector<std::string>{"0x2f00"}));
    EXPECT_EQ(data["limits"]["cut_stacks"], 1);
    // Bottom-up: the allocating functions first, their callers below.
    const auto& up = data["up"];
    auto leaves = children(up, frames, 0);
    std::sort(leaves.begin(), leaves.end());
    EXPECT_EQ(leaves, (std::vector<std::string>{"0x1100", "0x1300", "0x2000"}));
    EXPECT_EQ(children(up, frames, find_child(up, frames, 0, "0x1100")),
              (std::vector<std::string>{"0x1200"}));
    // The site table accounts for every byte; each site points at its flame graph leaf.
    const auto& sites = data["sites"];
    std::uint64_t bytes = 0;
    for (const auto& b : sites["bytes"]) bytes += b.get<std::uint64_t>();
    EXPECT_EQ(bytes, d.bytes_allocated);
    for (std::size_t i = 0; i < sites["stack"].size(); ++i) {
        const int node = sites["node"][i];
        ASSERT_GE(node, 0);
        EXPECT_EQ(down["b"][static_cast<std::size_t>(node)], sites["bytes"][i]) << "leaf of one site";
    }
}

TEST_F(html_test, per_site_details_count_the_sites_own_blocks) {
    using namespace rtmem::analyze;
    trace_reader r((dir_ / "t.rtt").string());
    report_data d = analyze_events(r);
    site_names names(r, nullptr);
    const nlohmann::json data = page_data(to_html(describe(r), d, names, r, 10));
    for (const auto& s : d.sites) {
        const auto& detail = data["detail"]["sites"][std::to_string(s.stack)];
        ASSERT_TRUE(detail.is_object()) << s.stack;
        std::uint64_t calls = 0;
        for (std::size_t i = 1; i < detail["s"].size(); ++i) calls += detail["s"][i].get<std::uint64_t>();
        EXPECT_EQ(calls, s.calls);
        std::uint64_t high = 0;
        for (const auto& m : detail["m"]) high = std::max(high, m.get<std::uint64_t>());
        EXPECT_GE(high, s.peak_bytes);
        // Each point is the highest level in its interval: the last one is at least what leaked,
        // and for stack 1, whose blocks are never freed, it is exactly that and the highest.
        EXPECT_GE(detail["m"].back().get<std::uint64_t>(), s.live_bytes);
        if (s.stack == 1) {
            EXPECT_EQ(detail["m"].back().get<std::uint64_t>(), s.live_bytes);
            EXPECT_EQ(high, s.live_bytes);
        }
    }
    // The advice section named one site per row of its table.
    const std::string page = to_html(describe(r), d, names, r, 10);
    std::size_t rows = 0;
    const std::size_t body = page.find("<table class=\"advice\">");
    ASSERT_NE(body, std::string::npos);
    for (std::size_t at = page.find("<tr><td>", body); at < page.find("</table>", body);
         at = page.find("<tr><td>", at + 1))
        ++rows;
    EXPECT_EQ(data["advised"].size(), rows);
}

}  // namespace
