// One run of a command, timed: what `rtmem tune` compares. The command's stdout is digested
// (to tell whether two ways of running it print the same), its stderr's tail kept for errors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rtmem::cli {

struct timed_result {
    double cpu_s = 0;  ///< user + system time of the process and the children it waited for
    double wall_s = 0;
    int exit_code = 0;                ///< the exit status, or 128 + the signal that ended it
    std::uint64_t output_digest = 0;  ///< FNV-1a of everything it wrote to stdout
    std::string stderr_tail;          ///< the last 2000 bytes of its stderr
};

/// Runs `argv` (argv[0] a path, or a name looked up in PATH) with stdin from `stdin_path`
/// (/dev/null when empty), stdout and stderr captured. Throws usage_error when it cannot start.
[[nodiscard]] timed_result run_timed(const std::vector<std::string>& argv,
                                     const std::string& stdin_path);

}  // namespace rtmem::cli
