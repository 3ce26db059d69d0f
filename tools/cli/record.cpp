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

namespace {

struct record_args {
    std::string output;
    int depth = 16;
    int timing = 16;
    bool follow_fork = false;
    std::vector<std::string> command;
};

std::string find_preload_library() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("RTMEM_TRACE_LIB"); env != nullptr && *env != 0) return env;
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
        "cannot find librtmem-trace.so (set RTMEM_TRACE_LIB to its path)");
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
    std::string base = std::filesystem::path(a.command[0]).filename().string();
    std::string file =
        !a.output.empty() ? a.output : "rtmem-" + base + "-" + std::to_string(child) + ".rtt";
    if (child == 0) {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGQUIT, &old_quit, nullptr);
        std::string path = !a.output.empty()
                               ? a.output
                               : "rtmem-" + base + "-" + std::to_string(getpid()) + ".rtt";
        const char* old_preload = std::getenv("LD_PRELOAD");
        std::string preload = lib;
        if (old_preload != nullptr && *old_preload != 0) preload += std::string(":") + old_preload;
        setenv("LD_PRELOAD", preload.c_str(), 1);
        setenv("RTMEM_TRACE_FILE", path.c_str(), 1);
        setenv("RTMEM_TRACE_DEPTH", std::to_string(a.depth).c_str(), 1);
        setenv("RTMEM_TRACE_TIMING", std::to_string(a.timing).c_str(), 1);
        setenv("RTMEM_TRACE_FOLLOW_FORK", a.follow_fork ? "1" : "0", 1);
        unsetenv("RTMEM_TRACE_ACTIVE");
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
             ->check(CLI::Range(0, 128));
         sub.add_option("--timing", a->timing,
                        "Time one allocator call in N (1: every call, costs a second clock read)")
             ->check(CLI::Range(1, 65536));
         sub.add_flag("--follow-fork", a->follow_fork,
                      "Trace forked children and exec'd programs into <file>.<pid>");
         sub.add_option("command", a->command, "Program and arguments (after --)")->required();
         run = [a] { return run_record(*a); };
     }});

}  // namespace
