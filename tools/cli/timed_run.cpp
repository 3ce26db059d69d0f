#include "timed_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "command.hpp"

namespace rtmem::cli {

namespace {

double seconds(const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// An unnamed file the child writes and the parent reads back.
int scratch_file() {
    FILE* f = std::tmpfile();
    if (f == nullptr)
        throw usage_error(std::string("cannot create a temporary file: ") + std::strerror(errno));
    const int fd = dup(fileno(f));
    std::fclose(f);
    return fd;
}

// FNV-1a of the file's bytes, read in blocks (a program may print a lot).
std::uint64_t digest(int fd) {
    std::uint64_t h = 1469598103934665603ull;
    char buf[1 << 16];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        for (ssize_t i = 0; i < n; ++i)
            h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
    return h;
}

std::string tail(int fd, off_t bytes) {
    const off_t size = lseek(fd, 0, SEEK_END);
    const off_t from = size > bytes ? size - bytes : 0;
    std::string out(static_cast<std::size_t>(size - from), '\0');
    if (pread(fd, out.data(), out.size(), from) < 0) out.clear();
    return out;
}

}  // namespace

timed_result run_timed(const std::vector<std::string>& argv, const std::string& stdin_path) {
    if (argv.empty()) throw usage_error("no command to run");
    const std::string in_path = stdin_path.empty() ? "/dev/null" : stdin_path;
    const int in = open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) throw usage_error("cannot open " + in_path + ": " + std::strerror(errno));
    const int out = scratch_file(), err = scratch_file();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // As system() does: a Ctrl-C ends the program (same process group), not the caller, which
    // then reports it and removes its temporary files.
    struct sigaction ignore = {};
    struct sigaction old_int = {};
    struct sigaction old_quit = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) throw usage_error(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGQUIT, &old_quit, nullptr);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execvp(args[0], args.data());
        const std::string why = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!write(2, why.data(), why.size());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    timed_result r;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.output_digest = digest(out);
    r.stderr_tail = tail(err, 2000);
    close(in);
    close(out);
    close(err);
    return r;
}

}  // namespace rtmem::cli
