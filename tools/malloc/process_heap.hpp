// The one rt_heap behind every malloc and operator new of the process, and the routing every
// entry point shares: rt_heap first; glibc (the next definition) for what rt_heap does not
// hold or cannot serve; the bootstrap buffer while the real functions are being resolved.
#pragma once
#include <atomic>
#include <cstddef>

#include "rtmem/alloc/rt_heap.hpp"
#include "rtmem/interpose/bootstrap.hpp"
#include "rtmem/interpose/guard.hpp"
#include "rtmem/interpose/real.hpp"

namespace rtmem::malloc_shim {

using interpose::real;
using interpose::tl_guard;

/// Set (release) once the heap is constructed; never reset.
extern std::atomic<rt_heap*> g_heap;
/// Real-time mode: a thread bound to the heap gets nullptr (ENOMEM) when it is exhausted,
/// instead of falling back to glibc.
extern bool g_realtime;
/// Requests above this go to glibc outside real-time mode (rt_heap never gives memory back).
extern std::size_t g_largest;
/// The calling thread went through attach_thread().
extern constinit thread_local bool tl_attached;

/// Resolves the real functions and builds the heap (once; other threads meanwhile use glibc
/// or the bootstrap buffer). False while not ready.
bool initialise() noexcept;
/// Binds the calling thread to a thread heap with the recursion guard held, so the C
/// runtime's allocations for the thread-exit hook go to glibc.
void attach_thread() noexcept;

/// Whatever the inline path did not serve: the first calls, unbound threads, large or failed
/// requests (glibc, or nullptr with ENOMEM in real-time mode).
void* allocate_slow(std::size_t size, std::size_t align) noexcept;

/// The allocation path every entry point takes. align: 0 or a power of two.
[[gnu::always_inline]] inline void* allocate(std::size_t size, std::size_t align) noexcept {
    rt_heap* heap = g_heap.load(std::memory_order_acquire);
    if (tl_guard == 0 && heap != nullptr && tl_attached && size <= g_largest) [[likely]] {
        // size 0 gets rt_heap's smallest block, as glibc gives its smallest chunk.
        if (void* p = heap->allocate(size, align == 0 ? 16 : align)) [[likely]]
            return p;
    }
    return allocate_slow(size, align);
}

/// calloc's allocation: zeroed. Large blocks outside real-time mode come from glibc's calloc,
/// which knows fresh pages are zero (no memset touching every page).
void* allocate_zeroed(std::size_t total) noexcept;

/// Frees p wherever it came from.
void release_foreign(void* p) noexcept;
[[gnu::always_inline]] inline void release(void* p) noexcept {
    if (p == nullptr) return;
    rt_heap* heap = g_heap.load(std::memory_order_acquire);
    if (heap != nullptr && heap->deallocate_if_owned(p)) [[likely]]
        return;
    release_foreign(p);
}

/// realloc's semantics (glibc's: size 0 frees and returns nullptr).
void* reallocate(void* p, std::size_t size) noexcept;
std::size_t usable_size(const void* p) noexcept;

}  // namespace rtmem::malloc_shim
