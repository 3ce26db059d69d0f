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

    /// Blocks carved from caller memory; never grows. (With checks on, the chunk header and the
    /// free bit map take the first bytes of the buffer.)
    pool_allocator(std::span<std::byte> buffer, std::size_t block_size,
                   std::size_t block_align = default_alignment) noexcept
        : pool_allocator(block_size, block_align, 0, nullptr) {
        if (!valid_) return;
        if (auto* c = detail::pool_chunk::carve(buffer, stride_, block_align_, check_level >= 1)) {
            adopt(c);
        }
    }

    /// Blocks taken from `upstream` in chunks of `blocks_per_chunk`; a new chunk is added when
    /// the free list runs dry (existing blocks never move). Chunks go back on destruction.
    pool_allocator(std::size_t block_size, std::size_t block_align, std::size_t blocks_per_chunk,
                   Upstream& upstream) noexcept
        : pool_allocator(block_size, block_align, blocks_per_chunk, &upstream) {}

    pool_allocator(std::size_t block_size, std::size_t block_align = default_alignment,
                   std::size_t blocks_per_chunk = 64) noexcept requires
        std::is_default_constructible_v<Upstream> && std::is_empty_v<Upstream>
        : pool_allocator(block_size, block_align, blocks_per_chunk, &default_upstream()) {}

    pool_allocator(pool_allocator&& o) noexcept { steal(o); }
    pool_allocator& operator=(pool_allocator&& o) noexcept {
        if (this != &o) {
            release_chunks();
            steal(o);
        }
        return *this;
    }
    pool_allocator(const pool_allocator&) = delete;
    pool_allocator& operator=(const pool_allocator&) = delete;
    ~pool_allocator() { release_chunks(); }

    /// The typed fast path: one block, or nullptr when exhausted (and growth failed). A pop;
    /// never-used blocks are carved out of line, so the free list only holds blocks handed out
    /// before and the number carved is exactly the peak live count.
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
            return reject(size, align);
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
        if (carved_ > peak_) peak_ = carved_;
        for (auto* c = chunks_; c != nullptr; c = c->next) c->prepare(stride_);
        head_ = nullptr;
        carve_ = chunks_;
        carved_ = 0;
        freed_ = total_;
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        const std::size_t peak = carved_ > peak_ ? carved_ : peak_;
        const std::size_t live = live_count();
        return rtmem::stats{blocks_ * stride_, live * stride_, peak * stride_, live,
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
    [[nodiscard]] std::size_t capacity_blocks() const noexcept { return blocks_; }
    [[nodiscard]] std::size_t free_blocks() const noexcept { return blocks_ - live_count(); }
    /// O(1) with pool_counting::calls; otherwise carved blocks minus the free list's length.
    [[nodiscard]] std::size_t live_count() const noexcept {
        if constexpr (counts_calls) {
            return total_ - freed_;
        } else {
            std::size_t free_count = 0;
            for (void* p = head_; p != nullptr; p = detail::read_free_word(static_cast<void**>(p)))
                ++free_count;  // the link words stay poisoned under ASan
            return carved_ - free_count;
        }
    }

  private:
    static constexpr unsigned table_align_log2 = 12;  // fits() looks alignments <= 4 KiB up

    pool_allocator(std::size_t block_size, std::size_t block_align, std::size_t per_chunk,
                   Upstream* up) noexcept
        : upstream_(up), block_size_(block_size), block_align_(block_align), per_chunk_(per_chunk) {
        if (!is_pow2(block_align)) {
            report_violation(violation_kind::bad_alignment, name, nullptr, block_size,
                             "block alignment %zu is not a power of two", block_align);
            return;
        }
        if (block_align_ < alignof(void*)) block_align_ = alignof(void*);
        for (unsigned k = 0; k <= table_align_log2; ++k)
            size_bound_[k] = (std::size_t{1} << k) <= block_align_ ? block_size + 1 : 0;
        std::size_t s = block_size < sizeof(void*) ? sizeof(void*) : block_size;
        if (!checked_align_up(s, block_align_, stride_)) {
            report_violation(violation_kind::bad_size, name, nullptr, block_size,
                             "block size %zu overflows at alignment %zu", block_size, block_align);
            return;
        }
        valid_ = true;
    }

    static Upstream& default_upstream() noexcept {
        static Upstream u;
        return u;
    }

    void adopt(detail::pool_chunk* c) noexcept {
        c->next = chunks_;
        chunks_ = c;
        blocks_ += c->count;
        c->prepare(stride_);
        carve_ = c;
    }

    // The free list is empty: hand out a never-used block, growing by a chunk if needed.
    RTMEM_NOINLINE void* carve_block() noexcept {
        while (carve_ != nullptr && carve_->carved == carve_->count) carve_ = carve_->next;
        if (carve_ == nullptr && !grow()) return nullptr;
        void* p = carve_->carve(stride_);
        detail::unpoison(p, stride_);
        ++carved_;
        if constexpr (counts_calls) ++total_;
        if constexpr (check_level >= 1) on_allocate(p);
        return p;
    }

    bool grow() noexcept {
        if (upstream_ == nullptr || per_chunk_ == 0 || !valid_) return false;
        if (index_.size == index_.capacity && !grow_index()) return false;
        std::size_t bytes = 0;
        if (!checked_mul(stride_, per_chunk_, bytes) ||
            !checked_add(bytes, detail::pool_chunk::overhead(per_chunk_, check_level >= 1) + block_align_,
                         bytes))
            return false;
        auto* mem =
            static_cast<std::byte*>(upstream_->allocate(bytes, alignof(detail::pool_chunk)));
        if (mem == nullptr) return false;
        auto* c = detail::pool_chunk::carve({mem, bytes}, stride_, block_align_, check_level >= 1);
        if (c == nullptr) {
            upstream_->deallocate(mem, bytes, alignof(detail::pool_chunk));
            return false;
        }
        c->upstream_bytes = bytes;
        adopt(c);
        index_.insert(c);
        return true;
    }

    // Doubles the chunk index (amortised O(1) per chunk; growth already calls the upstream).
    bool grow_index() noexcept {
        const std::size_t cap = index_.capacity == 0 ? 8 : 2 * index_.capacity;
        std::size_t bytes = 0;
        if (!checked_mul(cap, sizeof(detail::pool_chunk*), bytes)) return false;
        auto** mem = static_cast<detail::pool_chunk**>(
            upstream_->allocate(bytes, alignof(detail::pool_chunk*)));
        if (mem == nullptr) return false;
        if (index_.size != 0) std::memcpy(mem, index_.chunks, index_.size * sizeof(*mem));
        release_index();
        index_.chunks = mem;
        index_.capacity = cap;
        return true;
    }

    void release_index() noexcept {
        if (index_.chunks != nullptr)
            upstream_->deallocate(index_.chunks, index_.capacity * sizeof(detail::pool_chunk*),
                                  alignof(detail::pool_chunk*));
        index_.chunks = nullptr;
        index_.capacity = 0;
    }

    // Not split into member values by GCC's IPA (noipa): the callers then test the members in
    // place (memory operands) instead of loading them into registers for this call.
#if defined(__GNUC__) && !defined(__clang__)
    __attribute__((noipa))
#endif
    RTMEM_NOINLINE void*
    reject(std::size_t size, std::size_t align) const noexcept {
        if (!is_pow2(align) || align > block_align_)
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu: blocks are aligned to %zu", align, block_align_);
        else
            report_violation(violation_kind::bad_size, name, nullptr, size,
                             "%zu bytes requested from a pool of %zu-byte blocks", size,
                             block_size_);
        return nullptr;
    }

    // O(log chunks): the buffer form has its one chunk, a growing pool binary-searches the index.
    detail::pool_block_ref find_block(const void* p) const noexcept {
        detail::pool_chunk* c = index_.size == 0 ? chunks_ : index_.find(p);
        return c == nullptr ? detail::pool_block_ref{} : c->locate(p, stride_);
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

    void release_chunks() noexcept {
        while (chunks_ != nullptr) {
            auto* c = chunks_;
            chunks_ = c->next;
            if (c->upstream_bytes != 0 && upstream_ != nullptr) {
                detail::unpoison(c->base, c->upstream_bytes);
                upstream_->deallocate(c->base, c->upstream_bytes, alignof(detail::pool_chunk));
            } else {
                detail::unpoison(c->first, c->count * stride_);
            }
        }
        if (upstream_ != nullptr) release_index();
        index_.size = 0;
        head_ = nullptr;
        carve_ = nullptr;
    }

    void steal(pool_allocator& o) noexcept {
        head_ = std::exchange(o.head_, nullptr);
        chunks_ = std::exchange(o.chunks_, nullptr);
        index_ = std::exchange(o.index_, detail::pool_chunk_index{});
        carve_ = std::exchange(o.carve_, nullptr);
        carved_ = std::exchange(o.carved_, 0);
        upstream_ = o.upstream_;
        block_size_ = o.block_size_;
        block_align_ = o.block_align_;
        std::memcpy(size_bound_, o.size_bound_, sizeof(size_bound_));
        stride_ = o.stride_;
        per_chunk_ = o.per_chunk_;
        blocks_ = std::exchange(o.blocks_, 0);
        freed_ = std::exchange(o.freed_, 0);
        peak_ = o.peak_;
        total_ = std::exchange(o.total_, 0);
        valid_ = o.valid_;
    }

    void* head_ = nullptr;  // first free block; its first word links to the next
    // pool_counting::calls only; they share head_'s cache line.
    std::size_t total_ = 0, freed_ = 0;  // live = total_ - freed_
    detail::pool_chunk* chunks_ = nullptr;
    detail::pool_chunk* carve_ = nullptr;  // chunk whose never-used blocks go out next
    detail::pool_chunk_index index_;       // the chunks by address (growing pools only)
    Upstream* upstream_ = nullptr;
    std::size_t block_size_ = 0, block_align_ = 0, stride_ = 0, per_chunk_ = 0;
    // size_bound_[k]: 1 + the largest request at alignment 2^k (0: blocks are less aligned).
    std::size_t size_bound_[table_align_log2 + 1] = {};
    std::size_t blocks_ = 0;
    std::size_t carved_ = 0;  // blocks handed out at least once since reset: the peak live count
    std::size_t peak_ = 0;    // largest carved_ before a reset
    bool valid_ = false;
};

pool_allocator(std::span<std::byte>, std::size_t, std::size_t)->pool_allocator<>;
pool_allocator(std::span<std::byte>, std::size_t)->pool_allocator<>;

template <class Upstream, pool_counting Counting>
bool pool_allocator<Upstream, Counting>::check() const noexcept {
    std::size_t free_count = 0;
    for (void* p = head_; p != nullptr; p = detail::read_free_word(static_cast<void**>(p))) {
        auto r = find_block(p);
        bool ok = r.chunk != nullptr && r.index < r.chunk->carved && free_count < carved_;
        if constexpr (check_level >= 1) ok = ok && r.chunk->is_free(r.index);
        if (!ok) {
            report_violation(violation_kind::corrupted, name, p, block_size_,
                             "free list node %p is not a free block of this pool (after %zu)", p,
                             free_count);
            return false;
        }
        ++free_count;
    }
    if (free_count + live_count() != carved_) {
        report_violation(violation_kind::corrupted, name, nullptr, 0,
                         "%zu free + %zu live blocks, but %zu were handed out", free_count,
                         live_count(), carved_);
        return false;
    }
    return true;
}

}  // namespace rtmem
