// The HTML report's call trees: merging by function name, and the node cap that keeps the
// page small (the pruned children of a node become one `other` node, and no byte is lost).
#include <gtest/gtest.h>

#include <vector>

#include "html/call_tree.hpp"

namespace {

using rtmem::analyze::call_tree;
using rtmem::analyze::frame_names;

// Every node's metric is the sum of its children's when all bytes are at the leaves.
void expect_sums(const nlohmann::json& t, const char* metric) {
    const std::size_t n = t["p"].size();
    std::vector<std::uint64_t> sum(n, 0);
    std::vector<bool> leaf(n, true);
    for (std::size_t i = 1; i < n; ++i) {
        const auto p = t["p"][i].get<std::int64_t>();
        ASSERT_GE(p, 0);
        ASSERT_LT(static_cast<std::size_t>(p), i) << "preorder: the parent comes first";
        sum[static_cast<std::size_t>(p)] += t[metric][i].get<std::uint64_t>();
        leaf[static_cast<std::size_t>(p)] = false;
    }
    EXPECT_EQ(t["p"][0].get<std::int64_t>(), -1);
    for (std::size_t i = 0; i < n; ++i) {
        if (!leaf[i]) {
            EXPECT_EQ(sum[i], t[metric][i].get<std::uint64_t>()) << metric << " node " << i;
        }
    }
}

TEST(html_call_tree, merges_paths_by_name_from_the_root) {
    frame_names names;
    call_tree t(names, "all");
    const std::uint32_t main = names.id("main"), a = names.id("a"), b = names.id("b");
    const std::vector<std::uint32_t> p1{main, a}, p2{main, b}, p3{main, a};
    const auto l1 = t.add(p1, {10, 1, 0, 0});
    t.add(p2, {5, 1, 0, 0});
    EXPECT_EQ(t.add(p3, {1, 1, 0, 0}), l1) << "same path, same node";
    EXPECT_EQ(t.size(), 4u);  // all, main, a, b
    const auto j = t.to_json();
    EXPECT_EQ(j["b"][0], 16);
    EXPECT_EQ(j["n"][0], 3);
    expect_sums(j, "b");
}

TEST(html_call_tree, prune_keeps_the_heaviest_nodes_and_sums_the_rest) {
    frame_names names;
    call_tree t(names, "all");
    const std::uint32_t main = names.id("main");
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 400; ++i) {
        for (std::uint32_t k = 0; k < 5; ++k) {
            // Appended piecewise: GCC 12's -Wrestrict misfires on `"f" + to_string()` at -O3.
            std::string f = "f", g = "g";
            f += std::to_string(i);
            g += std::to_string(k);
            const std::vector<std::uint32_t> path{main, names.id(f), names.id(g)};
            const std::uint64_t bytes = i == 7 ? 100000 : 1 + i;  // f7 is the heavy one
            t.add(path, {bytes, 1, 0, bytes / 2});
            total += bytes;
        }
    }
    ASSERT_EQ(t.size(), 1u + 1 + 400 + 2000);
    const std::uint32_t other = names.id("(other)");
    const auto map = t.prune(200, other);
    EXPECT_LE(t.size(), 200u);
    EXPECT_EQ(map.size(), 2402u);
    const auto j = t.to_json();
    EXPECT_EQ(j["b"][0].get<std::uint64_t>(), total);
    expect_sums(j, "b");
    expect_sums(j, "n");
    expect_sums(j, "l");
    bool heavy = false, others = false;
    for (std::size_t i = 0; i < j["f"].size(); ++i) {
        heavy = heavy || j["f"][i] == names.id("f7");
        others = others || j["f"][i] == other;
    }
    EXPECT_TRUE(heavy) << "the heaviest function survives";
    EXPECT_TRUE(others) << "the pruned ones are summed";
}

}  // namespace
