// The root upstream: the C heap, with any power-of-two alignment.
#pragma once
#include <cstddef>
#include <cstdlib>

#include "rtmem/core/allocator.hpp"

namespace rtmem {

/// Stateless allocator over malloc/free (posix_memalign or _aligned_malloc when the alignment is
/// above what malloc guarantees). Every instance is interchangeable with every other.
class malloc_allocator {
public:
    static constexpr std::string_view name = "malloc_allocator";

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept {
        if (!is_pow2(align)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two", align);
            return nullptr;
        }
        if (size == 0) size = 1;  // a unique pointer, not malloc(0)'s implementation choice
        if (align <= default_alignment) return std::malloc(size);
        return aligned(size, align);
    }

    void deallocate(void* p, std::size_t /*size*/, std::size_t align = default_alignment) noexcept {
        if (p == nullptr) return;
#ifdef _WIN32
        if (align > default_alignment) return _aligned_free(p);
#else
        (void)align;
#endif
        std::free(p);
    }

    friend bool operator==(malloc_allocator, malloc_allocator) noexcept { return true; }

private:
    static void* aligned(std::size_t size, std::size_t align) noexcept;
};

}  // namespace rtmem
