// fixed_pool_allocator<Size, Align>: a pool_allocator whose block size and alignment are
// template constants, so a call site with a constant request (a container's node, one type)
// tests nothing on allocate: the concept pair is the free list's pop and push plus the null test
// deallocate(nullptr) needs.
#pragma once
#include <cstddef>
#include <span>

#include "rtmem/alloc/pool.hpp"

namespace rtmem {

/// A pool_allocator of `BlockSize`-byte blocks at `BlockAlign` (at least a pointer's alignment).
/// Everything but allocate is the pool's; allocate compares the request with the constants, so
/// for a constant (size, align) the test folds away at compile time (pool_allocator compares
/// the size with a member: one compare and branch a call). A request that does not fit goes to
/// pool_allocator::allocate, which reports it (bad_size / bad_alignment) and returns nullptr.
template <std::size_t BlockSize, std::size_t BlockAlign = default_alignment,
          class Upstream = malloc_allocator, pool_counting Counting = pool_counting::off>
class fixed_pool_allocator : public pool_allocator<Upstream, Counting> {
    static_assert(is_pow2(BlockAlign), "fixed_pool_allocator: BlockAlign must be a power of two");
    using pool = pool_allocator<Upstream, Counting>;

  public:
    static constexpr std::size_t block_alignment =
        BlockAlign < alignof(void*) ? alignof(void*) : BlockAlign;

    /// Blocks carved from caller memory; never grows.
    explicit fixed_pool_allocator(std::span<std::byte> buffer) noexcept
        : pool(buffer, BlockSize, BlockAlign) {}

    /// Blocks taken from `upstream` in chunks of `blocks_per_chunk`.
    fixed_pool_allocator(std::size_t blocks_per_chunk, Upstream& upstream) noexcept
        : pool(BlockSize, BlockAlign, blocks_per_chunk, upstream) {}

    explicit fixed_pool_allocator(std::size_t blocks_per_chunk = 64) noexcept requires
        std::is_default_constructible_v<Upstream> && std::is_empty_v<Upstream>
        : pool(BlockSize, BlockAlign, blocks_per_chunk) {}

    /// Whether a block serves (size, align); a constant expression for constant arguments.
    [[nodiscard]] static constexpr bool fits(std::size_t size, std::size_t align) noexcept {
        return is_pow2(align) && align <= block_alignment && size <= BlockSize;
    }

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        if (!fits(size, align)) [[unlikely]]
            return pool::allocate(size, align);  // reports the misfit, returns nullptr
        return pool::allocate_block();
    }
};

}  // namespace rtmem
