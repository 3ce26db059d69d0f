// Internals of librtmem-trace.so: the recorder (per-thread event buffers, stack table, module
// map, file writer) on the shared preload plumbing of tools/interpose.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "rtmem/format/op.hpp"
#include "rtmem/interpose/bootstrap.hpp"
#include "rtmem/interpose/guard.hpp"
#include "rtmem/interpose/real.hpp"
#include "thread_gate.hpp"

namespace rtmem::trace {

using trace_format::op;

// The shared preload plumbing (tools/interpose): real functions, recursion guard, bootstrap
// buffer.
using interpose::bootstrap_alloc;
using interpose::bootstrap_size;
using interpose::is_bootstrap;
using interpose::real;
using interpose::real_resolved;
using interpose::tl_guard;

namespace internal {
enum state_value : int { uninit, initializing, ready, disabled };
extern std::atomic<int> g_state;
extern std::atomic<bool> g_stopped;  ///< end written or being written: later events are dropped
bool ensure_ready_slow() noexcept;
extern std::uintptr_t g_own_init_lo, g_own_init_hi;  ///< own_libstdcxx.cpp

/// Paused by rtmem_trace_stop() (or RTMEM_TRACE_START=0) until rtmem_trace_start(): calls are
/// neither counted nor recorded, except the frees of sampled blocks (sampled mode), so that
/// the blocks recorded before the pause do not look live for ever.
extern std::atomic<bool> g_paused;

/// Exact counts of every call made while recording (sampled or not), summed into the trace's
/// counts chunk. A thread counts in its thread_fast_state (thread_gate.hpp), registered with
/// its event buffer; these are the buffer's: the counts of the threads that used it and have
/// exited, folded in under the buffer's lock as each exits.
struct call_counters {
    std::uint64_t calls[16];
    std::uint64_t bytes[16];
};
static_assert(static_cast<std::size_t>(op::new_array) < countdown_kinds &&
              static_cast<std::size_t>(op::count) <= counted_kinds);
/// The calling thread's buffer, acquired (and its thread_fast_state registered) if needed.
call_counters* acquire_counters() noexcept;
}  // namespace internal

/// A call from the start-up of a libstdc++ the program does not use (loaded for the tracer:
/// its emergency exception pool), before the tracer's constructor: not the program's.
inline bool tracers_own_call(const void* caller) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(caller);
    return a - internal::g_own_init_lo < internal::g_own_init_hi - internal::g_own_init_lo;
}

// Inline: every interposed call asks these first.

inline bool paused() noexcept {
    return internal::g_paused.load(std::memory_order_relaxed);
}

/// Whether this thread's counts are registered (inside the recursion guard: a thread's first
/// count maps its buffer). False only when no buffer could be mapped: the call goes uncounted.
inline bool counting() noexcept {
    return tl_fast.counters != nullptr || internal::acquire_counters() != nullptr;
}

/// Counts one call and its bytes (~0: unknown, e.g. an overflowing calloc).
inline void count_call(op kind, std::uint64_t size) noexcept {
    if (!counting()) [[unlikely]]
        return;
    auto i = static_cast<std::size_t>(kind);
    ++tl_fast.calls[i];
    if (size != ~std::uint64_t{0}) tl_fast.bytes[i] += size;
}

/// Sampled mode's fast path may run: glibc's malloc and libstdc++'s new are next, the tracer's
/// constructor has run (before it, libstdc++'s start-up calls are told apart by caller).
extern bool g_fast_path;
/// Opens this thread's gate when the full path finds nothing against it (out of line; once
/// per thread, and after each pause).
void open_gate() noexcept;

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

/// The next operator new/new[]/delete/delete[] (unaligned) are libstdc++'s, which are malloc
/// and free plus a new_handler loop: sampled and paused modes then call malloc and free
/// directly, skipping two interposed frames per call (the handler loop still runs on failure).
extern bool g_new_is_malloc;

/// Records one call; `time` (ticks) is when it took effect, `duration` the ticks spent in
/// `real` when `timed`.
void record(op kind, std::uint64_t size, std::size_t align, const void* ptr, const void* old_ptr,
            std::uint64_t time, std::uint64_t duration, bool timed, bool failed) noexcept;

/// Flushes every buffer and writes the end chunk (exec: the image is about to be replaced).
void finish_before_exec() noexcept;
void finish_quick_exit() noexcept;

}  // namespace rtmem::trace
