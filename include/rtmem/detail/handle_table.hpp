// The handle table behind handle_heap: one entry per block, the live blocks linked in address
// order (so defragmentation and first-fit walk them without sorting), the unused entries in a
// free list.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem {

/// How a block is moved: copy `size` bytes from src to dst and fix up whatever must follow the
/// move. The default (nullptr) is memmove. A custom relocator is only called with
/// non-overlapping ranges, so it may move-construct objects and destroy the originals.
using relocate_fn = void (*)(void* dst, void* src, std::size_t size, void* user) noexcept;

namespace detail {

inline constexpr std::uint32_t handle_nil = ~std::uint32_t{0};

struct handle_entry {
    std::size_t offset = 0;           ///< from the heap base
    std::size_t size = 0;             ///< as requested
    std::size_t span = 0;             ///< bytes occupied: size rounded up to the granule
    relocate_fn relocate = nullptr;   ///< nullptr: memmove
    void* user = nullptr;             ///< passed to relocate
    std::uint32_t generation = 0;     ///< odd while the block is live
    std::uint32_t prev = handle_nil;  ///< live: previous block by address
    std::uint32_t next = handle_nil;  ///< live: next block by address; unused: next free entry
    std::uint32_t pins = 0;
    std::uint32_t align = 0;  ///< requested alignment (power of two)

    [[nodiscard]] bool live() const noexcept { return (generation & 1u) != 0; }
    [[nodiscard]] std::size_t end() const noexcept { return offset + span; }
};

}  // namespace detail
}  // namespace rtmem
