// The per-site strategies of a plan (`rtmem run --plan`, `rtmem replay --plan`): a pool of
// fixed-size blocks and a bump region whose chunks are recycled when their last block is freed.
// Every block lies in one reserved address range cut into aligned spans, so the owner of any
// pointer is found in O(1): a range check, then the span's header. Nothing here calls malloc
// (the preload runs it inside malloc): memory comes from one mmap'd reservation.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rtmem::site_plan {

/// Spans are aligned to their size; a span serves one site. 256 KiB: large enough that a
/// region chunk holds many blocks, small enough that a pool site's spare capacity stays small.
inline constexpr std::size_t span_bytes = std::size_t{256} << 10;
inline constexpr std::size_t span_header_bytes = 64;
/// Blocks are 16-aligned (malloc's guarantee); larger alignments go to the general heap.
inline constexpr std::size_t block_align = 16;
/// A region block carries its size in front (realloc and malloc_usable_size need it).
inline constexpr std::size_t region_prefix = 16;
/// The largest request a strategy serves (a region block must fit in one span).
inline constexpr std::size_t largest_block = span_bytes - span_header_bytes - region_prefix;

enum class strategy : std::uint8_t { pool, region };

/// A lock per site: an allocation and a free from different threads meet here.
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
    std::uint32_t site;       ///< index of the owning site
    std::uint32_t live;       ///< region: blocks not yet freed
    std::uint32_t retired;    ///< region: no longer the span being bumped
    std::uint32_t unused;
    span_header* next_free;   ///< in the arena's list of free spans
};

/// The reserved range and its spans. A span freed by a region goes back to the arena for any
/// site; a pool keeps its spans (its free list holds their blocks).
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
    /// A span for `site`, or nullptr when the range is used up.
    span_header* take(std::uint32_t site) noexcept;
    void give_back(span_header* s) noexcept;
    /// Spans ever taken from the range (its high-water mark).
    [[nodiscard]] std::size_t spans_used() const noexcept { return used_ / span_bytes; }
    [[nodiscard]] std::uintptr_t base() const noexcept { return base_; }
    void lock_for_fork() noexcept { lock_.lock(); }
    void unlock_after_fork() noexcept { lock_.unlock(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

  private:
    std::uintptr_t base_ = 0;
    std::size_t size_ = 0;
    void* mapping_ = nullptr;
    std::size_t mapping_bytes_ = 0;
    site_lock lock_;
    std::size_t used_ = 0;
    span_header* free_ = nullptr;
};

struct site_counters {
    std::uint64_t served = 0;    ///< allocations this site's strategy made
    std::uint64_t declined = 0;  ///< requests it passed to the general heap (too large/aligned)
    std::uint64_t freed = 0;
};

/// One planned site: a pool or a region, safe from any thread (one lock per site).
class planned_site {
  public:
    /// pool: `block` is the largest request served (rounded up to 16); region: `block` is the
    /// chunk size (capped to a span; 0: a span), requests up to `max_request` (0: any that
    /// fits a chunk).
    void configure(span_arena* arena, std::uint32_t index, strategy s, std::size_t block,
                   std::size_t max_request) noexcept;
    /// nullptr: not served here (too large, aligned above 16, range used up): the general heap.
    void* allocate(std::size_t size, std::size_t align) noexcept;
    /// p must be a block of this site.
    void deallocate(void* p) noexcept;
    [[nodiscard]] std::size_t usable_size(const void* p) const noexcept;
    [[nodiscard]] strategy kind() const noexcept { return kind_; }
    [[nodiscard]] site_counters counters() noexcept;
    void lock_for_fork() noexcept { lock_.lock(); }
    void unlock_after_fork() noexcept { lock_.unlock(); }

  private:
    void* pool_allocate() noexcept;
    void* region_allocate(std::size_t size) noexcept;
    void region_free(void* p) noexcept;

    span_arena* arena_ = nullptr;
    std::uint32_t index_ = 0;
    strategy kind_ = strategy::pool;
    std::size_t block_ = 0;
    std::size_t max_request_ = 0;
    std::size_t chunk_ = span_bytes;  // region: bytes of a span used (the rest is never touched)
    site_lock lock_;
    void* free_list_ = nullptr;  // pool
    char* bump_ = nullptr;
    char* end_ = nullptr;
    span_header* current_ = nullptr;  // region: the span being bumped
    site_counters counters_;
};

/// The site of a block of the arena.
[[nodiscard]] inline std::uint32_t site_of(const void* p) noexcept {
    return span_arena::span_of(p)->site;
}

}  // namespace rtmem::site_plan
