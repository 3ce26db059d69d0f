// Optional allocator capabilities, each a small concept detected where it is used.
#pragma once
#include <concepts>

#include "rtmem/core/stats.hpp"

namespace rtmem {

/// owns(p): whether p points into memory this allocator handed out (or manages).
template <class A>
concept owning_allocator = requires(const A& a, const void* p) {
    { a.owns(p) } noexcept -> std::same_as<bool>;
};

/// reset(): frees every block at once.
template <class A>
concept resettable_allocator = requires(A& a) {
    { a.reset() } noexcept;
};

/// marker() / rewind(m): frees every block allocated after the marker was taken.
template <class A>
concept marker_allocator = requires(A& a) {
    typename A::marker_type;
    { a.marker() } noexcept -> std::same_as<typename A::marker_type>;
    { a.rewind(a.marker()) } noexcept;
};

/// stats(): a snapshot of the allocator's accounting.
template <class A>
concept stats_allocator = requires(const A& a) {
    { a.stats() } noexcept -> std::same_as<rtmem::stats>;
};

/// check(): walks every internal invariant; false (and a `corrupted` violation) when broken.
template <class A>
concept checkable_allocator = requires(const A& a) {
    { a.check() } noexcept -> std::same_as<bool>;
};

}  // namespace rtmem
