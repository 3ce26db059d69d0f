#include "rtmem/analyze/distinct_labels.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace rtmem::analyze {

namespace {

using stack = std::span<const std::uint64_t>;

// The first index where a and b differ; a stack that is a prefix of the other differs at its end.
std::size_t first_difference(stack a, stack b) {
    const std::size_t n = std::min(a.size(), b.size());
    std::size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

std::string frame_suffix(stack s, std::size_t at, const label_style& style, bool with_key) {
    std::string out = "  [frame " + std::to_string(at + 1) + ": ";
    if (at >= s.size()) return out + "(stack ends)]";
    out += style.text(s[at]);
    if (with_key) out += " @ " + style.key(s[at]);
    return out + "]";
}

// Appends to each label of a group that shares one the frame that sets it apart from its closest
// sibling (the one it shares most frames with): in lexicographic order, one of its neighbours.
void separate(std::vector<std::size_t>& group, const std::vector<stack>& stacks,
              const label_style& style, std::vector<std::string>& labels) {
    std::sort(group.begin(), group.end(), [&](std::size_t a, std::size_t b) {
        return std::lexicographical_compare(stacks[a].begin(), stacks[a].end(), stacks[b].begin(),
                                            stacks[b].end());
    });
    std::vector<std::string> suffix(group.size());
    for (std::size_t k = 0; k < group.size(); ++k) {
        const stack s = stacks[group[k]];
        std::size_t at = 0;
        stack closest;
        for (std::size_t n : {k - 1, k + 1}) {  // k - 1 wraps to a huge index at k == 0
            if (n >= group.size()) continue;
            const std::size_t d = first_difference(s, stacks[group[n]]);
            if (d >= at) {
                at = d;
                closest = stacks[group[n]];
            }
        }
        // Equal names for different addresses (no line info): the module offset tells them
        // apart.
        const bool ambiguous = at < s.size() && at < closest.size() &&
                               style.text(s[at]) == style.text(closest[at]);
        suffix[k] = frame_suffix(s, at, style, ambiguous);
    }
    for (std::size_t k = 0; k < group.size(); ++k) labels[group[k]] += suffix[k];
}

}  // namespace

std::vector<std::string> distinct_labels(const std::vector<stack>& stacks,
                                         const label_style& style, const std::string& empty) {
    std::vector<std::string> labels(stacks.size());
    for (std::size_t i = 0; i < stacks.size(); ++i) {
        if (stacks[i].empty()) labels[i] = empty;
        for (std::size_t f = 0; f < stacks[i].size() && f < style.frames; ++f) {
            if (f != 0) labels[i] += style.separator;
            labels[i] += style.text(stacks[i][f]);
        }
    }
    // Two stacks that each part from their closest sibling at the same frame, with the same
    // name, still share a label after one round: the next round separates them where they
    // differ from each other.
    for (int round = 0; round < 4; ++round) {
        std::unordered_map<std::string, std::vector<std::size_t>> by_label;
        for (std::size_t i = 0; i < stacks.size(); ++i) {
            if (!stacks[i].empty()) by_label[labels[i]].push_back(i);
        }
        bool collided = false;
        for (auto& [label, group] : by_label) {
            if (group.size() < 2) continue;
            collided = true;
            separate(group, stacks, style, labels);
        }
        if (!collided) return labels;
    }
    // Left after the rounds: numbered.
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (stacks[i].empty()) continue;
        if (const int n = seen[labels[i]]++; n != 0) labels[i] += "  [#" + std::to_string(n + 1) + "]";
    }
    return labels;
}

}  // namespace rtmem::analyze
