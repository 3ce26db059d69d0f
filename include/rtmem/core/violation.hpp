// Contract violations: misuse of an allocator is reported here, never silently ignored.
#pragma once
#include <cstddef>
#include <string_view>

#include "rtmem/core/config.hpp"

namespace rtmem {

enum class violation_kind {
    bad_alignment,      ///< alignment not a power of two, or more than the allocator supports
    bad_size,           ///< size too large for the allocator (or overflowing arithmetic)
    foreign_pointer,    ///< pointer not owned by this allocator
    double_free,        ///< block freed twice
    lifo_order,         ///< stack-ordered allocator freed out of order
    stale_marker,       ///< marker newer than the top, or from another allocator
    size_mismatch,      ///< deallocate size/alignment differs from allocate
    fence_overwritten,  ///< guard bytes around a block were written (overflow/underflow)
    out_of_memory,      ///< exhaustion where the caller asked for it to be reported
    stale_handle,       ///< handle whose generation no longer matches
    budget_exceeded,    ///< a memory budget was exceeded
    corrupted,          ///< an internal invariant is broken (reported by check())
    bad_argument,       ///< any other invalid argument
};

/// Short stable name of a kind, e.g. "lifo_order".
[[nodiscard]] std::string_view to_string(violation_kind kind) noexcept;

/// What the handler receives. Strings are valid only during the call.
struct violation {
    violation_kind kind;
    std::string_view allocator;  ///< e.g. "stack_allocator"
    std::string_view message;    ///< readable explanation with the numbers involved
    const void* pointer;         ///< the block concerned, or nullptr
    std::size_t size;            ///< the size concerned, or 0
};

/// Called on every violation. The default prints to stderr and aborts. If a handler returns,
/// the operation is abandoned safely: allocate returns nullptr, a bad deallocate or rewind does
/// nothing. (A handler must not throw through the noexcept allocator interface.)
using violation_handler = void (*)(const violation&);

/// Installs h (nullptr restores the default) and returns the previous handler. Thread-safe.
violation_handler set_violation_handler(violation_handler h) noexcept;
[[nodiscard]] violation_handler get_violation_handler() noexcept;

/// Reports a violation to the current handler; message is printf-formatted. Cold path.
RTMEM_NOINLINE void report_violation(violation_kind kind, std::string_view allocator,
                                     const void* pointer, std::size_t size, const char* fmt,
                                     ...) noexcept RTMEM_PRINTF_FORMAT(5, 6);

}  // namespace rtmem
