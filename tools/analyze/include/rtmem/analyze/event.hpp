// A decoded event and the stream of them that every analysis reads (the trace file reader, or
// a synthetic generator in the tests). The kinds of event live in tools/format (op.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "rtmem/format/op.hpp"

namespace rtmem::analyze {

using trace_format::is_allocation;
using trace_format::is_deallocation;
using trace_format::op;
using trace_format::op_count;
using trace_format::op_name;

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

/// Exact counts of the calls made while recording, per op: calls and requested bytes.
struct call_counts {
    std::uint64_t calls[op_count] = {};
    std::uint64_t bytes[op_count] = {};
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
    /// The allocator time the event last returned by next() stands for, in ns (0: not timed;
    /// sources without timings say 0 throughout).
    [[nodiscard]] virtual std::uint64_t last_duration_ns() const noexcept { return 0; }
    /// One call in this many was timed, so a timed call stands for this many (1: every call).
    [[nodiscard]] virtual std::uint32_t timing_period() const noexcept { return 1; }
    /// Mean sampling interval in bytes when only a sample of the allocations was recorded
    /// (a block of size s stands for 1 / (1 - exp(-s / interval)) blocks); 0: every call.
    [[nodiscard]] virtual std::uint64_t sample_interval() const noexcept { return 0; }
    /// Exact counts of every call, recorded or not, when the source has them.
    [[nodiscard]] virtual const call_counts* exact_counts() const noexcept { return nullptr; }
};

}  // namespace rtmem::analyze
