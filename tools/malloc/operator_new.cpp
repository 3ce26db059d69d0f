// Every replaceable operator new and delete of librtmem-malloc.so. new loops on the
// new_handler and throws std::bad_alloc as the standard library's does; the nothrow forms
// return nullptr instead; every delete form frees through the same routing as free().
#include <new>

#include "plan/plan_router.hpp"
#include "process_heap.hpp"
#include "sample_hook.hpp"

using namespace rtmem::malloc_shim;
namespace site_plan = rtmem::site_plan;

namespace {

void* new_throwing(std::size_t size, std::size_t align) {
    for (;;) {
        if (void* p = allocate(size, align <= 16 ? 0 : align)) return p;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void* new_nothrow(std::size_t size, std::size_t align) noexcept {
    try {
        return new_throwing(size, align);
    } catch (...) {
        return nullptr;
    }
}

constexpr std::size_t as_size(std::align_val_t a) noexcept {
    return static_cast<std::size_t>(a);
}

// A planned site's strategy first (one probe when the caller is no planned site); frame 0 is
// the caller of operator new, as the tracer records it.
#define RTMEM_PLANNED(size, align)                                                      \
    if (void* planned = site_plan::try_allocate(size, align, __builtin_return_address(0), \
                                                __builtin_dwarf_cfa()))                      \
    return planned

void release_any(void* p) noexcept {
    if (site_plan::owns(p)) [[unlikely]]
        return site_plan::deallocate(p);
    release(p);
}

}  // namespace

void* operator new(std::size_t n) {
    RTMEM_SAMPLED_ALLOCATION(new_scalar, n, 0, ::operator new(n));
    RTMEM_PLANNED(n, 0);
    return new_throwing(n, 0);
}
void* operator new[](std::size_t n) {
    RTMEM_SAMPLED_ALLOCATION(new_array, n, 0, ::operator new[](n));
    RTMEM_PLANNED(n, 0);
    return new_throwing(n, 0);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_ALLOCATION(new_scalar, n, 0, ::operator new(n, std::nothrow));
    RTMEM_PLANNED(n, 0);
    return new_nothrow(n, 0);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_ALLOCATION(new_array, n, 0, ::operator new[](n, std::nothrow));
    RTMEM_PLANNED(n, 0);
    return new_nothrow(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
    RTMEM_SAMPLED_ALLOCATION(new_scalar, n, as_size(a), ::operator new(n, a));
    RTMEM_PLANNED(n, as_size(a));
    return new_throwing(n, as_size(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    RTMEM_SAMPLED_ALLOCATION(new_array, n, as_size(a), ::operator new[](n, a));
    RTMEM_PLANNED(n, as_size(a));
    return new_throwing(n, as_size(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_ALLOCATION(new_scalar, n, as_size(a), ::operator new(n, a, std::nothrow));
    RTMEM_PLANNED(n, as_size(a));
    return new_nothrow(n, as_size(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_ALLOCATION(new_array, n, as_size(a), ::operator new[](n, a, std::nothrow));
    RTMEM_PLANNED(n, as_size(a));
    return new_nothrow(n, as_size(a));
}

void operator delete(void* p) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, 0, ::operator delete(p));
    release_any(p);
}
void operator delete[](void* p) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, 0, ::operator delete[](p));
    release_any(p);
}
void operator delete(void* p, [[maybe_unused]] std::size_t n) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, n, ::operator delete(p, n));
    release_any(p);
}
void operator delete[](void* p, [[maybe_unused]] std::size_t n) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, n, ::operator delete[](p, n));
    release_any(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, 0, ::operator delete(p, std::nothrow));
    release_any(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, 0, ::operator delete[](p, std::nothrow));
    release_any(p);
}
void operator delete(void* p, [[maybe_unused]] std::align_val_t a) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, 0, ::operator delete(p, a));
    release_any(p);
}
void operator delete[](void* p, [[maybe_unused]] std::align_val_t a) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, 0, ::operator delete[](p, a));
    release_any(p);
}
void operator delete(void* p, [[maybe_unused]] std::size_t n,
                     [[maybe_unused]] std::align_val_t a) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, n, ::operator delete(p, n, a));
    release_any(p);
}
void operator delete[](void* p, [[maybe_unused]] std::size_t n,
                       [[maybe_unused]] std::align_val_t a) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, n, ::operator delete[](p, n, a));
    release_any(p);
}
void operator delete(void* p, [[maybe_unused]] std::align_val_t a, const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_scalar, p, 0, ::operator delete(p, a, std::nothrow));
    release_any(p);
}
void operator delete[](void* p, [[maybe_unused]] std::align_val_t a,
                       const std::nothrow_t&) noexcept {
    RTMEM_SAMPLED_DEALLOCATION(delete_array, p, 0, ::operator delete[](p, a, std::nothrow));
    release_any(p);
}
