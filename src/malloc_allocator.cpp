// malloc_allocator's over-aligned path.
#include "rtmem/core/malloc_allocator.hpp"

#include <cstdlib>
#ifdef _WIN32
#include <malloc.h>
#endif

namespace rtmem {

void* malloc_allocator::aligned(std::size_t size, std::size_t align) noexcept {
#ifdef _WIN32
    return _aligned_malloc(size, align);
#else
    void* p = nullptr;
    return posix_memalign(&p, align, size) == 0 ? p : nullptr;
#endif
}

}  // namespace rtmem
