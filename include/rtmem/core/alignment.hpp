// Alignment helpers and overflow-safe size arithmetic.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem {

/// True when x is a power of two (0 is not).
[[nodiscard]] constexpr bool is_pow2(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

/// Rounds n up to a multiple of align (a power of two). Wraps on overflow: use checked_align_up
/// when n comes from a caller.
[[nodiscard]] constexpr std::size_t align_up(std::size_t n, std::size_t align) noexcept {
    return (n + align - 1) & ~(align - 1);
}

/// Rounds n down to a multiple of align (a power of two).
[[nodiscard]] constexpr std::size_t align_down(std::size_t n, std::size_t align) noexcept {
    return n & ~(align - 1);
}

/// Rounds a pointer up to a multiple of align (a power of two).
[[nodiscard]] inline std::byte* align_pointer_up(std::byte* p, std::size_t align) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    return p + (((a + align - 1) & ~(std::uintptr_t{align} - 1)) - a);
}

/// Bytes to add to p so that it becomes a multiple of align.
[[nodiscard]] inline std::size_t align_padding(const void* p, std::size_t align) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    return static_cast<std::size_t>((~a + 1) & (std::uintptr_t{align} - 1));
}

[[nodiscard]] inline bool is_aligned(const void* p, std::size_t align) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) & (std::uintptr_t{align} - 1)) == 0;
}

/// a + b into out; false (out untouched) on overflow.
[[nodiscard]] constexpr bool checked_add(std::size_t a, std::size_t b, std::size_t& out) noexcept {
    std::size_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return false;
    out = r;
    return true;
}

/// a * b into out; false (out untouched) on overflow.
[[nodiscard]] constexpr bool checked_mul(std::size_t a, std::size_t b, std::size_t& out) noexcept {
    std::size_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    out = r;
    return true;
}

/// align_up that reports overflow instead of wrapping.
[[nodiscard]] constexpr bool checked_align_up(std::size_t n, std::size_t align,
                                              std::size_t& out) noexcept {
    std::size_t t = 0;
    if (!checked_add(n, align - 1, t)) return false;
    out = t & ~(align - 1);
    return true;
}

}  // namespace rtmem
