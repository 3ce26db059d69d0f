// Sanitizer hooks: tell ASan (and Valgrind with RTMEM_VALGRIND) which bytes are usable.
// Everything compiles to nothing when neither tool is in use.
#pragma once
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define RTMEM_HAS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTMEM_HAS_ASAN 1
#endif
#endif

#ifdef RTMEM_HAS_ASAN
#include <sanitizer/asan_interface.h>
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
#include <valgrind/memcheck.h>
#endif

namespace rtmem::detail {

/// Marks [p, p+n) as not to be touched (freed, rewound or not yet handed out).
inline void poison(const void* p, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
    (void)p;
    (void)n;
}

/// Marks [p, p+n) as usable again.
inline void unpoison(const void* p, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
    (void)p;
    (void)n;
}

/// Valgrind memory pools: an allocator that carves blocks out of memory it got elsewhere tells
/// Memcheck where its blocks are, so a read of a freed or never-allocated byte, or a leaked
/// block, is reported as for malloc. `pool` is any address identifying the allocator (usually
/// `this`). With ASan, pool_alloc/pool_free unpoison/poison the block. No-ops otherwise.
inline void pool_create(const void* pool) noexcept {
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_CREATE_MEMPOOL(pool, 0, 0);
#endif
    (void)pool;
}

inline void pool_destroy(const void* pool) noexcept {
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_DESTROY_MEMPOOL(pool);
#endif
    (void)pool;
}

/// [p, p+n) has just been handed out by pool.
inline void pool_alloc(const void* pool, const void* p, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MEMPOOL_ALLOC(pool, p, n);
#endif
    (void)pool;
    (void)p;
    (void)n;
}

/// The block of n bytes at p (from pool_alloc) has been given back to pool.
inline void pool_free(const void* pool, const void* p, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MEMPOOL_FREE(pool, p);
#endif
    (void)pool;
    (void)p;
    (void)n;
}

/// Every block of pool has been given back at once (reset): Memcheck forgets them all.
inline void pool_trim_all(const void* pool, const void* region, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    ASAN_POISON_MEMORY_REGION(region, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MEMPOOL_TRIM(pool, region, 0);
#endif
    (void)pool;
    (void)region;
    (void)n;
}

}  // namespace rtmem::detail
