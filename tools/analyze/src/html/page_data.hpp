// The parts of the JSON the HTML page draws from (html.cpp puts them together). Each part
// adds what it merged or capped to `limits`, which the page shows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "html/call_tree.hpp"
#include "html/stack_frames.hpp"
#include "rtmem/analyze/report_output.hpp"

namespace rtmem::analyze {

inline constexpr std::size_t max_tree_nodes = 20000;
inline constexpr std::size_t max_table_sites = 5000;
inline constexpr std::size_t max_detail_sites = 300;

/// Where each site's stack ends in the top-down tree (its index in the page's "down" arrays).
using tree_leaves = std::unordered_map<std::uint32_t, std::uint32_t>;

/// "down" (the flame graph) and "up" (bottom-up) from every site, each capped at
/// max_tree_nodes. Stacks as deep as `recorded_depth` lost their outer frames: they hang under
/// one marker node instead of posing as roots.
void add_call_trees(nlohmann::json& data, const report_data& r, stack_frames& frames_of,
                    frame_names& frames, std::uint32_t recorded_depth, tree_leaves& leaves);

/// "sites": the site table in columns (the max_table_sites with the most bytes, the top `top`
/// of every other column, the rest summed in one row with stack -1).
void add_site_table(nlohmann::json& data, const report_data& r, site_names& names,
                    std::size_t top, const tree_leaves& leaves);

/// The sites that get per-site charts: the max_detail_sites with the most bytes, the top
/// `top` of every other column, and the advised ones.
[[nodiscard]] std::vector<std::uint32_t> detail_stacks(const report_data& r, std::size_t top,
                                                       const std::vector<std::uint32_t>& advised);

}  // namespace rtmem::analyze
