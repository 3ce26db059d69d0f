// The size arithmetic every interposed malloc family repeats: the page size (valloc, pvalloc)
// and the overflow-checked n * m of calloc and reallocarray, with glibc's ENOMEM on overflow.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace rtmem::interpose {

[[nodiscard]] inline std::size_t page_size() noexcept {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

/// n * m in `total`; false with errno = ENOMEM when it overflows (calloc, reallocarray).
[[nodiscard]] inline bool checked_product(std::size_t n, std::size_t m,
                                          std::size_t& total) noexcept {
    if (!__builtin_mul_overflow(n, m, &total)) return true;
    errno = ENOMEM;
    return false;
}

}  // namespace rtmem::interpose
