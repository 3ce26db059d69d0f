// The kinds of event a trace holds: one allocation-family call of the traced program, or a
// frame marker. Shared by the writer (librtmem-trace.so) and every reader.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem::trace_format {

/// Which entry point the program called. new/delete are kept apart from malloc/free.
/// Stored as a byte in every event: append new kinds before `count` and never reorder.
enum class op : std::uint8_t {
    malloc,  ///< malloc, valloc, pvalloc
    calloc,
    realloc,        ///< also reallocarray; old_ptr freed, ptr allocated (either may be 0)
    aligned_alloc,  ///< aligned_alloc, memalign, posix_memalign
    free,
    new_scalar,     ///< every operator new form (nothrow, aligned)
    new_array,      ///< every operator new[] form
    delete_scalar,  ///< every operator delete form (sized: size is set)
    delete_array,   ///< every operator delete[] form
    frame,          ///< rtmem_trace_frame(): the program marked a frame boundary
    count           ///< not a kind: the number of kinds (a stored kind is below it)
};
inline constexpr std::size_t op_count = static_cast<std::size_t>(op::count);

[[nodiscard]] constexpr bool is_allocation(op k) noexcept {
    return k == op::malloc || k == op::calloc || k == op::aligned_alloc || k == op::new_scalar ||
           k == op::new_array;
}
[[nodiscard]] constexpr bool is_deallocation(op k) noexcept {
    return k == op::free || k == op::delete_scalar || k == op::delete_array;
}

/// The name reports print for a kind ("new[]", "aligned_alloc", ...).
[[nodiscard]] constexpr const char* op_name(op k) noexcept {
    constexpr const char* names[op_count] = {"malloc", "calloc",        "realloc", "aligned_alloc",
                                             "free",   "new",           "new[]",   "delete",
                                             "delete[]", "frame"};
    return static_cast<std::size_t>(k) < op_count ? names[static_cast<std::size_t>(k)] : "?";
}

}  // namespace rtmem::trace_format
