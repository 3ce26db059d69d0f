// linear_allocator: a bump pointer over one buffer, freed all at once (reset) or back to a
// marker (rewind). The cheapest allocator there is; the model for the other stack-ordered ones.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/owned_buffer.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// Bump allocator over a caller buffer or a capacity taken once from an upstream.
/// allocate = a bounds check and a pointer bump; deallocate does nothing (memory comes back by
/// rewind() or reset()). When the upstream cannot supply the capacity, the allocator is empty
/// (capacity 0) and every allocate returns nullptr.
class linear_allocator {
  public:
    static constexpr std::string_view name = "linear_allocator";

    /// Position of the top, to rewind() to. Markers are only valid for the allocator that made
    /// them and only while the top has not been rewound below them.
    struct marker_type {
        std::byte* top = nullptr;
        std::size_t live = 0;
#if RTMEM_CHECKS
        std::uint32_t owner = 0;
#endif
    };

    /// Over caller memory; the caller keeps it alive longer than the allocator.
    explicit linear_allocator(std::span<std::byte> buffer) noexcept : buf_(buffer) {
        top_ = buf_.begin();
    }

    /// `capacity` bytes taken from `upstream` (held by pointer: it must outlive this allocator).
    template <allocator Upstream>
    linear_allocator(std::size_t capacity, Upstream& upstream) noexcept
        : linear_allocator(capacity, detail::upstream_ref(upstream)) {}

    /// `capacity` bytes from malloc.
    explicit linear_allocator(std::size_t capacity) noexcept
        : linear_allocator(capacity, detail::upstream_ref()) {}

    linear_allocator(std::size_t capacity, detail::upstream_ref upstream) noexcept
        : buf_(capacity, upstream) {
        top_ = buf_.begin();
    }

    linear_allocator(linear_allocator&& o) noexcept {
        take(o);
    }
    linear_allocator& operator=(linear_allocator&& o) noexcept {
        if (this != &o) take(o);
        return *this;
    }
    linear_allocator(const linear_allocator&) = delete;
    linear_allocator& operator=(const linear_allocator&) = delete;

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
#if RTMEM_CHECKS
        if (!is_pow2(align)) [[unlikely]]
            return detail::bad_alignment(name, size, align);
#endif
        size += static_cast<std::size_t>(size == 0);  // a unique pointer for size 0
        std::byte* p;
        if (!detail::fits(top_, buf_.end(), size, align, p)) [[unlikely]]
            return nullptr;
        top_ = p + size;
        detail::unpoison(p, size);
        ++total_;  // on the fits() branch itself, not on a test of the returned pointer
        return p;
    }

    /// Does nothing: blocks come back by rewind() or reset(). With checks on, a pointer this
    /// allocator never handed out is a foreign_pointer violation.
    void deallocate([[maybe_unused]] void* p, [[maybe_unused]] std::size_t size,
                    std::size_t /*align*/ = default_alignment) noexcept {
        if constexpr (check_level >= 1)
            if (p != nullptr && !owns(p)) [[unlikely]]
                detail::not_live(name, p, size);
    }

    [[nodiscard]] marker_type marker() const noexcept {
        marker_type m;
        m.top = top_;
        m.live = total_ - base_;
#if RTMEM_CHECKS
        m.owner = owner_;
#endif
        return m;
    }

    /// Frees every block allocated after m was taken. A marker above the current top (already
    /// rewound past) or from another allocator is a stale_marker violation and is ignored.
    void rewind(marker_type m) noexcept {
#if RTMEM_CHECKS
        if (m.owner != owner_ || m.top < buf_.begin() || m.top > top_ || m.live > total_ - base_)
            [[unlikely]] {
            stale(m.top);
            return;
        }
#endif
        note_peak();
        detail::retreat(top_, m.top);
        base_ = total_ - m.live;
    }

    /// Frees every block.
    void reset() noexcept {
        note_peak();
        detail::retreat(top_, buf_.begin());
        base_ = total_;
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        return b >= buf_.begin() && b < top_;
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        s.capacity = capacity();
        s.used = used();
        s.peak = peak_ > s.used ? peak_ : s.used;
        s.live_count = total_ - base_;
        s.total_count = total_;
        return s;
    }

    [[nodiscard]] bool check() const noexcept {
        const bool ok = buf_.begin() <= top_ && top_ <= buf_.end() && base_ <= total_;
        if (!ok)
            report_violation(violation_kind::corrupted, name, top_, 0,
                             "top %p outside [%p, %p] or counts inconsistent",
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
    [[nodiscard]] std::span<std::byte> buffer() const noexcept {
        return {buf_.begin(), capacity()};
    }

  private:
    void note_peak() noexcept {
        if (used() > peak_) peak_ = used();
    }
    void take(linear_allocator& o) noexcept {
        buf_ = std::move(o.buf_);
        top_ = std::exchange(o.top_, nullptr);
        base_ = o.base_;
        total_ = o.total_;
        peak_ = o.peak_;
        owner_ = o.owner_;
    }
    RTMEM_NOINLINE void stale(const std::byte* at) const noexcept {
        report_violation(violation_kind::stale_marker, name, at, 0,
                         "rewind to %p: the marker is above the top %p (already rewound past) or "
                         "belongs to another allocator",
                         static_cast<const void*>(at), static_cast<const void*>(top_));
    }

    // The fast path's fields first, so they share a cache line.
    std::byte* top_ = nullptr;
    std::size_t total_ = 0;  // successful allocations since construction
    detail::owned_buffer buf_;
    std::size_t base_ = 0;  // total_ when the current blocks began (live = total_ - base_)
    std::size_t peak_ = 0;  // high-water of used(), updated whenever used() drops
    std::uint32_t owner_ = detail::next_owner_tag();
};

/// Rewinds an allocator to the marker taken at construction when the scope ends.
template <marker_allocator A>
class scoped_rewind {
  public:
    explicit scoped_rewind(A& a) noexcept : a_(&a), m_(a.marker()) {}
    ~scoped_rewind() { a_->rewind(m_); }
    scoped_rewind(const scoped_rewind&) = delete;
    scoped_rewind& operator=(const scoped_rewind&) = delete;

    [[nodiscard]] const typename A::marker_type& marker() const noexcept { return m_; }

  private:
    A* a_;
    typename A::marker_type m_;
};

}  // namespace rtmem

#define RTMEM_DETAIL_CONCAT2(a, b) a##b
#define RTMEM_DETAIL_CONCAT(a, b) RTMEM_DETAIL_CONCAT2(a, b)
/// Everything `alloc` hands out from here to the end of the enclosing block is freed there.
#define RTMEM_SCOPE(alloc)                                               \
    ::rtmem::scoped_rewind RTMEM_DETAIL_CONCAT(rtmem_scope_, __LINE__) { \
        alloc                                                            \
    }
