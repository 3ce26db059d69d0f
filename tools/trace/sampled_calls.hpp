// Sampled mode's full path: what happens to a call the fast path (fast_path.hpp) declined,
// shared by the preload (preload.cpp, the real function as `call`) and sampling inside
// librtmem-malloc (heap_sampler.hpp, rt_heap as `call`). Counts the call unless paused,
// records a sampled allocation with its stack, and the frees and reallocs of recorded blocks
// (also while paused, so that they do not look live for ever). `call` runs the allocator under
// whatever guard its caller chose; the recorder's own work here runs under guard_scope.
#pragma once
#include <cstddef>
#include <cstdint>

#include "recorder.hpp"
#include "sampling.hpp"

namespace rtmem::trace {

/// Records a sampled block (with its stack). Out of line: once per interval.
void record_sampled(op kind, std::size_t size, std::size_t align, const void* p) noexcept;

/// After an allocation: counts it, records it when sampled.
inline void sampled_allocation_done(op kind, std::size_t size, std::size_t align,
                                    const void* p) noexcept {
    if (paused()) return;
    guard_scope g;  // a thread's first count maps its buffer
    if (!counting()) [[unlikely]]
        return;
    ++tl_fast.calls[static_cast<std::size_t>(kind)];
    if (size == ~std::uint64_t{0}) return;  // an overflowing calloc: no bytes, no block
    // Counted down (which counts its bytes) even when it failed: the fast path does the same.
    if (sample_allocation(kind, size) && p != nullptr) [[unlikely]]
        record_sampled(kind, size, align, p);
}

/// A deallocation: counted unless paused; recorded before it happens when its block was (a
/// block freed here may be handed out again by another thread at once; its allocation must
/// not appear before this free).
template <class Call>
void sampled_deallocation(op kind, const void* p, std::size_t size, std::size_t align, Call call) {
    bool recorded = false;
    {
        guard_scope g;
        if (!paused()) count_call(kind, size);
        recorded = maybe_sampled(p) && forget_sampled(p);
    }
    if (!recorded) {
        call();
        return;
    }
    std::uint64_t t0 = ticks();
    call();
    guard_scope g;
    record(kind, size, align, p, nullptr, t0, 0, false, false);
}

/// A realloc is recorded when its new block is sampled (as a realloc, naming the old block
/// only if that was recorded too) or when it gives up a recorded block (as its free).
template <class Call>
void* sampled_reallocation(const void* old, std::size_t n, Call call) {
    bool live = !paused();
    bool old_sampled = false;
    {
        guard_scope g;
        live = live && counting();
        if (live) ++tl_fast.calls[static_cast<std::size_t>(op::realloc)];
        old_sampled = old != nullptr && maybe_sampled(old) && forget_sampled(old);
    }
    void* p = call();
    guard_scope g;
    bool due = live && sample_allocation(op::realloc, n);  // counts its bytes, as the fast path
    if (p == nullptr && n != 0) {  // failed: the old block is still there
        if (old_sampled) remember_sampled(old);
        return p;
    }
    bool fresh = due && p != nullptr && remember_sampled(p);
    if (fresh) {
        record(op::realloc, n, 0, p, old_sampled ? old : nullptr, ticks(), 0, false, false);
    } else if (old_sampled) {
        record(op::free, 0, 0, old, nullptr, ticks(), 0, false, false);
    }
    return p;
}

}  // namespace rtmem::trace
