// rtmem record [-o FILE] [--depth N] [--timing N] [--sample BYTES [--heap rtmem]] [--paused]
//              [--follow-fork] -- PROGRAM ARGS...
// Runs the program with librtmem-trace.so preloaded (with --heap rtmem: librtmem-malloc-sampled.so,
// rt_heap with the sampler in its entry points), then prints one line per trace written (from
// its end record) on stderr and exits with the program's exit status.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "rtmem/format/contract.hpp"
#include "rtmem/malloc/contract.hpp"
#include "rtmem/malloc/plan_contract.hpp"

namespace {

namespace contract = rtmem::trace_format::contract;

struct record_args {
    std::string output;
    int depth = contract::default_depth;
    std::uint32_t timing = contract::default_timing_period;
    bool follow_fork = contract::default_follow_fork;
    std::string sample;  ///< mean sampling interval, e.g. "512K" (empty: record every call)
    bool start_paused = false;
    std::string heap = "glibc";  ///< "rtmem": run on rt_heap, sampling inside its malloc
    std::vector<std::string> command;
};

/// Path of librtmem-malloc-sampled.so (overrides the CLI's search), as RTMEM_TRACE_LIBRARY does
/// for librtmem-trace.so.
constexpr const char* env_sampled_heap_library = "RTMEM_MALLOC_SAMPLED_LIBRARY";

// "524288", "512K", "512KiB", "1M", "2G" (binary units): the mean sampling interval in bytes.
std::uint64_t parse_interval(const std::string& text) {
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    std::string unit = text.substr(digits);
    for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    int shift = unit.empty() || unit == "B"             ? 0
                : unit == "K" || unit == "KB" || unit == "KIB" ? 10
                : unit == "M" || unit == "MB" || unit == "MIB" ? 20
                : unit == "G" || unit == "GB" || unit == "GIB" ? 30
                                                               : -1;
    std::uint64_t v = 0;
    bool ok = digits > 0 && digits <= 12 && shift >= 0;
    if (ok) v = std::stoull(text.substr(0, digits)) << shift;
    if (!ok || v == 0 || v > (1ull << 40))
        throw rtmem::cli::usage_error("--sample " + text +
                                      ": expected a byte count from 1 to 1T, e.g. 524288, 512K, 4M");
    return v;
}

// librtmem-trace.so, or librtmem-malloc-sampled.so for --heap rtmem (both are built in
// build/tools/trace and installed in lib/).
std::string find_preload_library(bool on_rt_heap) {
    namespace fs = std::filesystem;
    const char* env_name = on_rt_heap ? env_sampled_heap_library : contract::env_library;
    const std::string name = on_rt_heap ? "librtmem-malloc-sampled.so" : "librtmem-trace.so";
    if (const char* env = std::getenv(env_name); env != nullptr && *env != 0) return env;
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(self.parent_path().parent_path() / "lib" / name);
        candidates.push_back(self.parent_path().parent_path() / "trace" / name);
    }
#if defined(RTMEM_TRACE_LIB_BUILD) && defined(RTMEM_TRACE_LIB_INSTALL)
    if (!on_rt_heap) {
        candidates.emplace_back(RTMEM_TRACE_LIB_BUILD);
        candidates.emplace_back(RTMEM_TRACE_LIB_INSTALL);
    }
#endif
#if defined(RTMEM_MALLOC_SAMPLED_LIB_BUILD) && defined(RTMEM_MALLOC_SAMPLED_LIB_INSTALL)
    if (on_rt_heap) {
        candidates.emplace_back(RTMEM_MALLOC_SAMPLED_LIB_BUILD);
        candidates.emplace_back(RTMEM_MALLOC_SAMPLED_LIB_INSTALL);
    }
#endif
    for (const auto& c : candidates) {
        if (fs::exists(c, ec)) return fs::absolute(c, ec).string();
    }
    throw rtmem::cli::usage_error("cannot find " + name + " (set " + env_name + " to its path)");
}

// Where execvp would find `name`: itself when it holds a '/', else the first executable file
// in PATH; empty when there is none (execvp then reports the error).
std::string resolve_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr && *path != 0 ? path : "/bin:/usr/bin";
    for (std::size_t begin = 0; begin <= dirs.size();) {
        std::size_t end = std::min(dirs.find(':', begin), dirs.size());
        std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
        std::string candidate = dir + "/" + name;
        std::error_code ec;
        if (access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate, ec))
            return candidate;
        begin = end + 1;
    }
    return {};
}

// An ELF executable without PT_INTERP is linked statically: no dynamic loader runs, so
// LD_PRELOAD (the tracer) never loads. Anything unreadable or not ELF is left to exec.
template <class Ehdr, class Phdr>
bool has_no_interpreter(int fd) {
    Ehdr eh{};
    if (pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh)) return false;
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) return false;
    if (eh.e_phentsize < sizeof(Phdr)) return false;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Phdr ph{};
        off_t at = static_cast<off_t>(eh.e_phoff + std::uint64_t{i} * eh.e_phentsize);
        if (pread(fd, &ph, sizeof ph, at) != static_cast<ssize_t>(sizeof ph)) return false;
        if (ph.p_type == PT_INTERP) return false;
    }
    return true;
}
bool is_static_elf(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char ident[EI_NIDENT] = {};
    bool result = false;
    if (pread(fd, ident, sizeof ident, 0) == EI_NIDENT &&
        std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
        result = ident[EI_CLASS] == ELFCLASS64 ? has_no_interpreter<Elf64_Ehdr, Elf64_Phdr>(fd)
                                               : has_no_interpreter<Elf32_Ehdr, Elf32_Phdr>(fd);
    }
    close(fd);
    return result;
}

// The tracer opens the file only once the program runs, and can then only say so on stderr:
// a file it cannot create must stop the run before it starts.
void check_output(const std::string& file) {
    namespace fs = std::filesystem;
    fs::path dir = fs::path(file).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    std::string what = "cannot write the trace " + file + ": ";
    if (!fs::is_directory(dir, ec))
        throw rtmem::cli::usage_error(what + "directory " + dir.string() + " does not exist");
    if (access(dir.c_str(), W_OK | X_OK) != 0)
        throw rtmem::cli::usage_error(what + "directory " + dir.string() + " is not writable");
    if (fs::is_directory(file, ec)) throw rtmem::cli::usage_error(what + "it is a directory");
}

// Followed children write "<file>.<pid>" (".<n>" added for an exec'd image): those written
// since `since`, sorted by name.
std::vector<std::string> child_traces(const std::string& file,
                                      std::filesystem::file_time_type since) {
    namespace fs = std::filesystem;
    fs::path base(file);
    fs::path dir = base.parent_path().empty() ? fs::path(".") : base.parent_path();
    std::string prefix = base.filename().string() + ".";
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        std::string rest = name.substr(prefix.size());
        if (rest.find_first_not_of("0123456789.") != std::string::npos || !std::isdigit(rest[0]))
            continue;
        std::error_code tec;
        if (fs::last_write_time(it->path(), tec) < since || tec) continue;
        out.push_back((base.parent_path() / name).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// One line per trace from its end record and chunk headers: no event is decoded (`rtmem
// report` does that), so the summary costs milliseconds whatever the trace's size.
void print_summary(const std::string& file) {
    rtmem::analyze::trace_reader reader(file);
    std::uint64_t events = reader.complete() ? reader.recorded_events() : reader.event_count();
    std::cerr << "rtmem: " << events << " events, " << reader.thread_count()
              << (reader.thread_count() == 1 ? " thread, " : " threads, ")
              << rtmem::analyze::human_bytes(reader.file_size()) << " in " << file;
    switch (reader.end()) {
        case rtmem::analyze::trace_end::exec:
            std::cerr << " (ended by exec)";
            break;
        case rtmem::analyze::trace_end::signal:
            std::cerr << " (ended by signal " << reader.end_signal() << ")";
            break;
        case rtmem::analyze::trace_end::unknown:
            std::cerr << " (incomplete)";
            break;
        default:
            break;
    }
    if (reader.sample_interval() != 0) {
        std::cerr << "; sampled, 1 per " << rtmem::analyze::human_bytes(reader.sample_interval());
        if (const auto* c = reader.exact_counts()) {
            std::uint64_t calls = 0;
            for (std::uint64_t n : c->calls) calls += n;
            std::cerr << ", of " << calls << " calls";
        }
    }
    if (reader.dropped_events() != 0) {
        std::cerr << "; " << reader.dropped_events() << " calls not recorded (while ending)";
    }
    std::cerr << "\n";
}

int run_record(const record_args& a) {
    if (a.command.empty())
        throw rtmem::cli::usage_error("no program given (rtmem record -- PROGRAM ARGS...)");
    std::uint64_t interval = a.sample.empty() ? 0 : parse_interval(a.sample);
    const bool on_rt_heap = a.heap == "rtmem";
    if (on_rt_heap && interval == 0) {
        throw rtmem::cli::usage_error(
            "--heap rtmem needs --sample BYTES: only sampled recording runs inside rt_heap (a full "
            "trace records every call through librtmem-trace.so, on glibc)");
    }
    std::string lib = find_preload_library(on_rt_heap);
    std::string program = resolve_program(a.command[0]);
    if (!program.empty() && is_static_elf(program)) {
        throw rtmem::cli::usage_error(
            program +
            " is statically linked: it loads no shared library, so the tracer (an "
            "LD_PRELOAD library) cannot record it; trace a dynamically linked build");
    }
    check_output(a.output.empty() ? std::string("rtmem.rtt") : a.output);
    auto started = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(1);
    // The child reports a failed exec here (the pipe closes unwritten on success).
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
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
    if (child != 0) close(exec_pipe[1]);
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
        setenv(contract::env_sample, std::to_string(interval).c_str(), 1);
        setenv(contract::env_start, a.start_paused ? "0" : "1", 1);
        unsetenv(contract::env_active);
        if (on_rt_heap) {  // the plain process heap of `rtmem run`, no plan, not real-time
            unsetenv(rtmem::malloc_contract::env_realtime);
            unsetenv(rtmem::malloc_contract::env_plan);
        }
        execvp(argv[0], argv.data());
        int err = errno;
        (void)!write(exec_pipe[1], &err, sizeof err);
        _exit(127);
    }
    int exec_errno = 0;
    ssize_t got = 0;
    while ((got = read(exec_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(exec_pipe[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    if (got == static_cast<ssize_t>(sizeof exec_errno)) {
        std::cerr << "rtmem: error: cannot run " << a.command[0] << ": "
                  << std::strerror(exec_errno) << "\n";
        return 127;  // as a shell does for a command it cannot run
    }

    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        // The directory was checked: the tracer never started in the program's process.
        std::cerr << "rtmem: warning: no trace was written to " << file
                  << ": the program did not load the tracer (a statically linked or setuid "
                     "program, or one run through such an interpreter, ignores LD_PRELOAD)\n";
    } else {
        try {
            print_summary(file);
        } catch (const std::exception& e) {
            std::cerr << "rtmem: warning: no readable trace: " << e.what() << "\n";
        }
    }
    if (a.follow_fork) {
        for (const auto& c : child_traces(file, started)) {
            try {
                print_summary(c);
            } catch (const std::exception& e) {
                std::cerr << "rtmem: warning: no readable trace: " << e.what() << "\n";
            }
        }
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
         sub.add_option("--sample", a->sample,
                       "Record only a sample of the allocations: one per BYTES allocated on "
                       "average (e.g. 512K; exponential intervals, estimates in report/advise)");
         sub.add_option("--heap", a->heap,
                        "With --sample: 'rtmem' runs the program on rt_heap (as rtmem run does) "
                        "and samples inside its malloc, a few instructions a call; 'glibc' (the "
                        "default) interposes on glibc's malloc")
             ->check(CLI::IsMember({"glibc", "rtmem"}));
         sub.add_flag("--paused", a->start_paused,
                      "Start paused: record from the program's rtmem_trace_start() call");
         sub.add_flag("--follow-fork", a->follow_fork,
                      "Trace forked children and exec'd programs into <file>.<pid>");
         sub.add_option("command", a->command, "Program and arguments (after --)")->required();
         run = [a] { return run_record(*a); };
     }});

}  // namespace
