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
#define RTMEM_ASAN_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define RTMEM_ASAN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#elif defined(RTMEM_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__ELF__)
// The compiled library without ASan, in a program with ASan (an installed Release rtmem under a
// consumer's -fsanitize=address): its slow paths hand out and take back blocks that the inline
// fast paths in the program's own code poison and unpoison, so it must poison exactly as they do.
// It calls the ASan runtime when one is loaded (weak references: null without ASan), so the
// inline and compiled code agree whatever each was compiled with.
extern "C" {
void __asan_poison_memory_region(void const volatile* addr, std::size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size)
    __attribute__((weak));
}
#define RTMEM_HAS_RUNTIME_ASAN 1
#define RTMEM_ASAN_POISON(p, n) \
    (__asan_poison_memory_region != nullptr ? __asan_poison_memory_region(p, n) : (void)0)
#define RTMEM_ASAN_UNPOISON(p, n) \
    (__asan_unpoison_memory_region != nullptr ? __asan_unpoison_memory_region(p, n) : (void)0)
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
#include <valgrind/memcheck.h>
#endif

namespace rtmem::detail {

/// Marks [p, p+n) as not to be touched (freed, rewound or not yet handed out).
inline void poison(const void* p, std::size_t n) noexcept {
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_POISON(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
    (void)p;
    (void)n;
}

/// Marks [p, p+n) as usable again.
inline void unpoison(const void* p, std::size_t n) noexcept {
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_UNPOISON(p, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
    (void)p;
    (void)n;
}

/// ASan only (Valgrind untouched): for memory the allocator itself reads while it is free, such
/// as a pool's free-list link words, which stay poisoned so a program that reads them is caught.
inline void asan_poison(const void* p, std::size_t n) noexcept {
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_POISON(p, n);
#endif
    (void)p;
    (void)n;
}
inline void asan_unpoison(const void* p, std::size_t n) noexcept {
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_UNPOISON(p, n);
#endif
    (void)p;
    (void)n;
}

/// Reads a pointer the allocator keeps in free (poisoned) memory, leaving it poisoned.
inline void* read_free_word(void* const* at) noexcept {
    asan_unpoison(at, sizeof(void*));
    void* v = *at;
    asan_poison(at, sizeof(void*));
    return v;
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
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_UNPOISON(p, n);
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
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_POISON(p, n);
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
#if defined(RTMEM_HAS_ASAN) || defined(RTMEM_HAS_RUNTIME_ASAN)
    RTMEM_ASAN_POISON(region, n);
#endif
#if defined(RTMEM_VALGRIND) && RTMEM_VALGRIND
    VALGRIND_MEMPOOL_TRIM(pool, region, 0);
#endif
    (void)pool;
    (void)region;
    (void)n;
}

}  // namespace rtmem::detail
