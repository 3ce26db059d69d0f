// Shared pieces of the stack-ordered allocators: a type-erased upstream reference, owner tags
// for markers, the bump step itself and the reports of their cold paths.
#pragma once
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"

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

/// The bump step: the aligned start of a block of `size` bytes at `top`, or nullptr when it
/// does not fit before `end`. Two compares and no overflow: size is compared to what is left
/// before the padding is added.
[[nodiscard]] RTMEM_ALWAYS_INLINE std::byte* bump(std::byte* top, std::byte* end, std::size_t size,
                                                  std::size_t align) noexcept {
    const auto t = reinterpret_cast<std::uintptr_t>(top);
    const auto a = (t + align - 1) & ~(std::uintptr_t{align} - 1);
    const auto e = reinterpret_cast<std::uintptr_t>(end);
    if (size > e - t || a + size > e) [[unlikely]]
        return nullptr;
    return top + (a - t);
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
