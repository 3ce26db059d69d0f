// Sampling inside librtmem-malloc (`rtmem record --sample BYTES --heap rtmem`), as tcmalloc
// samples inside its own malloc: librtmem-malloc-sampled.so is librtmem-malloc built with
// RTMEM_MALLOC_SAMPLED=1 and linked with the recorder; each of its entry points first takes
// the fast path of fast_path.hpp (gate, countdown, counter: a few instructions, no call) and
// then serves the call from rt_heap as librtmem-malloc.so does. A call the fast path declines
// comes here: counted, recorded when sampled (sampled_calls.hpp), the same v3 trace as the
// preload writes. The hooks themselves are macros in tools/malloc/sample_hook.hpp.
//
// The allocator call runs with the gate's guard byte raised (the entry point, re-entered,
// then serves it uncounted) but not interpose's tl_guard, which would send it to glibc; the
// recorder's own work raises both (guard_scope), so its memory comes from glibc, not rt_heap.
#pragma once
#include <cstddef>

#include "fast_path.hpp"
#include "sampled_calls.hpp"

namespace rtmem::trace::heap_sampling {

/// The entry point was re-entered from a sampled call or from the recorder: it serves the call
/// itself, uncounted (only asked once the fast path declined).
[[gnu::always_inline]] inline bool inside() noexcept {
    return gate_value(gate_guard) != 0;
}

/// The gate's guard byte alone, around the allocator's own call.
struct allocator_call {
    allocator_call() noexcept {
        set_gate(gate_guard, static_cast<std::uint8_t>(gate_value(gate_guard) + 1));
    }
    ~allocator_call() {
        set_gate(gate_guard, static_cast<std::uint8_t>(gate_value(gate_guard) - 1));
    }
    allocator_call(const allocator_call&) = delete;
    allocator_call& operator=(const allocator_call&) = delete;
};

/// The recorder runs and this call is the program's (not the recorder's, not libstdc++'s
/// start-up for the tracer alone).
inline bool programs_call(const void* caller) noexcept {
    return interpose::tl_guard == 0 && ensure_ready() && recording() && !tracers_own_call(caller);
}

/// Opens the thread's gate after an allocation it made: the thread is bound to rt_heap by then
/// (binding allocates under interpose's guard alone, which an open gate would count).
inline void allocated() noexcept {
    maybe_open_gate();
}

template <class Call>
__attribute__((noinline)) void* allocation(op kind, std::size_t size, std::size_t align,
                                           const void* caller, Call call) {
    void* p = nullptr;
    bool counted = programs_call(caller);
    {
        allocator_call a;
        p = call();
    }
    if (counted) {
        sampled_allocation_done(kind, size, align, p);
        allocated();
    }
    return p;
}

template <class Call>
__attribute__((noinline)) void deallocation(op kind, void* p, std::size_t size, Call call) {
    if (p == nullptr || is_bootstrap(p) || !programs_call(nullptr)) {
        allocator_call a;
        call();
        return;
    }
    sampled_deallocation(kind, p, size, 0, [&] {
        allocator_call a;
        call();
    });
}

template <class Call>
__attribute__((noinline)) void* reallocation(void* old, std::size_t size, const void* caller,
                                             Call call) {
    if ((old != nullptr && is_bootstrap(old)) || !programs_call(caller)) {
        allocator_call a;
        return call();
    }
    void* p = sampled_reallocation(old, size, [&] {
        allocator_call a;
        return call();
    });
    allocated();
    return p;
}

}  // namespace rtmem::trace::heap_sampling
