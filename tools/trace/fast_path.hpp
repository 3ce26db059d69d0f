// Sampled mode's fast path, shared by the preload's entry points (preload.cpp) and sampling
// inside librtmem-malloc (heap_sampler.hpp): with the thread's gate open (thread_gate.hpp),
// an allocation only counts its bytes down to the next sample of its kind and counts itself
// (its bytes are counted by the countdown: thread_fast_state), a free of a block that was not
// recorded only counts itself. Anything else returns false: the caller takes its full path,
// which counts the call there.
#pragma once
#include <cstddef>
#include <cstdint>

#include "recorder.hpp"
#include "sampling.hpp"

namespace rtmem::trace {

/// Subtracts `n` from the countdown `left`; true when it borrowed (n > left: a sample is due,
/// or this kind's first draw), and then `left` holds left - n mod 2^64 until undone.
[[gnu::always_inline]] inline bool count_down_borrows(std::uint64_t& left, std::size_t n) noexcept {
#if defined(__x86_64__)
    // One read-modify-write and a branch on its carry (GCC emits a load, sub, store, branch).
    bool borrow = false;
    asm("subq %2, %1" : "=@ccb"(borrow), "+m"(left) : "r"(n));
    return borrow;
#else
    return __builtin_sub_overflow(left, n, &left);
#endif
}

/// True when the allocation of `n` bytes needs nothing more than counting (no sample due).
[[gnu::always_inline]] inline bool fast_allocation(op kind, std::size_t n) noexcept {
    if (!gate_open()) [[unlikely]]
        return false;
    const auto k = static_cast<std::size_t>(kind);
    if (count_down_borrows(tl_fast.sample_left[k], n)) [[unlikely]] {
        tl_fast.sample_left[k] += n;  // undone: the full path counts it down again
        return false;
    }
    ++tl_fast.calls[k];
    return true;
}

/// Not a recorded block. Null and bootstrap blocks are left to the full path too: their filter
/// bytes are never zero (sampling.cpp).
[[gnu::always_inline]] inline bool unrecorded_block(const void* p) noexcept {
    return !maybe_sampled(p);
}

/// True when freeing `p` needs nothing more than counting (`size`: a sized delete's).
[[gnu::always_inline]] inline bool fast_free(op kind, const void* p,
                                             std::size_t size = 0) noexcept {
    if (!gate_open() || !unrecorded_block(p)) [[unlikely]]
        return false;
    const auto k = static_cast<std::size_t>(kind);
    ++tl_fast.calls[k];
    tl_fast.bytes[k] += size;
    return true;
}

/// The gate is closed by a pause alone: allocations pass uncounted, frees of blocks that were
/// not recorded too (the frees of recorded blocks are still recorded while paused).
[[gnu::always_inline]] inline bool only_paused() noexcept {
    return __atomic_load_n(&tl_fast.gate.word, __ATOMIC_RELAXED) == paused_gate_word;
}

/// The full path found the thread recording: open its gate if it is still closed.
inline void maybe_open_gate() noexcept {
    if (gate_value(gate_closed) == gate_not_set_up && g_fast_path) [[unlikely]]
        open_gate();
}

}  // namespace rtmem::trace
