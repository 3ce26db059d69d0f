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
#include "rtmem/detail/owned_buffer.hpp"
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

    explicit stack_allocator(std::span<std::byte> buffer) noexcept : buf_(buffer) {
        top_ = high_ = buf_.begin();
    }
    template <allocator Upstream>
    stack_allocator(std::size_t capacity, Upstream& upstream) noexcept
        : stack_allocator(capacity, detail::upstream_ref(upstream)) {}
    explicit stack_allocator(std::size_t capacity) noexcept
        : stack_allocator(capacity, detail::upstream_ref()) {}
    stack_allocator(std::size_t capacity, detail::upstream_ref upstream) noexcept
        : buf_(capacity, upstream) {
        top_ = high_ = buf_.begin();
    }

    stack_allocator(stack_allocator&& o) noexcept {
        take(o);
    }
    stack_allocator& operator=(stack_allocator&& o) noexcept {
        if (this != &o) take(o);
        return *this;
    }
    stack_allocator(const stack_allocator&) = delete;
    stack_allocator& operator=(const stack_allocator&) = delete;

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        size += static_cast<std::size_t>(size == 0);
#if RTMEM_CHECKS
        if (!is_pow2(align)) [[unlikely]]
            return detail::bad_alignment(name, size, align);
        std::byte* p = header_bytes <= remaining()
                           ? detail::bump(top_ + header_bytes, buf_.end(), size, align)
                           : nullptr;
        if (p == nullptr) [[unlikely]]
            return nullptr;
        const header h{used(), size};
        detail::unpoison(p - header_bytes, header_bytes + size);
        std::memcpy(p - header_bytes, &h, sizeof h);
#else
        std::byte* p;
        if (!detail::fits(top_, buf_.end(), size, align, p)) [[unlikely]]
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
        std::byte* const begin = buf_.begin();
        if (b < begin + header_bytes || b >= top_) [[unlikely]]
            return bad_free(b, size);
        header h;
        std::memcpy(&h, b - header_bytes, sizeof h);
        if (b + h.size != top_ || h.previous > static_cast<std::size_t>(b - begin)) [[unlikely]]
            return bad_free(b, size);
        if (h.size != size) [[unlikely]]
            return report_violation(violation_kind::size_mismatch, name, p, size,
                                    "deallocate of %p with size %zu, allocated with %zu", p, size,
                                    h.size);
        detail::retreat(top_, begin + h.previous);
#else
        (void)size;
        detail::retreat(top_, b);
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
        if (m.owner != owner_ || m.top < buf_.begin() || m.top > top_ || m.live > live_)
            [[unlikely]] {
            report_violation(violation_kind::stale_marker, name, m.top, 0,
                             "rewind to %p: the marker is above the top %p (its blocks were "
                             "already freed) or belongs to another allocator",
                             static_cast<void*>(m.top), static_cast<void*>(top_));
            return;
        }
#endif
        if (top_ > high_) high_ = top_;
        detail::retreat(top_, m.top);
        live_ = m.live;
    }

    void reset() noexcept {
        if (top_ > high_) high_ = top_;
        detail::retreat(top_, buf_.begin());
        live_ = 0;
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        return b >= buf_.begin() && b < top_;
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        s.capacity = capacity();
        s.used = used();
        const auto high = static_cast<std::size_t>(high_ - buf_.begin());
        s.peak = high > s.used ? high : s.used;
        s.live_count = live_;
        s.total_count = total_;
        return s;
    }

    [[nodiscard]] bool check() const noexcept {
        const bool ok = buf_.begin() <= top_ && top_ <= buf_.end() && live_ <= total_;
        if (!ok)
            report_violation(violation_kind::corrupted, name, top_, 0,
                             "top %p outside [%p, %p] or headers inconsistent",
                             static_cast<void*>(top_), static_cast<void*>(buf_.begin()),
                             static_cast<void*>(buf_.end()));
        return ok;
    }

    [[nodiscard]] std::size_t capacity() const noexcept {
        return buf_.size();
    }
    [[nodiscard]] std::size_t used() const noexcept {
        return static_cast<std::size_t>(top_ - buf_.begin());
    }
    [[nodiscard]] std::size_t remaining() const noexcept {
        return static_cast<std::size_t>(buf_.end() - top_);
    }

  private:
    struct header {
        std::size_t previous;  // top (offset from begin) before this block
        std::size_t size;      // requested size (at least 1)
    };
    static constexpr std::size_t header_bytes = sizeof(header);

    void take(stack_allocator& o) noexcept {
        buf_ = std::move(o.buf_);
        top_ = std::exchange(o.top_, nullptr);
        high_ = std::exchange(o.high_, nullptr);
        live_ = o.live_;
        total_ = o.total_;
        owner_ = o.owner_;
    }
    RTMEM_NOINLINE void bad_free(const std::byte* b, std::size_t size) const noexcept {
        if (b >= top_ && b < buf_.end())
            report_violation(violation_kind::double_free, name, b, size,
                             "deallocate of %p: the block was already freed or rewound",
                             static_cast<const void*>(b));
        else if (b >= buf_.begin() && b < top_)
            report_violation(violation_kind::lifo_order, name, b, size,
                             "deallocate of %p out of LIFO order: it is not the most recent "
                             "live block (top is %p)",
                             static_cast<const void*>(b), static_cast<const void*>(top_));
        else
            report_violation(violation_kind::foreign_pointer, name, b, size,
                             "deallocate of %p: not a block of this allocator",
                             static_cast<const void*>(b));
    }

    // The fast paths' fields first, so they share a cache line.
    std::byte* top_ = nullptr;
    std::byte* high_ = nullptr;  // highest top seen; updated whenever the top drops
    std::size_t live_ = 0;
    std::size_t total_ = 0;
    detail::owned_buffer buf_;
    std::uint32_t owner_ = detail::next_owner_tag();
};

}  // namespace rtmem
