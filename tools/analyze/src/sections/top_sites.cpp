// The top sites by calls, bytes, peak, time and leaks; in HTML the sortable site table and
// the flame graph and bottom-up tree (drawn by the page's script from its data).
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

// By site_order: calls, bytes, peak, time, leaked.
const char* order_title(site_order o) {
    static constexpr const char* titles[] = {"calls", "bytes", "peak", "time", "leaked"};
    return titles[static_cast<std::size_t>(o)];
}

void top_sites_text(std::ostream& out, const section_input& in) {
    char line[512];
    for (site_order o : {site_order::calls, site_order::bytes, site_order::peak, site_order::time,
                         site_order::leaked}) {
        auto sites = top_sites(in.r, o, in.top);
        if (sites.empty()) continue;
        out << "\ntop sites by " << order_title(o)
            << (in.r.sample_interval != 0 ? " (sampled: calls and bytes are estimates, the 95% interval of bytes after the site)" : "")
            << "\n";
        out << "       calls        bytes         peak         time       leaked  site\n";
        for (const auto& s : sites) {
            std::snprintf(line, sizeof line, "%12" PRIu64 " %12s %12s %12s %12s  ", s.calls,
                          human_bytes(s.bytes).c_str(), human_bytes(s.peak_bytes).c_str(),
                          human_ns(s.time_ns).c_str(), human_bytes(s.live_bytes).c_str());
            out << line << in.names.name(s.stack);
            if (in.r.sample_interval != 0)
                out << "  (95%: " << interval_text(s.bytes, s.bytes_variance, true) << ")";
            out << "\n";
        }
    }
}

void top_sites_json(nlohmann::json& j, const section_input& in) {
    for (site_order o : {site_order::calls, site_order::bytes, site_order::peak, site_order::time,
                         site_order::leaked}) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : top_sites(in.r, o, in.top)) {
            list.push_back({{"stack", s.stack},
                            {"site", in.names.name(s.stack)},
                            {"key", in.names.key(s.stack)},
                            {"calls", s.calls},
                            {"bytes", s.bytes},
                            {"peak_bytes", s.peak_bytes},
                            {"time_ns", s.time_ns},
                            {"leaked_bytes", s.live_bytes},
                            {"leaked_blocks", s.live_blocks},
                            {"temporaries", s.temporaries},
                            {"cross_thread_frees", s.cross_thread_frees},
                            {"calls_interval", interval_json(s.calls, s.calls_variance)},
                            {"bytes_interval", interval_json(s.bytes, s.bytes_variance)}});
        }
        j["top_sites"][order_title(o)] = list;
    }
}

std::string top_sites_html(const section_input&) {
    std::ostringstream o;
    o << "<h2>Allocation sites</h2><p class=\"note\">Click a column to sort, a row for the "
         "site's own charts.</p><div class=\"toolbar\"><input id=\"sitefilter\" "
         "placeholder=\"filter sites by name\"> <span id=\"pager\"></span></div>"
         "<table id=\"sites\"></table>\n";
    o << "<h2>Flame graph (by call stack, outermost frame at the top)</h2><div class=\"toolbar\">"
         "width: <select id=\"metric\"><option value=\"b\">bytes allocated</option><option "
         "value=\"n\">calls</option><option value=\"k\">live at the peak</option><option "
         "value=\"l\">leaked</option></select> <input id=\"search\" placeholder=\"search "
         "functions (regular expression)\"> <button id=\"unzoom\">reset zoom</button> <span "
         "id=\"searchinfo\"></span></div><div id=\"crumbs\"></div><div id=\"flame\"></div>"
         "<p class=\"note\" id=\"flamenote\"></p><div id=\"frameinfo\"></div>\n";
    o << "<h2>Bottom-up: allocating functions and their callers</h2><p class=\"note\">Click a "
         "row to list who calls it (same width measure as the flame graph).</p>"
         "<div id=\"bottomup\"></div>\n";
    return o.str();
}

}  // namespace

extern const report_section top_sites_section;
const report_section top_sites_section{"top sites", top_sites_text, top_sites_json, top_sites_html,
                                       false};

}  // namespace rtmem::analyze
