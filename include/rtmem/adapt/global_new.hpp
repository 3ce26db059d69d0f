// Opt-in routing of the global operator new/delete through an rtmem allocator, for engines that
// want every allocation (including the standard library's) to go through one tagged, budgeted
// allocator. Never forced on users: nothing changes unless one .cpp of the program does
//
//   #define RTMEM_DEFINE_GLOBAL_NEW
//   #include <rtmem/adapt/global_new.hpp>
//
// which defines every replaceable operator new/delete in that translation unit. Until
// set_global_route() is called they use malloc. tools/check-no-default-new then verifies that
// no object of the program still references the default operators.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "rtmem/adapt/out_of_memory.hpp"
#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"

namespace rtmem {

/// Where global new/delete go: two functions and a context (the allocator). The allocator must be
/// thread-safe (e.g. locked<A> or tracked<locked<A>>) if more than one thread allocates, and the
/// route object must outlive every block allocated through it (make both static): each block
/// remembers its route, so blocks allocated before a switch are still freed where they came from.
struct global_route {
    void* (*allocate)(void* context, std::size_t size, std::size_t align) noexcept;
    void (*deallocate)(void* context, void* p, std::size_t size, std::size_t align) noexcept;
    void* context;
};

/// A route to an rtmem allocator.
template <allocator A>
[[nodiscard]] constexpr global_route route_to(A& a) noexcept {
    return global_route{[](void* c, std::size_t size, std::size_t align) noexcept -> void* {
                            return static_cast<A*>(c)->allocate(size, align);
                        },
                        [](void* c, void* p, std::size_t size, std::size_t align) noexcept {
                            static_cast<A*>(c)->deallocate(p, size, align);
                        },
                        &a};
}

namespace detail {

inline malloc_allocator global_malloc;
inline constinit const global_route malloc_route = route_to(global_malloc);
inline constinit std::atomic<const global_route*> current_global_route{&malloc_route};

/// In front of every block: the route that allocated it and the request, so unsized
/// operator delete can give the size and alignment back to the allocator.
struct global_block_header {
    const global_route* route;
    std::size_t size;
    std::size_t align;
    std::size_t magic;
};
// "newroute" in a 64-bit word, "newr" in a 32-bit one.
inline constexpr std::size_t global_block_magic =
    static_cast<std::size_t>(sizeof(std::size_t) == 8 ? 0x6e6577726f757465 : 0x6e657772);

inline std::size_t global_front(std::size_t align) noexcept {
    return align_up(sizeof(global_block_header), align);
}

inline void* global_new(std::size_t size, std::size_t align, bool nothrow) {
    if (align < alignof(global_block_header)) align = alignof(global_block_header);
    const std::size_t front = global_front(align);
    for (;;) {
        const global_route* r = current_global_route.load(std::memory_order_acquire);
        std::size_t total = 0;
        if (checked_add(size, front, total)) {
            if (auto* base = static_cast<std::byte*>(r->allocate(r->context, total, align))) {
                auto* h = reinterpret_cast<global_block_header*>(base + front -
                                                                 sizeof(global_block_header));
                *h = global_block_header{r, size, align, global_block_magic};
                return base + front;
            }
        }
        // As the standard operator new does: let the new-handler free memory, then retry.
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) {
            if (nothrow) return nullptr;
            out_of_memory_throw_or_die(size, align);
        }
        handler();
    }
}

inline void global_delete(void* p) noexcept {
    if (p == nullptr) return;
    auto* user = static_cast<std::byte*>(p);
    auto* h = reinterpret_cast<global_block_header*>(user - sizeof(global_block_header));
    if (h->magic != global_block_magic) [[unlikely]] {
        report_violation(violation_kind::foreign_pointer, "global operator delete", p, 0,
                         "pointer not allocated by the routed operator new");
        return;
    }
    const global_block_header block = *h;
    h->magic = 0;
    const std::size_t front = global_front(block.align);
    block.route->deallocate(block.route->context, user - front, block.size + front, block.align);
}

}  // namespace detail

/// Routes global new/delete through r from now on (nullptr: back to malloc). Blocks allocated
/// earlier are still freed through the route that allocated them.
inline void set_global_route(const global_route* r) noexcept {
    detail::current_global_route.store(r != nullptr ? r : &detail::malloc_route,
                                       std::memory_order_release);
}

[[nodiscard]] inline const global_route* get_global_route() noexcept {
    return detail::current_global_route.load(std::memory_order_acquire);
}

}  // namespace rtmem

#ifdef RTMEM_DEFINE_GLOBAL_NEW
// The replaceable global allocation functions (every form since C++17), in this one TU.
#define RTMEM_NEW_ALIGN static_cast<std::size_t>(__STDCPP_DEFAULT_NEW_ALIGNMENT__)
void* operator new(std::size_t n) {
    return rtmem::detail::global_new(n, RTMEM_NEW_ALIGN, false);
}
void* operator new[](std::size_t n) {
    return rtmem::detail::global_new(n, RTMEM_NEW_ALIGN, false);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return rtmem::detail::global_new(n, RTMEM_NEW_ALIGN, true);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return rtmem::detail::global_new(n, RTMEM_NEW_ALIGN, true);
}
void* operator new(std::size_t n, std::align_val_t a) {
    return rtmem::detail::global_new(n, static_cast<std::size_t>(a), false);
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return rtmem::detail::global_new(n, static_cast<std::size_t>(a), false);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return rtmem::detail::global_new(n, static_cast<std::size_t>(a), true);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return rtmem::detail::global_new(n, static_cast<std::size_t>(a), true);
}
void operator delete(void* p) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete(void* p, std::size_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    rtmem::detail::global_delete(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    rtmem::detail::global_delete(p);
}
#undef RTMEM_NEW_ALIGN
#endif
