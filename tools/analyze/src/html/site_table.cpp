// The page's site table, and which sites get per-site charts (page_data.hpp).
#include <set>
#include <string>

#include "html/page_data.hpp"

namespace rtmem::analyze {

namespace {

constexpr site_order other_orders[] = {site_order::calls, site_order::peak, site_order::time,
                                       site_order::leaked};

// The most bytes first, then whatever leads another column.
std::vector<site_stats> table_sites(const report_data& r, std::size_t top) {
    std::vector<site_stats> out = top_sites(r, site_order::bytes, max_table_sites);
    std::set<std::uint32_t> have;
    for (const auto& s : out) have.insert(s.stack);
    for (site_order o : other_orders) {
        for (const auto& s : top_sites(r, o, top)) {
            if (have.insert(s.stack).second) out.push_back(s);
        }
    }
    return out;
}

}  // namespace

void add_site_table(nlohmann::json& data, const report_data& r, site_names& names,
                    std::size_t top, const tree_leaves& leaves) {
    const auto listed = table_sites(r, top);
    nlohmann::json stack = nlohmann::json::array(), site = nlohmann::json::array(),
                   calls = nlohmann::json::array(), bytes = nlohmann::json::array(),
                   peak = nlohmann::json::array(), time = nlohmann::json::array(),
                   leaked = nlohmann::json::array(), node = nlohmann::json::array();
    auto row = [&](std::int64_t id, const std::string& name, const site_stats& s, std::int64_t leaf) {
        stack.push_back(id);
        site.push_back(name);
        calls.push_back(s.calls);
        bytes.push_back(s.bytes);
        peak.push_back(s.peak_bytes);
        time.push_back(s.time_ns);
        leaked.push_back(s.live_bytes);
        node.push_back(leaf);
    };
    std::set<std::uint32_t> in_table;
    for (const auto& s : listed) {
        in_table.insert(s.stack);
        const auto leaf = leaves.find(s.stack);
        row(s.stack, names.name(s.stack), s, leaf != leaves.end() ? std::int64_t{leaf->second} : -1);
    }
    site_stats rest;
    std::uint64_t rest_sites = 0;
    for (const auto& s : r.sites) {
        if (in_table.count(s.stack) != 0) continue;
        ++rest_sites;
        rest.calls += s.calls;
        rest.bytes += s.bytes;
        rest.peak_bytes += s.peak_bytes;
        rest.time_ns += s.time_ns;
        rest.live_bytes += s.live_bytes;
    }
    if (rest_sites != 0) {
        // Appended piecewise: GCC 12's -Wrestrict misfires on `"(" + to_string()` at -O3.
        std::string label = "(";
        label += std::to_string(rest_sites);
        label += " smaller sites, summed)";
        row(-1, label, rest, -1);
    }
    data["sites"] = {{"stack", stack}, {"site", site}, {"calls", calls},   {"bytes", bytes},
                     {"peak", peak},   {"time", time}, {"leaked", leaked}, {"node", node}};
    data["limits"]["sites"] = r.sites.size();
    data["limits"]["table_sites"] = listed.size();
}

std::vector<std::uint32_t> detail_stacks(const report_data& r, std::size_t top,
                                         const std::vector<std::uint32_t>& advised) {
    std::vector<std::uint32_t> out;
    std::set<std::uint32_t> have;
    auto take = [&](std::uint32_t s) {
        if (have.insert(s).second) out.push_back(s);
    };
    for (const auto& s : top_sites(r, site_order::bytes, max_detail_sites)) take(s.stack);
    for (site_order o : other_orders) {
        for (const auto& s : top_sites(r, o, top)) take(s.stack);
    }
    for (std::uint32_t s : advised) take(s);
    return out;
}

}  // namespace rtmem::analyze
