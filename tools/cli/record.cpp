// rtmem record [-o FILE] [--depth N] [--timing N] [--follow-fork] -- PROGRAM ARGS...
// Runs the program with librtmem-trace.so preloaded, then prints a one-line summary on stderr
// (the program's stdout stays its own) and exits with the program's exit status.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "rtmem/format/contract.hpp"

namespace {

namespace contract = rtmem::trace_format::contract;

struct record_args {
    std::string output;
    int depth = contract::default_depth;
    std::uint32_t timing = contract::default_timing_period;
    bool follow_fork = contract::default_follow_fork;
    std::vector<std::string> command;
};

std::string find_preload_library() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv(contract::env_library); env != nullptr && *env != 0) {
        return env;
    }
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(self.parent_path().parent_path() / "lib" / "librtmem-trace.so");
        candidates.push_back(self.parent_path().parent_path() / "trace" / "librtmem-trace.so");
    }
#ifdef RTMEM_TRACE_LIB_BUILD
    candidates.emplace_back(RTMEM_TRACE_LIB_BUILD);
#endif
#ifdef RTMEM_TRACE_LIB_INSTALL
    candidates.emplace_back(RTMEM_TRACE_LIB_INSTALL);
#endif
    for (const auto& c : candidates) {
        if (fs::exists(c, ec)) return fs::absolute(c, ec).string();
    }
    throw rtmem::cli::usage_error(
        "cannot find librtmem-trace.so (set " + std::string(contract::env_library) + " to its path)");
}

int run_record(const record_args& a) {
    if (a.command.empty())
        throw rtmem::cli::usage_error("no program given (rtmem record -- PROGRAM ARGS...)");
    std::string lib = find_preload_library();
    std::vector<char*> argv;
    for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);

    struct sigaction ignore {
    }, old_int{}, old_quit{};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int);  // Ctrl-C is for the program; we wait for it
    sigaction(SIGQUIT, &ignore, &old_quit);
    pid_t child = fork();
    if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    // The child's pid names the default file; the child itself knows it as getpid().
    auto trace_file = [&](pid_t pid) {
        if (!a.output.empty()) return a.output;
        char name[4200];
        contract::default_file_name(name, sizeof name, a.command[0].c_str(),
                                    static_cast<std::uint64_t>(pid));
        return std::string(name);
    };
    std::string file = trace_file(child);
    if (child == 0) {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGQUIT, &old_quit, nullptr);
        std::string path = trace_file(getpid());
        const char* old_preload = std::getenv("LD_PRELOAD");
        std::string preload = lib;
        if (old_preload != nullptr && *old_preload != 0) preload += std::string(":") + old_preload;
        setenv("LD_PRELOAD", preload.c_str(), 1);
        setenv(contract::env_file, path.c_str(), 1);
        setenv(contract::env_depth, std::to_string(a.depth).c_str(), 1);
        setenv(contract::env_timing, std::to_string(a.timing).c_str(), 1);
        setenv(contract::env_follow_fork, a.follow_fork ? "1" : "0", 1);
        unsetenv(contract::env_active);
        execvp(argv[0], argv.data());
        std::string msg = "rtmem: cannot run " + a.command[0] + ": " + std::strerror(errno) + "\n";
        (void)!write(2, msg.data(), msg.size());
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);

    try {
        rtmem::analyze::trace_reader reader(file);
        auto r = rtmem::analyze::analyze_events(reader);
        std::cerr << "rtmem: " << r.events << " events (" << r.allocations << " allocations), peak "
                  << rtmem::analyze::human_bytes(r.peak_live_bytes) << ", "
                  << rtmem::analyze::human_bytes(reader.file_size()) << " in " << file
                  << (reader.complete() ? "" : " (incomplete)");
        if (reader.dropped_events() != 0) {
            std::cerr << "; " << reader.dropped_events() << " calls not recorded (while ending)";
        }
        std::cerr << "\n";
    } catch (const std::exception& e) {
        std::cerr << "rtmem: warning: no readable trace: " << e.what() << "\n";
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        std::cout.flush();
        signal(sig, SIG_DFL);
        raise(sig);  // die the same way as the program did
        return 128 + sig;
    }
    return 1;
}

const bool registered = rtmem::cli::register_command(
    {"record", "Run a program and record its allocations into a trace",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<record_args>();
         sub.add_option("-o,--output", a->output, "Trace file (default rtmem-<program>-<pid>.rtt)");
         sub.add_option("--depth", a->depth, "Call stack depth (0: no stacks)")
             ->check(CLI::Range(0, contract::max_depth));
         sub.add_option("--timing", a->timing,
                        "Time one allocator call in N (1: every call, costs a second clock read)")
             ->check(CLI::Range(std::uint32_t{1}, contract::max_timing_period));
         sub.add_flag("--follow-fork", a->follow_fork,
                      "Trace forked children and exec'd programs into <file>.<pid>");
         sub.add_option("command", a->command, "Program and arguments (after --)")->required();
         run = [a] { return run_record(*a); };
     }});

}  // namespace
