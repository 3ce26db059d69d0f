// `rtmem report --html`: one self-contained page. The data goes in as compact JSON (columns
// of numbers, function names stored once); inline JavaScript (html/*_js.cpp) draws the charts
// as SVG and the flame graph, tables and per-site views from it, and marks each drawn view
// data-drawn="1" (the headless-browser test checks those marks and drives the views).
//
// Size limits, so a trace with ~10^5 stacks still gives a page of a few MiB that a browser
// draws at once: each call tree keeps its max_tree_nodes heaviest nodes (by any metric; the
// rest of a node's children become one "other callees" node), the site table holds the
// max_table_sites sites with the most bytes plus the top --top by every other column (the
// rest are one summed row), and the per-site charts exist for the max_detail_sites sites with
// the most bytes plus the top --top by every other column and every advised site.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

#include "html/call_tree.hpp"
#include "html/page_assets.hpp"
#include "html/site_detail.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

constexpr std::size_t max_tree_nodes = 20000;
constexpr std::size_t max_table_sites = 5000;
constexpr std::size_t max_detail_sites = 300;

// JSON safe inside <script>: no "</" can close the element.
std::string script_json(const nlohmann::json& j) {
    std::string s = j.dump();
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '<') {
            out += "\\u003c";
        } else {
            out += c;
        }
    }
    return out;
}

nlohmann::json histogram_pairs(const log2_histogram& h) {
    std::size_t first = h.buckets.size(), last = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] == 0) continue;
        first = std::min(first, i);
        last = i;
    }
    nlohmann::json a = nlohmann::json::array();
    if (first == h.buckets.size()) return a;
    a.push_back(first);
    for (std::size_t i = first; i <= last; ++i) a.push_back(h.buckets[i]);
    return a;
}

std::uint32_t recorded_depth(const event_source& source) {
    const auto* reader = dynamic_cast<const trace_reader*>(&source);
    return reader != nullptr ? reader->stack_depth() : 0;
}

// A stack as frame ids, outermost first, inlined frames expanded (as site_names::path, whose
// strings would be built again for every stack: here each return address is named once).
class stack_frames {
  public:
    stack_frames(const event_source& source, symbolizer* sym, frame_names& names)
        : source_(source), sym_(sym), names_(names) {}
    void path(std::uint32_t stack, std::vector<std::uint32_t>& out) {
        const auto ips = source_.stack(stack);
        for (std::size_t i = ips.size(); i-- > 0;) {
            const auto& ids = of(ips[i]);
            out.insert(out.end(), ids.begin(), ids.end());
        }
        if (ips.empty()) out.push_back(names_.id("(no stack)"));
    }

  private:
    const std::vector<std::uint32_t>& of(std::uint64_t ip) {
        auto [it, fresh] = cache_.try_emplace(ip);
        if (!fresh) return it->second;
        if (sym_ != nullptr) {
            const auto& fr = sym_->frames(ip);
            for (std::size_t k = fr.size(); k-- > 0;) it->second.push_back(names_.id(fr[k].function));
            if (fr.empty()) it->second.push_back(names_.id(sym_->symbolize(ip)));
        } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "0x%" PRIx64, ip);
            it->second.push_back(names_.id(buf));
        }
        return it->second;
    }
    const event_source& source_;
    symbolizer* sym_;
    frame_names& names_;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cache_;
};

// The sites the table lists: the most bytes first, then whatever leads another column.
std::vector<site_stats> table_sites(const report_data& r, std::size_t top) {
    std::vector<site_stats> out = top_sites(r, site_order::bytes, max_table_sites);
    std::set<std::uint32_t> have;
    for (const auto& s : out) have.insert(s.stack);
    for (site_order o : {site_order::calls, site_order::peak, site_order::time, site_order::leaked}) {
        for (const auto& s : top_sites(r, o, top)) {
            if (have.insert(s.stack).second) out.push_back(s);
        }
    }
    return out;
}

std::vector<std::uint32_t> detail_stacks(const report_data& r, std::size_t top,
                                         const std::vector<std::uint32_t>& advised) {
    std::vector<std::uint32_t> out;
    std::set<std::uint32_t> have;
    auto take = [&](std::uint32_t s) {
        if (have.insert(s).second) out.push_back(s);
    };
    for (const auto& s : top_sites(r, site_order::bytes, max_detail_sites)) take(s.stack);
    for (site_order o : {site_order::calls, site_order::peak, site_order::time, site_order::leaked}) {
        for (const auto& s : top_sites(r, o, top)) take(s.stack);
    }
    for (std::uint32_t s : advised) take(s);
    return out;
}

}  // namespace

std::string to_html(const trace_info& info, const report_data& r, site_names& names,
                    event_source& source, std::size_t top) {
    // The sections first: the advice section names the sites its rows link to.
    std::vector<std::uint32_t> advised;
    const section_input in{info, r, names, top, &source, &advised};
    std::ostringstream body;
    for (const auto& section : report_sections()) {
        if (section.html == nullptr) continue;
        if (section.titled) body << "<section><h2>" << escape_html(section.name) << "</h2>\n";
        body << section.html(in);
        if (section.titled) body << "\n</section>\n";
    }

    nlohmann::json data;
    nlohmann::json live = nlohmann::json::array(), allocs = nlohmann::json::array();
    for (const auto& p : r.timeline) {
        live.push_back(p.live_bytes);
        allocs.push_back(p.allocations);
    }
    data["timeline"] = {{"t0", r.timeline_origin_ns}, {"step", r.timeline_step_ns},
                        {"live", live}, {"allocs", allocs}};
    data["sizes"] = histogram_pairs(r.sizes);
    data["lifetimes"] = histogram_pairs(r.lifetimes_ns);

    // Both call trees from every site; stacks that filled the recorded depth lost their
    // outer frames, so they hang under one node saying so instead of posing as roots.
    frame_names frames;
    call_tree down(frames, "all allocations"), up(frames, "all allocations");
    const std::uint32_t depth = recorded_depth(source);
    const std::uint32_t cut = frames.id("[outer frames not recorded: stack deeper than --depth " +
                                        std::to_string(depth) + "]");
    // Every path, flat; added in sorted order so shared prefixes cost no lookups.
    const std::size_t n_sites = r.sites.size();
    std::vector<std::uint32_t> down_paths, up_paths;
    std::vector<std::size_t> down_at(n_sites + 1), up_at(n_sites + 1);
    std::uint64_t cut_stacks = 0, cut_bytes = 0;
    stack_frames stack_path(source, names.symbols(), frames);
    for (std::size_t i = 0; i < n_sites; ++i) {
        const site_stats& s = r.sites[i];
        down_at[i] = down_paths.size();
        up_at[i] = up_paths.size();
        const bool truncated = depth != 0 && source.stack(s.stack).size() >= depth;
        if (truncated) {
            down_paths.push_back(cut);
            ++cut_stacks;
            cut_bytes += s.bytes;
        }
        stack_path.path(s.stack, down_paths);
        up_paths.insert(up_paths.end(), down_paths.rbegin(),
                        down_paths.rend() - static_cast<std::ptrdiff_t>(down_at[i] + (truncated ? 1 : 0)));
    }
    down_at[n_sites] = down_paths.size();
    up_at[n_sites] = up_paths.size();
    auto span_of = [](const std::vector<std::uint32_t>& flat, const std::vector<std::size_t>& at,
                      std::size_t i) {
        return std::span<const std::uint32_t>(flat.data() + at[i], at[i + 1] - at[i]);
    };
    auto add_sorted = [&](call_tree& tree, const std::vector<std::uint32_t>& flat,
                          const std::vector<std::size_t>& at, std::vector<std::uint32_t>* leaf) {
        std::vector<std::uint32_t> order(n_sites);
        for (std::size_t i = 0; i < n_sites; ++i) order[i] = static_cast<std::uint32_t>(i);
        // Byte order, not numeric: all it needs is that paths sharing a prefix end up together.
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            const auto x = span_of(flat, at, a), y = span_of(flat, at, b);
            const int c = std::memcmp(x.data(), y.data(), std::min(x.size(), y.size()) * sizeof(std::uint32_t));
            return c != 0 ? c < 0 : x.size() < y.size();
        });
        for (std::uint32_t i : order) {
            const site_stats& s = r.sites[i];
            const std::uint32_t node =
                tree.add(span_of(flat, at, i), {s.bytes, s.calls, s.peak_bytes, s.live_bytes});
            if (leaf != nullptr) (*leaf)[i] = node;
        }
    };
    std::vector<std::uint32_t> leaf(n_sites);
    add_sorted(down, down_paths, down_at, &leaf);
    add_sorted(up, up_paths, up_at, nullptr);
    const std::size_t down_nodes = down.size(), up_nodes = up.size();
    const std::uint32_t other = frames.id("[other callees, each too small to list]");
    const std::vector<std::uint32_t> down_map = down.prune(max_tree_nodes, other);
    up.prune(max_tree_nodes, frames.id("[other callers, each too small to list]"));
    std::vector<std::uint32_t> down_pos;
    data["down"] = down.to_json(&down_pos);
    data["up"] = up.to_json();
    std::unordered_map<std::uint32_t, std::uint32_t> node_of_stack;
    for (std::size_t i = 0; i < r.sites.size(); ++i)
        node_of_stack[r.sites[i].stack] = down_pos[down_map[leaf[i]]];

    // The site table, in columns.
    const auto listed = table_sites(r, top);
    nlohmann::json col_stack = nlohmann::json::array(), col_name = nlohmann::json::array(),
                   col_calls = nlohmann::json::array(), col_bytes = nlohmann::json::array(),
                   col_peak = nlohmann::json::array(), col_time = nlohmann::json::array(),
                   col_leaked = nlohmann::json::array(), col_node = nlohmann::json::array();
    site_stats rest;
    std::set<std::uint32_t> in_table;
    for (const auto& s : listed) in_table.insert(s.stack);
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
    auto row = [&](std::int64_t stack, const std::string& name, const site_stats& s, std::int64_t node) {
        col_stack.push_back(stack);
        col_name.push_back(name);
        col_calls.push_back(s.calls);
        col_bytes.push_back(s.bytes);
        col_peak.push_back(s.peak_bytes);
        col_time.push_back(s.time_ns);
        col_leaked.push_back(s.live_bytes);
        col_node.push_back(node);
    };
    for (const auto& s : listed) row(s.stack, names.name(s.stack), s, node_of_stack[s.stack]);
    if (rest_sites != 0) {
        row(-1, "(" + std::to_string(rest_sites) + " smaller sites, summed)", rest, -1);
    }
    data["sites"] = {{"stack", col_stack}, {"site", col_name},    {"calls", col_calls},
                     {"bytes", col_bytes}, {"peak", col_peak},    {"time", col_time},
                     {"leaked", col_leaked}, {"node", col_node}};

    const auto detailed = detail_stacks(r, top, advised);
    data["detail"] = site_details(source, r, detailed);
    nlohmann::json stacks = nlohmann::json::object();
    for (std::uint32_t s : detailed) {
        std::vector<std::uint32_t> path;
        stack_path.path(s, path);
        stacks[std::to_string(s)] = path;
    }
    data["detail"]["paths"] = stacks;
    data["advised"] = advised;
    data["frames"] = frames.to_json();
    data["limits"] = {{"sites", r.sites.size()},
                      {"table_sites", listed.size()},
                      {"detail_sites", detailed.size()},
                      {"down_nodes", down_nodes},
                      {"up_nodes", up_nodes},
                      {"max_tree_nodes", max_tree_nodes},
                      {"depth", depth},
                      {"cut_stacks", cut_stacks},
                      {"cut_bytes", cut_bytes}};

    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rtmem report: "
      << escape_html(info.program) << "</title><style>" << page_style() << "</style></head><body>\n";
    o << "<h1>rtmem report: " << escape_html(info.program) << "</h1>\n";
    o << body.str();
    o << "<div id=\"siteview\" hidden></div>\n";
    o << "<script>const DATA=" << script_json(data) << ";\n" << page_script() << "</script>\n";
    o << "</body></html>\n";
    return o.str();
}

std::string escape_html(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

}  // namespace rtmem::analyze
