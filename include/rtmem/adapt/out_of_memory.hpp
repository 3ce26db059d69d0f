// What the typed helpers and standard-library adapters do when an rtmem allocator is exhausted:
// throw std::bad_alloc when exceptions are enabled, call the out-of-memory handler when they are
// not (-fno-exceptions builds, common in games).
#pragma once
#include <cstddef>
#include <new>

#include "rtmem/core/config.hpp"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define RTMEM_HAS_EXCEPTIONS 1
#else
#define RTMEM_HAS_EXCEPTIONS 0
#endif

namespace rtmem {

/// Called with the request that failed. The default reports an out_of_memory violation (which
/// prints and aborts unless a violation handler returns) and then aborts. A handler may return:
/// make/make_array/make_unique then give back nullptr / an empty result; adapters whose callers
/// cannot handle nullptr (std_allocator, resource) abort.
using out_of_memory_handler = void (*)(std::size_t size, std::size_t align);

/// Installs h (nullptr restores the default); returns the previous one. Thread-safe.
out_of_memory_handler set_out_of_memory_handler(out_of_memory_handler h) noexcept;
[[nodiscard]] out_of_memory_handler get_out_of_memory_handler() noexcept;

namespace detail {

/// Calls the out-of-memory handler (which may return).
RTMEM_NOINLINE void call_out_of_memory_handler(std::size_t size, std::size_t align) noexcept;

/// Exhaustion where the caller can handle nullptr: throws std::bad_alloc with exceptions; calls
/// the handler and returns without them.
[[gnu::cold]] inline void out_of_memory(std::size_t size, std::size_t align) {
#if RTMEM_HAS_EXCEPTIONS
    (void)size;
    (void)align;
    throw std::bad_alloc();
#else
    call_out_of_memory_handler(size, align);
#endif
}

/// Exhaustion where returning is not an option (standard containers).
[[noreturn, gnu::cold]] void out_of_memory_fatal(std::size_t size, std::size_t align);

/// Exhaustion in an adapter whose caller cannot handle nullptr (standard containers, pmr):
/// throws std::bad_alloc with exceptions; calls the handler and aborts without them.
[[gnu::cold]] inline void out_of_memory_throw_or_die(std::size_t size, std::size_t align) {
#if RTMEM_HAS_EXCEPTIONS
    (void)size;
    (void)align;
    throw std::bad_alloc();
#else
    out_of_memory_fatal(size, align);
#endif
}

/// n * size overflowed (new T[n] would throw std::bad_array_new_length).
[[gnu::cold]] inline void bad_array_length(std::size_t n, std::size_t size) {
#if RTMEM_HAS_EXCEPTIONS
    (void)n;
    (void)size;
    throw std::bad_array_new_length();
#else
    call_out_of_memory_handler(n > 0 ? static_cast<std::size_t>(-1) : size, 0);
#endif
}

}  // namespace detail
}  // namespace rtmem
