// The return addresses above frame 0, for plan sites named by more than one frame. Cheap in
// the common case, as the tracer's stacks are: a per-thread cache remembers, for a call from
// the same stack position and frame 0, the stack slots holding frames 1..n; the frames are
// those slots' values while each still holds the return address the last unwind found there.
// A miss unwinds with libunwind (~1000 instructions) and refills the entry.
#pragma once
#include <cstdint>

namespace rtmem::site_plan {

/// Frames innermost first: out[0] = ra (frame 0), then up to `want` - 1 callers. `anchor`:
/// an address in the caller's own stack frame (the same for every call along one path).
/// Returns how many were found (0: frame 0 not found on the stack, or no unwinder built in).
int caller_frames(std::uintptr_t ra, std::uintptr_t anchor, std::uintptr_t* out,
                  int want) noexcept;

/// Unwinds that went through the cache / had to unwind (for the summary; counted only when
/// caller_frames_init was told to).
struct caller_frame_counts {
    std::uint64_t cached, unwound;
};
caller_frame_counts caller_frame_stats() noexcept;

void caller_frames_init(bool count_calls) noexcept;

}  // namespace rtmem::site_plan
