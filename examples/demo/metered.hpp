// metered<A>: counts every call into an rtmem allocator (and, in profiling mode, its time) in
// the demo's per-thread counters, so the rtmem variant's "allocator calls / time per frame"
// are measured the same way as the baseline's heap calls.
#pragma once
#include <cstddef>

#include "cycle_clock.hpp"
#include "heap_counters.hpp"
#include "heap_counters_slots.hpp"
#include "rtmem/core/allocator.hpp"

namespace demo {

template <rtmem::allocator A>
class metered {
  public:
    static constexpr std::string_view name = "metered";
    explicit metered(A& a) noexcept : a_(&a) {}

    [[nodiscard]] void* allocate(std::size_t size,
                                 std::size_t align = rtmem::default_alignment) noexcept {
        if (!profiling()) {
            heap::add_rtmem_call(0);
            return a_->allocate(size, align);
        }
        const std::uint64_t t0 = cycles();
        void* p = a_->allocate(size, align);
        heap::add_rtmem_call(cycles() - t0);
        return p;
    }
    void deallocate(void* p, std::size_t size,
                    std::size_t align = rtmem::default_alignment) noexcept {
        if (!profiling()) {
            heap::add_rtmem_call(0);
            return a_->deallocate(p, size, align);
        }
        const std::uint64_t t0 = cycles();
        a_->deallocate(p, size, align);
        heap::add_rtmem_call(cycles() - t0);
    }
    A& underlying() const noexcept { return *a_; }

  private:
    static bool profiling() noexcept {
        return heap::detail::profiling_on.load(std::memory_order_relaxed);
    }
    A* a_;
};

/// Times one call of f as an rtmem allocator call (for operations that are not allocate or
/// deallocate, e.g. an object pool's acquire).
template <class F>
decltype(auto) metered_call(F&& f) {
    if (!heap::detail::profiling_on.load(std::memory_order_relaxed)) {
        heap::add_rtmem_call(0);
        return f();
    }
    struct timer {
        std::uint64_t t0 = cycles();
        ~timer() { heap::add_rtmem_call(cycles() - t0); }
    } t;
    return f();
}

}  // namespace demo
