// rtmem report FILE [--json] [--html OUT] [--top N] [--no-symbols]
#include <fstream>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "rtmem/analyze/report_output.hpp"

namespace {

struct report_args {
    std::string file, html;
    bool json = false, no_symbols = false;
    std::size_t top = 10;
};

int run_report(const report_args& a) {
    using namespace rtmem::analyze;
    trace_reader reader(a.file);
    report_data r = analyze_events(reader);
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
         sub.add_option("--top", a->top, "Sites listed per table")->check(CLI::PositiveNumber);
         sub.add_flag("--no-symbols", a->no_symbols, "Show addresses instead of symbols");
         run = [a] { return run_report(*a); };
     }});

}  // namespace
