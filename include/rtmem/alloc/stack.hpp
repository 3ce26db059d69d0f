// stack_allocator: a linear allocator whose blocks can also be freed one by one, last first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// Bump allocator with LIFO deallocate: only the most recent live block may be freed.
/// With checks on (RTMEM_CHECKS >= 1) each block carries a 16-byte header {previous top, size},
/// so an out-of-order free is reported as lifo_order, a wrong size as size_mismatch, and the
/// top comes back exactly (padding included). With checks off there is no header and
/// deallocate is a single pointer store (top = p) plus counters; the alignment padding in
/// front of a freed block then stays in use until the block below it is freed.
class stack_allocator {
  public:
    static constexpr std::string_view name = "stack_allocator";

    struct marker_type {
        std::byte* top = nullptr;
        std::size_t live = 0;
#if RTMEM_CHECKS
        std::uint32_t owner = 0;
#endif
    };

    explicit stack_allocator(std::span<std::byte> buffer) noexcept
        : begin_(buffer.data()), top_(begin_), end_(begin_ + buffer.size()), high_(begin_) {
        detail::poison(begin_, buffer.size());
    }
    template <allocator Upstream>
    stack_allocator(std::size_t capacity, Upstream& upstream) noexcept
        : stack_allocator(capacity, detail::upstream_ref(upstream)) {}
    explicit stack_allocator(std::size_t capacity) noexcept
        : stack_allocator(capacity, detail::upstream_ref()) {}
    stack_allocator(std::size_t capacity, detail::upstream_ref upstream) noexcept
        : upstream_(upstream), owns_buffer_(true) {
        auto* p = static_cast<std::byte*>(upstream_.allocate(capacity, default_alignment));
        if (p == nullptr) return;
        begin_ = top_ = high_ = p;
        end_ = p + capacity;
        detail::poison(begin_, capacity);
    }

    stack_allocator(stack_allocator&& o) noexcept {
        take(o);
    }
    stack_allocator& operator=(stack_allocator&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    stack_allocator(const stack_allocator&) = delete;
    stack_allocator& operator=(const stack_allocator&) = delete;
    ~stack_allocator() {
        release();
    }

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        size += static_cast<std::size_t>(size == 0);
#if RTMEM_CHECKS
        if (!is_pow2(align)) [[unlikely]]
            return bad_alignment(size, align);
        std::byte* p = header_bytes <= remaining()
                           ? detail::bump(top_ + header_bytes, end_, size, align)
                           : nullptr;
        if (p == nullptr) [[unlikely]]
            return nullptr;
        const header h{static_cast<std::size_t>(top_ - begin_), size};
        detail::unpoison(p - header_bytes, header_bytes + size);
        std::memcpy(p - header_bytes, &h, sizeof h);
#else
        std::byte* p = detail::bump(top_, end_, size, align);
        if (p == nullptr) [[unlikely]]
            return nullptr;
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
        if (top_ > high_) high_ = top_;
#if RTMEM_CHECKS
        size += static_cast<std::size_t>(size == 0);
        if (b < begin_ + header_bytes || b >= top_) [[unlikely]]
            return bad_free(b, size);
        header h;
        std::memcpy(&h, b - header_bytes, sizeof h);
        if (b + h.size != top_ || h.previous > static_cast<std::size_t>(b - begin_)) [[unlikely]]
            return bad_free(b, size);
        if (h.size != size) [[unlikely]]
            return report_violation(violation_kind::size_mismatch, name, p, size,
                                    "deallocate of %p with size %zu, allocated with %zu", p, size,
                                    h.size);
        detail::poison(begin_ + h.previous, static_cast<std::size_t>(top_ - begin_) - h.previous);
        top_ = begin_ + h.previous;
#else
        (void)size;
        detail::poison(b, static_cast<std::size_t>(top_ - b));
        top_ = b;
#endif
        --live_;
    }

    [[nodiscard]] marker_type marker() const noexcept {
        marker_type m;
        m.top = top_;
        m.live = live_;
#if RTMEM_CHECKS
        m.owner = owner_;
#endif
        return m;
    }

    /// Frees every block allocated after m. A marker above the top or from another allocator is
    /// a stale_marker violation and is ignored.
    void rewind(marker_type m) noexcept {
#if RTMEM_CHECKS
        if (m.owner != owner_ || m.top < begin_ || m.top > top_ || m.live > live_) [[unlikely]] {
            report_violation(violation_kind::stale_marker, name, m.top, 0,
                             "rewind to %p: the marker is above the top %p (its blocks were "
                             "already freed) or belongs to another allocator",
                             static_cast<void*>(m.top), static_cast<void*>(top_));
            return;
        }
#endif
        if (top_ > high_) high_ = top_;
        detail::poison(m.top, static_cast<std::size_t>(top_ - m.top));
        top_ = m.top;
        live_ = m.live;
    }

    void reset() noexcept {
        if (top_ > high_) high_ = top_;
        detail::poison(begin_, used());
        top_ = begin_;
        live_ = 0;
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        return b >= begin_ && b < top_;
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        s.capacity = capacity();
        s.used = used();
        const auto high = static_cast<std::size_t>(high_ - begin_);
        s.peak = high > s.used ? high : s.used;
        s.live_count = live_;
        s.total_count = total_;
        return s;
    }

    [[nodiscard]] bool check() const noexcept {
        const bool ok = begin_ <= top_ && top_ <= end_ && live_ <= total_;
        if (!ok)
            report_violation(violation_kind::corrupted, name, top_, 0,
                             "top %p outside [%p, %p] or headers inconsistent",
                             static_cast<void*>(top_), static_cast<void*>(begin_),
                             static_cast<void*>(end_));
        return ok;
    }

    [[nodiscard]] std::size_t capacity() const noexcept {
        return static_cast<std::size_t>(end_ - begin_);
    }
    [[nodiscard]] std::size_t used() const noexcept {
        return static_cast<std::size_t>(top_ - begin_);
    }
    [[nodiscard]] std::size_t remaining() const noexcept {
        return static_cast<std::size_t>(end_ - top_);
    }

  private:
    struct header {
        std::size_t previous;  // top (offset from begin) before this block
        std::size_t size;      // requested size (at least 1)
    };
    static constexpr std::size_t header_bytes = sizeof(header);

    void take(stack_allocator& o) noexcept {
        begin_ = std::exchange(o.begin_, nullptr);
        top_ = std::exchange(o.top_, nullptr);
        end_ = std::exchange(o.end_, nullptr);
        high_ = std::exchange(o.high_, nullptr);
        live_ = o.live_;
        total_ = o.total_;
        owner_ = o.owner_;
        upstream_ = o.upstream_;
        owns_buffer_ = std::exchange(o.owns_buffer_, false);
    }
    void release() noexcept {
        if (begin_ != nullptr) detail::unpoison(begin_, capacity());  // caller memory too
        if (owns_buffer_ && begin_ != nullptr)
            upstream_.deallocate(begin_, capacity(), default_alignment);
        begin_ = top_ = end_ = high_ = nullptr;
        owns_buffer_ = false;
    }
    RTMEM_NOINLINE void* bad_alignment(std::size_t size, std::size_t align) const noexcept {
        report_violation(violation_kind::bad_alignment, name, nullptr, size,
                         "alignment %zu is not a power of two", align);
        return nullptr;
    }
    RTMEM_NOINLINE void bad_free(const std::byte* b, std::size_t size) const noexcept {
        if (b >= top_ && b < end_)
            report_violation(violation_kind::double_free, name, b, size,
                             "deallocate of %p: the block was already freed or rewound",
                             static_cast<const void*>(b));
        else if (b >= begin_ && b < top_)
            report_violation(violation_kind::lifo_order, name, b, size,
                             "deallocate of %p out of LIFO order: it is not the most recent "
                             "live block (top is %p)",
                             static_cast<const void*>(b), static_cast<const void*>(top_));
        else
            report_violation(violation_kind::foreign_pointer, name, b, size,
                             "deallocate of %p: not a block of this allocator",
                             static_cast<const void*>(b));
    }

    std::byte* begin_ = nullptr;
    std::byte* top_ = nullptr;
    std::byte* end_ = nullptr;
    std::byte* high_ = nullptr;  // highest top seen; updated whenever the top drops
    std::size_t live_ = 0;
    std::size_t total_ = 0;
    std::uint32_t owner_ = detail::next_owner_tag();
    detail::upstream_ref upstream_{};
    bool owns_buffer_ = false;
};

}  // namespace rtmem
