// Sites whose innermost frames read the same get the frame that tells them apart, so no two
// rows of an advice or a report carry one label.
#include <gtest/gtest.h>

#include <set>

#include "rtmem/analyze/distinct_labels.hpp"

namespace {

using rtmem::analyze::distinct_labels;
using rtmem::analyze::label_style;
using stack = std::vector<std::uint64_t>;

// Appended piecewise: GCC 12's -Wrestrict misfires on `"f" + to_string()` at -O3.
std::string numbered(const char* prefix, std::uint64_t n) {
    std::string s = prefix;
    s += std::to_string(n);
    return s;
}

// Addresses name functions by their hundreds (0x1xx is "f1"): like frames without line info,
// different addresses in one function read the same.
label_style style(std::size_t frames) {
    label_style s;
    s.frames = frames;
    s.text = [](std::uint64_t ip) { return numbered("f", ip / 0x100); };
    s.key = [](std::uint64_t ip) { return numbered("prog+0x", ip); };
    return s;
}

std::vector<std::string> labels(const std::vector<stack>& stacks, std::size_t frames) {
    std::vector<std::span<const std::uint64_t>> spans(stacks.begin(), stacks.end());
    return distinct_labels(spans, style(frames), "(none)");
}

TEST(distinct_labels, unique_labels_are_left_alone) {
    auto l = labels({{0x100, 0x200}, {0x300, 0x200}, {}}, 2);
    EXPECT_EQ(l[0], "f1 < f2");
    EXPECT_EQ(l[1], "f3 < f2");
    EXPECT_EQ(l[2], "(none)");
}

TEST(distinct_labels, stacks_that_differ_deeper_get_their_first_differing_frame) {
    auto l = labels({{0x100, 0x200, 0x300, 0x400}, {0x100, 0x200, 0x300, 0x500}}, 2);
    EXPECT_EQ(l[0], "f1 < f2  [frame 4: f4]");
    EXPECT_EQ(l[1], "f1 < f2  [frame 4: f5]");
}

TEST(distinct_labels, equal_names_at_different_addresses_add_the_module_offset) {
    // Two calls in one function f2, no line info: the text is equal, the offset is not.
    auto l = labels({{0x100, 0x210}, {0x100, 0x220}}, 2);
    EXPECT_EQ(l[0], "f1 < f2  [frame 2: f2 @ " + numbered("prog+0x", 0x210) + "]");
    EXPECT_EQ(l[1], "f1 < f2  [frame 2: f2 @ " + numbered("prog+0x", 0x220) + "]");
}

TEST(distinct_labels, a_stack_that_is_a_prefix_of_another_says_where_it_ends) {
    auto l = labels({{0x100, 0x200, 0x300}, {0x100, 0x200, 0x300, 0x400}}, 2);
    EXPECT_EQ(l[0], "f1 < f2  [frame 4: (stack ends)]");
    EXPECT_EQ(l[1], "f1 < f2  [frame 4: f4]");
}

TEST(distinct_labels, every_label_is_distinct_in_a_crowd) {
    // Stacks that differ at several depths, some pairwise only where others agree.
    std::vector<stack> stacks = {{0x100, 0x200, 0x300, 0x400}, {0x100, 0x200, 0x300, 0x410},
                                 {0x100, 0x210, 0x300, 0x400}, {0x100, 0x210, 0x300, 0x410},
                                 {0x100, 0x200},               {0x100, 0x220, 0x300},
                                 {0x100, 0x200, 0x310, 0x400}};
    auto l = labels(stacks, 1);
    EXPECT_EQ(std::set<std::string>(l.begin(), l.end()).size(), stacks.size());
    for (const auto& s : l) EXPECT_EQ(s.rfind("f1  [frame ", 0), 0u) << s;
    for (const auto& s : l) EXPECT_EQ(s.find("[#"), std::string::npos) << s;
}

TEST(distinct_labels, stacks_parting_from_their_siblings_alike_are_separated_where_they_differ) {
    // a and b each part from their closest sibling at frame 5 with the same name there (f5),
    // and differ from each other at frame 3.
    auto l = labels({{0x100, 0x200, 0x300, 0x400, 0x500},
                     {0x100, 0x200, 0x300, 0x400, 0x600},
                     {0x100, 0x200, 0x700, 0x400, 0x500},
                     {0x100, 0x200, 0x700, 0x400, 0x600}},
                    2);
    EXPECT_EQ(l[0], "f1 < f2  [frame 5: f5]  [frame 3: f3]");
    EXPECT_EQ(l[1], "f1 < f2  [frame 5: f6]  [frame 3: f3]");
    EXPECT_EQ(l[2], "f1 < f2  [frame 5: f5]  [frame 3: f7]");
    EXPECT_EQ(l[3], "f1 < f2  [frame 5: f6]  [frame 3: f7]");
}

}  // namespace
