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
template <std::size_t N = 2>
class frame_allocator {
    static_assert(N >= 1, "frame_allocator needs at least one buffer");

  public:
    static constexpr std::string_view name = "frame_allocator";
    using marker_type = linear_allocator::marker_type;

    /// Each frame gets bytes_per_frame from upstream.
    template <allocator Upstream>
    frame_allocator(std::size_t bytes_per_frame, Upstream& upstream) noexcept
        : frames_(make(bytes_per_frame, detail::upstream_ref(upstream),
                       std::make_index_sequence<N>{})) {}
    explicit frame_allocator(std::size_t bytes_per_frame) noexcept
        : frames_(make(bytes_per_frame, detail::upstream_ref(), std::make_index_sequence<N>{})) {}
    /// Splits caller memory into N equal frames.
    explicit frame_allocator(std::span<std::byte> buffer) noexcept
        : frames_(split(buffer, std::make_index_sequence<N>{})) {}

    frame_allocator(frame_allocator&&) noexcept = default;
    frame_allocator& operator=(frame_allocator&&) noexcept = default;
    frame_allocator(const frame_allocator&) = delete;
    frame_allocator& operator=(const frame_allocator&) = delete;

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        return frames_[current_].allocate(size, align);
    }
    void deallocate([[maybe_unused]] void* p, [[maybe_unused]] std::size_t size,
                    std::size_t /*align*/ = default_alignment) noexcept {
        if constexpr (check_level >= 1)
            if (p != nullptr && !owns(p)) [[unlikely]]
                report_violation(violation_kind::foreign_pointer, name, p, size,
                                 "deallocate of %p: not a live block of any frame (never "
                                 "allocated here, or already rewound or reset)",
                                 p);
    }

    /// Advances to the next frame: its buffer (used N frames ago) is reset and becomes current.
    void next_frame() noexcept {
        note_peak();
        current_ = (current_ + 1) % N;
        frames_[current_].reset();
        ++frame_number_;
    }

    /// The current frame's allocator.
    [[nodiscard]] linear_allocator& current() noexcept {
        return frames_[current_];
    }
    /// The allocator of k frames ago (k < N; previous(0) is current()).
    [[nodiscard]] linear_allocator& previous(std::size_t k = 1) noexcept {
        if (k >= N) [[unlikely]] {
            report_violation(violation_kind::bad_argument, name, nullptr, k,
                             "previous(%zu): only %zu frames are kept", k, N);
            k = N - 1;
        }
        return frames_[(current_ + N - k) % N];
    }
    /// Frames advanced since construction.
    [[nodiscard]] std::size_t frame_number() const noexcept {
        return frame_number_;
    }

    /// Markers are for the current frame; a marker from another frame is stale.
    [[nodiscard]] marker_type marker() const noexcept {
        return frames_[current_].marker();
    }
    void rewind(marker_type m) noexcept {
        note_peak();
        frames_[current_].rewind(m);
    }
    /// Resets every frame.
    void reset() noexcept {
        note_peak();
        for (auto& f : frames_) f.reset();
    }

    [[nodiscard]] bool owns(const void* p) const noexcept {
        for (const auto& f : frames_)
            if (f.owns(p)) return true;
        return false;
    }
    [[nodiscard]] rtmem::stats stats() const noexcept {
        rtmem::stats s;
        for (const auto& f : frames_) {
            const rtmem::stats fs = f.stats();
            s.capacity += fs.capacity;
            s.used += fs.used;
            s.live_count += fs.live_count;
            s.total_count += fs.total_count;
        }
        s.peak = peak_ > s.used ? peak_ : s.used;
        return s;
    }
    [[nodiscard]] bool check() const noexcept {
        for (const auto& f : frames_)
            if (!f.check()) return false;
        return true;
    }

  private:
    template <std::size_t... I>
    static std::array<linear_allocator, N> make(std::size_t bytes, detail::upstream_ref up,
                                                std::index_sequence<I...>) noexcept {
        return {{((void)I, linear_allocator(bytes, up))...}};
    }
    template <std::size_t... I>
    static std::array<linear_allocator, N> split(std::span<std::byte> buffer,
                                                 std::index_sequence<I...>) noexcept {
        const std::size_t each = align_down(buffer.size() / N, default_alignment);
        return {{linear_allocator(buffer.subspan(I * each, each))...}};
    }
    void note_peak() noexcept {
        std::size_t used = 0;
        for (const auto& f : frames_) used += f.used();
        if (used > peak_) peak_ = used;
    }

    std::array<linear_allocator, N> frames_;
    std::size_t current_ = 0;
    std::size_t frame_number_ = 0;
    std::size_t peak_ = 0;
};

}  // namespace rtmem
