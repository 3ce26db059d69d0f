// Sampled recording (`rtmem record --sample BYTES`), as tcmalloc and jemalloc sample: each
// thread counts down the bytes it allocates from a random interval drawn from an exponential
// distribution of mean BYTES; the allocation that reaches zero is sampled (recorded with its
// stack) and a new interval is drawn. Allocated bytes thus form a Poisson process, so a block
// of size s is sampled with probability 1 - exp(-s / BYTES) whatever came before it, and the
// analyses weight it by the inverse. The hot path is a subtraction and a compare.
//
// Frees: only those of sampled blocks are recorded. Sampled blocks still live are kept in a
// hash table (under a spin lock: only sampled allocations and their frees take it), fronted by
// a 64 KiB counting filter read without a lock: a free whose filter byte is 0 was not sampled,
// which is almost every free, for one load of a mostly-cached byte.
#pragma once
#include <atomic>
#include <cstdint>

#include "thread_gate.hpp"

namespace rtmem::trace {

/// Mean sampling interval in bytes; 0: every call is recorded (the default).
extern std::uint64_t g_sample_interval;
inline bool sampling() noexcept {
    return g_sample_interval != 0;
}

__attribute__((noinline)) bool sample_slow(std::uint64_t size) noexcept;

/// Whether an allocation of `size` bytes is sampled (counts it down in any case).
inline bool sample_allocation(std::uint64_t size) noexcept {
    auto s = static_cast<std::int64_t>(size > (1ull << 62) ? 1ull << 62 : size);
    std::int64_t left = tl_fast.sample_left - s;
    if (left > 0) [[likely]] {
        tl_fast.sample_left = left;
        return false;
    }
    return sample_slow(size);  // (a draw: once per interval)
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
    return internal::g_sampled_filter[internal::sampled_hash(p)].load(std::memory_order_relaxed) != 0;
}
/// Live sampled blocks (for tests and the recorder's memory statement).
std::uint64_t sampled_live() noexcept;

/// Seeds the per-thread generators (RTMEM_TRACE_SEED; 0: from the clock).
void sampling_init(std::uint64_t interval, std::uint64_t seed) noexcept;
void sampling_before_fork() noexcept;
void sampling_after_fork() noexcept;

}  // namespace rtmem::trace
