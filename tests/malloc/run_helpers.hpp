// Running a command line and capturing its stdout, for the native vs `rtmem run` comparisons.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace rtmem::test {

struct run_result {
    int status = -1;  ///< exit status, or 128 + signal
    std::string out;
};

inline run_result run_shell(const std::string& command) {
    run_result r;
    FILE* p = popen(command.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return r;
}

/// `command` under `rtmem run` (extra options before --).
inline run_result run_under_rtmem(const std::string& command, const std::string& options = "") {
    return run_shell(std::string(RTMEM_CLI) + " run " + options + " -- " + command);
}

}  // namespace rtmem::test
