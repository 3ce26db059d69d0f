// The event model shared by the trace reader (rtmem record/report) and the advisor
// (rtmem advise/replay): one allocation-family call of the traced program.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace rtmem::analyze {

/// Which entry point the program called. new/delete are kept apart from malloc/free.
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
};

[[nodiscard]] constexpr bool is_allocation(op k) noexcept {
    return k == op::malloc || k == op::calloc || k == op::aligned_alloc || k == op::new_scalar ||
           k == op::new_array;
}
[[nodiscard]] constexpr bool is_deallocation(op k) noexcept {
    return k == op::free || k == op::delete_scalar || k == op::delete_array;
}

/// One event. For allocations `ptr` and `size` describe the new block; for deallocations `ptr`
/// is the block freed (size is 0 unless the program used sized delete); for realloc both
/// `old_ptr` and `ptr`. `stack` indexes the source's stack table (0 = unknown).
struct event {
    std::uint64_t time_ns = 0;  ///< since the start of recording
    std::uint64_t ptr = 0;
    std::uint64_t old_ptr = 0;
    std::uint64_t size = 0;
    std::uint32_t thread = 0;  ///< small per-trace thread number (0 = main thread)
    std::uint32_t stack = 0;
    std::uint32_t align = 0;  ///< requested alignment, 0 when the call has none
    op kind = op::malloc;
};

/// A stream of events plus the stack table they refer to. Implemented by the trace file reader
/// and by the synthetic trace generator in the tests.
class event_source {
  public:
    virtual ~event_source() = default;
    /// Next event in time order; false at the end.
    virtual bool next(event& e) = 0;
    /// Restarts the stream from the first event (analyses may take two passes).
    virtual void rewind() = 0;
    /// Return addresses of a stack, innermost first (the allocation call site first).
    [[nodiscard]] virtual std::span<const std::uint64_t> stack(std::uint32_t id) const = 0;
    [[nodiscard]] virtual std::size_t stack_count() const = 0;
};

}  // namespace rtmem::analyze
