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

// A sampled trace's figures are estimates: "~1.2 MiB (95%: 1.1 MiB–1.4 MiB)".
std::string estimate_figure(const report_data& r, std::uint64_t v, double variance, bool bytes) {
    std::string value = bytes ? human_bytes(v) : std::to_string(v);
    if (r.sample_interval == 0) return value;
    std::string out = "~";  // appended piecewise: GCC 12's -Wrestrict misfires on "~" + s at -O3
    out += value;
    out += " (95%: ";
    out += interval_text(v, variance, bytes);
    out += ")";
    return out;
}
std::string bytes_figure(const report_data& r, std::uint64_t v, double variance) {
    return estimate_figure(r, v, variance, true);
}
std::string count_figure(const report_data& r, std::uint64_t v, double variance) {
    return estimate_figure(r, v, variance, false);
}

void sampling_text(std::ostream& out, const report_data& r) {
    if (r.sample_interval == 0) return;
    out << "sampled trace: one sample per " << human_bytes(r.sample_interval)
        << " allocated on average; ~ marks estimates (each recorded block of size s counts "
           "1/(1-exp(-s/"
        << r.sample_interval << ")) times), with their 95% intervals (from the Horvitz-Thompson "
           "variance; a peak reads high when few blocks are live); "
        << (r.exact_calls ? "calls and requested bytes per call are exact (the tracer's counts)"
            : r.windowed  ? "calls are the recorded events of the window (exact counts cover the whole run)"
                          : "calls are the recorded events (no exact counts: the trace did not end cleanly)")
        << "; allocator time and temporaries are not measured\n";
    if (!r.exact_calls) return;
    out << "exact bytes requested:";
    for (std::size_t k = 0; k < op_count; ++k) {
        if (r.exact_bytes[k] != 0)
            out << " " << op_name(static_cast<op>(k)) << " " << human_bytes(r.exact_bytes[k]);
    }
    out << "\n";
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
    sampling_text(out, in.r);
    out << "\n";
    std::snprintf(line, sizeof line, "events %" PRIu64 " %s; allocations %s, deallocations %s%s, frames %" PRIu64 "\n",
                  in.r.events, span(in.r).c_str(),
                  count_figure(in.r, in.r.allocations, in.r.allocations_variance).c_str(),
                  in.r.sample_interval != 0 ? "~" : "", std::to_string(in.r.deallocations).c_str(),
                  in.r.calls[static_cast<std::size_t>(op::frame)]);
    out << line << (in.r.exact_calls ? "calls (exact):" : "calls:");
    for (std::size_t k = 0; k < op_count; ++k) {
        if (in.r.calls[k] != 0) out << " " << op_name(static_cast<op>(k)) << " " << in.r.calls[k];
    }
    out << "\n";
    if (const std::uint64_t reallocs = in.r.calls[static_cast<std::size_t>(op::realloc)];
        reallocs != 0 && in.r.sample_interval == 0)
        out << "realloc in place " << in.r.reallocs_in_place << " of " << reallocs << "\n";
    out << "bytes allocated " << bytes_figure(in.r, in.r.bytes_allocated, in.r.bytes_allocated_variance)
        << "; peak live " << bytes_figure(in.r, in.r.peak_live_bytes, in.r.peak_live_variance) << " ("
        << in.r.peak_live_bytes << " B) at " << human_ns(in.r.peak_time_ns) << "\n";
    out << (in.r.windowed ? "live at window end " : "leaked at exit ")
        << bytes_figure(in.r, in.r.leaked_bytes, in.r.leaked_bytes_variance) << " in "
        << (in.r.sample_interval != 0 ? "~" : "") << in.r.leaked_blocks << " blocks; temporaries "
        << (in.r.sample_interval != 0 ? std::string("n/a") : std::to_string(in.r.temporaries)) << "; failed "
        << in.r.failed << "; frees of unknown pointers " << in.r.unknown_frees << "\n";
    out << "cross-thread frees " << in.r.cross_thread_frees << " ("
        << human_bytes(in.r.cross_thread_bytes) << "); ";
    if (in.r.sample_interval != 0) {
        out << "time in the allocator not measured (sampled trace)\n";
        return;
    }
    out << (in.r.timing_period > 1 ? "estimated " : "measured ") << "time in the allocator "
        << human_ns(in.r.time_ns);
    if (in.r.timing_period > 1) out << " (1 call in " << in.r.timing_period << " timed)";
    // The same figure as `rtmem advise`'s first line; docs/advisor.md says how it differs from
    // the advisor's cost model and from a replay.
    out << " as recorded (rtmem replay times the calls replayed alone)\n";
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
    if (in.r.sample_interval != 0) {
        nlohmann::json bytes;
        for (std::size_t k = 0; k < op_count; ++k) bytes[op_name(static_cast<op>(k))] = in.r.exact_bytes[k];
        j["sampling"] = {{"interval_bytes", in.r.sample_interval},
                         {"estimated", true},
                         {"interval", "95%, [low, high]: the score interval of the Horvitz-Thompson estimate with variance sum of w (w - 1) x^2, w = 1 / (1 - exp(-size / interval))"},
                         {"exact_calls", in.r.exact_calls},
                         {"exact_bytes", bytes},
                         {"allocations_interval", interval_json(in.r.allocations, in.r.allocations_variance)},
                         {"bytes_allocated_interval", interval_json(in.r.bytes_allocated, in.r.bytes_allocated_variance)},
                         {"peak_live_interval", interval_json(in.r.peak_live_bytes, in.r.peak_live_variance)},
                         {"leaked_bytes_interval", interval_json(in.r.leaked_bytes, in.r.leaked_bytes_variance)}};
    }
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
    if (in.r.sample_interval != 0)
        row("sampled trace", "one sample per " + human_bytes(in.r.sample_interval) +
                                 " on average: ~ figures are estimates with their 95% intervals");
    row("bytes allocated", bytes_figure(in.r, in.r.bytes_allocated, in.r.bytes_allocated_variance));
    row("peak live", bytes_figure(in.r, in.r.peak_live_bytes, in.r.peak_live_variance) + " at " +
                         human_ns(in.r.peak_time_ns));
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
