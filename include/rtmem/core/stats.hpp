// The statistics every allocator with a stats() member reports.
#pragma once
#include <cstddef>

namespace rtmem {

/// A snapshot of an allocator's accounting. Byte counts include the allocator's own padding and
/// headers for the blocks it hands out ("held" bytes), so used <= capacity always holds.
struct stats {
    std::size_t capacity = 0;     ///< bytes the allocator can hand out now (0: unbounded/unknown)
    std::size_t used = 0;         ///< bytes currently held by live blocks, padding included
    std::size_t peak = 0;         ///< high-water mark of used; survives reset() and rewind()
    std::size_t live_count = 0;   ///< blocks allocated and not yet given back
    std::size_t total_count = 0;  ///< successful allocations since construction
};

}  // namespace rtmem
