// rtmem::fragmentation: how well a general-purpose heap uses its memory. Returned by
// free_list_allocator::fragmentation() and tlsf_allocator::fragmentation().
#pragma once
#include <cstddef>

namespace rtmem {

/// How well a general-purpose heap uses its memory, from one walk of its free blocks.
struct fragmentation {
    std::size_t requested_live = 0;  ///< bytes callers asked for, over live blocks
    std::size_t held_live = 0;       ///< bytes live blocks hold (headers, padding, rounding)
    std::size_t free_bytes = 0;      ///< bytes a caller could get from the free blocks, summed
    std::size_t largest_free = 0;    ///< the biggest single request that can succeed (align 8)
    std::size_t free_blocks = 0;     ///< number of free blocks

    /// 1 - requested / held: overhead of headers, alignment and size-class rounding.
    [[nodiscard]] double internal() const noexcept {
        return held_live == 0
                   ? 0.0
                   : 1.0 - static_cast<double>(requested_live) / static_cast<double>(held_live);
    }
    /// 1 - largest free / total free: 0 when the free memory is one block.
    [[nodiscard]] double external() const noexcept {
        return free_bytes == 0
                   ? 0.0
                   : 1.0 - static_cast<double>(largest_free) / static_cast<double>(free_bytes);
    }
};

}  // namespace rtmem
