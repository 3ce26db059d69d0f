// Tagged new (Coherent Labs' operator new(size, MemoryTag) and DestroyMemory(ptr, tag)) over
// tracked<A>: `new (m) T(args)` charges the object to m's tag, `destroy(p, m)` checks the tag
// and frees it, new_array / destroy_array do arrays element by element behind a count header,
// never with placement new[] (whose cookie is unspecified).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include "rtmem/adapt/out_of_memory.hpp"  // RTMEM_HAS_EXCEPTIONS
#include "rtmem/diag/tracked.hpp"

namespace rtmem {

/// Where a tagged new goes: a tracker and the tag charged. Cheap to copy; the tracker must
/// outlive every block allocated through it.
template <allocator A>
struct memory_tag {
    tracked<A>& heap;
    rtmem::tag tag;
};
template <allocator A>
memory_tag(tracked<A>&, rtmem::tag) -> memory_tag<A>;

namespace detail {

/// In front of every tagged block, just below the object (or the first element).
struct tagged_prefix {
    std::size_t count;  // elements (1 for a single object)
    std::size_t bytes;  // the whole block given to tracked (prefix and padding included)
    std::uint32_t magic;
    std::uint16_t tag;
    std::uint16_t align_log2;
};
inline constexpr std::uint32_t tagged_object_magic = 0x7a90b1ec;
inline constexpr std::uint32_t tagged_array_magic = 0x7a90a77a;
inline constexpr std::size_t tagged_min_align = __STDCPP_DEFAULT_NEW_ALIGNMENT__;

constexpr std::size_t tagged_offset(std::size_t align) noexcept {
    return align_up(sizeof(tagged_prefix), align);
}
inline tagged_prefix* prefix_of(void* user) noexcept {
    return reinterpret_cast<tagged_prefix*>(static_cast<std::byte*>(user) - sizeof(tagged_prefix));
}
inline std::uint16_t log2_of(std::size_t align) noexcept {
    std::uint16_t n = 0;
    while ((std::size_t{1} << n) < align) ++n;
    return n;
}

/// `count` elements of `size` bytes at `align` (a power of two >= tagged_min_align), charged to
/// m.tag; nullptr when the size overflows, the budget denies it or the upstream is exhausted.
template <allocator A>
void* tagged_allocate(const memory_tag<A>& m, std::size_t size, std::size_t count,
                      std::size_t align, std::uint32_t magic,
                      rtmem::source_location where) noexcept {
    const std::size_t offset = tagged_offset(align);
    std::size_t bytes = 0;
    if (!checked_mul(size, count, bytes) || !checked_add(bytes, offset, bytes)) [[unlikely]] {
        report_violation(violation_kind::bad_size, "tagged_new", nullptr, size,
                         "%zu elements of %zu bytes overflow", count, size);
        return nullptr;
    }
    auto* base = static_cast<std::byte*>(m.heap.allocate(bytes, align, m.tag, where));
    if (base == nullptr) return nullptr;
    void* user = base + offset;
    *prefix_of(user) = tagged_prefix{count, bytes, magic, m.tag.id(), log2_of(align)};
    return user;
}

/// Checks the prefix (kind and tag) and gives the block back; false, with a violation reported
/// and nothing freed, when the pointer is not a block of that kind or was allocated under
/// another tag.
template <allocator A>
bool tagged_check(const memory_tag<A>& m, void* user, std::uint32_t magic,
                  const char* what) noexcept {
    const tagged_prefix* h = prefix_of(user);
    if (h->magic != magic) [[unlikely]] {
        const bool other_kind =
            h->magic == (magic == tagged_object_magic ? tagged_array_magic : tagged_object_magic);
        report_violation(other_kind ? violation_kind::bad_argument : violation_kind::foreign_pointer,
                         "tagged_new", user, 0, "%s of %p: %s", what, user,
                         other_kind ? (magic == tagged_object_magic
                                           ? "it was allocated by new_array (use destroy_array)"
                                           : "it was allocated by new (m) T (use destroy)")
                                    : "not a live block of tagged new (freed twice, or foreign)");
        return false;
    }
    if (h->tag != m.tag.id()) [[unlikely]] {
        const auto path = rtmem::tag::from_id(h->tag).path();
        report_violation(violation_kind::bad_argument, "tagged_new", user, h->bytes,
                         "%s of %p under tag '%.*s', but it was allocated under '%.*s'", what,
                         user, static_cast<int>(m.tag.path().size()), m.tag.path().data(),
                         static_cast<int>(path.size()), path.data());
        return false;
    }
    return true;
}

template <allocator A>
void tagged_free(const memory_tag<A>& m, void* user) noexcept {
    tagged_prefix* h = prefix_of(user);
    const std::size_t align = std::size_t{1} << h->align_log2;
    const std::size_t bytes = h->bytes;
    h->magic = 0;  // a second destroy is reported (tracked also catches it)
    m.heap.deallocate(static_cast<std::byte*>(user) - tagged_offset(align), bytes, align);
}

template <class T>
inline constexpr std::size_t tagged_align =
    alignof(T) > tagged_min_align ? alignof(T) : tagged_min_align;

/// The address new (m) T returned, for a pointer to T (a base of a polymorphic object
/// included).
template <class T>
void* object_start(T* p) noexcept {
    if constexpr (std::is_polymorphic_v<T>) {
        return const_cast<void*>(dynamic_cast<const volatile void*>(p));
    } else {
        return const_cast<std::remove_cv_t<T>*>(p);
    }
}

}  // namespace detail

/// Destroys and frees an object made by `new (m) T(...)`: Coherent Labs' DestroyMemory(ptr,
/// tag). The tag must be the one it was allocated under (else a bad_argument violation, and
/// nothing is freed: the leak report will list it). nullptr does nothing.
template <class T, allocator A>
void destroy(T* p, const memory_tag<A>& m) noexcept {
    if (p == nullptr) return;
    void* start = detail::object_start(p);
    if (!detail::tagged_check(m, start, detail::tagged_object_magic, "destroy")) return;
    std::destroy_at(p);
    detail::tagged_free(m, start);
}

/// n elements of T, each constructed from args (copied: every element gets the same arguments)
/// in order, behind a count header, charged to m.tag; n == 0 gives a valid empty array. nullptr
/// when denied or exhausted. If a constructor throws, the elements built are destroyed in
/// reverse order, the memory is freed and the exception propagates. (The leak report names
/// new_array's caller only through tracked's call site of this header: arguments after a pack
/// cannot default to the caller's location.)
template <class T, allocator A, class... Args>
[[nodiscard]] T* new_array(const memory_tag<A>& m, std::size_t n, const Args&... args) {
    static_assert(!std::is_array_v<T>, "new_array<T> takes the element type");
    void* user = detail::tagged_allocate(m, sizeof(T), n, detail::tagged_align<T>,
                                         detail::tagged_array_magic,
                                         rtmem::source_location::current());
    if (user == nullptr) return nullptr;
    T* first = static_cast<T*>(user);
    std::size_t built = 0;
#if RTMEM_HAS_EXCEPTIONS
    try {
        for (; built < n; ++built) ::new (static_cast<void*>(first + built)) T(args...);
    } catch (...) {
        while (built > 0) std::destroy_at(first + --built);
        detail::tagged_free(m, user);
        throw;
    }
#else
    for (; built < n; ++built) ::new (static_cast<void*>(first + built)) T(args...);
#endif
    return first;
}

/// Elements in an array from new_array (its count header).
template <class T>
[[nodiscard]] std::size_t array_size(const T* first) noexcept {
    return detail::prefix_of(const_cast<std::remove_cv_t<T>*>(first))->count;
}

/// Destroys (last to first) and frees an array from new_array; the tag is checked as by
/// destroy. nullptr does nothing.
template <class T, allocator A>
void destroy_array(T* first, const memory_tag<A>& m) noexcept {
    if (first == nullptr) return;
    auto* p = const_cast<std::remove_cv_t<T>*>(first);
    if (!detail::tagged_check(m, p, detail::tagged_array_magic, "destroy_array")) return;
    for (std::size_t i = detail::prefix_of(p)->count; i > 0; --i) std::destroy_at(p + (i - 1));
    detail::tagged_free(m, p);
}

}  // namespace rtmem

/// `new (m) T(args)`: the object is charged to m.tag in m.heap. noexcept, so the new-expression
/// yields nullptr (and constructs nothing) when the tag's budget denies it or the upstream is
/// exhausted. Free with rtmem::destroy(p, m); plain delete is undefined behaviour.
template <rtmem::allocator A>
[[nodiscard]] void* operator new(
    std::size_t size, const rtmem::memory_tag<A>& m,
    rtmem::source_location where = rtmem::source_location::current()) noexcept {
    return rtmem::detail::tagged_allocate(m, size, 1, rtmem::detail::tagged_min_align,
                                          rtmem::detail::tagged_object_magic, where);
}
template <rtmem::allocator A>
[[nodiscard]] void* operator new(
    std::size_t size, std::align_val_t align, const rtmem::memory_tag<A>& m,
    rtmem::source_location where = rtmem::source_location::current()) noexcept {
    const auto a = static_cast<std::size_t>(align);
    return rtmem::detail::tagged_allocate(
        m, size, 1, a > rtmem::detail::tagged_min_align ? a : rtmem::detail::tagged_min_align,
        rtmem::detail::tagged_object_magic, where);
}
/// Called by the compiler only when the constructor after `new (m) T` throws.
template <rtmem::allocator A>
void operator delete(void* p, const rtmem::memory_tag<A>& m, rtmem::source_location) noexcept {
    if (p != nullptr) rtmem::detail::tagged_free(m, p);
}
template <rtmem::allocator A>
void operator delete(void* p, std::align_val_t, const rtmem::memory_tag<A>& m,
                     rtmem::source_location) noexcept {
    if (p != nullptr) rtmem::detail::tagged_free(m, p);
}
