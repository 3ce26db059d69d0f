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

}  // namespace rtmem::detail
