// handle_heap: relocatable allocations addressed by handles, defragmented incrementally within a
// per-call budget (Kaltenbrunn §6.3.3; Gregory's relocatable heaps: a few blocks per frame).
//
// Blocks are reached through a handle (slot index + generation) and resolve() gives their
// current address, valid until the next defragment step. pin() keeps a block in place while a
// raw pointer to it is held. A freed handle is reported (stale_handle), never resolved.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/detail/handle_table.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// A block of a handle_heap: slot index + generation (0 = empty handle).
struct handle {
    std::uint32_t index = detail::handle_nil;
    std::uint32_t generation = 0;
    [[nodiscard]] explicit operator bool() const noexcept { return generation != 0; }
    friend bool operator==(handle, handle) noexcept = default;
};

/// Work allowed in one defragment call. A block larger than max_bytes is still moved when it is
/// the first move of a call, so a small byte budget cannot stall compaction forever.
struct defrag_budget {
    std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
    std::size_t max_blocks = std::numeric_limits<std::size_t>::max();
};

struct defrag_result {
    std::size_t blocks_moved = 0;
    std::size_t bytes_moved = 0;
    bool complete = false;  ///< no movable block has a gap before it any more
};

template <allocator Upstream = malloc_allocator>
class handle_heap {
    using entry = detail::handle_entry;
    static constexpr std::uint32_t nil = detail::handle_nil;

  public:
    static constexpr std::string_view name = "handle_heap";
    /// Every block starts and ends on this boundary (also keeps sanitizer poisoning exact).
    static constexpr std::size_t granule = 16;

    /// A heap of capacity_bytes taken from the upstream, with room for max_blocks live blocks.
    handle_heap(std::size_t capacity_bytes, std::size_t max_blocks,
                Upstream& upstream = default_upstream())
        : up_(&upstream) {
        capacity_ = align_down(capacity_bytes, granule);
        owned_ = static_cast<std::byte*>(up_->allocate(capacity_, owned_alignment));
        if (owned_ == nullptr) throw std::bad_alloc();
        init(owned_, max_blocks);
    }
    /// A heap over caller memory (the handle table still comes from the upstream).
    handle_heap(std::span<std::byte> buffer, std::size_t max_blocks,
                Upstream& upstream = default_upstream())
        : up_(&upstream) {
        std::byte* base = align_pointer_up(buffer.data(), granule);
        const auto skipped = static_cast<std::size_t>(base - buffer.data());
        capacity_ = buffer.size() > skipped ? align_down(buffer.size() - skipped, granule) : 0;
        init(base, max_blocks);
    }
    handle_heap(handle_heap&& o) noexcept
        : up_(o.up_),
          owned_(std::exchange(o.owned_, nullptr)),
          base_(std::exchange(o.base_, nullptr)),
          capacity_(std::exchange(o.capacity_, 0)),
          max_align_(o.max_align_),
          entries_(std::exchange(o.entries_, nullptr)),
          entry_count_(std::exchange(o.entry_count_, 0)),
          free_entry_(std::exchange(o.free_entry_, nil)),
          head_(std::exchange(o.head_, nil)),
          tail_(std::exchange(o.tail_, nil)),
          cursor_(std::exchange(o.cursor_, nil)),
          used_(std::exchange(o.used_, 0)),
          peak_(std::exchange(o.peak_, 0)),
          live_(std::exchange(o.live_, 0)),
          total_(std::exchange(o.total_, 0)) {}
    handle_heap& operator=(handle_heap&& o) noexcept {
        if (this != &o) {
            this->~handle_heap();
            ::new (static_cast<void*>(this)) handle_heap(std::move(o));
        }
        return *this;
    }
    handle_heap(const handle_heap&) = delete;
    handle_heap& operator=(const handle_heap&) = delete;
    ~handle_heap() {
        if (base_ != nullptr) detail::unpoison(base_, capacity_);
        up_->deallocate(entries_, entry_count_ * sizeof(entry), alignof(entry));
        up_->deallocate(owned_, capacity_, owned_alignment);
    }

    /// A block of at least size bytes aligned to align (at most max_alignment()). Empty when no
    /// gap is large enough (defragment and retry) or every handle is in use. relocate moves the
    /// block during defragmentation (default: memmove); user is passed to it.
    [[nodiscard]] handle allocate(std::size_t size, std::size_t align = default_alignment,
                                  relocate_fn relocate = nullptr, void* user = nullptr) noexcept {
        if (!is_pow2(align) || align > max_align_) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two or above %zu", align, max_align_);
            return {};
        }
        align = std::max(align, granule);
        std::size_t span = 0;
        if (!checked_align_up(std::max<std::size_t>(size, 1), granule, span) || span > capacity_)
            [[unlikely]] {
            return {};
        }
        if (free_entry_ == nil || span > capacity_ - used_) return {};
        std::uint32_t before = nil;  // the new block goes right after `before` (nil: at the head)
        std::size_t offset = 0;
        if (!find_gap(span, align, before, offset)) return {};

        const std::uint32_t i = free_entry_;
        entry& e = entries_[i];
        free_entry_ = e.next;
        e.offset = offset;
        e.size = size;
        e.span = span;
        e.relocate = relocate;
        e.user = user;
        e.pins = 0;
        e.align = static_cast<std::uint32_t>(align);
        ++e.generation;
        link_after(before, i);
        detail::unpoison(base_ + offset, span);
        used_ += span;
        peak_ = std::max(peak_, used_);
        ++live_;
        ++total_;
        return {i, e.generation};
    }

    /// Frees a block. A stale or empty handle is a stale_handle violation and changes nothing.
    void free(handle h) noexcept {
        const std::uint32_t i = index_of(h, "free");
        if (i == nil) return;
        entry& e = entries_[i];
        const std::uint32_t next = e.next;
        if (cursor_ == nil || cursor_ == i || e.offset < entries_[cursor_].offset) cursor_ = next;
        unlink(i);
        detail::poison(base_ + e.offset, e.span);
        used_ -= e.span;
        --live_;
        ++e.generation;
        e.next = free_entry_;
        free_entry_ = i;
    }

    /// The block's current address (until the next defragment step), or nullptr with a
    /// stale_handle violation when the handle was freed.
    [[nodiscard]] void* resolve(handle h) const noexcept {
        const std::uint32_t i = index_of(h, "resolve");
        return i == nil ? nullptr : base_ + entries_[i].offset;
    }
    template <class T>
    [[nodiscard]] T* resolve_as(handle h) const noexcept {
        return static_cast<T*>(resolve(h));
    }
    /// Whether the handle refers to a live block (no violation).
    [[nodiscard]] bool valid(handle h) const noexcept {
        return h.index < entry_count_ && entries_[h.index].live() &&
               entries_[h.index].generation == h.generation;
    }
    [[nodiscard]] std::size_t size_of(handle h) const noexcept {
        const std::uint32_t i = index_of(h, "size_of");
        return i == nil ? 0 : entries_[i].size;
    }

    /// Keeps the block in place (pins nest) and returns its address, stable until unpinned.
    void* pin(handle h) noexcept {
        const std::uint32_t i = index_of(h, "pin");
        if (i == nil) return nullptr;
        ++entries_[i].pins;
        return base_ + entries_[i].offset;
    }
    void unpin(handle h) noexcept {
        const std::uint32_t i = index_of(h, "unpin");
        if (i == nil) return;
        entry& e = entries_[i];
        if (e.pins == 0) [[unlikely]] {
            report_violation(violation_kind::bad_argument, name, base_ + e.offset, e.size,
                             "unpin of block %u that is not pinned", i);
            return;
        }
        if (--e.pins == 0 && (cursor_ == nil || e.offset < entries_[cursor_].offset))
            cursor_ = i;  // it may have a gap before it that it could not close while pinned
    }
    [[nodiscard]] bool pinned(handle h) const noexcept {
        return valid(h) && entries_[h.index].pins != 0;
    }

    /// Moves live blocks toward the start of the heap, lowest first, within the budget. Pinned
    /// blocks stay and later blocks compact up to them. Resumes where the last call stopped, so
    /// calling it once per frame spreads compaction over frames.
    defrag_result defragment(defrag_budget budget = {}) noexcept {
        defrag_result r;
        std::uint32_t i = cursor_;
        while (i != nil) {
            entry& e = entries_[i];
            const std::size_t prev_end = e.prev == nil ? 0 : entries_[e.prev].end();
            const std::size_t target = align_up(prev_end, e.align);
            const bool movable = target < e.offset && e.pins == 0 &&
                                 (e.relocate == nullptr || target + e.span <= e.offset);
            if (movable) {
                if (r.blocks_moved + 1 > budget.max_blocks ||
                    (r.blocks_moved > 0 && r.bytes_moved + e.span > budget.max_bytes)) {
                    cursor_ = i;
                    return r;
                }
                move_block(e, target);
                ++r.blocks_moved;
                r.bytes_moved += e.span;
            }
            i = e.next;
        }
        cursor_ = nil;
        r.complete = true;
        if constexpr (check_level >= 2)
            (void)check();  // expensive walk: only at the highest check level
        return r;
    }

    /// Largest block allocate() could place right now (with the heap's granule alignment).
    [[nodiscard]] std::size_t largest_free_block() const noexcept {
        std::size_t best = 0;
        std::size_t prev_end = 0;
        for (std::uint32_t i = head_; i != nil; i = entries_[i].next) {
            best = std::max(best, entries_[i].offset - prev_end);
            prev_end = entries_[i].end();
        }
        return std::max(best, capacity_ - prev_end);
    }
    [[nodiscard]] std::size_t free_bytes() const noexcept { return capacity_ - used_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t max_blocks() const noexcept { return entry_count_; }
    [[nodiscard]] std::size_t max_alignment() const noexcept { return max_align_; }
    [[nodiscard]] rtmem::stats stats() const noexcept {
        return {capacity_, used_, peak_, live_, total_};
    }

    /// Walks every invariant (address order, no overlap, accounting, cursor on a live block);
    /// false and a `corrupted` violation when one is broken.
    [[nodiscard]] bool check() const noexcept {
        std::size_t prev_end = 0;
        std::size_t count = 0;
        std::size_t used = 0;
        bool cursor_seen = cursor_ == nil;
        std::uint32_t prev = nil;
        for (std::uint32_t i = head_; i != nil; prev = i, i = entries_[i].next) {
            const entry& e = entries_[i];
            if (!e.live() || e.prev != prev || e.offset < prev_end || e.end() > capacity_ ||
                e.offset % e.align != 0 || ++count > live_) {
                report_violation(violation_kind::corrupted, name, base_ + e.offset, e.span,
                                 "block list broken at block %u", i);
                return false;
            }
            cursor_seen = cursor_seen || i == cursor_;
            prev_end = e.end();
            used += e.span;
        }
        if (prev != tail_ || count != live_ || used != used_ || !cursor_seen) {
            report_violation(violation_kind::corrupted, name, base_, used,
                             "accounting differs: %zu blocks and %zu bytes found, %zu and %zu "
                             "recorded",
                             count, used, live_, used_);
            return false;
        }
        return true;
    }

  private:
    static constexpr std::size_t owned_alignment = 4096;  // blocks may ask for up to a page

    static Upstream& default_upstream() noexcept {
        static Upstream instance;
        return instance;
    }

    void init(std::byte* base, std::size_t max_blocks) {
        if (max_blocks == 0 || max_blocks >= nil) throw std::bad_alloc();
        base_ = base;
        const auto addr = reinterpret_cast<std::uintptr_t>(base);
        max_align_ = std::min<std::size_t>(addr & (~addr + 1), 4096);
        std::size_t bytes = 0;
        if (!checked_mul(max_blocks, sizeof(entry), bytes)) throw std::bad_alloc();
        entries_ = static_cast<entry*>(up_->allocate(bytes, alignof(entry)));
        if (entries_ == nullptr) {
            up_->deallocate(owned_, capacity_, owned_alignment);
            throw std::bad_alloc();
        }
        entry_count_ = max_blocks;
        for (std::size_t k = 0; k < max_blocks; ++k) {
            ::new (static_cast<void*>(entries_ + k)) entry{};
            entries_[k].next = k + 1 < max_blocks ? static_cast<std::uint32_t>(k + 1) : nil;
        }
        free_entry_ = 0;
        detail::poison(base_, capacity_);
    }

    /// First fit: the tail first (O(1), where compacted heaps allocate), then the gaps in
    /// address order.
    bool find_gap(std::size_t span, std::size_t align, std::uint32_t& before,
                  std::size_t& offset) const noexcept {
        const std::size_t tail_end = tail_ == nil ? 0 : entries_[tail_].end();
        std::size_t at = align_up(tail_end, align);
        if (at >= tail_end && at <= capacity_ && span <= capacity_ - at) {
            before = tail_, offset = at;
            return true;
        }
        std::size_t prev_end = 0;
        std::uint32_t prev = nil;
        for (std::uint32_t i = head_; i != nil; prev = i, i = entries_[i].next) {
            at = align_up(prev_end, align);
            if (at + span <= entries_[i].offset) {
                before = prev, offset = at;
                return true;
            }
            prev_end = entries_[i].end();
        }
        return false;
    }

    void link_after(std::uint32_t before, std::uint32_t i) noexcept {
        entry& e = entries_[i];
        e.prev = before;
        e.next = before == nil ? head_ : entries_[before].next;
        (e.prev == nil ? head_ : entries_[e.prev].next) = i;
        (e.next == nil ? tail_ : entries_[e.next].prev) = i;
    }

    void unlink(std::uint32_t i) noexcept {
        entry& e = entries_[i];
        (e.prev == nil ? head_ : entries_[e.prev].next) = e.next;
        (e.next == nil ? tail_ : entries_[e.next].prev) = e.prev;
    }

    void move_block(entry& e, std::size_t target) noexcept {
        std::byte* src = base_ + e.offset;
        std::byte* dst = base_ + target;
        detail::unpoison(dst, e.span);
        if (e.relocate == nullptr) {
            std::memmove(dst, src, e.span);
        } else {
            e.relocate(dst, src, e.size, e.user);
        }
        std::byte* vacated = std::max(dst + e.span, src);
        detail::poison(vacated, static_cast<std::size_t>(src + e.span - vacated));
        e.offset = target;
    }

    /// The entry of a live handle, or nil after a stale_handle violation.
    std::uint32_t index_of(handle h, const char* what) const noexcept {
        if (valid(h)) [[likely]]
            return h.index;
        report_violation(violation_kind::stale_handle, name, nullptr, h.index,
                         "%s of handle {slot %u, generation %u} that is freed or empty", what,
                         h.index, h.generation);
        return nil;
    }

    Upstream* up_;
    std::byte* owned_ = nullptr;
    std::byte* base_ = nullptr;
    std::size_t capacity_ = 0;
    std::size_t max_align_ = granule;
    entry* entries_ = nullptr;
    std::size_t entry_count_ = 0;
    std::uint32_t free_entry_ = nil;
    std::uint32_t head_ = nil;
    std::uint32_t tail_ = nil;
    std::uint32_t cursor_ = nil;  ///< lowest block that may have a gap before it
    std::size_t used_ = 0;
    std::size_t peak_ = 0;
    std::size_t live_ = 0;
    std::size_t total_ = 0;
};

}  // namespace rtmem
