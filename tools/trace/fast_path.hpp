// Sampled mode's fast path, shared by the preload's entry points (preload.cpp) and sampling
// inside librtmem-malloc (heap_sampler.hpp): with the thread's gate open (thread_gate.hpp),
// an allocation only counts its bytes down to the next sample and counts itself, a free of a
// block that was not recorded only counts itself. Anything else returns false: the caller
// takes its full path, which counts the call there.
#pragma once
#include <cstddef>
#include <cstdint>

#include "recorder.hpp"
#include "sampling.hpp"

namespace rtmem::trace {

/// True when the allocation of `n` bytes needs nothing more than counting (no sample due).
[[gnu::always_inline]] inline bool fast_allocation(op kind, std::size_t n) noexcept {
    if (!gate_open()) [[unlikely]]
        return false;
    auto left = static_cast<std::uint64_t>(tl_fast.sample_left);  // >= 0 (sampling.hpp)
    if (n >= left) [[unlikely]]
        return false;  // a sample is due (or this thread's first draw)
    tl_fast.sample_left = static_cast<std::int64_t>(left - n);
    internal::call_counters* c = tl_fast.counters;  // set while the gate is open
    ++c->calls[static_cast<std::size_t>(kind)];
    c->bytes[static_cast<std::size_t>(kind)] += n;
    return true;
}

/// Not a recorded block. Null and bootstrap blocks are left to the full path too: their filter
/// bytes are never zero (sampling.cpp).
[[gnu::always_inline]] inline bool unrecorded_block(const void* p) noexcept {
    return !maybe_sampled(p);
}

/// True when freeing `p` needs nothing more than counting.
[[gnu::always_inline]] inline bool fast_free(op kind, const void* p,
                                             std::size_t size = 0) noexcept {
    if (!gate_open() || !unrecorded_block(p)) [[unlikely]]
        return false;
    internal::call_counters* c = tl_fast.counters;
    ++c->calls[static_cast<std::size_t>(kind)];
    c->bytes[static_cast<std::size_t>(kind)] += size;
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
