// The contract between `rtmem record` (tools/cli) and the preload library (tools/trace): the
// environment variables that carry the settings, their defaults and limits, and the default
// trace file name. Both sides use these names; nothing here allocates (the preload library
// reads them before malloc is resolved).
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem::trace_format::contract {

// Environment variables read by librtmem-trace.so (set by `rtmem record`, or by hand).
inline constexpr const char* env_file = "RTMEM_TRACE_FILE";    ///< trace path
inline constexpr const char* env_depth = "RTMEM_TRACE_DEPTH";  ///< frames per stack
inline constexpr const char* env_timing = "RTMEM_TRACE_TIMING";  ///< time one call in N
inline constexpr const char* env_follow_fork = "RTMEM_TRACE_FOLLOW_FORK";  ///< 1: trace children
inline constexpr const char* env_writer = "RTMEM_TRACE_WRITER";  ///< 0: no writer thread
inline constexpr const char* env_fast_stacks = "RTMEM_TRACE_FAST_STACKS";  ///< 0: always unwind
inline constexpr const char* env_zstd_level = "RTMEM_TRACE_ZSTD_LEVEL";
/// Mean sampling interval in bytes (`record --sample`); 0 or unset: record every call.
inline constexpr const char* env_sample = "RTMEM_TRACE_SAMPLE";
/// Seed of the sampling intervals (0 or unset: from the clock); the same seed and the same
/// single-threaded run sample the same allocations.
inline constexpr const char* env_seed = "RTMEM_TRACE_SEED";
/// 0: begin paused, until the program calls rtmem_trace_start() (default 1).
inline constexpr const char* env_start = "RTMEM_TRACE_START";
/// Set by a traced process for its descendants: an exec'd or spawned child records only with
/// follow-fork. `rtmem record` clears it for the program it starts.
inline constexpr const char* env_active = "RTMEM_TRACE_ACTIVE";
/// Read by `rtmem record` only: the preload library to use instead of the built or installed one.
inline constexpr const char* env_library = "RTMEM_TRACE_LIB";

inline constexpr int default_depth = 16;
inline constexpr int max_depth = 128;  ///< deeper requests are cut to this
inline constexpr std::uint32_t default_timing_period = 16;
inline constexpr std::uint32_t max_timing_period = 65536;  ///< 0 counts as 1, more as this
inline constexpr bool default_follow_fork = false;
inline constexpr bool default_writer = true;
inline constexpr bool default_fast_stacks = true;
inline constexpr int default_zstd_level = 1;

/// The default trace file name, "rtmem-<program>-<pid>.rtt" (program: the executable's file
/// name), written into `out` (capacity `cap`, always terminated; cut when too small). Returns
/// the length written.
inline std::size_t default_file_name(char* out, std::size_t cap, const char* program,
                                     std::uint64_t pid) noexcept {
    if (cap == 0) return 0;
    std::size_t len = 0;
    auto put = [&](const char* s) {
        while (*s != 0 && len + 1 < cap) out[len++] = *s++;
    };
    const char* base = program;
    for (const char* c = program; *c != 0; ++c) {
        if (*c == '/') base = c + 1;
    }
    char digits[24];
    std::size_t n = 0;
    do {
        digits[n++] = static_cast<char>('0' + pid % 10);
        pid /= 10;
    } while (pid != 0);
    char decimal[24];
    for (std::size_t i = 0; i < n; ++i) decimal[i] = digits[n - 1 - i];
    decimal[n] = 0;
    put("rtmem-");
    put(base);
    put("-");
    put(decimal);
    put(".rtt");
    out[len] = 0;
    return len;
}

}  // namespace rtmem::trace_format::contract
