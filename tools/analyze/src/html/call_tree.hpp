// The call trees of the HTML report: top-down (from the outermost frame: the flame graph) and
// bottom-up (from the allocating function out to its callers). Nodes are merged by function
// name at each level, carry four metrics, and are capped in number so a trace with ~10^5
// stacks still gives a page a browser draws at once.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace rtmem::analyze {

/// What a stack contributes to every node on its path.
struct tree_metrics {
    std::uint64_t bytes = 0, calls = 0, peak = 0, leaked = 0;
    void add(const tree_metrics& m) noexcept {
        bytes += m.bytes;
        calls += m.calls;
        peak += m.peak;
        leaked += m.leaked;
    }
};

/// Function names, each stored once for both trees.
class frame_names {
  public:
    std::uint32_t id(const std::string& name);
    [[nodiscard]] const std::string& name(std::uint32_t id) const { return names_[id]; }
    [[nodiscard]] nlohmann::json to_json() const;

  private:
    std::vector<std::string> names_;
    std::unordered_map<std::string, std::uint32_t> ids_;
};

class call_tree {
  public:
    /// Node 0 is the root, named `root`.
    call_tree(frame_names& names, const std::string& root);
    /// Adds a path (frame ids, root side first) and returns its deepest node. The part it
    /// shares with the previous path costs no lookup: add paths in sorted order.
    std::uint32_t add(std::span<const std::uint32_t> path, const tree_metrics& m);

    /// Keeps at most `max_nodes` nodes: those with the largest share of any metric (a node's
    /// share is never above its parent's, so the kept set is a tree) and, under each kept node
    /// that lost children, one node named `other` that sums them. Returns the old → new index map (a pruned node
    /// maps to the `other` node that stands for it).
    std::vector<std::uint32_t> prune(std::size_t max_nodes, std::uint32_t other);

    [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
    /// Preorder, children by name: {"f": frame ids, "p": parent indices (-1 for the root),
    /// "b","n","k","l": bytes, calls, peak, leaked}. `position`, if given, receives each
    /// node's index in that order.
    [[nodiscard]] nlohmann::json to_json(std::vector<std::uint32_t>* position = nullptr) const;

  private:
    struct node {
        std::uint32_t frame = 0;
        std::int64_t parent = -1;
        tree_metrics m;
    };
    std::uint32_t child(std::uint32_t parent, std::uint32_t frame);
    void grow();
    frame_names& names_;
    std::vector<node> nodes_;
    // (parent << 32 | frame) + 1 -> child node, open addressing: a tree of 10^6 nodes is
    // looked up ~10^7 times, and std::unordered_map's node per entry made that the page's
    // whole build time.
    std::vector<std::uint64_t> keys_;
    std::vector<std::uint32_t> values_;
    std::size_t used_ = 0;
    std::vector<std::uint32_t> last_path_, last_nodes_;  // the previous add()
};

}  // namespace rtmem::analyze
