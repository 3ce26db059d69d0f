// rtmem advise TRACE: classifies every allocation site and recommends an rtmem allocator.
// (The same advice is a section of `rtmem report --html`: tools/analyze/src/sections/advice.cpp.)
#include <fstream>
#include <iostream>
#include <memory>

#include "advise_options.hpp"
#include "advise_plan.hpp"
#include "command.hpp"
#include "count_option.hpp"
#include "progress_bar.hpp"
#include "rtmem/analyze/replay.hpp"

namespace {

using namespace rtmem::analyze;

struct advise_args {
    std::string file, html;
    bool json = false, all = false, no_symbols = false, measure = false, progress = false;
    std::size_t top = 10, apply = 0;
    unsigned repetitions = 5;
    std::string baseline = "glibc";
    rtmem::cli::advisor_options advisor;
    rtmem::cli::plan_output plan;
};

/// --measure: replays the trace through the baseline and the advised allocators (the mixed
/// replay of `rtmem replay`) and ranks the sites by the saving measured at each.
void measure(advice& adv, trace_reader& reader, const site_map& sites, const advise_args& a) {
    if (find_backend(whole_program_backends(), a.baseline) == nullptr)
        throw rtmem::cli::usage_error("--baseline: unknown allocator '" + a.baseline + "' (" +
                                      backend_names() + ")");
    const replay_program prog = compile_replay(reader, sites);
    replay_options o;
    o.repetitions = a.repetitions;
    o.backends = {a.baseline};
    o.baseline = a.baseline;
    o.apply_top = a.apply;
    rtmem::cli::progress_bar bar("rtmem advise --measure", a.progress);
    o.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
    const replay_report r = replay(prog, &adv, o);
    bar.finish();
    if (!rank_by_replay(adv, r, a.baseline))
        std::cerr << "rtmem: the replay could not run the baseline " << a.baseline
                  << "; savings are the cost model's\n";
}

int run_advise(const advise_args& a) {
    if (a.plan.wanted()) a.plan.check_writable();  // before the analysis, which can take long
    trace_reader reader(a.file);
    const thresholds limits = a.advisor.limits();
    site_map sites(reader, a.advisor.site_depth);
    advice adv = advise(classify(reader, sites, limits), a.advisor.costs());
    if (a.measure) measure(adv, reader, sites, a);
    std::unique_ptr<symbolizer> sym;
    if (!a.no_symbols) sym = std::make_unique<symbolizer>(reader);
    const site_namer name = sym ? symbol_namer(sites, *sym) : address_namer(sites);
    format_options o;
    o.top = a.top;
    o.include_general = a.all;
    if (!a.html.empty()) {
        std::ofstream out(a.html, std::ios::binary);
        out << "<!doctype html><html><head><meta charset=\"utf-8\"><title>rtmem advise " << a.file
            << "</"
               "title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
               "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}pre{background:#f4f4f4;"
               "padding:6px}</style></head><body>\n"
            << format_html(adv, name, o) << "</body></html>\n";
        if (!out.flush()) throw rtmem::cli::usage_error("cannot write " + a.html);
        std::cerr << "rtmem: wrote " << a.html << "\n";
    }
    if (a.plan.wanted())
        a.plan.write(adv, sites, a.advisor.site_depth, a.advisor.plan_costs(), reader, name,
                     a.json ? std::cerr : std::cout);
    if (a.json)
        std::cout << format_json(adv, name);
    else if (a.html.empty() && !a.plan.wanted())
        std::cout << format_text(adv, name, o)
                  << (sym ? debug_info_note(sym->debug_info()) : std::string());
    return 0;
}

const bool registered = rtmem::cli::register_command(
    {"advise",
     "Classify every allocation site and recommend an rtmem allocator with its configuration",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<advise_args>();
         sub.add_option("trace", a->file, "Trace file written by rtmem record")->required();
         sub.add_flag("--json", a->json, "Print JSON instead of text");
         sub.add_option("--html", a->html, "Write the advice as a self-contained HTML page");
         sub.add_option("--top", a->top, "Sites listed (0 = all)")->check(rtmem::cli::at_least(0));
         sub.add_flag("--all", a->all, "Also list general sites (no rtmem allocator fits better)");
         sub.add_flag("--no-symbols", a->no_symbols, "Show addresses instead of symbols");
         sub.add_flag("--measure", a->measure,
                      "Replay the trace (baseline vs advised allocators) and rank the sites by "
                      "the measured saving instead of the cost model");
         sub.add_option("--repetitions,--repeat,-r", a->repetitions,
                        "--measure: repetitions, medians with min-max reported (default 5)")
             ->check(rtmem::cli::at_least(1));
         sub.add_option("--apply", a->apply,
                        "--measure: replay the N top-ranked recommendations (0 = all, default)")
             ->check(rtmem::cli::at_least(0));
         sub.add_option("--baseline", a->baseline,
                        "--measure: allocator of the unadvised sites (default glibc)");
         sub.add_flag("--progress", a->progress,
                      "--measure: show a progress bar on stderr even when it is not a terminal");
         a->advisor.add_to(sub);
         a->plan.add_to(sub);
         run = [a] { return run_advise(*a); };
     }});

}  // namespace
