// std_allocator<T, A>: an instance-based standard allocator over an rtmem allocator, for code
// that cannot use std::pmr (fixed container types, a C++ library without <memory_resource>, or
// to avoid the virtual call per allocation).
#pragma once
#include <cstddef>
#include <type_traits>

#include "rtmem/adapt/out_of_memory.hpp"
#include "rtmem/core/allocator.hpp"

namespace rtmem {

/// Holds a pointer to an A that must outlive every container using it. Two std_allocators are
/// equal when they point to the same A, so memory allocated through one is freed through any
/// equal one (including rebound copies, as node containers require).
///
/// Propagation (what happens to the allocator when a container is copied, moved or swapped):
/// - copy assignment: false. The destination keeps its own allocator: copying a frame's
///   temporary list into a long-lived one must not move the long-lived one into the frame arena.
/// - move assignment: false, like std::pmr. With equal allocators the move is O(1); with different
///   ones the elements are moved into the destination's memory, so a container never ends up
///   pointing into an arena that is about to be rewound.
/// - swap: true. Swapping never copies elements, and the standard makes swapping containers with
///   unequal, non-propagating allocators undefined behaviour; here the allocators are exchanged
///   with the contents.
/// - copy construction: the copy uses the same allocator as the source.
template <class T, allocator A>
class std_allocator {
  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using propagate_on_container_copy_assignment = std::false_type;
    using propagate_on_container_move_assignment = std::false_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    template <class U>
    struct rebind {
        using other = std_allocator<U, A>;
    };

    explicit std_allocator(A& a) noexcept : a_(&a) {}
    template <class U>
    std_allocator(const std_allocator<U, A>& other) noexcept : a_(&other.underlying()) {}

    [[nodiscard]] T* allocate(std::size_t n) {
        std::size_t bytes = 0;
        if (!checked_mul(n, sizeof(T), bytes)) [[unlikely]]
            detail::out_of_memory_throw_or_die(static_cast<std::size_t>(-1), alignof(T));
        void* p = a_->allocate(bytes, alignof(T));
        if (p == nullptr) [[unlikely]]
            detail::out_of_memory_throw_or_die(bytes, alignof(T));
        return static_cast<T*>(p);
    }

    void deallocate(T* p, std::size_t n) noexcept { a_->deallocate(p, n * sizeof(T), alignof(T)); }

    [[nodiscard]] A& underlying() const noexcept { return *a_; }

  private:
    A* a_;
};

template <class T, class U, class A>
[[nodiscard]] bool operator==(const std_allocator<T, A>& a, const std_allocator<U, A>& b) noexcept {
    return &a.underlying() == &b.underlying();
}

}  // namespace rtmem
