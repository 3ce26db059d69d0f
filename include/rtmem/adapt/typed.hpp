// Typed helpers over any rtmem allocator: construct and destroy objects and arrays, and smart
// pointers that free through the allocator. Exhaustion throws std::bad_alloc (with
// -fno-exceptions: calls the out-of-memory handler and returns nullptr / an empty result).
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "rtmem/adapt/out_of_memory.hpp"
#include "rtmem/adapt/std_allocator.hpp"
#include "rtmem/core/allocator.hpp"

namespace rtmem {

/// Allocates and constructs a T from args. Destroy it with destroy(a, p) with the same static
/// type T (the size passed back to the allocator is sizeof(T)).
template <class T, allocator A, class... Args>
[[nodiscard]] T* make(A& a, Args&&... args) {
    void* p = a.allocate(sizeof(T), alignof(T));
    if (p == nullptr) [[unlikely]] {
        detail::out_of_memory(sizeof(T), alignof(T));
        return nullptr;
    }
#if RTMEM_HAS_EXCEPTIONS
    try {
        return std::construct_at(static_cast<T*>(p), std::forward<Args>(args)...);
    } catch (...) {
        a.deallocate(p, sizeof(T), alignof(T));
        throw;
    }
#else
    return std::construct_at(static_cast<T*>(p), std::forward<Args>(args)...);
#endif
}

/// Destroys and frees an object made by make<T>. nullptr does nothing.
template <allocator A, class T>
void destroy(A& a, T* p) noexcept {
    if (p == nullptr) return;
    std::destroy_at(p);
    a.deallocate(const_cast<std::remove_const_t<T>*>(p), sizeof(T), alignof(T));
}

namespace detail {
/// Bytes in front of an array's first element: room for the count, keeping T aligned.
template <class T>
inline constexpr std::size_t array_header = align_up(
    sizeof(std::size_t), alignof(T) > alignof(std::size_t) ? alignof(T) : alignof(std::size_t));
template <class T>
inline constexpr std::size_t array_align = alignof(T) > alignof(std::size_t) ? alignof(T)
                                                                             : alignof(std::size_t);

template <class T>
std::size_t& array_count(T* first) noexcept {
    return *reinterpret_cast<std::size_t*>(reinterpret_cast<std::byte*>(first) -
                                           sizeof(std::size_t));
}
}  // namespace detail

/// Allocates n elements behind a count header and constructs them one by one, in order, each
/// from args (copied, not forwarded: every element gets the same arguments). No placement
/// new[], whose extra cookie is unspecified. n * sizeof(T) is overflow-checked
/// (std::bad_array_new_length). If a constructor throws, the elements already built are
/// destroyed in reverse order and the memory is freed. Free with destroy_array.
template <class T, allocator A, class... Args>
[[nodiscard]] std::span<T> make_array(A& a, std::size_t n, const Args&... args) {
    static_assert(!std::is_array_v<T>, "make_array<T> takes the element type");
    constexpr std::size_t header = detail::array_header<T>;
    constexpr std::size_t align = detail::array_align<T>;
    std::size_t bytes = 0;
    if (!checked_mul(n, sizeof(T), bytes) || !checked_add(bytes, header, bytes)) [[unlikely]] {
        detail::bad_array_length(n, sizeof(T));
        return {};
    }
    auto* base = static_cast<std::byte*>(a.allocate(bytes, align));
    if (base == nullptr) [[unlikely]] {
        detail::out_of_memory(bytes, align);
        return {};
    }
    T* first = reinterpret_cast<T*>(base + header);
    detail::array_count(first) = n;
    std::size_t built = 0;
#if RTMEM_HAS_EXCEPTIONS
    try {
        for (; built < n; ++built) std::construct_at(first + built, args...);
    } catch (...) {
        while (built > 0) std::destroy_at(first + --built);
        a.deallocate(base, bytes, align);
        throw;
    }
#else
    for (; built < n; ++built) std::construct_at(first + built, args...);
#endif
    return {first, n};
}

/// Destroys (last to first) and frees an array from make_array, given its first element.
template <allocator A, class T>
void destroy_array(A& a, T* first) noexcept {
    if (first == nullptr) return;
    using U = std::remove_const_t<T>;
    U* p = const_cast<U*>(first);
    const std::size_t n = detail::array_count(p);
    for (std::size_t i = n; i > 0; --i) std::destroy_at(p + (i - 1));
    a.deallocate(reinterpret_cast<std::byte*>(p) - detail::array_header<U>,
                 detail::array_header<U> + n * sizeof(U), detail::array_align<U>);
}

/// Same, given the span make_array returned. A span whose size differs from the stored count
/// (a sub-span, or an array from elsewhere) is a size_mismatch violation and nothing is freed.
template <allocator A, class T>
void destroy_array(A& a, std::span<T> elements) noexcept {
    if (elements.data() == nullptr) return;
    using U = std::remove_const_t<T>;
    U* p = const_cast<U*>(elements.data());
    const std::size_t n = detail::array_count(p);
    if (n != elements.size()) [[unlikely]] {
        report_violation(violation_kind::size_mismatch, "destroy_array", p, elements.size(),
                         "span of %zu elements, but make_array built %zu here", elements.size(), n);
        return;
    }
    destroy_array(a, p);
}

/// A unique_ptr deleter one pointer wide: destroys through the allocator it refers to.
template <class T, allocator A>
class deleter {
  public:
    explicit deleter(A& a) noexcept : a_(&a) {}
    void operator()(T* p) const noexcept { destroy(*a_, p); }
    [[nodiscard]] A& underlying() const noexcept { return *a_; }

  private:
    A* a_;
};

template <class T, allocator A>
using unique_ptr = std::unique_ptr<T, deleter<T, A>>;

/// make<T> owned by a std::unique_ptr (two pointers wide) that frees through a.
template <class T, allocator A, class... Args>
[[nodiscard]] unique_ptr<T, A> make_unique(A& a, Args&&... args) {
    return unique_ptr<T, A>(make<T>(a, std::forward<Args>(args)...), deleter<T, A>(a));
}

/// std::allocate_shared through a: the object and its control block share one allocation from a.
/// Exhaustion throws std::bad_alloc (without exceptions: the handler, then abort).
template <class T, allocator A, class... Args>
[[nodiscard]] std::shared_ptr<T> allocate_shared(A& a, Args&&... args) {
    return std::allocate_shared<T>(std_allocator<T, A>(a), std::forward<Args>(args)...);
}

}  // namespace rtmem
