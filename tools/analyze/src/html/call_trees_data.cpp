// The page's call trees (page_data.hpp): every site's path, sorted so that the paths sharing
// a prefix are added one after another (call_tree::add then looks up only where they part).
#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "html/page_data.hpp"

namespace rtmem::analyze {

namespace {

// Paths stored end to end: path i is flat[at[i] .. at[i+1]).
struct flat_paths {
    std::vector<std::uint32_t> flat;
    std::vector<std::size_t> at;
    [[nodiscard]] std::span<const std::uint32_t> operator[](std::size_t i) const {
        return {flat.data() + at[i], at[i + 1] - at[i]};
    }
};

void add_sorted(call_tree& tree, const flat_paths& paths, const report_data& r,
                std::vector<std::uint32_t>* leaf) {
    std::vector<std::uint32_t> order(r.sites.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    // Byte order, not numeric: all it needs is that paths sharing a prefix end up together.
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto x = paths[a], y = paths[b];
        const int c = std::memcmp(x.data(), y.data(),
                                  std::min(x.size(), y.size()) * sizeof(std::uint32_t));
        return c != 0 ? c < 0 : x.size() < y.size();
    });
    for (std::uint32_t i : order) {
        const site_stats& s = r.sites[i];
        const std::uint32_t node = tree.add(paths[i], {s.bytes, s.calls, s.peak_bytes, s.live_bytes});
        if (leaf != nullptr) (*leaf)[i] = node;
    }
}

}  // namespace

void add_call_trees(nlohmann::json& data, const report_data& r, stack_frames& frames_of,
                    frame_names& frames, std::uint32_t recorded_depth, tree_leaves& leaves) {
    call_tree down(frames, "all allocations"), up(frames, "all allocations");
    const std::uint32_t cut = frames.id("[outer frames not recorded: stack deeper than --depth " +
                                        std::to_string(recorded_depth) + "]");
    const std::size_t n = r.sites.size();
    flat_paths down_paths, up_paths;
    down_paths.at.resize(n + 1);
    up_paths.at.resize(n + 1);
    std::uint64_t cut_stacks = 0, cut_bytes = 0;
    std::vector<std::uint32_t> path;
    for (std::size_t i = 0; i < n; ++i) {
        const site_stats& s = r.sites[i];
        down_paths.at[i] = down_paths.flat.size();
        up_paths.at[i] = up_paths.flat.size();
        path.clear();
        frames_of.path(s.stack, path);
        // A stack that filled the recorded depth may have had more frames.
        const bool cut_short = recorded_depth != 0 && frames_of.depth(s.stack) >= recorded_depth;
        if (cut_short) {
            down_paths.flat.push_back(cut);
            ++cut_stacks;
            cut_bytes += s.bytes;
        }
        down_paths.flat.insert(down_paths.flat.end(), path.begin(), path.end());
        up_paths.flat.insert(up_paths.flat.end(), path.rbegin(), path.rend());
    }
    down_paths.at[n] = down_paths.flat.size();
    up_paths.at[n] = up_paths.flat.size();

    std::vector<std::uint32_t> leaf(n);
    add_sorted(down, down_paths, r, &leaf);
    add_sorted(up, up_paths, r, nullptr);
    data["limits"]["down_nodes"] = down.size();
    data["limits"]["up_nodes"] = up.size();
    data["limits"]["max_tree_nodes"] = max_tree_nodes;
    data["limits"]["depth"] = recorded_depth;
    data["limits"]["cut_stacks"] = cut_stacks;
    data["limits"]["cut_bytes"] = cut_bytes;
    const auto down_map = down.prune(max_tree_nodes, frames.id("[other callees, each too small to list]"));
    up.prune(max_tree_nodes, frames.id("[other callers, each too small to list]"));
    std::vector<std::uint32_t> position;
    data["down"] = down.to_json(&position);
    data["up"] = up.to_json();
    for (std::size_t i = 0; i < n; ++i) leaves[r.sites[i].stack] = position[down_map[leaf[i]]];
}

}  // namespace rtmem::analyze
