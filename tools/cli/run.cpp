// rtmem run [--realtime SIZE [--lock]] [--plan plan.json] [--stats] -- PROGRAM ARGS...
// Replaces itself with the program, librtmem-malloc.so preloaded: rt_heap serves its malloc and
// operator new (and its children's, through the inherited environment). The exit status and
// any signal are the program's own.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "command.hpp"
#include "rtmem/malloc/contract.hpp"
#include "rtmem/malloc/plan_contract.hpp"
#include "run_plan.hpp"

namespace {

namespace contract = rtmem::malloc_contract;

struct run_args {
    std::string realtime;  // SIZE with an optional K/M/G suffix
    bool lock = false;
    bool stats = false;
    std::string plan;  // plan.json: route its sites to their strategies
    std::vector<std::string> command;
};

std::string find_malloc_library() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv(contract::env_library); env != nullptr && *env != 0)
        return env;
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(self.parent_path().parent_path() / "lib" / "librtmem-malloc.so");
        candidates.push_back(self.parent_path().parent_path() / "malloc" / "librtmem-malloc.so");
    }
#ifdef RTMEM_MALLOC_LIB_BUILD
    candidates.emplace_back(RTMEM_MALLOC_LIB_BUILD);
#endif
#ifdef RTMEM_MALLOC_LIB_INSTALL
    candidates.emplace_back(RTMEM_MALLOC_LIB_INSTALL);
#endif
    for (const auto& c : candidates)
        if (fs::exists(c, ec)) return fs::absolute(c, ec).string();
    throw rtmem::cli::usage_error("cannot find librtmem-malloc.so (set " +
                                  std::string(contract::env_library) + " to its path)");
}

// "64M" -> 67108864; at least one 1 MiB segment.
std::size_t parse_size(const std::string& text) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string suffix = text.substr(used);
    unsigned shift = suffix.empty() ? 0 : suffix == "K" || suffix == "k" ? 10
                                       : suffix == "M" || suffix == "m" ? 20
                                       : suffix == "G" || suffix == "g" ? 30 : 64;
    if (used == 0 || shift == 64 || v > (~0ull >> shift) || (v << shift) < (1ull << 20))
        throw rtmem::cli::usage_error("--realtime " + text +
                                      ": a size of at least 1M (digits, then K, M or G)");
    return static_cast<std::size_t>(v << shift);
}

int run_program(const run_args& a) {
    if (a.command.empty())
        throw rtmem::cli::usage_error("no program given (rtmem run -- PROGRAM ARGS...)");
    if (a.lock && a.realtime.empty()) throw rtmem::cli::usage_error("--lock needs --realtime");
    if (!a.plan.empty() && !a.realtime.empty())
        throw rtmem::cli::usage_error(
            "--plan and --realtime cannot be combined yet: the plan's strategies take memory "
            "from the OS as they grow, which real-time mode promises never to do");
    if (!a.plan.empty()) rtmem::cli::apply_plan(a.plan, a.stats);
    else unsetenv(rtmem::malloc_contract::env_plan);
    const std::string lib = find_malloc_library();
    const char* old_preload = std::getenv("LD_PRELOAD");
    std::string preload = lib;
    if (old_preload != nullptr && *old_preload != 0) preload += std::string(":") + old_preload;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    if (!a.realtime.empty())
        setenv(contract::env_realtime, std::to_string(parse_size(a.realtime)).c_str(), 1);
    else
        unsetenv(contract::env_realtime);
    setenv(contract::env_lock, a.lock ? "1" : "0", 1);
    setenv(contract::env_stats, a.stats ? "1" : "0", 1);
    std::vector<char*> argv;
    for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    throw rtmem::cli::usage_error("cannot run " + a.command[0] + ": " + std::strerror(errno));
}

const bool registered = rtmem::cli::register_command(
    {"run", "Run a program with rt_heap behind its malloc and operator new",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<run_args>();
         sub.add_option("--realtime", a->realtime,
                        "Real-time mode: reserve, commit and prefault SIZE (e.g. 256M) at start; "
                        "an allocation it cannot serve fails instead of asking the OS");
         sub.add_flag("--lock", a->lock, "With --realtime: also mlock the heap");
         sub.add_option("--plan", a->plan,
                        "Route the plan's sites (rtmem advise --plan) to their pool or region; "
                        "everything else to rt_heap");
         sub.add_flag("--stats", a->stats,
                      "Print each process's heap figures (and the plan's summary) on exit "
                      "(stderr)");
         sub.add_option("command", a->command, "Program and arguments (after --)")->required();
         run = [a] { return run_program(*a); };
     }});

}  // namespace
