// Build-time configuration: contract check level and small portability macros.
#pragma once

// RTMEM_CHECKS: 0 = no checks, 1 = O(1) checks (default without NDEBUG), 2 = also expensive walks.
// The level is a property of the compiled library: the CMake package and pkg-config file set it
// for their consumers (docs/debugging.md). No type layout depends on it, and every translation
// unit that includes this header names the level in a link-time symbol (below), so code compiled
// at one level and a library built at another fail to link instead of mixing silently.
// In code, test the constant rtmem::check_level (if constexpr), never the macro.
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
static_assert(check_level >= 0 && check_level <= 2, "RTMEM_CHECKS must be 0, 1 or 2");
}  // namespace rtmem

// The link-time level check: the library defines the symbol for the level it was built with, and
// every translation unit references the one for its own level, so a mismatch is an undefined
// reference that says what is wrong, e.g.
//   undefined reference to `rtmem_code_built_with_RTMEM_CHECKS_1_needs_a_library_built_with_it'
#define RTMEM_DETAIL_LEVEL_CAT2(a, b) a##b
#define RTMEM_DETAIL_LEVEL_CAT(a, b) RTMEM_DETAIL_LEVEL_CAT2(a, b)
#define RTMEM_DETAIL_LEVEL_SYMBOL                                                    \
    RTMEM_DETAIL_LEVEL_CAT(RTMEM_DETAIL_LEVEL_CAT(rtmem_code_built_with_RTMEM_CHECKS_, \
                                                  RTMEM_CHECKS),                      \
                           _needs_a_library_built_with_it)
extern "C" const char RTMEM_DETAIL_LEVEL_SYMBOL;
#if defined(__GNUC__) || defined(__clang__)
namespace rtmem::detail {
// One pointer per translation unit, kept by `used` so the reference survives optimisation.
[[gnu::used]] static const char* const check_level_link_probe = &RTMEM_DETAIL_LEVEL_SYMBOL;
}  // namespace rtmem::detail
#elif defined(_MSC_VER)
#define RTMEM_DETAIL_STR2(x) #x
#define RTMEM_DETAIL_STR(x) RTMEM_DETAIL_STR2(x)
#pragma comment(linker, "/include:" RTMEM_DETAIL_STR(RTMEM_DETAIL_LEVEL_SYMBOL))
#endif
