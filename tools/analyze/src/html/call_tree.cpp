// Call trees for the HTML report (call_tree.hpp).
#include "html/call_tree.hpp"

#include <algorithm>
#include <numeric>

namespace rtmem::analyze {

std::uint32_t frame_names::id(const std::string& name) {
    auto [it, fresh] = ids_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (fresh) names_.push_back(name);
    return it->second;
}

nlohmann::json frame_names::to_json() const { return names_; }

namespace {
std::size_t mix(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
}
}  // namespace

call_tree::call_tree(frame_names& names, const std::string& root)
    : names_(names), keys_(1024, 0), values_(1024, 0) {
    nodes_.push_back({names.id(root), -1, {}});
}

void call_tree::grow() {
    std::vector<std::uint64_t> keys(keys_.size() * 2, 0);
    std::vector<std::uint32_t> values(keys.size(), 0);
    const std::size_t mask = keys.size() - 1;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (keys_[i] == 0) continue;
        std::size_t j = mix(keys_[i]) & mask;
        while (keys[j] != 0) j = (j + 1) & mask;
        keys[j] = keys_[i];
        values[j] = values_[i];
    }
    keys_.swap(keys);
    values_.swap(values);
}

std::uint32_t call_tree::child(std::uint32_t parent, std::uint32_t frame) {
    const std::uint64_t key = (std::uint64_t{parent} << 32 | frame) + 1;
    const std::size_t mask = keys_.size() - 1;
    std::size_t j = mix(key) & mask;
    for (; keys_[j] != 0; j = (j + 1) & mask) {
        if (keys_[j] == key) return values_[j];
    }
    const auto n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({frame, parent, {}});
    keys_[j] = key;
    values_[j] = n;
    if (++used_ * 2 > keys_.size()) grow();
    return n;
}

std::uint32_t call_tree::add(std::span<const std::uint32_t> path, const tree_metrics& m) {
    std::size_t same = 0;
    while (same < path.size() && same < last_path_.size() && path[same] == last_path_[same]) ++same;
    last_path_.assign(path.begin(), path.end());
    last_nodes_.resize(path.size());
    std::uint32_t n = 0;
    nodes_[0].m.add(m);
    for (std::size_t i = 0; i < path.size(); ++i) {
        n = i < same ? last_nodes_[i] : child(n, path[i]);
        last_nodes_[i] = n;
        nodes_[n].m.add(m);
    }
    return n;
}

std::vector<std::uint32_t> call_tree::prune(std::size_t max_nodes, std::uint32_t other) {
    std::vector<std::uint32_t> map(nodes_.size());
    std::iota(map.begin(), map.end(), 0u);
    if (nodes_.size() <= max_nodes) return map;
    const tree_metrics& total = nodes_[0].m;
    auto share = [](std::uint64_t v, std::uint64_t t) {
        return t == 0 ? 0.0 : static_cast<double>(v) / static_cast<double>(t);
    };
    std::vector<double> score(nodes_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const tree_metrics& m = nodes_[i].m;
        score[i] = std::max({share(m.bytes, total.bytes), share(m.calls, total.calls),
                             share(m.peak, total.peak), share(m.leaked, total.leaked)});
    }
    std::vector<std::uint32_t> by_score(nodes_.size());
    std::iota(by_score.begin(), by_score.end(), 0u);
    std::partial_sort(by_score.begin(), by_score.begin() + static_cast<std::ptrdiff_t>(max_nodes),
                      by_score.end(), [&](std::uint32_t a, std::uint32_t b) {
                          return score[a] > score[b] || (score[a] == score[b] && a < b);
                      });
    // The `keep` best nodes with their ancestors (ties can leave one out), and how many nodes
    // that makes once every kept node with a pruned child has its `other` node.
    std::vector<char> kept(nodes_.size(), 0);
    auto choose = [&](std::size_t keep) {
        std::fill(kept.begin(), kept.end(), 0);
        std::size_t count = 0;
        for (std::size_t i = 0; i < keep; ++i) {
            for (std::int64_t n = by_score[i]; n >= 0 && kept[static_cast<std::size_t>(n)] == 0;
                 n = nodes_[static_cast<std::size_t>(n)].parent) {
                kept[static_cast<std::size_t>(n)] = 1;
                ++count;
            }
        }
        std::vector<char> has_other(nodes_.size(), 0);
        for (std::size_t i = 1; i < nodes_.size(); ++i) {
            const auto p = static_cast<std::size_t>(nodes_[i].parent);
            if (kept[i] == 0 && kept[p] != 0 && has_other[p] == 0) {
                has_other[p] = 1;
                ++count;
            }
        }
        return count;
    };
    std::size_t lo = 1, hi = max_nodes;  // the most nodes that fit, by bisection
    while (lo < hi) {
        const std::size_t mid = (lo + hi + 1) / 2;
        if (choose(mid) <= max_nodes) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    while (choose(lo) > max_nodes && lo > 1) --lo;
    std::vector<node> out;
    std::unordered_map<std::uint32_t, std::uint32_t> other_of;  // new parent -> its `other`
    for (std::size_t i = 0; i < nodes_.size(); ++i) {  // parents come before their children
        const node& n = nodes_[i];
        if (kept[i] != 0) {
            map[i] = static_cast<std::uint32_t>(out.size());
            const std::int64_t parent =
                n.parent < 0 ? -1 : std::int64_t{map[static_cast<std::size_t>(n.parent)]};
            out.push_back({n.frame, parent, n.m});
            continue;
        }
        const auto parent = static_cast<std::size_t>(n.parent);
        if (kept[parent] != 0) {
            auto [it, fresh] = other_of.try_emplace(map[parent], static_cast<std::uint32_t>(out.size()));
            if (fresh) out.push_back({other, map[parent], {}});
            out[it->second].m.add(n.m);
            map[i] = it->second;
        } else {
            map[i] = map[parent];
        }
    }
    nodes_ = std::move(out);
    keys_.assign(1, 0);  // the tree is final: no more add()
    values_.assign(1, 0);
    last_path_.clear();
    return map;
}

nlohmann::json call_tree::to_json(std::vector<std::uint32_t>* position) const {
    std::vector<std::vector<std::uint32_t>> kids(nodes_.size());
    for (std::size_t i = 1; i < nodes_.size(); ++i)
        kids[static_cast<std::size_t>(nodes_[i].parent)].push_back(static_cast<std::uint32_t>(i));
    for (auto& k : kids) {
        std::sort(k.begin(), k.end(), [&](std::uint32_t a, std::uint32_t b) {
            return names_.name(nodes_[a].frame) < names_.name(nodes_[b].frame);
        });
    }
    std::vector<std::uint32_t> pos(nodes_.size());
    nlohmann::json f = nlohmann::json::array(), p = nlohmann::json::array(),
                   b = nlohmann::json::array(), n = nlohmann::json::array(),
                   k = nlohmann::json::array(), l = nlohmann::json::array();
    std::vector<std::uint32_t> stack{0};
    while (!stack.empty()) {
        const std::uint32_t i = stack.back();
        stack.pop_back();
        pos[i] = static_cast<std::uint32_t>(f.size());
        const node& x = nodes_[i];
        f.push_back(x.frame);
        p.push_back(x.parent < 0 ? -1 : static_cast<std::int64_t>(pos[static_cast<std::size_t>(x.parent)]));
        b.push_back(x.m.bytes);
        n.push_back(x.m.calls);
        k.push_back(x.m.peak);
        l.push_back(x.m.leaked);
        for (auto c = kids[i].rbegin(); c != kids[i].rend(); ++c) stack.push_back(*c);
    }
    if (position != nullptr) *position = std::move(pos);
    return {{"f", f}, {"p", p}, {"b", b}, {"n", n}, {"k", k}, {"l", l}};
}

}  // namespace rtmem::analyze
