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
#include <sstream>

#include "html/page_assets.hpp"
#include "html/page_data.hpp"
#include "html/site_detail.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

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

std::uint32_t recorded_depth(const event_source& source) {
    const auto* reader = dynamic_cast<const trace_reader*>(&source);
    return reader != nullptr ? reader->stack_depth() : 0;
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
    data["sizes"] = compact_histogram(r.sizes);
    data["lifetimes"] = compact_histogram(r.lifetimes_ns);

    frame_names frames;
    stack_frames frames_of(source, names.symbols(), frames);
    tree_leaves leaves;
    add_call_trees(data, r, frames_of, frames, recorded_depth(source), leaves);
    add_site_table(data, r, names, top, leaves);

    const auto detailed = detail_stacks(r, top, advised);
    data["detail"] = site_details(source, r, detailed);
    nlohmann::json stacks = nlohmann::json::object();
    for (std::uint32_t s : detailed) {
        std::vector<std::uint32_t> path;
        frames_of.path(s, path);
        stacks[std::to_string(s)] = path;
    }
    data["detail"]["paths"] = stacks;
    data["advised"] = advised;
    data["frames"] = frames.to_json();
    data["limits"]["detail_sites"] = detailed.size();

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
