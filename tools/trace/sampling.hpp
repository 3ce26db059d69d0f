// Sampled recording (`rtmem record --sample BYTES`), as tcmalloc and jemalloc sample: each
// thread counts down the bytes it allocates from a random interval drawn from an exponential
// distribution of mean BYTES; the allocation that asks for more bytes than are left is sampled
// (recorded with its stack) and a new interval is drawn. Allocated bytes thus form a Poisson
// process, so a block of size s is sampled with probability 1 - exp(-s / BYTES) whatever came
// before it, and the analyses weight it by the inverse. Each kind of allocation (malloc,
// calloc, realloc, aligned, new, new[]) has a countdown of its own, so that the countdown also
// counts the kind's requested bytes (thread_fast_state): each kind's bytes are a Poisson
// process of their own, and a block is sampled with the same probability. The hot path is one
// subtraction from memory and a branch on its borrow (fast_path.hpp).
//
// Frees: only those of sampled blocks are recorded. Sampled blocks still live are kept in a
// hash table (under a spin lock: only sampled allocations and their frees take it), fronted by
// a 64 KiB counting filter read without a lock: a free whose filter byte is 0 was not sampled,
// which is almost every free, for one load of a mostly-cached byte.
#pragma once
#include <atomic>
#include <cstdint>

#include "rtmem/format/op.hpp"
#include "thread_gate.hpp"

namespace rtmem::trace {

using trace_format::op;

/// Mean sampling interval in bytes; 0: every call is recorded (the default).
extern std::uint64_t g_sample_interval;
inline bool sampling() noexcept {
    return g_sample_interval != 0;
}
/// The largest interval drawn.
constexpr std::uint64_t max_interval = std::uint64_t{1} << 62;

__attribute__((noinline)) bool sample_slow(op kind, std::uint64_t size) noexcept;

/// Counts `size` bytes of an allocation of `kind` down to its next sample, which counts them
/// (thread_fast_state); true when this allocation is sampled. A countdown above any interval
/// drawn (wrapped by a signal handler's allocation between the fast path's subtraction and
/// its undo) is redrawn.
inline bool sample_allocation(op kind, std::uint64_t size) noexcept {
    const auto k = static_cast<std::size_t>(kind);
    std::uint64_t left = tl_fast.sample_left[k];
    if (size <= left && left <= max_interval) [[likely]] {
        tl_fast.sample_left[k] = left - size;
        return false;
    }
    return sample_slow(kind, size);  // (a draw: once per interval)
}

namespace internal {
constexpr unsigned filter_bits = 16;
/// Adds `delta` (+1 or -1) to the filter byte of `p`, saturating at 255 (then sticky).
void filter_add(const void* p, int delta) noexcept;
extern std::atomic<std::uint8_t> g_sampled_filter[1u << filter_bits];
inline std::uint32_t sampled_hash(const void* p) noexcept {
    return static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(p) * 0x9e3779b97f4a7c15ull) >>
                                      (64 - filter_bits));
}
}  // namespace internal

/// Remembers a sampled block (live until forget_sampled). False when out of memory: the block
/// is then not recorded.
bool remember_sampled(const void* p) noexcept;
/// True when `p` is a live sampled block, which is then forgotten. Call before the real free
/// (the address may be handed out again at once).
bool forget_sampled(const void* p) noexcept;
inline bool maybe_sampled(const void* p) noexcept {
    const auto& byte = internal::g_sampled_filter[internal::sampled_hash(p)];
#if defined(__x86_64__)
    // One compare with the byte in memory (a relaxed atomic load on x86-64; GCC would load,
    // then test).
    bool zero = false;
    asm("cmpb $0, %1" : "=@ccz"(zero) : "m"(byte));
    return !zero;
#else
    return byte.load(std::memory_order_relaxed) != 0;
#endif
}
/// Live sampled blocks (for tests and the recorder's memory statement).
std::uint64_t sampled_live() noexcept;

/// Seeds the per-thread generators (RTMEM_TRACE_SEED; 0: from the clock).
void sampling_init(std::uint64_t interval, std::uint64_t seed) noexcept;
void sampling_before_fork() noexcept;
void sampling_after_fork() noexcept;

}  // namespace rtmem::trace
