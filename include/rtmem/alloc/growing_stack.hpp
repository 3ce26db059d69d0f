// growing_stack_allocator: a stack allocator that grows by chunks from an upstream (Trub's
// PoolLowLevel chunk chain under the Stack strategy).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

struct growing_stack_options {
    std::size_t chunk_size = 8 * 1024;  ///< bytes per chunk, header included (Trub used 8100)
    /// Emptied chunks kept for the next growth instead of going back to the upstream. One spare
    /// stops a free/allocate pair that crosses a chunk boundary from calling the upstream twice.
    std::size_t spare_chunks = 1;
};

/// LIFO allocator over a chain of chunks: when the current chunk is full, the next one comes
/// from the cache of spare chunks or the upstream (a request larger than a chunk gets a chunk of
/// its own size). Freeing the last live block of a chunk makes the previous chunk current again
/// and hands the emptied chunk back (or keeps it as a spare); the oldest chunk stays.
/// With checks on (RTMEM_CHECKS >= 1) each block carries a 16-byte header {previous top, size}:
/// an out-of-order free, in the current chunk or an older one, is a lifo_order violation, a
/// wrong size a size_mismatch, a freed block a double_free. With checks off there is no header
/// and deallocate is a store and a compare (the padding in front of a freed block stays in use
/// until the block below it is freed, as in stack_allocator).
class growing_stack_allocator {
  public:
    static constexpr std::string_view name = "growing_stack_allocator";

    struct chunk;
    struct marker_type {
        chunk* current = nullptr;  // chunk holding the top (nullptr: no chunk yet)
        std::byte* top = nullptr;
        std::size_t live = 0;
#if RTMEM_CHECKS
        std::uint64_t serial = 0;
        std::uint32_t owner = 0;
#endif
    };

    explicit growing_stack_allocator(growing_stack_options options = {}) noexcept
        : growing_stack_allocator(options, detail::upstream_ref()) {}
    template <allocator Upstream>
    growing_stack_allocator(growing_stack_options options, Upstream& upstream) noexcept
        : growing_stack_allocator(options, detail::upstream_ref(upstream)) {}
    growing_stack_allocator(growing_stack_options options, detail::upstream_ref upstream) noexcept;

    growing_stack_allocator(growing_stack_allocator&& o) noexcept;
    growing_stack_allocator& operator=(growing_stack_allocator&& o) noexcept;
    growing_stack_allocator(const growing_stack_allocator&) = delete;
    growing_stack_allocator& operator=(const growing_stack_allocator&) = delete;
    ~growing_stack_allocator();

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        size += static_cast<std::size_t>(size == 0);
#if RTMEM_CHECKS
        if (!is_pow2(align)) [[unlikely]]
            return detail::bad_alignment(name, size, align);
        std::byte* p = header_bytes <= static_cast<std::size_t>(end_ - top_)
                           ? detail::bump(top_ + header_bytes, end_, size, align)
                           : nullptr;
        if (p == nullptr) [[unlikely]]
            return grow(size, align);
        const header h{top_, size};
        detail::unpoison(p - header_bytes, header_bytes + size);
        std::memcpy(p - header_bytes, &h, sizeof h);
#else
        std::byte* p = detail::bump(top_, end_, size, align);
        if (p == nullptr) [[unlikely]]
            return grow(size, align);
        detail::unpoison(p, size);
#endif
        top_ = p + size;
        ++live_;
        ++total_;
        return p;
    }

    /// Frees p, which must be the most recent live block.
    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t size,
                                        std::size_t align = default_alignment) noexcept {
        (void)align;
        if (p == nullptr) return;
        auto* b = static_cast<std::byte*>(p);
        note_peak();
#if RTMEM_CHECKS
        size += static_cast<std::size_t>(size == 0);
        if (b >= top_ || b < begin_ + header_bytes) [[unlikely]]  // top_ first: null when empty
            return bad_free(b, size);
        header h;
        std::memcpy(&h, b - header_bytes, sizeof h);
        if (b + h.size != top_ || h.previous < begin_ || h.previous > b - header_bytes) [[unlikely]]
            return bad_free(b, size);
        if (h.size != size) [[unlikely]]
            return report_violation(violation_kind::size_mismatch, name, p, size,
                                    "deallocate of %p with size %zu, allocated with %zu", p, size,
                                    h.size);
        detail::retreat(top_, h.previous);
#else
        (void)size;
        detail::retreat(top_, b);
#endif
        --live_;
        if (b == first_) [[unlikely]]
            chunk_emptied();
    }

    [[nodiscard]] marker_type marker() const noexcept;
    /// Frees every block allocated after m; chunks newer than m go back (or become spares).
    /// A marker already rewound past, or from another allocator, is a stale_marker violation.
    void rewind(marker_type m) noexcept;
    /// Frees every block; keeps the oldest chunk, hands back (or keeps as spares) the others.
    void reset() noexcept;
    /// Hands back the spare chunks, and the oldest one too when the allocator is empty.
    void shrink_to_fit() noexcept;

    /// Walks the chunks: O(chunks).
    [[nodiscard]] bool owns(const void* p) const noexcept;
    [[nodiscard]] rtmem::stats stats() const noexcept;
    [[nodiscard]] bool check() const noexcept;

    /// Bytes held from the upstream (chunks in use and spares).
    [[nodiscard]] std::size_t reserved_bytes() const noexcept {
        return reserved_;
    }
    /// Chunks in use and spare.
    [[nodiscard]] std::size_t chunk_count() const noexcept {
        return chunks_;
    }
    [[nodiscard]] std::size_t spare_chunk_count() const noexcept {
        return spares_;
    }
    /// Bytes from the bottom of the oldest chunk to the top, counted over the chunks in use.
    [[nodiscard]] std::size_t used() const noexcept {
        return below_ + static_cast<std::size_t>(top_ - begin_);
    }
    [[nodiscard]] const growing_stack_options& options() const noexcept {
        return options_;
    }

  private:
    struct header {
        std::byte* previous;  // top before this block
        std::size_t size;     // requested size (at least 1)
    };
    static constexpr std::size_t header_bytes = RTMEM_CHECKS ? sizeof(header) : 0;

    RTMEM_ALWAYS_INLINE void note_peak() noexcept {
        const std::size_t u = used();
        if (u > peak_) peak_ = u;
    }
    RTMEM_NOINLINE void* grow(std::size_t size, std::size_t align) noexcept;
    RTMEM_NOINLINE void chunk_emptied() noexcept;
    RTMEM_NOINLINE void bad_free(const std::byte* b, std::size_t size) const noexcept;
    chunk* take_chunk(std::size_t bytes) noexcept;
    void make_current(chunk* c) noexcept;
    void pop_current() noexcept;
    void retire(chunk* c) noexcept;
    void give_back(chunk* c) noexcept;
    void release_all() noexcept;
    [[nodiscard]] bool valid(const marker_type& m) const noexcept;

    // The fast paths' fields first, so they share a cache line. live_ and total_ are not
    // neighbours: GCC merges neighbouring increments into one 16-byte add, and the 8-byte
    // decrement of live_ in deallocate then stalls the next 16-byte load (a failed store
    // forward: 8 ns per allocate + free instead of 1-2).
    std::byte* top_ = nullptr;
    std::size_t live_ = 0;
    std::byte* end_ = nullptr;    // end of the current chunk
    std::byte* begin_ = nullptr;  // payload start of the current chunk
    std::byte* first_ = nullptr;  // first block of the current chunk (its free pops the chunk)
    std::size_t total_ = 0;
    std::size_t below_ = 0;  // used bytes of the older chunks in use
    std::size_t peak_ = 0;
    chunk* current_ = nullptr;
    chunk* spare_ = nullptr;
    std::size_t reserved_ = 0;
    std::size_t chunks_ = 0;
    std::size_t spares_ = 0;
    std::uint64_t serial_ = 0;
    std::uint32_t owner_ = detail::next_owner_tag();
    growing_stack_options options_;
    detail::upstream_ref upstream_;
};

}  // namespace rtmem
