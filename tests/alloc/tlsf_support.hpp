// Helpers shared by the tlsf_allocator tests: a heap-allocated pool buffer and a block count
// from the heap dump.
#pragma once
#include <cstddef>
#include <memory>
#include <span>

#include "rtmem/alloc/tlsf.hpp"

namespace rtmem::testing {

struct heap_buffer {
    explicit heap_buffer(std::size_t n) : bytes(new std::byte[n]), size(n) {}
    std::span<std::byte> span() { return {bytes.get(), size}; }
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size;
};

/// Blocks walk() reports as used (true) or not used (false: free or parked in the cache).
inline std::size_t count_blocks(const tlsf_allocator& t, bool used) {
    std::size_t n = 0;
    t.walk([&](const void*, std::size_t, bool u) { n += u == used ? 1 : 0; });
    return n;
}

}  // namespace rtmem::testing
