// The per-thread gate of sampled recording's fast path. One word per thread, read with one
// thread-local load on every interposed call: zero means "sampling, recording, not paused, not
// inside the tracer, this thread set up", and the call only counts itself, counts its bytes
// down to the next sample and tail-calls the real function. Each byte is one reason to take
// the full path instead:
//   guard   >0 while this thread runs inside the tracer (mirrors tl_guard: guard_scope below)
//   closed  1 until the full path opens the gate (recorder ready, sampled mode with glibc's
//           malloc and libstdc++'s new behind it, the thread's counters mapped, the tracer's
//           constructor done); 2, for good, once the thread is exiting (its buffer released:
//           no pause may reach its TLS after that) or a fork child stopped tracing
//   paused  written by rtmem_trace_start/stop into every open gate (set_gates_paused)
// The owner writes guard and closed; another thread writes only paused, of a registered gate,
// under that buffer's lock (event_buffers.cpp). Bytes written singly and the word read whole
// are GCC's __atomic builtins on one union (mixed-size, well defined on the targets).
#pragma once
#include <cstddef>
#include <cstdint>

#include "rtmem/interpose/guard.hpp"

namespace rtmem::trace {

union thread_gate {
    std::uint32_t word;
    std::uint8_t reason[4];
};
enum gate_reason : int { gate_guard = 0, gate_closed = 1, gate_paused = 2 };
enum gate_closed_value : std::uint8_t { gate_not_set_up = 1, gate_closed_for_good = 2 };

/// The word of a gate closed by a pause alone (little-endian: reason[2] is bits 16-23).
constexpr std::uint32_t paused_gate_word = std::uint32_t{1} << (8 * gate_paused);
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "paused_gate_word assumes it");

namespace internal {
struct call_counters;
}

/// Countdowns are kept per allocating kind (trace_format::op: malloc .. new_array); the exact
/// counts per kind of call (trace_format::counted_ops).
constexpr std::size_t countdown_kinds = 7;
constexpr std::size_t counted_kinds = 16;

/// Everything the fast path reads and writes, in one thread-local object: a preload library's
/// initial-exec TLS costs one GOT load for the thread-pointer offset, then %fs-relative
/// accesses, so one object means one GOT load per call and no further pointer.
///
/// The exact counts (summed into the trace's counts chunk by counted_calls, which reads them
/// under the owner's buffer lock): calls[k] calls of kind k; requested bytes of kind k =
/// bytes[k] + (countdown_base[k] - sample_left[k]) (mod 2^64): every counted byte of an
/// allocation is counted down from its kind's countdown, so the fast path of an allocation
/// adds nothing for its bytes; sampling.cpp keeps countdown_base in step whenever it redraws,
/// inside a sequence lock (`redraws`) so that a reader never pairs a base with the other
/// interval's countdown (an error of up to an interval); between redraws a reader is off by at
/// most the allocation in flight.
struct thread_fast_state {
    thread_gate gate;
    std::uint32_t redraws;  ///< odd while the slow path moves countdown_base and sample_left
    std::uint64_t sample_left[countdown_kinds];     ///< bytes to the next sample (sampling.hpp)
    std::uint64_t calls[counted_kinds];             ///< calls of each kind, owner-written
    std::uint64_t bytes[counted_kinds];             ///< bytes not counted through a countdown
    std::uint64_t countdown_base[countdown_kinds];  ///< see above
    internal::call_counters* counters;  ///< its buffer's counts: set once registered (recorder.hpp)
};
extern constinit thread_local thread_fast_state tl_fast;

[[gnu::always_inline]] inline bool gate_open() noexcept {
#if defined(__x86_64__)
    // One compare with the word in memory: an aligned 32-bit load is a relaxed atomic load on
    // x86-64, and GCC does not fold an __atomic load into the compare (a mov and a test).
    bool open = false;
    asm("cmpl $0, %1" : "=@ccz"(open) : "m"(tl_fast.gate.word));
    return open;
#else
    return __atomic_load_n(&tl_fast.gate.word, __ATOMIC_RELAXED) == 0;
#endif
}
inline void set_gate(gate_reason r, std::uint8_t v) noexcept {
    __atomic_store_n(&tl_fast.gate.reason[r], v, __ATOMIC_RELAXED);
}
inline std::uint8_t gate_value(gate_reason r) noexcept {
    return __atomic_load_n(&tl_fast.gate.reason[r], __ATOMIC_RELAXED);
}

/// The tracer's recursion guard: interpose's per-thread counter (what the full path asks) and
/// the gate's guard byte (what the fast path asks). Nesting stays far below 255.
struct guard_scope {
    guard_scope() noexcept {
        ++interpose::tl_guard;
        set_gate(gate_guard, static_cast<std::uint8_t>(gate_value(gate_guard) + 1));
    }
    ~guard_scope() {
        set_gate(gate_guard, static_cast<std::uint8_t>(gate_value(gate_guard) - 1));
        --interpose::tl_guard;
    }
    guard_scope(const guard_scope&) = delete;
    guard_scope& operator=(const guard_scope&) = delete;
};

}  // namespace rtmem::trace
