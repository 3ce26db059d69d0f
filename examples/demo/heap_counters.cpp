// The counting heap: replaces every form of the global operator new/delete for this binary and
// forwards to malloc/free (so LD_PRELOAD=libmimalloc.so still swaps the allocator underneath).
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "cycle_clock.hpp"
#include "heap_counters_slots.hpp"

namespace demo::heap {
namespace {

using detail::mine;

void* timed_alloc(std::size_t n, std::size_t align) noexcept {
    if (n == 0) n = 1;
    auto& s = mine();
    if (!detail::profiling_on.load(std::memory_order_relaxed)) {
        s.bump(s.heap_calls, 1);
        if (align <= alignof(std::max_align_t)) return std::malloc(n);
        return std::aligned_alloc(align, (n + align - 1) / align * align);
    }
    const std::uint64_t t0 = cycles();
    void* p = align <= alignof(std::max_align_t)
                  ? std::malloc(n)
                  : std::aligned_alloc(align, (n + align - 1) / align * align);
    const std::uint64_t t1 = cycles();
    s.bump(s.heap_calls, 1);
    s.bump(s.heap_cycles, t1 - t0);
    if (p != nullptr) detail::add_live(static_cast<std::int64_t>(malloc_usable_size(p)));
    return p;
}

void timed_free(void* p) noexcept {
    if (p == nullptr) return;
    auto& s = mine();
    if (!detail::profiling_on.load(std::memory_order_relaxed)) {
        s.bump(s.heap_calls, 1);
        std::free(p);
        return;
    }
    detail::add_live(-static_cast<std::int64_t>(malloc_usable_size(p)));
    const std::uint64_t t0 = cycles();
    std::free(p);
    const std::uint64_t t1 = cycles();
    s.bump(s.heap_calls, 1);
    s.bump(s.heap_cycles, t1 - t0);
}

void* new_or_throw(std::size_t n, std::size_t align) {
    void* p = timed_alloc(n, align);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

}  // namespace

bool available() noexcept {
    return true;
}
void* counted_malloc(std::size_t n) noexcept {
    return timed_alloc(n, alignof(std::max_align_t));
}
void counted_free(void* p) noexcept {
    timed_free(p);
}

}  // namespace demo::heap

using demo::heap::new_or_throw;
using demo::heap::timed_alloc;
using demo::heap::timed_free;
constexpr std::size_t plain = alignof(std::max_align_t);
using al = std::align_val_t;
using nt = std::nothrow_t;

void* operator new(std::size_t n) {
    return new_or_throw(n, plain);
}
void* operator new[](std::size_t n) {
    return new_or_throw(n, plain);
}
void* operator new(std::size_t n, const nt&) noexcept {
    return timed_alloc(n, plain);
}
void* operator new[](std::size_t n, const nt&) noexcept {
    return timed_alloc(n, plain);
}
void* operator new(std::size_t n, al a) {
    return new_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, al a) {
    return new_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, al a, const nt&) noexcept {
    return timed_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, al a, const nt&) noexcept {
    return timed_alloc(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
    timed_free(p);
}
void operator delete[](void* p) noexcept {
    timed_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    timed_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    timed_free(p);
}
void operator delete(void* p, const nt&) noexcept {
    timed_free(p);
}
void operator delete[](void* p, const nt&) noexcept {
    timed_free(p);
}
void operator delete(void* p, al) noexcept {
    timed_free(p);
}
void operator delete[](void* p, al) noexcept {
    timed_free(p);
}
void operator delete(void* p, std::size_t, al) noexcept {
    timed_free(p);
}
void operator delete[](void* p, std::size_t, al) noexcept {
    timed_free(p);
}
void operator delete(void* p, al, const nt&) noexcept {
    timed_free(p);
}
void operator delete[](void* p, al, const nt&) noexcept {
    timed_free(p);
}
