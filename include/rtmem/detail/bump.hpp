// Shared pieces of the stack-ordered allocators: a type-erased upstream reference, owner tags
// for markers, the bump step and its inverse, and the reports of their cold paths.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem::detail {

/// An upstream allocator held by pointer, with its type erased so the allocators that use it
/// stay plain classes (linear_allocator b{capacity, upstream} for any upstream type).
class upstream_ref {
  public:
    upstream_ref() noexcept : upstream_ref(default_upstream()) {}
    template <allocator Upstream>
    requires(!std::same_as<Upstream, upstream_ref>) explicit upstream_ref(Upstream& u) noexcept
        : self_(&u),
          allocate_([](void* s, std::size_t n, std::size_t a) noexcept {
              return static_cast<Upstream*>(s)->allocate(n, a);
          }),
          deallocate_([](void* s, void* p, std::size_t n, std::size_t a) noexcept {
              static_cast<Upstream*>(s)->deallocate(p, n, a);
          }) {}

    [[nodiscard]] void* allocate(std::size_t n, std::size_t a) const noexcept {
        return allocate_(self_, n, a);
    }
    void deallocate(void* p, std::size_t n, std::size_t a) const noexcept {
        deallocate_(self_, p, n, a);
    }

  private:
    static malloc_allocator& default_upstream() noexcept {
        static malloc_allocator m;
        return m;
    }
    void* self_;
    void* (*allocate_)(void*, std::size_t, std::size_t) noexcept;
    void (*deallocate_)(void*, void*, std::size_t, std::size_t) noexcept;
};

/// A process-unique tag per allocator instance; markers carry it (with checks on) so a marker
/// handed to the wrong allocator is reported instead of moving the top somewhere foreign.
inline std::uint32_t next_owner_tag() noexcept {
    static std::atomic<std::uint32_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// Whether a block of `size` bytes aligned to `align` fits in [top, end); `start` is where it
/// would begin. The hand-written floor's one compare (end of block against end of buffer) plus
/// the carry of that addition (next < a: a size so large that the end wrapped around), which
/// compilers emit as a compare and a jump. On x86-64 a user-space address is below 2^57, so
/// a + size cannot wrap for size < 2^62: that test is on the size alone and folds away at a call
/// site with a constant size, leaving exactly the floor's one compare.
RTMEM_ALWAYS_INLINE bool fits(std::byte* top, std::byte* end, std::size_t size, std::size_t align,
                              std::byte*& start) noexcept {
    const auto t = reinterpret_cast<std::uintptr_t>(top);
    const auto a = (t + align - 1) & ~(std::uintptr_t{align} - 1);
    const auto next = a + size;
    start = top + (a - t);
#if defined(__x86_64__) || defined(_M_X64)
    const bool no_wrap = size < (std::size_t{1} << 62);
#else
    const bool no_wrap = next >= a;
#endif
    return no_wrap && next <= reinterpret_cast<std::uintptr_t>(end);
}

/// The bump step: the aligned start of a block of `size` bytes at `top`, or nullptr when it
/// does not fit before `end`.
[[nodiscard]] RTMEM_ALWAYS_INLINE std::byte* bump(std::byte* top, std::byte* end, std::size_t size,
                                                  std::size_t align) noexcept {
    std::byte* p;
    if (!fits(top, end, size, align, p)) [[unlikely]]
        return nullptr;
    return p;
}

/// The bump step with its bookkeeping: the block's start, with `top` moved past the block and
/// the block's bytes unpoisoned; nullptr, with nothing changed, when it does not fit. The top
/// moves on the fits() branch itself, not on a test of the returned pointer, so a compiler that
/// keeps the allocator in registers has no reason to turn the move into a conditional move on
/// the loop's critical path.
[[nodiscard]] RTMEM_ALWAYS_INLINE std::byte* bump_block(std::byte*& top, std::byte* end,
                                                        std::size_t size,
                                                        std::size_t align) noexcept {
    std::byte* p;
    if (!fits(top, end, size, align, p)) [[unlikely]]
        return nullptr;
    top = p + size;
    unpoison(p, size);
    return p;
}

/// The inverse: gives back the bytes from `to` up to `top` (a rewind, reset or LIFO free), which
/// are poisoned, and moves the top down to `to`.
RTMEM_ALWAYS_INLINE void retreat(std::byte*& top, std::byte* to) noexcept {
    poison(to, static_cast<std::size_t>(top - to));
    top = to;
}

/// Reports a non-power-of-two alignment; returns the nullptr allocate then hands back.
RTMEM_NOINLINE inline void* bad_alignment(std::string_view allocator, std::size_t size,
                                          std::size_t align) noexcept {
    report_violation(violation_kind::bad_alignment, allocator, nullptr, size,
                     "alignment %zu is not a power of two", align);
    return nullptr;
}

/// Reports a deallocate of a pointer that is not a live block, for the allocators whose
/// deallocate otherwise does nothing.
RTMEM_NOINLINE inline void not_live(std::string_view allocator, void* p,
                                    std::size_t size) noexcept {
    report_violation(violation_kind::foreign_pointer, allocator, p, size,
                     "deallocate of %p: not a live block of this allocator (never allocated "
                     "here, or already rewound or reset)",
                     p);
}

}  // namespace rtmem::detail
