// Telling apart the planned sites that share frame 0 (a wrapper such as xmalloc): the trie of
// their frames (recognition_build.hpp) is walked up the stack. The caller of a frame is read
// from the stack slot at a fixed distance above that frame's own return-address slot: the
// calling function's frame size at that call. Each trie node learns its distance once, from
// one libunwind unwind; afterwards a level costs a load and a hash probe. A distance that
// cannot be learned (no unwinder, an unusual frame) sends that frame 0's calls to the
// caller-frame cache (caller_frames.hpp). A frame whose size varies (alloca) may be misread:
// the read value then matches no planned frame and the call goes to the general heap (speed,
// never correctness: every block is valid whichever allocator serves it).
#pragma once
#include <cstdint>

namespace rtmem::site_plan {

struct recognition_walk_counts {
    std::uint64_t learned;   ///< distances learned (one unwind each)
    std::uint64_t fallback;  ///< walks that took the caller-frame cache or the unwinder
};
recognition_walk_counts recognition_walk_stats() noexcept;
void recognition_walk_init(bool count_calls) noexcept;

}  // namespace rtmem::site_plan
