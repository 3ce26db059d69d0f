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

// printf-style checking of rtmem's own format strings. MinGW's `printf` format means the MS C
// runtime's dialect (no %zu); rtmem formats through the C99 vsnprintf MinGW's libstdc++ selects
// (__USE_MINGW_ANSI_STDIO), so it is checked as gnu_printf there.
#if defined(__MINGW32__)
#define RTMEM_PRINTF_FORMAT(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define RTMEM_PRINTF_FORMAT(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define RTMEM_PRINTF_FORMAT(fmt, args)
#endif

// Windows: per-thread objects with a destructor are destroyed from a fiber-local-storage callback
// (detail::at_thread_exit), not by thread_local destructors, which MinGW-w64 GCC runs after the
// thread's emulated TLS is freed (a crash at thread exit).
#if defined(_WIN32)
#define RTMEM_THREAD_EXIT_CALLBACK 1
#endif

// Guard pages need page protection, which WebAssembly's linear memory does not have: there
// page_allocator rejects guard options (bad_argument).
#if defined(__EMSCRIPTEN__) || defined(__wasm__)
#define RTMEM_HAS_GUARD_PAGES 0
#else
#define RTMEM_HAS_GUARD_PAGES 1
#endif

namespace rtmem {
/// The check level this translation unit was compiled with.
inline constexpr int check_level = RTMEM_CHECKS;
}  // namespace rtmem
