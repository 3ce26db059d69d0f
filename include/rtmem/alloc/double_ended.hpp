// double_ended_allocator: one buffer, two linear stacks growing toward each other.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/owned_buffer.hpp"
#include "rtmem/detail/retreat_log.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

/// Which end of a double_ended_allocator a block comes from.
enum class side : unsigned char {
    bottom,  ///< grows up from the start: by convention temporary data (rewound often)
    top,     ///< grows down from the end: by convention permanent data (kept for a level)
};

/// Two bump stacks in one buffer (Kaltenbrunn's double-ended linear allocator). The free space
/// is shared, so neither side needs its own worst case; allocation fails when the two would
/// meet. Blocks come back per side by rewind(marker) or reset(side); deallocate does nothing.
/// bottom() and top() are views that behave like a linear_allocator for one side.
class double_ended_allocator {
  public:
    static constexpr std::string_view name = "double_ended_allocator";

    /// The same layout at every check level; `taken` and `owner` are only tested with checks on.
    struct side_marker {
        std::byte* pos = nullptr;
        std::size_t live = 0;
        std::uint64_t taken = 0;  // allocations of the side before the marker
        std::uint32_t owner = 0;  // allocator tag * 2 + side
    };
    /// A marker of both sides (the allocator as a whole is a marker allocator too).
    struct marker_type {
        side_marker bottom, top;
    };

    class view;

    explicit double_ended_allocator(std::span<std::byte> buffer) noexcept : buf_(buffer) {
        low_ = buf_.begin();
        high_ = buf_.end();
    }
    template <allocator Upstream>
    double_ended_allocator(std::size_t capacity, Upstream& upstream) noexcept
        : double_ended_allocator(capacity, detail::upstream_ref(upstream)) {}
    explicit double_ended_allocator(std::size_t capacity) noexcept
        : double_ended_allocator(capacity, detail::upstream_ref()) {}
    double_ended_allocator(std::size_t capacity, detail::upstream_ref upstream) noexcept
        : buf_(capacity, upstream) {
        low_ = buf_.begin();
        high_ = buf_.end();
    }
    double_ended_allocator(double_ended_allocator&& o) noexcept {
        take(o);
    }
    double_ended_allocator& operator=(double_ended_allocator&& o) noexcept {
        if (this != &o) take(o);
        return *this;
    }
    double_ended_allocator(const double_ended_allocator&) = delete;
    double_ended_allocator& operator=(const double_ended_allocator&) = delete;

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(std::size_t size,
                                                     std::size_t align = default_alignment,
                                                     side s = side::bottom) noexcept {
        if constexpr (check_level >= 1)
            if (!is_pow2(align)) [[unlikely]]
                return detail::bad_alignment(name, size, align);
        size += static_cast<std::size_t>(size == 0);
        if (s == side::bottom) {
            std::byte* p = detail::bump_block(low_, high_, size, align);
            if (p != nullptr) [[likely]]
                ++total_[0];
            return p;
        }
        // Top side: the block ends at or below high_, starts aligned, stays above low_.
        const auto room = static_cast<std::size_t>(high_ - low_);
        if (size > room) [[unlikely]]
            return nullptr;
        const auto start = reinterpret_cast<std::uintptr_t>(high_) - size;
        std::byte* p = high_ - size - (start & (std::uintptr_t{align} - 1));
        if (p < low_) [[unlikely]]
            return nullptr;
        high_ = p;
        ++total_[1];
        detail::unpoison(p, size);
        return p;
    }

    /// Does nothing (blocks come back by rewind or reset); a foreign pointer is reported.
    void deallocate([[maybe_unused]] void* p, [[maybe_unused]] std::size_t size,
                    std::size_t /*align*/ = default_alignment) noexcept {
        if constexpr (check_level >= 1)
            if (p != nullptr && !owns(p)) [[unlikely]]
                detail::not_live(name, p, size);
    }

    [[nodiscard]] side_marker marker(side s) const noexcept {
        side_marker m;
        const int i = index(s);
        m.pos = s == side::bottom ? low_ : high_;
        m.live = total_[i] - base_[i];
        m.taken = total_[i];
        m.owner = owner_ * 2 + static_cast<std::uint32_t>(i);
        return m;
    }
    [[nodiscard]] marker_type marker() const noexcept {
        return {marker(side::bottom), marker(side::top)};
    }

    /// Frees the blocks of side s allocated after m. A marker of the other side, of another
    /// allocator, or whose position was rewound past since it was taken (even if the side has
    /// grown back over it) is a stale_marker violation and is ignored.
    void rewind(side_marker m, side s) noexcept {
        const int i = index(s);
        if constexpr (check_level >= 1) {
            const bool bad = s == side::bottom ? (m.pos < buf_.begin() || m.pos > low_)
                                               : (m.pos > buf_.end() || m.pos < high_);
            if (bad || m.owner != owner_ * 2 + static_cast<std::uint32_t>(i) ||
                m.live > total_[i] - base_[i] || !retreats_[i].intact(depth(m.pos, s), m.taken))
                [[unlikely]] {
                report_violation(violation_kind::stale_marker, name, m.pos, 0,
                                 "rewind of the %s side to %p: the marker was already rewound "
                                 "past, belongs to the other side, or to another allocator",
                                 s == side::bottom ? "bottom" : "top", static_cast<void*>(m.pos));
                return;
            }
            retreats_[i].note(depth(m.pos, s), total_[i]);
        }
        note_peak();
        if (s == side::bottom) {
            detail::retreat(low_, m.pos);
        } else {
            detail::poison(high_, static_cast<std::size_t>(m.pos - high_));
            high_ = m.pos;
        }
        base_[i] = total_[i] - m.live;
    }
    void rewind(marker_type m) noexcept {
        rewind(m.bottom, side::bottom);
        rewind(m.top, side::top);
    }

    /// Frees every block of one side.
    void reset(side s) noexcept {
        note_peak();
        const int i = index(s);
        if constexpr (check_level >= 1) retreats_[i].note(0, total_[i]);
        if (s == side::bottom) {
            detail::retreat(low_, buf_.begin());
        } else {
            detail::poison(high_, static_cast<std::size_t>(buf_.end() - high_));
            high_ = buf_.end();
        }
        base_[i] = total_[i];
    }
    void reset() noexcept {
        reset(side::bottom);
        reset(side::top);
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        return owns(p, side::bottom) || owns(p, side::top);
    }
    [[nodiscard]] bool owns(const void* p, side s) const noexcept {
        const auto* b = static_cast<const std::byte*>(p);
        return s == side::bottom ? (b >= buf_.begin() && b < low_) : (b >= high_ && b < buf_.end());
    }

    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats st;
        st.capacity = capacity();
        st.used = used(side::bottom) + used(side::top);
        st.peak = peak_ > st.used ? peak_ : st.used;
        st.live_count = total_[0] - base_[0] + total_[1] - base_[1];
        st.total_count = total_[0] + total_[1];
        return st;
    }
    /// One side's accounting; capacity is what that side could hold now (its use plus the free
    /// space between the two tops).
    [[nodiscard]] rtmem::stats stats(side s) const noexcept {
        const int i = index(s);
        rtmem::stats st;
        st.used = used(s);
        st.capacity = st.used + free_bytes();
        st.peak = side_peak_[i] > st.used ? side_peak_[i] : st.used;
        st.live_count = total_[i] - base_[i];
        st.total_count = total_[i];
        return st;
    }

    [[nodiscard]] bool check() const noexcept {
        const bool ok = buf_.begin() <= low_ && low_ <= high_ && high_ <= buf_.end() &&
                        base_[0] <= total_[0] && base_[1] <= total_[1];
        if (!ok)
            report_violation(violation_kind::corrupted, name, low_, 0,
                             "sides crossed or outside the buffer: bottom top %p, top top %p",
                             static_cast<void*>(low_), static_cast<void*>(high_));
        return ok;
    }

    [[nodiscard]] std::size_t capacity() const noexcept {
        return buf_.size();
    }
    [[nodiscard]] std::size_t used(side s) const noexcept {
        return static_cast<std::size_t>(s == side::bottom ? low_ - buf_.begin()
                                                          : buf_.end() - high_);
    }
    /// Bytes between the two sides.
    [[nodiscard]] std::size_t free_bytes() const noexcept {
        return static_cast<std::size_t>(high_ - low_);
    }

    [[nodiscard]] view bottom() noexcept;
    [[nodiscard]] view top() noexcept;

  private:
    static constexpr int index(side s) noexcept {
        return s == side::bottom ? 0 : 1;
    }
    // Bytes of side s below position p (the side's own notion of height).
    [[nodiscard]] std::uintptr_t depth(const std::byte* p, side s) const noexcept {
        return static_cast<std::uintptr_t>(s == side::bottom ? p - buf_.begin()
                                                             : buf_.end() - p);
    }
    void note_peak() noexcept {
        const std::size_t u = used(side::bottom) + used(side::top);
        if (u > peak_) peak_ = u;
        for (int i = 0; i < 2; ++i) {
            const std::size_t ui = used(i == 0 ? side::bottom : side::top);
            if (ui > side_peak_[i]) side_peak_[i] = ui;
        }
    }
    void take(double_ended_allocator& o) noexcept {
        buf_ = std::move(o.buf_);
        low_ = std::exchange(o.low_, nullptr);
        high_ = std::exchange(o.high_, nullptr);
        for (int i = 0; i < 2; ++i) {
            total_[i] = o.total_[i];
            base_[i] = o.base_[i];
            side_peak_[i] = o.side_peak_[i];
        }
        peak_ = o.peak_;
        owner_ = o.owner_;
        retreats_[0] = o.retreats_[0];
        retreats_[1] = o.retreats_[1];
    }

    // The fast path's fields first, so they share a cache line.
    std::byte* low_ = nullptr;   // bottom side's top (grows up)
    std::byte* high_ = nullptr;  // top side's top (grows down)
    std::size_t total_[2] = {0, 0};
    detail::owned_buffer buf_;
    std::size_t base_[2] = {0, 0};
    std::size_t side_peak_[2] = {0, 0};
    std::size_t peak_ = 0;
    std::uint32_t owner_ = detail::next_owner_tag();
    detail::retreat_log retreats_[2];  // per side, with checks on: what makes a marker stale
};

/// One side of a double_ended_allocator as an allocator with markers, reset and stats, so it can
/// be passed wherever a linear allocator is expected. A view is a cheap handle; the allocator
/// must outlive it.
class double_ended_allocator::view {
  public:
    static constexpr std::string_view name = "double_ended_allocator";
    using marker_type = side_marker;

    view(double_ended_allocator& a, side s) noexcept : a_(&a), side_(s) {}

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        return a_->allocate(size, align, side_);
    }
    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        a_->deallocate(p, size, align);
    }
    [[nodiscard]] marker_type marker() const noexcept { return a_->marker(side_); }
    void rewind(marker_type m) noexcept { a_->rewind(m, side_); }
    void reset() noexcept { a_->reset(side_); }
    [[nodiscard]] bool owns(const void* p) const noexcept { return a_->owns(p, side_); }
    [[nodiscard]] rtmem::stats stats() const noexcept { return a_->stats(side_); }
    [[nodiscard]] bool check() const noexcept { return a_->check(); }
    [[nodiscard]] side which() const noexcept { return side_; }

  private:
    double_ended_allocator* a_;
    side side_;
};

inline double_ended_allocator::view double_ended_allocator::bottom() noexcept {
    return {*this, side::bottom};
}
inline double_ended_allocator::view double_ended_allocator::top() noexcept {
    return {*this, side::top};
}

}  // namespace rtmem
