// The address range of a plan's blocks (`rtmem run --plan`, `rtmem replay --plan`): one mmap'd
// reservation cut into spans aligned to their size, so the owner of any pointer is found in
// O(1) (a range check, then the span's header). Nothing here calls malloc (the preload runs it
// inside malloc).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rtmem::site_plan {

/// Spans are aligned to their size; a span serves one site (and, for a region, one thread at a
/// time). 256 KiB: large enough that a region chunk holds many blocks, small enough that a
/// pool site's spare capacity stays small.
inline constexpr std::size_t span_bytes = std::size_t{256} << 10;
inline constexpr std::size_t span_header_bytes = 64;

/// A lock for what threads share: a site's free list and spans, the range's free spans.
class site_lock {
  public:
    void lock() noexcept {
        if (!held_.exchange(true, std::memory_order_acquire)) [[likely]]
            return;
        lock_contended();
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

  private:
    void lock_contended() noexcept;
    std::atomic<bool> held_{false};
};

struct span_header {
    std::uint32_t site;  ///< index of the owning site
    std::uint32_t unused;
    /// Region: frees by threads other than the one bumping the span subtract 1; when that
    /// thread moves on it adds the blocks it left live. The span is empty when, after that
    /// addition, the count reaches 0 (whoever makes it 0 gives the span back).
    std::atomic<std::int64_t> remote;
    span_header* next_free;  ///< in the range's list of free spans
};
static_assert(sizeof(span_header) <= span_header_bytes);

/// The reserved range and its spans. A span freed by a region goes back to the range for any
/// site; a pool keeps its spans (its free lists hold their blocks).
class span_arena {
  public:
    /// Reserves `bytes` of address space (MAP_NORESERVE: pages are committed when touched).
    bool reserve(std::size_t bytes) noexcept;
    void release() noexcept;
    [[nodiscard]] bool owns(const void* p) const noexcept {
        return reinterpret_cast<std::uintptr_t>(p) - base_ < size_;
    }
    static span_header* span_of(const void* p) noexcept {
        return reinterpret_cast<span_header*>(reinterpret_cast<std::uintptr_t>(p) &
                                              ~(span_bytes - 1));
    }
    /// A span for `site` (its remote count 0), or nullptr when the range is used up.
    span_header* take(std::uint32_t site) noexcept;
    void give_back(span_header* s) noexcept;
    /// Spans ever taken from the range (its high-water mark).
    [[nodiscard]] std::size_t spans_used() const noexcept { return used_ / span_bytes; }
    [[nodiscard]] std::uintptr_t base() const noexcept { return base_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    void lock_for_fork() noexcept { lock_.lock(); }
    void unlock_after_fork() noexcept { lock_.unlock(); }

  private:
    std::uintptr_t base_ = 0;
    std::size_t size_ = 0;
    void* mapping_ = nullptr;
    std::size_t mapping_bytes_ = 0;
    site_lock lock_;
    std::size_t used_ = 0;
    span_header* free_ = nullptr;
};

/// The site of a block of the range.
[[nodiscard]] inline std::uint32_t site_of(const void* p) noexcept {
    return span_arena::span_of(p)->site;
}

}  // namespace rtmem::site_plan
