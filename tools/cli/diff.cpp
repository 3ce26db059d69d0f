// rtmem diff A B [--json] [--top N] [--no-symbols]
#include <iostream>
#include <memory>

#include "command.hpp"
#include "count_option.hpp"
#include "rtmem/analyze/diff.hpp"

namespace {

struct diff_args {
    std::string a, b;
    bool json = false, no_symbols = false;
    std::size_t top = 20;
};

int run_diff(const diff_args& args) {
    using namespace rtmem::analyze;
    trace_reader a(args.a), b(args.b);
    trace_diff d = diff_traces(a, b, !args.no_symbols);
    if (args.json) {
        std::cout << diff_json(d, args.top).dump(2) << "\n";
    } else {
        std::cout << "rtmem diff: " << args.a << " -> " << args.b << "\n";
        print_diff(std::cout, d, args.top);
    }
    return 0;
}

const bool registered = rtmem::cli::register_command(
    {"diff", "Per-site differences (calls, bytes, peak) between two traces",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<diff_args>();
         sub.add_option("before", a->a, "Trace A")->required();
         sub.add_option("after", a->b, "Trace B")->required();
         sub.add_flag("--json", a->json, "Print JSON instead of text");
         sub.add_option("--top", a->top, "Sites listed")->check(rtmem::cli::at_least(1));
         sub.add_flag("--no-symbols", a->no_symbols, "Name sites by module+offset");
         run = [a] { return run_diff(*a); };
     }});

}  // namespace
