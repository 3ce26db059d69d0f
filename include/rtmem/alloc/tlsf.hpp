// tlsf_allocator: Two-Level Segregated Fit, a general-purpose allocator with O(1) allocate and
// free and no loop whose length depends on the heap (Masmano, Ripoll, Crespo, Real 2004).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "rtmem/alloc/fragmentation.hpp"
#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/sanitizer.hpp"
#include "rtmem/detail/tlsf_block.hpp"

namespace rtmem {

/// TLSF over one or more caller-provided pools. Free blocks sit in 33 x 32 segregated lists
/// (first level: power of two; second level: 32 linear steps), found with two find-first-set
/// instructions; freed blocks coalesce immediately with both neighbours through boundary tags.
/// Allocated blocks cost one word, and every pointer is 16-aligned like malloc's. Requests are
/// rounded up to the next class, so any block in the chosen list fits (good fit, no list walk).
///
/// Front cache (off unless a depth is set): up to `depth` freed blocks per exact block size
/// (16-byte bins, blocks up to cache_max_block) are parked in LIFO lists instead of coalescing,
/// and a request of that size takes one back with a pop: glibc's tcache idea, in front of TLSF.
/// Both paths stay O(1); parked blocks count as free in fragmentation() and not in stats(). When
/// the lists cannot serve a request, the cache is flushed into them (O(bins x depth)) and the
/// request retried, so the cache never makes an allocation fail.
///
/// Checks (check level >= 1), all O(pools): a pointer outside every pool or not a block start
/// (foreign_pointer), a block already free or parked (double_free), a size larger than the block
/// (size_mismatch). Freed memory is poisoned for ASan (all but the header words).
class tlsf_allocator {
  public:
    static constexpr std::string_view name = "tlsf_allocator";
    using block = detail::tlsf_block;
    using classes = detail::tlsf_classes;

    tlsf_allocator() noexcept = default;
    explicit tlsf_allocator(std::span<std::byte> pool, unsigned cache_depth = 0) noexcept {
        add_pool(pool);
        set_cache_depth(cache_depth);
    }
    tlsf_allocator(tlsf_allocator&& o) noexcept;
    tlsf_allocator& operator=(tlsf_allocator&& o) noexcept;
    tlsf_allocator(const tlsf_allocator&) = delete;
    tlsf_allocator& operator=(const tlsf_allocator&) = delete;
    ~tlsf_allocator();

    /// Adds caller memory (at least pool_overhead + 24 bytes; used up to max_pool_bytes). The
    /// memory must outlive the allocator. False (and bad_argument) when too small.
    bool add_pool(std::span<std::byte> memory) noexcept;
    /// Bytes a pool spends on bookkeeping (pool record, first header, end sentinel).
    static constexpr std::size_t pool_overhead = 96;
    static constexpr std::size_t max_pool_bytes = classes::max_block;

    /// Blocks of up to this many bytes (requests up to this size) can be parked in the front
    /// cache; one bin per block size, sizes being 8 mod 16.
    static constexpr std::size_t cache_max_block = 2040;
    static constexpr unsigned cache_bins = cache_max_block / 16 + 1;
    static constexpr unsigned max_cache_depth = 64;
    /// Parks up to `depth` freed blocks per size (0: off, every free coalesces at once). More
    /// than max_cache_depth is clamped (bad_argument). Lowering the depth flushes the cache.
    void set_cache_depth(unsigned depth) noexcept;
    [[nodiscard]] unsigned cache_depth() const noexcept { return cache_depth_; }
    /// Frees every parked block into the lists (coalescing). O(bins x depth). True if any was.
    bool flush_cache() noexcept;
    /// Blocks parked in the front cache.
    [[nodiscard]] std::size_t cached_blocks() const noexcept { return parked_; }

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        if (size > classes::max_block || !is_pow2(align)) [[unlikely]]
            return reject(size, align);
        const std::size_t adjusted = classes::block_size_for(size);
        if (align > classes::user_align) [[unlikely]]
            return allocate_aligned(size, adjusted, align);
        // The top is never cached while blocks are parked (see park()): a parked block of the
        // request's size is taken before the heap grows, and with the cache off this path is
        // the plain top test.
        if (adjusted + block::overhead <= top_room_ && top_is_lowest()) [[likely]]
            return carve_top(adjusted, size);
        if (adjusted <= cache_max_block) {
            if (block* c = cache_[adjusted >> 4]; c != nullptr) return take_cached(c, size);
        }
        unsigned fl = 0, sl = 0;
        block* b = find_free(adjusted, fl, sl);
        if (b == nullptr) [[unlikely]]
            return allocate_after_flush(size, align);
        detail::unpoison(b->user(), b->size());
        const std::size_t flags = b->size_flags;
        const std::size_t whole = flags & ~block::flag_bits;
        if (whole >= adjusted + sizeof(block)) {
            // Split off the tail. When the tail maps to the list b came from (a big block
            // shrinking by a small request: the common case) it takes b's place in that list:
            // no unlink, no bitmap update, no insert.
            const std::size_t rest_size = whole - adjusted - block::overhead;
            block* rest = cut_tail(b, adjusted, rest_size, flags & block::prev_free_bit);
            unsigned rfl = 0, rsl = 0;
            classes::insert_index(rest_size, rfl, rsl);
            if (rfl == fl && rsl == sl) [[likely]] {
                replace_free(b, rest, fl, sl);
                poison_free(rest);
            } else {
                remove_head(b, fl, sl);
                insert_free(rest, rfl, rsl);
            }
            set_top(rest, rest_size, rfl, rsl);
            account_allocate(adjusted, size);
        } else {
            drop_top_if(b);
            remove_head(b, fl, sl);
            b->size_flags = flags & ~block::this_free_bit;
            b->next_phys()->set_prev_free(false);
            account_allocate(whole, size);
        }
        return b->user();
    }

    /// `count` (>= 1) adjacent live blocks of `block_size` bytes (a block size: 8 mod 16, >= 24)
    /// from one search and one split: what `count` allocate calls would give, at the cost of one
    /// plus a header store per block. Returns the first block, which may be larger than
    /// block_size (it takes a tail too small to split off); each further block starts where the
    /// previous one ends (usable_size + block::overhead after it). nullptr when no free block
    /// holds the run. For a front end that lists the rest (rt_heap's size-class lists).
    [[nodiscard]] void* allocate_run(std::size_t block_size, unsigned count) noexcept;

    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t size,
                                        std::size_t align = default_alignment) noexcept {
        (void)align;
        if (p == nullptr) return;
        if constexpr (check_level >= 1) {
            if (!valid_live_block(p, size, "deallocate")) return;
        }
        block* b = block::from_user(p);
        const std::size_t flags = b->size_flags;
        const std::size_t whole = flags & ~block::flag_bits;
        account_free(whole, size);
        if (cache_depth_ != 0 && whole <= cache_max_block) {
            const std::size_t bin = whole >> 4;
            if (cache_count_[bin] < cache_depth_) return park(b, flags, bin);
        }
        free_to_lists(b, flags);
    }

    /// Resizes a live block of `old_size` requested bytes to `new_size`: in place when shrinking
    /// or when the next block is free and big enough, else allocate + copy + free. Returns
    /// nullptr (and leaves the block untouched) when no memory is left. reallocate(nullptr, ...)
    /// allocates.
    [[nodiscard]] void* reallocate(void* p, std::size_t old_size, std::size_t new_size,
                                   std::size_t align = default_alignment) noexcept;

    /// Whether p points into one of the pools' block areas. O(pools).
    [[nodiscard]] bool owns(const void* p) const noexcept;
    /// deallocate's checks without the free: p starts a live block of at least `size` bytes
    /// (else reported as foreign_pointer, double_free or size_mismatch, and false). O(pools).
    /// For a front end that keeps blocks TLSF sees as live (rt_heap's size-class lists).
    [[nodiscard]] bool valid_live(const void* p, std::size_t size, const char* op) const noexcept {
        return valid_live_block(p, size, op);
    }
    /// Bytes the block at p can hold (its size, >= what was requested).
    [[nodiscard]] static std::size_t usable_size(const void* p) noexcept {
        return block::from_user(p)->size();
    }

    /// capacity: bytes of every pool's blocks (one header word each included); used: held by
    /// live blocks (size + header word).
    [[nodiscard]] rtmem::stats stats() const noexcept {
        return rtmem::stats{capacity_, used_, peak_used_, live_, total_};
    }
    /// Requested vs held bytes, free bytes, largest free block. O(free blocks).
    [[nodiscard]] rtmem::fragmentation fragmentation() const noexcept;
    /// The largest request (at alignment 8) that can succeed right now. O(one list).
    [[nodiscard]] std::size_t largest_free_block() const noexcept;

    /// Walks every pool and every free list: physical neighbours agree on boundary tags and free
    /// flags, no two free blocks are adjacent, each free block is in exactly the list its size
    /// maps to, bitmaps match the lists, and the byte accounting adds up. O(blocks).
    [[nodiscard]] bool check() const noexcept;

    /// Calls f(const void* user_pointer, std::size_t size, bool used) for every block in
    /// address order, pool by pool (a heap dump). Blocks parked in the front cache are not used.
    template <class F>
    void walk(F&& f) const {
        for (const pool_record* r = pools_; r != nullptr; r = r->next) {
            for (block* b = r->first; !b->is_last(); b = b->next_phys())
                f(static_cast<const void*>(b->user()), b->size(), !b->is_free() && !b->is_cached());
        }
    }

  private:
    // Front cache: a parked block keeps its header (flagged cached, so its neighbours treat it as
    // used and never merge with it) and links to the next parked block of its size through its
    // first user word. Bin = block size / 16: exact sizes, so a pop always fits. While any
    // block is parked there is no cached top (invariant parked_ != 0 => top_ == nullptr), so the
    // top fast path, tested first, cannot grow the heap past a parked block of the right size.
    RTMEM_ALWAYS_INLINE void park(block* b, std::size_t flags, std::size_t bin) noexcept {
        b->next_free = cache_[bin];
        cache_[bin] = b;
        ++cache_count_[bin];
        ++parked_;
        drop_top();
        b->size_flags = flags | block::cached_bit;
        // The link word and the last word (the next header's prev_phys, read by checks) stay
        // readable, as in poison_free.
        detail::poison(b->user() + block::slot, (flags & ~block::flag_bits) - 2 * block::slot);
    }

    // The one block size cache bin `bin` holds (block sizes are 8 mod 16).
    static constexpr std::size_t cache_bin_size(unsigned bin) noexcept {
        return std::size_t{bin} * 16 + classes::align;
    }

    RTMEM_ALWAYS_INLINE void* take_cached(block* c, std::size_t requested) noexcept {
        const std::size_t flags = c->size_flags;
        const std::size_t whole = flags & ~block::flag_bits;
        const std::size_t bin = whole >> 4;
        detail::unpoison(c->user(), whole);
        cache_[bin] = c->next_free;
        --cache_count_[bin];
        --parked_;
        c->size_flags = flags & ~block::cached_bit;
        account_allocate(whole, requested);
        return c->user();
    }

    // The TLSF free of a block whose accounting is done: coalesce with free neighbours, insert.
    RTMEM_ALWAYS_INLINE void free_to_lists(block* b, std::size_t flags) noexcept {
        std::size_t merged = flags & ~block::flag_bits;
        block* next = b->next_phys();
        unsigned fl = 0, sl = 0;
        // A free block growing by a small neighbour mostly stays in its size class: then the
        // merged block keeps that block's place in its list (no unlink, no bitmap update, no
        // insert). FIFO frees and a heap top being given back take this path.
        if (flags & block::prev_free_bit) {  // coalesce backward through the boundary tag
            if (next->is_free()) {
                drop_top_if(next);
                remove_free(next);
                merged += next->size() + block::overhead;
            }
            block* prev = b->prev_phys;
            const std::size_t prev_size = prev->size();
            merged += prev_size + block::overhead;
            prev->size_flags = merged | block::this_free_bit;  // its prev is never free
            prev->link_next()->size_flags |= block::prev_free_bit;
            if (classes::same_class(prev_size, merged)) [[likely]] {
                if (prev == top_) top_room_ += merged - prev_size;  // the top grew in its class
                poison_free(prev);
                return;
            }
            unsigned pfl = 0, psl = 0;
            classes::insert_index(prev_size, pfl, psl);
            classes::insert_index(merged, fl, sl);
            drop_top_if(prev);
            unlink_free(prev, pfl, psl);
            b = prev;
        } else if (next->is_free()) {  // coalesce forward: b takes next's place if it can
            const std::size_t next_size = next->size();
            merged += next_size + block::overhead;
            block* next_next = next->next_free;
            block* next_prev = next->prev_free;
            b->size_flags = merged | block::this_free_bit;
            b->link_next();  // already flagged: a free block preceded it
            unsigned nfl = 0, nsl = 0;
            classes::insert_index(next_size, nfl, nsl);
            if (classes::same_class(next_size, merged)) [[likely]] {
                take_place(b, next_prev, next_next, nfl, nsl);
                if (next == top_) {  // the top grows down over b and stays in its class
                    top_ = b;
                    top_room_ += merged - next_size;
                }
                poison_free(b);
                return;
            }
            drop_top_if(next);
            b->prev_free = next_prev;  // unlink_free reads next's links through b
            b->next_free = next_next;
            unlink_free(b, nfl, nsl);
            classes::insert_index(merged, fl, sl);
        } else {
            classes::insert_index(merged, fl, sl);
            b->size_flags = merged | block::this_free_bit;
            b->link_next()->size_flags |= block::prev_free_bit;
        }
        insert_free(b, fl, sl);
    }

    struct pool_record {  // lives at the start of each pool; slots as in block
        alignas(block::slot) pool_record* next;
        alignas(block::slot) block* first;
        alignas(block::slot) std::byte* begin;  // first byte of the first block's size slot
        alignas(block::slot) std::byte* end;    // one past the sentinel
    };

    // The top: the free block the last split in allocate left behind (the remainder), cached
    // with its size class so the next request can be carved from its front without a search,
    // a class computation or a list unlink/insert. Policy (keeps TLSF's good fit): the top is
    // used only when (1) the request fits with a remainder that stays in the top's class
    // (adjusted + overhead <= top_room_ = top size - smallest size of its class), and (2) every
    // free list below the top's list is empty (two masked bitmap tests). Then find_free would
    // have chosen the top's list, or, when the request's rounded-up class lies above the top's
    // class, a list of larger blocks: the top is never a worse fit than TLSF's own choice.
    // Invariant (check()): top_ == nullptr and top_room_ == 0 (no top), or top_ is a free block
    // in list (top_fl_, top_sl_) and top_room_ == top_->size() - class_floor(top_fl_, top_sl_).
    // Every path that takes or merges a free block drops the top when it is that block, except
    // free merging into the top without changing its class: the top grows (and may move down).
    [[nodiscard]] RTMEM_ALWAYS_INLINE bool top_is_lowest() const noexcept {
        return ((fl_bitmap_ & top_fl_below_) | (sl_bitmap_[top_fl_] & top_sl_below_)) == 0;
    }

    RTMEM_ALWAYS_INLINE void* carve_top(std::size_t adjusted, std::size_t requested) noexcept {
        block* t = top_;
        const std::size_t whole = t->size();
        detail::unpoison(t->user(), whole);
        block* prev = t->prev_free;
        block* next = t->next_free;
        // A free block's prev is never free: t, now used, keeps no flag.
        block* rest = cut_tail(t, adjusted, whole - adjusted - block::overhead, 0);
        take_place(rest, prev, next, top_fl_, top_sl_);
        poison_free(rest);
        top_ = rest;
        top_room_ -= adjusted + block::overhead;
        account_allocate(adjusted, requested);
        return t->user();
    }

    // The smallest block size of list (fl, sl).
    static constexpr std::size_t class_floor(unsigned fl, unsigned sl) noexcept {
        return fl == 0 ? std::size_t{sl} * (classes::small_block / classes::sl_count)
                       : std::size_t{sl | classes::sl_count}
                             << (fl + classes::fl_shift - 1 - classes::sl_log2);
    }

    RTMEM_ALWAYS_INLINE void set_top(block* b, std::size_t size, unsigned fl,
                                     unsigned sl) noexcept {
        if (parked_ != 0) return;  // see park()
        top_ = b;
        // size - class_floor(fl, sl): the bits below the class step (a class of first level 0
        // holds one size: no room).
        top_room_ = size & (fl == 0 ? 0 : (std::size_t{4} << fl) - 1);
        top_fl_ = fl;
        top_sl_ = sl;
        top_fl_below_ = (classes::fl_map{1} << fl) - 1;
        top_sl_below_ = (std::uint32_t{1} << sl) - 1;
    }

    RTMEM_ALWAYS_INLINE void drop_top_if(const block* b) noexcept {
        if (b == top_) drop_top();
    }
    void drop_top() noexcept {
        top_ = nullptr;
        top_room_ = 0;
    }

    // Finds, in O(1), the head of the first non-empty list whose blocks all hold `adjusted`
    // bytes, and its list (fl, sl). nullptr when none.
    RTMEM_ALWAYS_INLINE block* find_free(std::size_t adjusted, unsigned& fl,
                                         unsigned& sl) noexcept {
        classes::search_index(adjusted, fl, sl);
        if (fl >= classes::fl_count) [[unlikely]]
            return nullptr;
        std::uint32_t sl_map = sl_bitmap_[fl] & (~std::uint32_t{0} << sl);
        if (sl_map == 0) {
            const classes::fl_map fl_map = fl_bitmap_ & (~classes::fl_map{0} << (fl + 1));
            if (fl_map == 0) [[unlikely]]
                return nullptr;
            fl = static_cast<unsigned>(std::countr_zero(fl_map));
            sl_map = sl_bitmap_[fl];
        }
        sl = static_cast<unsigned>(std::countr_zero(sl_map));
        return heads_[fl][sl];
    }

    // find_free, then unlinks the block. nullptr when none.
    RTMEM_ALWAYS_INLINE block* take_free(std::size_t adjusted) noexcept {
        unsigned fl = 0, sl = 0;
        block* b = find_free(adjusted, fl, sl);
        if (b == nullptr) return nullptr;
        remove_head(b, fl, sl);
        detail::unpoison(b->user(), b->size());
        return b;
    }

    // b goes into list (fl, sl) where a block linked to prev/next was (same position).
    RTMEM_ALWAYS_INLINE void take_place(block* b, block* prev, block* next, unsigned fl,
                                        unsigned sl) noexcept {
        b->prev_free = prev;
        b->next_free = next;
        if (prev != nullptr)
            prev->next_free = b;
        else
            heads_[fl][sl] = b;
        if (next != nullptr) next->prev_free = b;
    }

    // The head b of list (fl, sl) is replaced by `with` (same list, same position).
    RTMEM_ALWAYS_INLINE void replace_free(block* b, block* with, unsigned fl,
                                          unsigned sl) noexcept {
        block* next = b->next_free;
        with->next_free = next;
        with->prev_free = nullptr;
        if (next != nullptr) next->prev_free = with;
        heads_[fl][sl] = with;
    }

    // The one split of every path: b keeps `adjusted` bytes and `b_flags` (so it is used); the
    // tail of rest_size bytes after it becomes a free block with its boundary tag set (its next
    // already knows a free block precedes it). Returns the tail, in no list yet.
    RTMEM_ALWAYS_INLINE static block* cut_tail(block* b, std::size_t adjusted,
                                               std::size_t rest_size,
                                               std::size_t b_flags) noexcept {
        auto* rest = reinterpret_cast<block*>(b->user() + adjusted - block::overhead);
        rest->size_flags = rest_size | block::this_free_bit;
        b->size_flags = adjusted | b_flags;
        rest->link_next();
        return rest;
    }

    RTMEM_ALWAYS_INLINE void insert_free(block* b) noexcept {
        unsigned fl = 0, sl = 0;
        classes::insert_index(b->size(), fl, sl);
        insert_free(b, fl, sl);
    }

    // The header words (and the boundary tag at the end) stay readable; the rest is freed.
    static void poison_free(block* b) noexcept {
        detail::poison(b->user() + 2 * block::slot, b->size() - 3 * block::slot);
    }

    // Inserts b at the head of list (fl, sl), which must be the list of b's size.
    RTMEM_ALWAYS_INLINE void insert_free(block* b, unsigned fl, unsigned sl) noexcept {
        block* head = heads_[fl][sl];
        b->next_free = head;
        b->prev_free = nullptr;
        if (head != nullptr) head->prev_free = b;
        heads_[fl][sl] = b;
        fl_bitmap_ |= classes::fl_map{1} << fl;
        sl_bitmap_[fl] |= std::uint32_t{1} << sl;
        poison_free(b);
    }

    RTMEM_ALWAYS_INLINE void remove_head(block* b, unsigned fl, unsigned sl) noexcept {
        block* next = b->next_free;
        heads_[fl][sl] = next;
        if (next != nullptr) {
            next->prev_free = nullptr;
        } else {
            sl_bitmap_[fl] &= ~(std::uint32_t{1} << sl);
            if (sl_bitmap_[fl] == 0) fl_bitmap_ &= ~(classes::fl_map{1} << fl);
        }
    }

    RTMEM_ALWAYS_INLINE void remove_free(block* b) noexcept {
        if (b->prev_free == nullptr) {
            unsigned fl = 0, sl = 0;
            classes::insert_index(b->size(), fl, sl);
            return remove_head(b, fl, sl);
        }
        b->prev_free->next_free = b->next_free;
        if (b->next_free != nullptr) b->next_free->prev_free = b->prev_free;
    }

    // remove_free when b's list (fl, sl) is already known.
    RTMEM_ALWAYS_INLINE void unlink_free(block* b, unsigned fl, unsigned sl) noexcept {
        if (b->prev_free == nullptr) return remove_head(b, fl, sl);
        b->prev_free->next_free = b->next_free;
        if (b->next_free != nullptr) b->next_free->prev_free = b->prev_free;
    }

    RTMEM_ALWAYS_INLINE void account_allocate(std::size_t size, std::size_t requested) noexcept {
        used_ += size + block::overhead;
        if (used_ > peak_used_) peak_used_ = used_;
        requested_ += requested;
        ++live_;
        ++total_;
    }
    RTMEM_ALWAYS_INLINE void account_free(std::size_t size, std::size_t requested) noexcept {
        used_ -= size + block::overhead;
        requested_ -= requested < requested_ ? requested : requested_;
        --live_;
    }

    // Cold paths (tlsf.cpp).
    void* allocate_aligned(std::size_t size, std::size_t adjusted, std::size_t align) noexcept;
    void* hand_out(block* b, std::size_t adjusted, std::size_t requested) noexcept;
    block* merge_next(block* b) noexcept;
    void* allocate_after_flush(std::size_t size, std::size_t align) noexcept;
    void* reject(std::size_t size, std::size_t align) const noexcept;
    bool valid_live_block(const void* p, std::size_t size, const char* op) const noexcept;
    const pool_record* pool_of(const void* p) const noexcept;
    bool fail(const char* what, const void* where) const noexcept;
    void steal(tlsf_allocator& o) noexcept;

    classes::fl_map fl_bitmap_ = 0;
    std::uint32_t sl_bitmap_[classes::fl_count] = {};
    block* heads_[classes::fl_count][classes::sl_count] = {};
    pool_record* pools_ = nullptr;
    std::size_t capacity_ = 0, used_ = 0, peak_used_ = 0, requested_ = 0;
    std::size_t live_ = 0, total_ = 0;
    block* top_ = nullptr;  // see top_is_lowest()
    std::size_t top_room_ = 0;
    classes::fl_map top_fl_below_ = 0;
    std::uint32_t top_sl_below_ = 0;
    unsigned top_fl_ = 0, top_sl_ = 0;
    block* cache_[cache_bins] = {};  // see park()
    std::uint8_t cache_count_[cache_bins] = {};
    unsigned cache_depth_ = 0;
    std::size_t parked_ = 0;  // sum of cache_count_
};

}  // namespace rtmem
