// pool_allocator: blocks of one size and alignment, O(1) allocate/free through an intrusive
// free list (a pop and a push), over a caller buffer or growing by whole chunks from an upstream.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/detail/pool_chunk.hpp"
#include "rtmem/detail/pool_reserve.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// What a pool_allocator counts on its fast path. off (the default): nothing, so allocate is a
/// pop and deallocate a push, the hand-written free list's work; stats().live_count walks the
/// free list (O(free blocks)) and stats().total_count is 0 (not counted). calls: one counter per
/// allocate and one per deallocate, so live_count is O(1) and total_count exact.
enum class pool_counting { off, calls };

/// Fixed-size block allocator. Every block is `block_size()` bytes at `block_align()`; a free
/// block stores the next free block in its first word, so there is no per-block overhead.
///
/// Checks (check level >= 1): each chunk keeps a free bit map (one bit per block) so a double
/// free and a pointer that is not a block start are reported (double_free, foreign_pointer)
/// and ignored; freed blocks are filled with 0xDD after the link word. Under ASan, at every
/// level, a free block is poisoned whole, link word included, so a use after free is caught.
/// Requests bigger or more aligned than the block return nullptr and report bad_size /
/// bad_alignment. With checks off the bit map does not exist and deallocate is a bare push.
template <class Upstream = malloc_allocator, pool_counting Counting = pool_counting::off>
class pool_allocator {
  public:
    static constexpr std::string_view name = "pool_allocator";
    /// Whether stats().total_count counts allocations (pool_counting::calls) or is 0.
    static constexpr bool counts_calls = Counting == pool_counting::calls;
    static constexpr std::byte free_fill{0xDD};

    /// Blocks carved from caller memory; never grows. The chunk header (and, checks on, the free
    /// bit map) takes the first bytes of the buffer, the pool's cold state (its reserve) the last.
    RTMEM_ALWAYS_INLINE pool_allocator(std::span<std::byte> buffer, std::size_t block_size,
                                       std::size_t block_align = default_alignment) noexcept
        : pool_allocator(geometry{}, block_size, block_align) {
        if (stride_ != 0) reserve_ = reserve_type::create_in(buffer, stride_, block_align_);
    }

    /// Blocks taken from `upstream` in chunks of `blocks_per_chunk`; a new chunk is added when
    /// the free list runs dry (existing blocks never move). Chunks go back on destruction.
    RTMEM_ALWAYS_INLINE pool_allocator(std::size_t block_size, std::size_t block_align,
                                       std::size_t blocks_per_chunk, Upstream& upstream) noexcept
        : pool_allocator(geometry{}, block_size, block_align) {
        if (stride_ != 0)
            reserve_ = reserve_type::create_from(upstream, stride_, block_align_, blocks_per_chunk);
    }

    pool_allocator(std::size_t block_size, std::size_t block_align = default_alignment,
                   std::size_t blocks_per_chunk = 64) noexcept requires
        std::is_default_constructible_v<Upstream> && std::is_empty_v<Upstream>
        : pool_allocator(block_size, block_align, blocks_per_chunk, default_upstream()) {}

    RTMEM_ALWAYS_INLINE pool_allocator(pool_allocator&& o) noexcept { steal(o); }
    pool_allocator& operator=(pool_allocator&& o) noexcept {
        if (this != &o) {
            reserve_type::destroy(reserve_);
            steal(o);
        }
        return *this;
    }
    pool_allocator(const pool_allocator&) = delete;
    pool_allocator& operator=(const pool_allocator&) = delete;
    RTMEM_ALWAYS_INLINE ~pool_allocator() { reserve_type::destroy(reserve_); }

    /// The typed fast path: one block, or nullptr when exhausted (and growth failed). A pop;
    /// never-used blocks are carved out of line (from the reserve, which the pool object does
    /// not pass), so the free list only holds blocks handed out before and the number carved is
    /// exactly the peak live count.
    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate_block() noexcept {
        void* p = head_;
        if (p == nullptr) [[unlikely]]
            return carve_block();
        detail::asan_unpoison(p, stride_);
        head_ = *static_cast<void**>(p);
        if constexpr (counts_calls) ++total_;  // live = total - freed
        if constexpr (check_level >= 1) on_allocate(p);
        return p;
    }

    /// The typed fast path: gives a block back (a push). p must not be null (deallocate()
    /// accepts null); with checks on, null is ignored.
    RTMEM_ALWAYS_INLINE void deallocate_block(void* p) noexcept {
        if constexpr (check_level >= 1) {
            if (!on_deallocate(p)) return;
        }
        if constexpr (counts_calls) ++freed_;
        *static_cast<void**>(p) = head_;
        head_ = p;
        detail::asan_poison(p, stride_);
    }

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        if (!fits(size, align)) [[unlikely]]
            return reject(size, align, block_size_, block_align_);
        return allocate_block();
    }

    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t size,
                                        std::size_t align = default_alignment) noexcept {
        if constexpr (check_level >= 1) {
            if (p != nullptr && (size > block_size_ || align > block_align_)) [[unlikely]] {
                report_violation(violation_kind::size_mismatch, name, p, size,
                                 "deallocate(%p, %zu, %zu) but blocks are %zu bytes at %zu", p,
                                 size, align, block_size_, block_align_);
                return;
            }
        }
        (void)size;
        (void)align;
        if (p != nullptr) deallocate_block(p);
    }

    /// Whether a block can serve (size, align). For a constant alignment up to 4 KiB this is one
    /// compare against a member: size < size_bound_[log2 align], the bound being 0 for
    /// alignments the blocks do not have (is_pow2 and the index fold away).
    [[nodiscard]] RTMEM_ALWAYS_INLINE bool fits(std::size_t size,
                                                std::size_t align) const noexcept {
        if (!is_pow2(align)) return false;
        const auto k = static_cast<unsigned>(std::countr_zero(align));
        if (k > table_align_log2) return align <= block_align_ && size <= block_size_;
        return size < size_bound_[k];
    }

    /// True for the start of any block of any chunk (free or not). O(log chunks).
    [[nodiscard]] bool owns(const void* p) const noexcept { return find_block(p).chunk != nullptr; }

    /// Returns every block to the free list; chunks are kept.
    void reset() noexcept {
        if (reserve_ != nullptr) reserve_->reset();
        head_ = nullptr;
        freed_ = total_;
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        const std::size_t peak = reserve_ == nullptr ? 0 : reserve_->peak_count();
        const std::size_t live = live_count();
        return rtmem::stats{capacity_blocks() * stride_, live * stride_, peak * stride_, live,
                            counts_calls ? total_ : 0};
    }

    /// Verifies the free list: every node is a block start of a chunk that was handed out
    /// before, marked free in the bit map (checks on), no node twice, and free + live ==
    /// carved. O(free blocks x log chunks).
    [[nodiscard]] bool check() const noexcept;

    [[nodiscard]] std::size_t block_size() const noexcept { return block_size_; }
    [[nodiscard]] std::size_t block_align() const noexcept { return block_align_; }
    /// Distance between consecutive blocks (block size rounded up to alignment and a pointer).
    [[nodiscard]] std::size_t block_stride() const noexcept { return stride_; }
    /// Blocks in all chunks (free or live).
    [[nodiscard]] std::size_t capacity_blocks() const noexcept {
        return reserve_ == nullptr ? 0 : reserve_->blocks;
    }
    [[nodiscard]] std::size_t free_blocks() const noexcept { return capacity_blocks() - live_count(); }
    /// O(1) with pool_counting::calls; otherwise carved blocks minus the free list's length.
    [[nodiscard]] std::size_t live_count() const noexcept {
        if constexpr (counts_calls) {
            return total_ - freed_;
        } else {
            std::size_t free_count = 0;
            for (void* p = head_; p != nullptr; p = detail::read_free_word(static_cast<void**>(p)))
                ++free_count;  // the link words stay poisoned under ASan
            return carved() - free_count;
        }
    }

  private:
    using reserve_type = detail::pool_reserve<Upstream>;
    static constexpr unsigned table_align_log2 = 12;  // fits() looks alignments <= 4 KiB up

    // The hot half: block geometry; the reserve is made by the public constructors. Inline, as
    // they are, with the checks out of line: a constructor call would take the pool's address.
    struct geometry {};
    RTMEM_ALWAYS_INLINE pool_allocator(geometry, std::size_t block_size,
                                       std::size_t block_align) noexcept
        : block_size_(block_size),
          block_align_(block_align < alignof(void*) ? alignof(void*) : block_align),
          stride_(stride_for(block_size, block_align)) {
        if (stride_ == 0) return;
        for (unsigned k = 0; k <= table_align_log2; ++k)
            size_bound_[k] = (std::size_t{1} << k) <= block_align_ ? block_size + 1 : 0;
    }

    // Block size rounded up to the alignment and a pointer; 0 (reported) for a geometry no pool
    // can have, which leaves the pool without a reserve and every request rejected.
    RTMEM_NOINLINE static std::size_t stride_for(std::size_t block_size,
                                                 std::size_t block_align) noexcept {
        if (!is_pow2(block_align)) {
            report_violation(violation_kind::bad_alignment, name, nullptr, block_size,
                             "block alignment %zu is not a power of two", block_align);
            return 0;
        }
        const std::size_t align = block_align < alignof(void*) ? alignof(void*) : block_align;
        std::size_t s = block_size < sizeof(void*) ? sizeof(void*) : block_size;
        if (!checked_align_up(s, align, s)) {
            report_violation(violation_kind::bad_size, name, nullptr, block_size,
                             "block size %zu overflows at alignment %zu", block_size, block_align);
            return 0;
        }
        return s;
    }

    static Upstream& default_upstream() noexcept {
        static Upstream u;
        return u;
    }

    [[nodiscard]] std::size_t carved() const noexcept {
        return reserve_ == nullptr ? 0 : reserve_->carved;
    }

    // The free list is empty: a never-used block from the reserve (out of line, given only the
    // reserve's address), then this pool's own bookkeeping for it.
    RTMEM_ALWAYS_INLINE void* carve_block() noexcept {
        void* p = reserve_type::carve_block(reserve_);
        if constexpr (counts_calls || check_level >= 1) {
            if (p == nullptr) return nullptr;
            if constexpr (counts_calls) ++total_;
            if constexpr (check_level >= 1) on_allocate(p);
        }
        return p;
    }

    // A static function of values, so the pool's address does not escape through it either.
    RTMEM_NOINLINE static void* reject(std::size_t size, std::size_t align, std::size_t block_size,
                                       std::size_t block_align) noexcept {
        if (!is_pow2(align) || align > block_align)
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu: blocks are aligned to %zu", align, block_align);
        else
            report_violation(violation_kind::bad_size, name, nullptr, size,
                             "%zu bytes requested from a pool of %zu-byte blocks", size,
                             block_size);
        return nullptr;
    }

    detail::pool_block_ref find_block(const void* p) const noexcept {
        return reserve_ == nullptr ? detail::pool_block_ref{} : reserve_->find_block(p);
    }

    void on_allocate(void* p) noexcept {
        detail::unpoison(p, stride_);
        auto r = find_block(p);
        r.chunk->set_free(r.index, false);
    }

    // Checks-on deallocate: validates p, updates the bit map, fills and poisons the block.
    RTMEM_NOINLINE bool on_deallocate(void* p) noexcept {
        if (p == nullptr) return false;
        auto r = find_block(p);
        if (r.chunk == nullptr) {
            report_violation(violation_kind::foreign_pointer, name, p, block_size_,
                             "%p is not a block of this pool", p);
            return false;
        }
        if (r.chunk->is_free(r.index)) {
            report_violation(violation_kind::double_free, name, p, block_size_,
                             "block %p freed twice", p);
            return false;
        }
        r.chunk->set_free(r.index, true);
        auto* b = static_cast<std::byte*>(p);
        std::memset(b + sizeof(void*), static_cast<int>(free_fill), stride_ - sizeof(void*));
        detail::poison(b + sizeof(void*), stride_ - sizeof(void*));
        return true;
    }

    void steal(pool_allocator& o) noexcept {
        head_ = std::exchange(o.head_, nullptr);
        total_ = std::exchange(o.total_, 0);
        freed_ = std::exchange(o.freed_, 0);
        reserve_ = std::exchange(o.reserve_, nullptr);
        block_size_ = o.block_size_;
        block_align_ = o.block_align_;
        stride_ = o.stride_;
        std::memcpy(size_bound_, o.size_bound_, sizeof(size_bound_));
    }

    void* head_ = nullptr;  // first free block; its first word links to the next
    // pool_counting::calls only; they share head_'s cache line.
    std::size_t total_ = 0, freed_ = 0;  // live = total_ - freed_
    reserve_type* reserve_ = nullptr;    // chunks and never-used blocks (null: no memory)
    std::size_t block_size_ = 0, block_align_ = 0, stride_ = 0;
    // size_bound_[k]: 1 + the largest request at alignment 2^k (0: blocks are less aligned).
    std::size_t size_bound_[table_align_log2 + 1] = {};
};

pool_allocator(std::span<std::byte>, std::size_t, std::size_t)->pool_allocator<>;
pool_allocator(std::span<std::byte>, std::size_t)->pool_allocator<>;

template <class Upstream, pool_counting Counting>
bool pool_allocator<Upstream, Counting>::check() const noexcept {
    std::size_t free_count = 0;
    for (void* p = head_; p != nullptr; p = detail::read_free_word(static_cast<void**>(p))) {
        auto r = find_block(p);
        bool ok = r.chunk != nullptr && r.index < r.chunk->carved && free_count < carved();
        if constexpr (check_level >= 1) ok = ok && r.chunk->is_free(r.index);
        if (!ok) {
            report_violation(violation_kind::corrupted, name, p, block_size_,
                             "free list node %p is not a free block of this pool (after %zu)", p,
                             free_count);
            return false;
        }
        ++free_count;
    }
    if (free_count + live_count() != carved()) {
        report_violation(violation_kind::corrupted, name, nullptr, 0,
                         "%zu free + %zu live blocks, but %zu were handed out", free_count,
                         live_count(), carved());
        return false;
    }
    return true;
}

}  // namespace rtmem
