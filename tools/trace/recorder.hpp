// Internals of librtmem-trace.so: the real allocator entry points, the per-thread recursion
// guard and the recorder (per-thread event buffers, stack table, module map, file writer).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "rtmem/format/op.hpp"

namespace rtmem::trace {

using trace_format::op;

/// The next definitions of the interposed functions (glibc's, or another preloaded malloc).
struct real_functions {
    void* (*malloc)(std::size_t);
    void* (*calloc)(std::size_t, std::size_t);
    void* (*realloc)(void*, std::size_t);
    void (*free)(void*);
    void* (*memalign)(std::size_t, std::size_t);
    int (*posix_memalign)(void**, std::size_t, std::size_t);
    void* (*aligned_alloc)(std::size_t, std::size_t);
    void* (*valloc)(std::size_t);
    void* (*pvalloc)(std::size_t);
    std::size_t (*malloc_usable_size)(void*);
    void* (*new_scalar)(std::size_t);
    void* (*new_array)(std::size_t);
    void* (*new_scalar_nothrow)(std::size_t, const std::nothrow_t&);
    void* (*new_array_nothrow)(std::size_t, const std::nothrow_t&);
    void* (*new_scalar_aligned)(std::size_t, std::align_val_t);
    void* (*new_array_aligned)(std::size_t, std::align_val_t);
    void* (*new_scalar_aligned_nothrow)(std::size_t, std::align_val_t, const std::nothrow_t&);
    void* (*new_array_aligned_nothrow)(std::size_t, std::align_val_t, const std::nothrow_t&);
    void (*delete_scalar)(void*);
    void (*delete_array)(void*);
    void (*delete_scalar_aligned)(void*, std::align_val_t);
    void (*delete_array_aligned)(void*, std::align_val_t);
    void (*exit_now)(int);  ///< _exit
    int (*execve)(const char*, char* const[], char* const[]);
    int (*execvpe)(const char*, char* const[], char* const[]);
    int (*fexecve)(int, char* const[], char* const[]);
};
extern real_functions real;

/// >0 while this thread runs inside the library: nested allocations pass straight through.
/// constinit: no dynamic initialisation, so no TLS wrapper call on every access.
extern constinit thread_local int tl_guard;

struct guard_scope {
    guard_scope() noexcept { ++tl_guard; }
    ~guard_scope() { --tl_guard; }
    guard_scope(const guard_scope&) = delete;
    guard_scope& operator=(const guard_scope&) = delete;
};

namespace internal {
enum state_value : int { uninit, initializing, ready, disabled };
extern std::atomic<int> g_state;
extern std::atomic<bool> g_stopped;  ///< end written or being written: later events are dropped
bool ensure_ready_slow() noexcept;
}  // namespace internal

// Inline: every interposed call asks these first.

/// True once real functions are resolved and recording is on.
inline bool recording() noexcept {
    return internal::g_state.load(std::memory_order_acquire) == internal::ready &&
           !internal::g_stopped.load(std::memory_order_relaxed);
}
/// Resolves the real functions and opens the trace on first use; false while resolving
/// (the caller then serves the request from the bootstrap buffer).
inline bool ensure_ready() noexcept {
    int s = internal::g_state.load(std::memory_order_acquire);
    return s == internal::ready || s == internal::disabled || internal::ensure_ready_slow();
}
[[nodiscard]] inline bool real_resolved() noexcept {
    return real.free != nullptr && real.malloc != nullptr;
}

std::uint64_t now_ns() noexcept;  ///< CLOCK_MONOTONIC

/// The event clock: the raw TSC when it is invariant (one rdtsc, ~10 ns, no vDSO call),
/// otherwise CLOCK_MONOTONIC ns. Converted to trace ns when a block is written, off the
/// allocating thread.
extern bool g_use_tsc;
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
    if (g_use_tsc) return __builtin_ia32_rdtsc();
#endif
    return now_ns();
}

/// Durations are measured on a random sample of calls, one in `g_timing_period` on average
/// (1 = every call): a second clock read per call would double the cost of recording a
/// malloc/free pair. The report scales sampled durations back up.
extern std::uint32_t g_timing_period;
extern constinit thread_local std::uint32_t tl_timing_countdown;
extern constinit thread_local std::uint32_t tl_timing_random;
inline bool timing_due() noexcept {
    if (tl_timing_countdown > 1) {
        --tl_timing_countdown;
        return false;
    }
    // Next gap uniform in [1, 2 * period - 1]: mean `period`, never in step with a loop.
    std::uint32_t x = tl_timing_random == 0 ? 2463534242u : tl_timing_random;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    tl_timing_random = x;
    std::uint32_t span = 2 * g_timing_period - 1;
    tl_timing_countdown = span <= 1 ? 1 : 1 + x % span;
    return true;
}

/// Clock reads around one call of the real allocator.
struct call_timing {
    bool timed = timing_due();
    std::uint64_t start = timed ? ticks() : 0;
    /// The duration in ticks given the time the call returned (0 when not timed).
    [[nodiscard]] std::uint64_t duration(std::uint64_t end) const noexcept {
        return timed ? end - start : 0;
    }
};

/// Records one call; `time` (ticks) is when it took effect, `duration` the ticks spent in
/// `real` when `timed`.
void record(op kind, std::uint64_t size, std::size_t align, const void* ptr, const void* old_ptr,
            std::uint64_t time, std::uint64_t duration, bool timed, bool failed) noexcept;

/// Flushes every buffer and writes the end chunk (exec: the image is about to be replaced).
void finish_before_exec() noexcept;
void finish_quick_exit() noexcept;

// Bootstrap buffer: serves allocations made while dlsym resolves the real functions.
void* bootstrap_alloc(std::size_t size, std::size_t align) noexcept;
bool is_bootstrap(const void* p) noexcept;
std::size_t bootstrap_size(const void* p) noexcept;

}  // namespace rtmem::trace
