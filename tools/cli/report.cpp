// rtmem report FILE [--json] [--html OUT] [--top N] [--no-symbols]
//              [--from TIME] [--to TIME] [--live-at-start]
#include <fstream>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "count_option.hpp"
#include "rtmem/analyze/report_output.hpp"

namespace {

struct report_args {
    std::string file, html, from, to;
    bool json = false, no_symbols = false, live_at_start = false;
    std::size_t top = 10;
};

std::uint64_t time_option(const std::string& name, const std::string& value) {
    auto ns = rtmem::analyze::parse_ns(value);
    if (!ns) {
        throw rtmem::cli::usage_error(name + " " + value +
                                      ": not a time (ns, or a number with ns, us, ms or s: "
                                      "1500000, 1.5ms, 2s)");
    }
    return *ns;
}

int run_report(const report_args& a) {
    using namespace rtmem::analyze;
    bool windowed = !a.from.empty() || !a.to.empty();
    time_window window;
    if (!a.from.empty()) window.from_ns = time_option("--from", a.from);
    if (!a.to.empty()) window.to_ns = time_option("--to", a.to);
    if (window.from_ns >= window.to_ns) {
        throw rtmem::cli::usage_error("--from " + a.from + " is not before --to " + a.to);
    }
    if (a.live_at_start && !windowed) {
        throw rtmem::cli::usage_error("--live-at-start needs --from or --to");
    }
    trace_reader reader(a.file);
    report_data r =
        windowed ? analyze_window(reader, window, a.live_at_start) : analyze_events(reader);
    std::unique_ptr<symbolizer> sym;
    if (!a.no_symbols) sym = std::make_unique<symbolizer>(reader);
    site_names names(reader, sym.get());
    trace_info info = describe(reader);
    if (!a.html.empty()) {
        std::ofstream out(a.html, std::ios::binary);
        if (!out) throw rtmem::cli::usage_error("cannot write " + a.html);
        out << to_html(info, r, names, reader, a.top);
        if (!out.flush()) throw rtmem::cli::usage_error("cannot write " + a.html);
        std::cerr << "rtmem: wrote " << a.html << "\n";
    }
    if (a.json) {
        std::cout << to_json(info, r, names, a.top).dump(2) << "\n";
    } else if (a.html.empty()) {
        print_text(std::cout, info, r, names, a.top);
    }
    return 0;
}

const bool registered = rtmem::cli::register_command(
    {"report", "Summarise a trace: totals, top sites, histograms (text, --json, --html)",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<report_args>();
         sub.add_option("trace", a->file, "Trace file written by rtmem record")->required();
         sub.add_flag("--json", a->json, "Print JSON instead of text");
         sub.add_option("--html", a->html, "Write a self-contained HTML report to this file");
         sub.add_option("--top", a->top, "Sites listed per table")->check(rtmem::cli::at_least(1));
         sub.add_flag("--no-symbols", a->no_symbols, "Show addresses instead of symbols");
         sub.add_option("--from", a->from,
                        "Only events at or after this time since the start (ns, or 1.5s, 200ms, "
                        "30us)");
         sub.add_option("--to", a->to, "Only events before this time since the start");
         sub.add_flag("--live-at-start", a->live_at_start,
                      "With --from: also read the events before the window, to count the memory "
                      "live when it opens");
         run = [a] { return run_report(*a); };
     }});

}  // namespace
