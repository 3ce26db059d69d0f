// frame_allocator<N>: N linear buffers used in turn, one per frame.
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "rtmem/alloc/linear.hpp"

namespace rtmem {

/// N linear allocators; allocations go to the current one. next_frame() makes the next buffer
/// current and resets it, i.e. it frees what was allocated N frames ago, so blocks from the
/// previous N-1 frames stay valid. N = 2 is the double-buffered allocator: the game thread fills
/// this frame's render queue while the render thread reads last frame's.
/// The current frame's allocator is a member of its own (not an element picked by an index), so
/// allocate is linear_allocator::allocate on fixed offsets of `this`: a compiler keeps its top
/// and end in registers in a loop, as for a lone linear_allocator. next_frame() rotates the
/// allocators (N moves of a few words), so a reference from current() or previous() names a
/// frame until the next next_frame().
template <std::size_t N = 2>
class frame_allocator {
    static_assert(N >= 1, "frame_allocator needs at least one buffer");

  public:
    static constexpr std::string_view name = "frame_allocator";
    using marker_type = linear_allocator::marker_type;

    /// Each frame gets bytes_per_frame from upstream.
    template <allocator Upstream>
    frame_allocator(std::size_t bytes_per_frame, Upstream& upstream) noexcept
        : current_(bytes_per_frame, detail::upstream_ref(upstream)),
          older_(make(bytes_per_frame, detail::upstream_ref(upstream),
                      std::make_index_sequence<N - 1>{})) {}
    explicit frame_allocator(std::size_t bytes_per_frame) noexcept
        : current_(bytes_per_frame, detail::upstream_ref()),
          older_(make(bytes_per_frame, detail::upstream_ref(), std::make_index_sequence<N - 1>{})) {
    }
    /// Splits caller memory into N equal frames.
    explicit frame_allocator(std::span<std::byte> buffer) noexcept
        : current_(buffer.subspan(0, each(buffer))),
          older_(split(buffer, std::make_index_sequence<N - 1>{})) {}

    frame_allocator(frame_allocator&&) noexcept = default;
    frame_allocator& operator=(frame_allocator&&) noexcept = default;
    frame_allocator(const frame_allocator&) = delete;
    frame_allocator& operator=(const frame_allocator&) = delete;

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        return current_.allocate(size, align);
    }
    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
#if RTMEM_CHECKS
        if (p != nullptr && !owns(p)) [[unlikely]]
            report_violation(
                violation_kind::foreign_pointer, name, p, size,
                "deallocate of %p: not a live block of any frame (never allocated here, or already "
                "rewound or reset)",
                p);
#else
        (void)p;
        (void)size;
#endif
        (void)align;
    }

    /// Advances to the next frame: its buffer (used N frames ago) is reset and becomes current.
    void next_frame() noexcept {
        note_peak();
        if constexpr (N > 1) {
            linear_allocator oldest = std::move(older_[N - 2]);
            for (std::size_t i = N - 2; i > 0; --i) older_[i] = std::move(older_[i - 1]);
            older_[0] = std::move(current_);
            current_ = std::move(oldest);
        }
        current_.reset();
        ++frame_number_;
    }

    /// The current frame's allocator.
    [[nodiscard]] linear_allocator& current() noexcept {
        return current_;
    }
    /// The allocator of k frames ago (k < N; previous(0) is current()).
    [[nodiscard]] linear_allocator& previous(std::size_t k = 1) noexcept {
        if (k >= N) [[unlikely]] {
            report_violation(violation_kind::bad_argument, name, nullptr, k,
                             "previous(%zu): only %zu frames are kept", k, N);
            k = N - 1;
        }
        return k == 0 ? current_ : older_[k - 1];
    }
    /// Frames advanced since construction.
    [[nodiscard]] std::size_t frame_number() const noexcept {
        return frame_number_;
    }

    /// Markers are for the current frame; a marker from another frame is stale.
    [[nodiscard]] marker_type marker() const noexcept {
        return current_.marker();
    }
    void rewind(marker_type m) noexcept {
        note_peak();
        current_.rewind(m);
    }
    /// Resets every frame.
    void reset() noexcept {
        note_peak();
        current_.reset();
        for (auto& f : older_) f.reset();
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        if (current_.owns(p)) return true;
        for (const auto& f : older_)
            if (f.owns(p)) return true;
        return false;
    }
    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        const auto add = [&s](const linear_allocator& f) {
            const rtmem::stats fs = f.stats();
            s.capacity += fs.capacity;
            s.used += fs.used;
            s.live_count += fs.live_count;
            s.total_count += fs.total_count;
        };
        add(current_);
        for (const auto& f : older_) add(f);
        s.peak = peak_ > s.used ? peak_ : s.used;
        return s;
    }
    [[nodiscard]] bool check() const noexcept {
        if (!current_.check()) return false;
        for (const auto& f : older_)
            if (!f.check()) return false;
        return true;
    }

  private:
    using older_frames = std::array<linear_allocator, N - 1>;
    template <std::size_t... I>
    static older_frames make([[maybe_unused]] std::size_t bytes,
                             [[maybe_unused]] detail::upstream_ref up,
                             std::index_sequence<I...>) noexcept {
        return {{((void)I, linear_allocator(bytes, up))...}};
    }
    static std::size_t each(std::span<std::byte> buffer) noexcept {
        return align_down(buffer.size() / N, default_alignment);
    }
    /// Frames 1..N-1 of the buffer (frame 0 is the first current one).
    template <std::size_t... I>
    static older_frames split([[maybe_unused]] std::span<std::byte> buffer,
                              std::index_sequence<I...>) noexcept {
        return {{linear_allocator(buffer.subspan((I + 1) * each(buffer), each(buffer)))...}};
    }
    void note_peak() noexcept {
        std::size_t used = current_.used();
        for (const auto& f : older_) used += f.used();
        if (used > peak_) peak_ = used;
    }

    linear_allocator current_;  // first: allocate reads it at offset 0
    older_frames older_;        // older_[k - 1]: the frame of k frames ago
    std::size_t frame_number_ = 0;
    std::size_t peak_ = 0;
};

}  // namespace rtmem
