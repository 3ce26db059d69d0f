// rt_heap_front: the size-class free lists in front of an rt_heap thread heap's TLSF. A block its
// owner frees is pushed onto the list of its exact block size; an allocate of that size pops it.
// Both are a handful of instructions (mimalloc's free-list pop and push), and every list holds at
// most a fixed number of blocks, so the memory held back and the work to give it back to TLSF are
// bounded. Blocks on these lists are allocated as far as TLSF is concerned.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rtmem/core/config.hpp"
#include "rtmem/detail/remote_free_list.hpp"
#include "rtmem/detail/sanitizer.hpp"
#include "rtmem/detail/tlsf_block.hpp"

namespace rtmem::detail {

class rt_heap_front {
  public:
    using block = tlsf_block;
    /// Largest block size with a list (TLSF block sizes are 8 mod 16: one list per 16 bytes).
    static constexpr std::size_t max_block = 2040;
    /// Largest request served from the lists: its TLSF block is max_block.
    static constexpr std::size_t max_request = max_block - tlsf_block::slot;
    static constexpr unsigned classes = max_block / 16 + 1;

    /// Blocks of `block_size` bytes one list may hold: `depth`, fewer for large blocks so that
    /// no list holds more than `class_bytes` (but at least one block while depth > 0).
    static constexpr std::uint32_t capacity(std::size_t block_size, unsigned depth,
                                            std::size_t class_bytes) noexcept {
        if (depth == 0) return 0;
        const std::size_t by_bytes = class_bytes / block_size;
        const std::size_t n = by_bytes < depth ? by_bytes : depth;
        return static_cast<std::uint32_t>(n == 0 ? 1 : n);
    }
    /// The block size of class c (class 0 holds none: TLSF's smallest block, 24 bytes, serves
    /// requests of 0..24 bytes and is class 1).
    static constexpr std::size_t class_block(unsigned c) noexcept {
        return std::size_t{c} * 16 + tlsf_block::slot;
    }

    /// `run`: the most blocks a refill takes from TLSF at once (1: no runs); runs start at
    /// enable_runs().
    void set_depth(unsigned depth, std::size_t class_bytes, std::uint32_t run = 1) noexcept {
        depth_ = depth;
        class_bytes_ = class_bytes;
        run_ = run == 0 ? 1 : run;
        runs_on_ = false;
        for (unsigned c = 1; c < classes; ++c) {
            lists_[c].room = capacity(class_block(c), depth, class_bytes);
            lists_[c].batch = 0;
        }
    }
    /// Lets every class that can hold more than one block refill by runs, from 1 block (off
    /// until then: every miss is one TLSF block). Once per heap; O(classes).
    void enable_runs() noexcept {
        for (unsigned c = 1; c < classes; ++c)
            if (run_ > 1 && capacity_of(c) > 1 && lists_[c].batch == 0) lists_[c].batch = 1;
        runs_on_ = true;
    }
    [[nodiscard]] bool runs_on() const noexcept { return runs_on_; }

    /// Whether an allocate that finds class c's list empty goes through refill_count (false:
    /// the class never refills by runs, its list holds at most one block or runs are off).
    [[nodiscard]] RTMEM_ALWAYS_INLINE bool refills(unsigned c) const noexcept {
        return lists_[c].batch != 0;
    }

    /// The class of a request of n <= max_request bytes.
    static constexpr unsigned class_of(std::size_t n) noexcept {
        return static_cast<unsigned>(((n < 9 ? 9 : n) + 7) >> 4);
    }

    /// Blocks the next refill of class c's empty list should take from TLSF at once, the one
    /// handed out included: the class's batch (1 at first, doubled at every refill: a class
    /// allocated once holds nothing back, one allocated in bulk soon refills by `run`), at
    /// most what the list can take. 1: no run, a plain TLSF allocate. Only when refills(c).
    [[nodiscard]] std::uint32_t refill_count(unsigned c) noexcept {
        list& l = lists_[c];
        std::uint32_t n = l.batch;  // <= run_
        if (n > l.room + 1) n = l.room + 1;
        if (l.batch < run_) l.batch = l.batch > run_ / 2 ? run_ : 2 * l.batch;  // no overflow
        return n;
    }

    /// Lists the rest of a run of `count` blocks of class c (see tlsf_allocator::allocate_run)
    /// whose first, handed out, starts at `first`, in front of what the list holds (it has room:
    /// refill_count); pops then take them in address order.
    void push_run(unsigned c, void* first, std::uint32_t count) noexcept {
        const std::size_t whole = class_block(c);
        const std::size_t step = whole + tlsf_block::overhead;
        list& l = lists_[c];
        auto* p = static_cast<std::byte*>(first) + block::from_user(first)->size() +
                  tlsf_block::overhead;
        void* rest = l.head;  // attach() refills a list that may hold blocks
        l.head = p;
        l.room -= count - 1;
        for (std::uint32_t i = 1; i < count; ++i, p += step) {
            *reinterpret_cast<void**>(p) = i + 1 < count ? p + step : rest;
            listed(p, whole);
        }
    }
    /// Blocks class c can still take.
    [[nodiscard]] std::uint32_t pushes_left(unsigned c) const noexcept { return lists_[c].room; }
    [[nodiscard]] std::uint32_t capacity_of(unsigned c) const noexcept {
        return c == 0 ? 0 : capacity(class_block(c), depth_, class_bytes_);
    }

    /// A block for a request of n <= max_request bytes, or nullptr when its list is empty.
    [[nodiscard]] RTMEM_ALWAYS_INLINE void* pop(std::size_t n) noexcept {
        // == tlsf_classes::block_size_for(n) / 16; below 9 bytes that formula would give 0
        list& l = lists_[class_of(n)];
        void* p = l.head;
        if (p == nullptr) [[unlikely]]
            return nullptr;
        l.head = *static_cast<void**>(p);
        ++l.room;
        ++pops_;
        detail::unpoison(p, class_block(static_cast<unsigned>(&l - lists_)));
        if constexpr (check_level >= 1) static_cast<std::uintptr_t*>(p)[2] = 0;  // not queued
        return p;
    }

    [[nodiscard]] void* pop_class(unsigned c) noexcept { return pop(class_block(c) - 8); }

    /// Pushes the allocated block p of `whole` bytes (its TLSF size) when its list has room.
    /// False, touching nothing, when the block is too large or its list is full.
    [[nodiscard]] RTMEM_ALWAYS_INLINE bool push(void* p, std::size_t whole) noexcept {
        if (whole > max_block) [[unlikely]]
            return false;
        list& l = lists_[whole >> 4];
        if (l.room == 0) [[unlikely]]
            return false;
        --l.room;
        *static_cast<void**>(p) = l.head;
        l.head = p;
        listed(p, whole);
        return true;
    }

    /// Whether p carries the mark of a block on these lists or in a remote queue (checked
    /// builds only: a second free of it).
    [[nodiscard]] static bool marked(const void* p) noexcept {
        return static_cast<const std::uintptr_t*>(p)[2] == queued_mark(p);
    }

    /// Empties every list through free_block(p, block size). O(classes + blocks held).
    /// Refill batches start again at 1 (the heap is short of memory).
    template <class Free>
    std::size_t flush(Free&& free_block) noexcept {
        std::size_t n = 0;
        for (unsigned c = 1; c < classes; ++c) {
            if (lists_[c].batch != 0) lists_[c].batch = 1;
            while (void* p = pop_class(c)) {
                free_block(p, class_block(c));
                ++n;
            }
        }
        pops_ -= n;  // given back, not allocated
        return n;
    }

    /// Blocks held, and the TLSF bytes they take (size + header word each). O(classes).
    [[nodiscard]] std::size_t blocks() const noexcept {
        std::size_t n = 0;
        for (unsigned c = 1; c < classes; ++c) n += capacity_of(c) - lists_[c].room;
        return n;
    }
    [[nodiscard]] std::size_t bytes() const noexcept {
        std::size_t n = 0;
        for (unsigned c = 1; c < classes; ++c)
            n += (capacity_of(c) - lists_[c].room) * (class_block(c) + tlsf_block::overhead);
        return n;
    }
    /// Allocations served from the lists so far.
    [[nodiscard]] std::size_t pops() const noexcept { return pops_; }

    /// Every list ends within its capacity, holds blocks of its size with the queued mark
    /// (checked builds) and room + length == capacity; `in_heap(p)` for every block.
    template <class InHeap>
    [[nodiscard]] bool check(InHeap&& in_heap) const noexcept {
        if (lists_[0].head != nullptr || lists_[0].room != 0) return false;
        for (unsigned c = 1; c < classes; ++c) {
            const std::uint32_t cap = capacity_of(c);
            std::uint32_t n = 0;
            for (void* p = lists_[c].head; p != nullptr; p = *static_cast<void**>(p)) {
                if (++n > cap || !in_heap(p) || block::from_user(p)->size() != class_block(c))
                    return false;
                if constexpr (check_level >= 1)
                    if (!marked(p)) return false;
            }
            if (n + lists_[c].room != cap) return false;
        }
        return true;
    }

  private:
    // A block just linked onto a list: the link and the mark word stay readable (and the last
    // word, as in TLSF's free blocks: checks read it as the next header's boundary tag).
    RTMEM_ALWAYS_INLINE static void listed(void* p, std::size_t whole) noexcept {
        if (whole > 4 * tlsf_block::slot)
            detail::poison(static_cast<std::byte*>(p) + 3 * tlsf_block::slot,
                           whole - 4 * tlsf_block::slot);
        if constexpr (check_level >= 1) static_cast<std::uintptr_t*>(p)[2] = queued_mark(p);
    }

    struct list {
        void* head = nullptr;
        std::uint32_t room = 0;   // pushes left before the list is full
        std::uint32_t batch = 0;  // blocks the next refill takes (refill_count); 0: no runs
    };

    list lists_[classes] = {};
    std::size_t pops_ = 0;
    unsigned depth_ = 0;
    std::size_t class_bytes_ = 0;
    std::uint32_t run_ = 1;
    bool runs_on_ = false;
};

}  // namespace rtmem::detail
