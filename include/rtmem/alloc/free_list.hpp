// free_list_allocator<Policy>: the thesis's general-purpose allocator, kept as the readable
// reference. An address-ordered list of free blocks; allocate walks it (O(free blocks)) with a
// first-fit or best-fit policy, splits, and stores a {size, padding} header before the user
// pointer; deallocate inserts in address order and coalesces with both neighbours.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "rtmem/alloc/fragmentation.hpp"
#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// Placement policies: take the first free block that fits, or the smallest that fits.
struct first_fit {};
struct best_fit {};

/// Checks (check level >= 1): deallocate reports a pointer outside the buffer or with an
/// impossible header (foreign_pointer), a pointer inside a free block (double_free, found by the
/// address-ordered walk deallocate does anyway), and a size larger than the block
/// (size_mismatch). Free memory is poisoned for ASan beyond each free node's two words.
template <class Policy = first_fit, class Upstream = malloc_allocator>
class free_list_allocator {
    static_assert(std::is_same_v<Policy, first_fit> || std::is_same_v<Policy, best_fit>);

  public:
    static constexpr std::string_view name = "free_list_allocator";

    /// Over caller memory.
    explicit free_list_allocator(std::span<std::byte> buffer) noexcept { init(buffer); }
    /// Over `capacity` bytes taken from `upstream` (given back on destruction).
    free_list_allocator(std::size_t capacity, Upstream& upstream) noexcept : upstream_(&upstream) {
        own_mem_ = static_cast<std::byte*>(upstream.allocate(capacity, alignof(node)));
        own_bytes_ = own_mem_ == nullptr ? 0 : capacity;
        init({own_mem_, own_bytes_});
    }
    explicit free_list_allocator(std::size_t capacity) noexcept requires
        std::is_empty_v<Upstream> && std::is_default_constructible_v<Upstream>
        : free_list_allocator(capacity, default_upstream()) {}

    free_list_allocator(free_list_allocator&& o) noexcept { steal(o); }
    free_list_allocator& operator=(free_list_allocator&& o) noexcept {
        if (this != &o) {
            release();
            steal(o);
        }
        return *this;
    }
    free_list_allocator(const free_list_allocator&) = delete;
    free_list_allocator& operator=(const free_list_allocator&) = delete;
    ~free_list_allocator() { release(); }

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept {
        if (!is_pow2(align)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two", align);
            return nullptr;
        }
        if (align < alignof(node)) align = alignof(node);
        if (size > capacity_) return nullptr;  // also keeps the arithmetic below from overflowing
        node* prev = nullptr;
        node* best_prev = nullptr;
        node* best = nullptr;
        std::size_t best_need = 0, best_pad = 0;
        for (node* n = head_; n != nullptr; prev = n, n = n->next) {
            std::size_t pad = 0;
            const std::size_t need = needed(n, size, align, pad);
            if (need > n->size) continue;
            if (best == nullptr || n->size < best->size) {
                best_prev = prev, best = n, best_need = need, best_pad = pad;
                if constexpr (std::is_same_v<Policy, first_fit>) break;
                if (n->size == need) break;  // an exact fit cannot be beaten
            }
        }
        if (best == nullptr) return nullptr;
        return take(best_prev, best, best_need, best_pad, size);
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        (void)align;
        if (p == nullptr) return;
        auto* user = static_cast<std::byte*>(p);
        if (check_level >= 1 &&
            (user < begin_ + sizeof(header) || user >= end_ || !is_aligned(p, alignof(node))))
            return misuse(violation_kind::foreign_pointer, p, size, "not a block of this heap");
        // Find the free neighbours around p: the walk the insertion needs anyway.
        node* prev = nullptr;
        node* next = head_;
        while (next != nullptr && as_bytes(next) < user) prev = next, next = next->next;
        if (check_level >= 1 && prev != nullptr && as_bytes(prev) + prev->size > user - sizeof(header))
            return misuse(violation_kind::double_free, p, size, "the block is already free");
        const header h = *(reinterpret_cast<header*>(p) - 1);
        std::byte* start = user - sizeof(header) - h.padding;
        if (check_level >= 1 &&
            (h.padding >= h.size || start < begin_ ||
             h.size > static_cast<std::size_t>(end_ - start) || h.size % alignof(node) != 0 ||
             (prev != nullptr && start < as_bytes(prev) + prev->size) ||
             (next != nullptr && start + h.size > as_bytes(next))))
            return misuse(violation_kind::foreign_pointer, p, size,
                          "not the start of a live block");
        if (check_level >= 1 && size > h.size - h.padding - sizeof(header))
            return misuse(violation_kind::size_mismatch, p, size, "larger than the block");
        used_ -= h.size;
        requested_ -= size < requested_ ? size : requested_;
        --live_;
        auto* n = reinterpret_cast<node*>(start);
        n->size = h.size;
        n->next = next;
        if (next != nullptr && start + n->size == as_bytes(next)) {  // coalesce forward
            n->size += next->size;
            n->next = next->next;
        }
        if (prev != nullptr && as_bytes(prev) + prev->size == start) {  // coalesce backward
            prev->size += n->size;
            prev->next = n->next;
            n = prev;
        } else if (prev != nullptr) {
            prev->next = n;
        } else {
            head_ = n;
        }
        detail::poison(as_bytes(n) + sizeof(node), n->size - sizeof(node));
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        return b >= begin_ && b < end_;
    }

    /// Frees every block: the heap is one free block again.
    void reset() noexcept {
        head_ = nullptr;
        used_ = requested_ = live_ = 0;
        if (capacity_ == 0) return;
        detail::unpoison(begin_, capacity_);
        head_ = reinterpret_cast<node*>(begin_);
        head_->size = capacity_;
        head_->next = nullptr;
        detail::poison(begin_ + sizeof(node), capacity_ - sizeof(node));
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        return rtmem::stats{capacity_, used_, peak_, live_, total_};
    }

    /// Requested vs held bytes of live blocks, free bytes and the largest free block. O(free).
    [[nodiscard]] rtmem::fragmentation fragmentation() const noexcept {
        rtmem::fragmentation f;
        f.requested_live = requested_;
        f.held_live = used_;
        for (const node* n = head_; n != nullptr; n = n->next) {
            const std::size_t usable = n->size - sizeof(header);
            f.free_bytes += usable;
            if (usable > f.largest_free) f.largest_free = usable;
            ++f.free_blocks;
        }
        return f;
    }

    /// Walks the free list: address order, inside the buffer, no two adjacent free blocks,
    /// sizes whole, and free + used == capacity.
    [[nodiscard]] bool check() const noexcept {
        std::size_t free_bytes = 0;
        const std::byte* last_end = nullptr;
        for (const node* n = head_; n != nullptr; n = n->next) {
            const auto* b = reinterpret_cast<const std::byte*>(n);
            const char* what = nullptr;
            if (b < begin_ || n->size < sizeof(node) ||
                n->size > static_cast<std::size_t>(end_ - b))
                what = "free block outside the heap";
            else if (last_end != nullptr && b < last_end)
                what = "free list not in address order";
            else if (last_end == b)
                what = "two adjacent free blocks were not coalesced";
            if (what != nullptr) {
                report_violation(violation_kind::corrupted, name, n, 0, "check(): %s at %p", what,
                                 static_cast<const void*>(n));
                return false;
            }
            free_bytes += n->size;
            last_end = b + n->size;
        }
        if (free_bytes + used_ != capacity_) {
            report_violation(violation_kind::corrupted, name, nullptr, 0,
                             "check(): %zu free + %zu used bytes, capacity %zu", free_bytes, used_,
                             capacity_);
            return false;
        }
        return true;
    }

  private:
    struct node {  // a free block: its size (whole block) and the next free block by address
        std::size_t size;
        node* next;
    };
    struct header {           // just before the user pointer of a live block (the thesis's layout)
        std::size_t size;     // whole block, padding included
        std::size_t padding;  // bytes from the block start to this header
    };
    static constexpr std::size_t min_block = sizeof(header) + sizeof(node);

    static std::byte* as_bytes(node* n) noexcept { return reinterpret_cast<std::byte*>(n); }
    static const std::byte* as_bytes(const node* n) noexcept {
        return reinterpret_cast<const std::byte*>(n);
    }

    static Upstream& default_upstream() noexcept {
        static Upstream u;
        return u;
    }

    // Bytes a request needs from free block n (padding + header + size, rounded to 8).
    static std::size_t needed(node* n, std::size_t size, std::size_t align,
                              std::size_t& pad) noexcept {
        const auto start = reinterpret_cast<std::uintptr_t>(n);
        const std::uintptr_t user = align_up(start + sizeof(header), align);
        pad = user - sizeof(header) - start;
        std::size_t need = align_up(pad + sizeof(header) + (size == 0 ? 1 : size), alignof(node));
        return need < sizeof(node) ? sizeof(node) : need;
    }

    void* take(node* prev, node* n, std::size_t need, std::size_t pad, std::size_t size) noexcept {
        detail::unpoison(n, n->size);
        node* rest = n->next;
        if (n->size - need >= min_block) {  // split: the remainder stays free, same list position
            rest = reinterpret_cast<node*>(as_bytes(n) + need);
            rest->size = n->size - need;
            rest->next = n->next;
            detail::poison(as_bytes(rest) + sizeof(node), rest->size - sizeof(node));
        } else {
            need = n->size;
        }
        (prev == nullptr ? head_ : prev->next) = rest;
        auto* h = reinterpret_cast<header*>(as_bytes(n) + pad);
        h->size = need;
        h->padding = pad;
        used_ += need;
        if (used_ > peak_) peak_ = used_;
        requested_ += size;
        ++live_;
        ++total_;
        return h + 1;
    }

    void misuse(violation_kind kind, void* p, std::size_t size, const char* what) const noexcept {
        report_violation(kind, name, p, size, "deallocate(%p, %zu): %s", p, size, what);
    }

    void init(std::span<std::byte> buffer) noexcept {
        const auto raw = reinterpret_cast<std::uintptr_t>(buffer.data());
        const std::uintptr_t b = align_up(raw, alignof(node));
        const std::uintptr_t e = align_down(raw + buffer.size(), alignof(node));
        if (buffer.data() == nullptr || e <= b || e - b < min_block) return;
        begin_ = reinterpret_cast<std::byte*>(b);
        end_ = reinterpret_cast<std::byte*>(e);
        capacity_ = e - b;
        reset();
    }

    void release() noexcept {
        if (begin_ != nullptr) detail::unpoison(begin_, capacity_);
        if (own_mem_ != nullptr) upstream_->deallocate(own_mem_, own_bytes_, alignof(node));
        own_mem_ = nullptr;
        begin_ = end_ = nullptr;
        head_ = nullptr;
        capacity_ = own_bytes_ = 0;
    }

    void steal(free_list_allocator& o) noexcept {
        begin_ = std::exchange(o.begin_, nullptr);
        end_ = std::exchange(o.end_, nullptr);
        head_ = std::exchange(o.head_, nullptr);
        upstream_ = o.upstream_;
        own_mem_ = std::exchange(o.own_mem_, nullptr);
        own_bytes_ = std::exchange(o.own_bytes_, 0);
        capacity_ = std::exchange(o.capacity_, 0);
        used_ = std::exchange(o.used_, 0);
        requested_ = std::exchange(o.requested_, 0);
        live_ = std::exchange(o.live_, 0);
        peak_ = o.peak_;
        total_ = o.total_;
    }

    std::byte* begin_ = nullptr;
    std::byte* end_ = nullptr;
    node* head_ = nullptr;
    Upstream* upstream_ = nullptr;
    std::byte* own_mem_ = nullptr;  // what the upstream gave (nullptr: caller memory)
    std::size_t own_bytes_ = 0, capacity_ = 0, used_ = 0, requested_ = 0;
    std::size_t live_ = 0, peak_ = 0, total_ = 0;
};

}  // namespace rtmem
