// Build-time configuration: contract check level and small portability macros.
#pragma once

// RTMEM_CHECKS: 0 = no checks, 1 = O(1) checks (default without NDEBUG), 2 = also expensive walks.
// Use one level for the whole program: allocator layouts (e.g. debug headers) depend on it.
#ifndef RTMEM_CHECKS
#ifdef NDEBUG
#define RTMEM_CHECKS 0
#else
#define RTMEM_CHECKS 1
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RTMEM_NOINLINE __attribute__((noinline))
#define RTMEM_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define RTMEM_NOINLINE __declspec(noinline)
#define RTMEM_ALWAYS_INLINE __forceinline
#else
#define RTMEM_NOINLINE
#define RTMEM_ALWAYS_INLINE inline
#endif

namespace rtmem {
/// The check level this translation unit was compiled with.
inline constexpr int check_level = RTMEM_CHECKS;
}  // namespace rtmem
