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
