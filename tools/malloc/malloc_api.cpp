// The malloc family of librtmem-malloc.so, with glibc's answers to the edge cases: malloc(0) is
// a unique pointer, realloc(p, 0) frees and returns nullptr, overflowing calloc/reallocarray
// give nullptr with ENOMEM, posix_memalign returns EINVAL for a bad alignment without touching
// errno, memalign rounds a non-power-of-two alignment up; aligned_alloc hands such an
// alignment to glibc itself, whose rules for it changed in 2.38.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "plan/plan_router.hpp"
#include "process_heap.hpp"
#include "rtmem/interpose/sizes.hpp"
#include "sample_hook.hpp"

#define RTMEM_EXPORT extern "C" __attribute__((visibility("default")))

using namespace rtmem::malloc_shim;
using rtmem::interpose::checked_product;
using rtmem::interpose::page_size;
namespace site_plan = rtmem::site_plan;

namespace {

constexpr bool is_pow2(std::size_t a) noexcept {
    return a != 0 && (a & (a - 1)) == 0;
}

// aligned_alloc: power-of-two alignments are rt_heap's; glibc decides about the rest (2.36
// rounds up like memalign, 2.38 on fails with EINVAL).
void* aligned(std::size_t align, std::size_t size) {
    if (!is_pow2(align)) {
        if (!rtmem::interpose::real_resolved()) initialise();
        if (real.aligned_alloc != nullptr) return real.aligned_alloc(align, size);
    }
    return allocate(size, align <= 16 ? 0 : align);
}

// A planned block stays where it is while the new size fits it; else it moves to the site
// that called realloc when that is a planned site, to the general heap otherwise (glibc's
// rules kept: realloc(p, 0) frees).
void* reallocate_planned(void* p, std::size_t size, void* ra, const void* cfa) noexcept {
    if (size == 0) {
        site_plan::deallocate(p);
        return nullptr;
    }
    const std::size_t old = site_plan::usable_size(p);
    if (size <= old) return p;
    void* q = site_plan::try_allocate(size, 0, ra, cfa);
    if (q == nullptr) q = allocate(size, 0);
    if (q == nullptr) return nullptr;  // the block stays as it was
    std::memcpy(q, p, old);
    site_plan::deallocate(p);
    return q;
}

// Every allocating entry point: the plan's site strategy first (one probe when the caller is
// no planned site), then the general heap.
#define RTMEM_PLANNED(size, align)                                                           \
    if (void* planned = site_plan::try_allocate(size, align, __builtin_return_address(0), \
                                                __builtin_dwarf_cfa()))                      \
    return planned

}  // namespace

RTMEM_EXPORT void* malloc(std::size_t size) {
    RTMEM_SAMPLED_ALLOCATION(malloc, size, 0, malloc(size));
    RTMEM_PLANNED(size, 0);
    return allocate(size, 0);
}

RTMEM_EXPORT void free(void* p) {
    RTMEM_SAMPLED_DEALLOCATION(free, p, 0, free(p));
    if (site_plan::owns(p)) [[unlikely]]
        return site_plan::deallocate(p);
    release(p);
}

RTMEM_EXPORT void* calloc(std::size_t n, std::size_t m) {
    std::size_t total = 0;
    if (!checked_product(n, m, total)) return nullptr;
    RTMEM_SAMPLED_ALLOCATION(calloc, total, 0, calloc(n, m));
    if (void* planned = site_plan::try_allocate(total, 0, __builtin_return_address(0),
                                                __builtin_dwarf_cfa())) {
        std::memset(planned, 0, total);
        return planned;
    }
    return allocate_zeroed(total);
}

RTMEM_EXPORT void* realloc(void* p, std::size_t size) {
    RTMEM_SAMPLED_REALLOCATION(p, size, realloc(p, size));
    if (p == nullptr) {  // a malloc: routed as one
        RTMEM_PLANNED(size, 0);
    } else if (site_plan::owns(p)) [[unlikely]] {
        return reallocate_planned(p, size, __builtin_return_address(0), __builtin_dwarf_cfa());
    }
    return reallocate(p, size);
}

RTMEM_EXPORT void* reallocarray(void* p, std::size_t n, std::size_t m) {
    std::size_t total = 0;
    if (!checked_product(n, m, total)) return nullptr;
    RTMEM_SAMPLED_REALLOCATION(p, total, reallocarray(p, n, m));
    if (p == nullptr) {
        RTMEM_PLANNED(total, 0);
    } else if (site_plan::owns(p)) [[unlikely]] {
        return reallocate_planned(p, total, __builtin_return_address(0), __builtin_dwarf_cfa());
    }
    return reallocate(p, total);
}

// glibc's memalign: up to 16 is malloc, a non-power of two is rounded up, past SIZE_MAX/2+1
// is EINVAL. The aligned forms are routed by plan as malloc is (a strategy declines an
// alignment it cannot give).
RTMEM_EXPORT void* memalign(std::size_t align, std::size_t size) {
    RTMEM_SAMPLED_ALLOCATION(aligned_alloc, size, align, memalign(align, size));
    if (align <= 16) {
        RTMEM_PLANNED(size, 0);
        return allocate(size, 0);
    }
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return nullptr;
    }
    if (!is_pow2(align)) align = std::size_t{1} << (64 - __builtin_clzl(align));
    RTMEM_PLANNED(size, align);
    return allocate(size, align);
}

RTMEM_EXPORT void* aligned_alloc(std::size_t align, std::size_t size) {
    RTMEM_SAMPLED_ALLOCATION(aligned_alloc, size, align, aligned_alloc(align, size));
    if (is_pow2(align)) RTMEM_PLANNED(size, align <= 16 ? 0 : align);
    return aligned(align, size);
}

RTMEM_EXPORT int posix_memalign(void** out, std::size_t align, std::size_t size) {
    if (align % sizeof(void*) != 0 || !is_pow2(align / sizeof(void*)))
        return EINVAL;  // errno untouched, *out too
    RTMEM_SAMPLED_POSIX_MEMALIGN(out, align, size);
    void* p = site_plan::try_allocate(size, align <= 16 ? 0 : align,
                                      __builtin_return_address(0), __builtin_dwarf_cfa());
    if (p == nullptr) p = allocate(size, align <= 16 ? 0 : align);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}

RTMEM_EXPORT void* valloc(std::size_t size) {
    RTMEM_SAMPLED_ALLOCATION(malloc, size, page_size(), valloc(size));
    return allocate(size, page_size());
}

RTMEM_EXPORT void* pvalloc(std::size_t size) {
    RTMEM_SAMPLED_ALLOCATION(malloc, size, page_size(), pvalloc(size));
    std::size_t rounded = 0;
    if (__builtin_add_overflow(size, page_size() - 1, &rounded)) {
        errno = ENOMEM;
        return nullptr;
    }
    return allocate(rounded & ~(page_size() - 1), page_size());
}

RTMEM_EXPORT std::size_t malloc_usable_size(void* p) {
    if (site_plan::owns(p)) [[unlikely]]
        return site_plan::usable_size(p);
    return usable_size(p);
}

/// Whether p is a block of the process's rt_heap (tests and tools ask through dlsym).
RTMEM_EXPORT int rtmem_malloc_owns(const void* p) {
    rtmem::rt_heap* heap = g_heap.load(std::memory_order_acquire);
    return heap != nullptr && heap->owns(p) ? 1 : 0;
}
