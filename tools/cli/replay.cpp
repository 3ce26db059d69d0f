// rtmem replay TRACE: replays the trace's allocation calls through every whole-program backend
// (whole_program_backends()) and the mixed (advised) configuration; time, footprint,
// violations.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "advise_options.hpp"
#include "command.hpp"
#include "count_option.hpp"
#include "progress_bar.hpp"
#include "replay_aged_option.hpp"
#include "replay_plan.hpp"
#include "rtmem/analyze/replay.hpp"

namespace {

using namespace rtmem::analyze;

struct replay_args {
    std::string file, backends;
    bool json = false, no_symbols = false, no_mixed = false, progress = false;
    unsigned repetitions = 0;  ///< 0: default_repetitions()
    std::string baseline = "glibc";
    std::string plan;  // --plan: the plan against the general heap, nothing else
    std::size_t top = 10, apply = 20;
    rtmem::cli::advisor_options advisor;
    rtmem::cli::aged_option aged;
};

/// jemalloc can only be dlopen'ed with more static TLS than glibc reserves by default: raise it
/// (glibc.rtld.optional_static_tls) and run again, once, with the same arguments.
void reexec_with_static_tls() {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr && std::strstr(tunables, "optional_static_tls") != nullptr) return;
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    if (args.empty()) return;
    std::string value = std::string(tunables != nullptr ? tunables : "");
    value += (value.empty() ? "" : ":") + std::string("glibc.rtld.optional_static_tls=65536");
    setenv("GLIBC_TUNABLES", value.c_str(), 1);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());  // returns only on failure: carry on without jemalloc
}

/// 5 repetitions, 3 for traces of more than 5 M operations (each repetition is two passes
/// through every allocator).
unsigned default_repetitions(const replay_program& prog) {
    return prog.ops.size() > 5'000'000 ? 3 : 5;
}

int run_replay(const replay_args& a) {
    reexec_with_static_tls();
    trace_reader reader(a.file);
    if (reader.sample_interval() != 0)  // only ~1 block in interval/size is in it
        throw rtmem::cli::usage_error(a.file + " is a sampled trace (record --sample): it holds "
                                      "too few of the calls to replay; record a full trace");
    site_map sites(reader, a.advisor.site_depth);
    const advice adv = advise(classify(reader, sites, a.advisor.limits()), a.advisor.costs());
    const replay_program prog = compile_replay(reader, sites);
    const unsigned repetitions = a.repetitions != 0 ? a.repetitions : default_repetitions(prog);
    if (!a.plan.empty())
        return rtmem::cli::replay_with_plan(a.plan, reader, sites, prog,
                                            a.backends.empty() ? "rt_heap" : a.backends,
                                            repetitions, a.json);
    replay_options o;
    o.repetitions = repetitions;
    o.mixed = !a.no_mixed;
    o.baseline = a.baseline;
    o.apply_top = a.apply;
    a.aged.apply(prog, o);
    std::stringstream list(a.backends);
    const auto backends = whole_program_backends();
    for (std::string name; std::getline(list, name, ',');) {
        if (name.empty()) continue;
        if (find_backend(backends, name) == nullptr) {
            throw rtmem::cli::usage_error("--backends: unknown allocator '" + name + "' (" +
                                          backend_names() + ")");
        }
        o.backends.push_back(name);
    }
    if (find_backend(backends, o.baseline) == nullptr) {
        throw rtmem::cli::usage_error("--baseline: unknown allocator '" + o.baseline + "' (" +
                                      backend_names() + ")");
    }
    rtmem::cli::progress_bar bar("rtmem replay", a.progress);
    o.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
    const replay_report r = replay(prog, &adv, o);
    bar.finish();
    std::unique_ptr<symbolizer> sym;
    if (!a.no_symbols) sym = std::make_unique<symbolizer>(reader);
    const site_namer name = sym ? symbol_namer(sites, *sym) : address_namer(sites);
    if (a.json)
        std::cout << format_replay_json(r, name);
    else
        std::cout << format_replay_text(r, name, a.top);
    return 0;
}

const bool registered = rtmem::cli::register_command(
    {"replay",
     "Replay a trace's allocations through whole-program allocators (glibc, peers, tlsf, "
     "rt_heap) and the advised allocators",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<replay_args>();
         sub.add_option("trace", a->file, "Trace file written by rtmem record")->required();
         sub.add_option("--backends", a->backends,
                        "Comma-separated whole-program allocators: " +
                            backend_names() +
                            " (default: all available)");
         sub.add_option("--baseline", a->baseline,
                        "Allocator of the non-advised sites in the mixed replay");
         sub.add_option("--repetitions,--repeat,-r", a->repetitions,
                        "Repetitions per allocator: medians with min-max reported (default 5, "
                        "3 above 5 M operations)")
             ->check(rtmem::cli::at_least(1));
         sub.add_flag("--progress", a->progress,
                      "Show a progress bar on stderr even when it is not a terminal");
         sub.add_option("--apply", a->apply,
                        "Mixed replay: apply the N top-ranked recommendations (0 = all)")
             ->check(rtmem::cli::at_least(0));
         sub.add_option("--plan", a->plan,
                        "Replay with this plan's strategies (rtmem run --plan) in front of the "
                        "general heap (--backends: one name, default rt_heap) against it alone");
         sub.add_flag("--no-mixed", a->no_mixed,
                      "Skip the mixed replay with the advised allocators");
         sub.add_flag("--json", a->json, "Print JSON instead of text");
         sub.add_option("--top", a->top, "Advised sites listed (0 = all)")
             ->check(rtmem::cli::at_least(0));
         sub.add_flag("--no-symbols", a->no_symbols, "Show addresses instead of symbols");
         a->advisor.add_to(sub);
         a->aged.add_to(sub);
         run = [a] { return run_replay(*a); };
     }});

}  // namespace
