// The report's summary: the trace, totals, peak, leaks, time in the allocator; in HTML the
// totals table and the overview charts (drawn by the page's script from its data).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

// duration_ns is the time of the last event since the start of recording: in a window, the
// span is counted from the window's opening ("over 5500.0 ms" for a 500 ms window otherwise).
std::string span(const report_data& r) {
    if (!r.windowed) return "over " + human_ns(r.duration_ns);
    std::uint64_t from = std::min(r.window.from_ns, r.duration_ns);
    return "over " + human_ns(r.duration_ns - from) + " since the window opened";
}

void summary_text(std::ostream& out, const section_input& in) {
    char line[512];
    out << "rtmem report: " << in.info.file << " (" << human_bytes(in.info.file_size) << ")\n";
    out << "program: " << in.info.program << "  pid " << in.info.pid << "  threads " << in.info.threads
        << "  ended by " << in.info.end << "\n";
    if (!in.info.complete)
        out << "warning: the trace has no end record; it stops at the last complete chunk\n";
    if (in.info.dropped != 0)
        out << "warning: " << in.info.dropped
            << " calls were not recorded (made while the process was ending)\n";
    out << "command: " << in.info.command << "\n";
    if (in.r.windowed) out << describe_window(in.r) << "\n";
    out << "\n";
    std::snprintf(line, sizeof line,
                  "events %" PRIu64 " %s; allocations %" PRIu64 ", deallocations %" PRIu64
                  ", frames %" PRIu64 "\n",
                  in.r.events, span(in.r).c_str(), in.r.allocations, in.r.deallocations,
                  in.r.calls[static_cast<std::size_t>(op::frame)]);
    out << line << "calls:";
    for (std::size_t k = 0; k < op_count; ++k) {
        if (in.r.calls[k] != 0) out << " " << op_name(static_cast<op>(k)) << " " << in.r.calls[k];
    }
    out << "\n";
    if (const std::uint64_t reallocs = in.r.calls[static_cast<std::size_t>(op::realloc)]; reallocs != 0)
        out << "realloc in place " << in.r.reallocs_in_place << " of " << reallocs << "\n";
    out << "bytes allocated " << human_bytes(in.r.bytes_allocated) << "; peak live "
        << human_bytes(in.r.peak_live_bytes) << " (" << in.r.peak_live_bytes << " B) at "
        << human_ns(in.r.peak_time_ns) << "\n";
    out << (in.r.windowed ? "live at window end " : "leaked at exit ") << human_bytes(in.r.leaked_bytes)
        << " in " << in.r.leaked_blocks << " blocks; temporaries " << in.r.temporaries << "; failed "
        << in.r.failed << "; frees of unknown pointers " << in.r.unknown_frees << "\n";
    out << "cross-thread frees " << in.r.cross_thread_frees << " ("
        << human_bytes(in.r.cross_thread_bytes) << "); "
        << (in.r.timing_period > 1 ? "estimated " : "measured ") << "time in the allocator "
        << human_ns(in.r.time_ns);
    if (in.r.timing_period > 1) out << " (1 call in " << in.r.timing_period << " timed)";
    out << "\n";
}

void summary_json(nlohmann::json& j, const section_input& in) {
    j["trace"] = {
        {"file", in.info.file},         {"program", in.info.program}, {"command", in.info.command},
        {"pid", in.info.pid},           {"threads", in.info.threads}, {"file_size", in.info.file_size},
        {"complete", in.info.complete}, {"end", in.info.end},         {"dropped", in.info.dropped}};
    nlohmann::json calls;
    for (std::size_t k = 0; k < op_count; ++k) calls[op_name(static_cast<op>(k))] = in.r.calls[k];
    if (in.r.windowed) {
        j["window"] = {{"from_ns", in.r.window.from_ns},
                       {"to_ns", in.r.window.to_ns},
                       {"live_at_start_included", in.r.live_at_start_included},
                       {"live_at_start_bytes", in.r.live_at_start_bytes},
                       {"live_at_start_blocks", in.r.live_at_start_blocks}};
    }
    j["totals"] = {{"events", in.r.events},
                   {"calls", calls},
                   {"allocations", in.r.allocations},
                   {"deallocations", in.r.deallocations},
                   {"bytes_allocated", in.r.bytes_allocated},
                   {"peak_live_bytes", in.r.peak_live_bytes},
                   {"peak_time_ns", in.r.peak_time_ns},
                   {"duration_ns", in.r.duration_ns},
                   {"leaked_blocks", in.r.leaked_blocks},
                   {"leaked_bytes", in.r.leaked_bytes},
                   {"temporaries", in.r.temporaries},
                   {"cross_thread_frees", in.r.cross_thread_frees},
                   {"cross_thread_bytes", in.r.cross_thread_bytes},
                   {"unknown_frees", in.r.unknown_frees},
                   {"failed", in.r.failed},
                   {"reallocs_in_place", in.r.reallocs_in_place},
                   {"time_ns", in.r.time_ns},
                   {"timing_period", in.r.timing_period}};
}

std::string summary_html(const section_input& in) {
    std::ostringstream o;
    o << "<table class=\"totals\">";
    auto row = [&](const std::string& k, const std::string& v) {
        o << "<tr><td>" << escape_html(k) << "</td><td>" << escape_html(v) << "</td></tr>";
    };
    row("command", in.info.command);
    row("trace", in.info.file + " (" + human_bytes(in.info.file_size) + ")");
    row("ended by", in.info.end + (in.info.complete ? "" : " (incomplete trace)"));
    if (in.r.windowed) row("time window", describe_window(in.r));
    row("events", std::to_string(in.r.events) + " " + span(in.r));
    row("allocations / deallocations",
        std::to_string(in.r.allocations) + " / " + std::to_string(in.r.deallocations));
    row("bytes allocated", human_bytes(in.r.bytes_allocated));
    row("peak live", human_bytes(in.r.peak_live_bytes) + " at " + human_ns(in.r.peak_time_ns));
    row(in.r.windowed ? "live at window end" : "leaked at exit",
        human_bytes(in.r.leaked_bytes) + " in " + std::to_string(in.r.leaked_blocks) + " blocks");
    row("temporaries", std::to_string(in.r.temporaries));
    if (const std::uint64_t reallocs = in.r.calls[static_cast<std::size_t>(op::realloc)]; reallocs != 0)
        row("realloc in place", std::to_string(in.r.reallocs_in_place) + " of " + std::to_string(reallocs));
    row("cross-thread frees", std::to_string(in.r.cross_thread_frees));
    row(in.r.timing_period > 1 ? "estimated time in the allocator" : "measured time in the allocator",
        human_ns(in.r.time_ns) + (in.r.timing_period > 1
                                   ? " (1 call in " + std::to_string(in.r.timing_period) + " timed)"
                                   : std::string()));
    o << "</table>\n";
    o << "<div class=\"grid\"><div><h2>Memory over time</h2><div class=\"chart\" id=\"memory\"></div></div>"
         "<div><h2>Allocations per second</h2><div class=\"chart\" id=\"rate\"></div></div>"
         "<div><h2>Size histogram</h2><div class=\"chart\" id=\"sizes\"></div></div>"
         "<div><h2>Lifetime histogram</h2><div class=\"chart\" id=\"lifetimes\"></div></div></div>\n";
    return o.str();
}

}  // namespace

extern const report_section summary_section;
const report_section summary_section{"summary", summary_text, summary_json, summary_html, false};

}  // namespace rtmem::analyze
