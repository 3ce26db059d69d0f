// The per-site strategies of a plan (`rtmem run --plan`, `rtmem replay --plan`): a pool of
// fixed-size blocks and a bump region whose chunks are recycled when their last block is freed.
// Each thread allocates through its own cache of the site (site_group.hpp) without a lock; a
// block freed by another thread goes back to its site (a pool: into the freeing thread's cache
// of the same site; a region: one atomic subtraction on its chunk).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "site_group.hpp"
#include "span_arena.hpp"

namespace rtmem::site_plan {

/// Blocks are 16-aligned (malloc's guarantee); larger alignments go to the general heap.
inline constexpr std::size_t block_align = 16;
/// A region block carries its size in front (realloc and malloc_usable_size need it).
inline constexpr std::size_t region_prefix = 16;
static_assert(region_prefix % block_align == 0);  // block_need rounds the sum
/// The largest request a strategy serves (a region block must fit in one span).
inline constexpr std::size_t largest_block = span_bytes - span_header_bytes - region_prefix;

enum class strategy : std::uint8_t { pool, region };

struct site_counters {
    std::uint64_t served = 0;    ///< allocations this site's strategy made
    std::uint64_t declined = 0;  ///< requests it passed to the general heap (too large/aligned)
    std::uint64_t freed = 0;
};

/// One planned site: a pool or a region, safe from any thread. Its first cache line holds what
/// every call reads, the second what threads share under the lock (a program with a hundred
/// sites keeps one line per site hot, not two).
class alignas(64) planned_site {
  public:
    /// pool: `block` is the largest request served (rounded up to 16); region: `block` is the
    /// chunk size (capped to a span; 0: a span), requests up to `max_request` (0: any that
    /// fits a chunk).
    void configure(site_group* group, std::uint32_t index, strategy s, std::size_t block,
                   std::size_t max_request) noexcept;

    /// nullptr: not served here (too large, aligned above 16, range used up): the general heap.
    /// Out of line: inlined into the preload's entry points, its registers would cost every
    /// call that is no planned site.
    void* allocate(std::size_t size, std::size_t align) noexcept;
    /// p must be a block of this site; any thread may free it.
    void deallocate(void* p) noexcept;

    [[nodiscard]] std::size_t usable_size(const void* p) const noexcept {
        if (kind_ == strategy::pool) return block_;
        std::size_t size = 0;
        std::memcpy(&size, static_cast<const char*>(p) - region_prefix, sizeof size);
        return size;
    }
    [[nodiscard]] strategy kind() const noexcept { return kind_; }
    /// Summed over every thread's cache of this site.
    [[nodiscard]] site_counters counters() noexcept;
    void lock_for_fork() noexcept { lock_.lock(); }
    void unlock_after_fork() noexcept { lock_.unlock(); }

    /// A thread's cache of this site goes back to it (the thread exits, or is gone after fork:
    /// `walk`, its list is followed to its end rather than trusting its recorded tail).
    void flush(thread_site& t, bool walk) noexcept;

  private:
    /// A region block's bytes: its size prefix and the request rounded up (at least 16).
    static std::size_t block_need(std::size_t size) noexcept {
        const std::size_t n = size + (size == 0 ? 1 : 0);  // a compare and an add with carry
        return (n + region_prefix + block_align - 1) & ~(block_align - 1);
    }
    // The first call of a thread: attaches it to the group, then as allocate/deallocate. Out of
    // line and tail-called, like every slow path, so the fast paths save no register.
    [[gnu::noinline]] void* allocate_attaching(std::size_t size, std::size_t align) noexcept;
    [[gnu::noinline]] void deallocate_attaching(void* p) noexcept;
    [[gnu::noinline]] void pool_flush_and_push(thread_site& t, void* p) noexcept;
    void* pool_refill(thread_site& t) noexcept;
    void pool_flush(thread_site& t, bool walk) noexcept;
    void* region_refill(thread_site& t, std::size_t size) noexcept;
    void region_retire(thread_site& t) noexcept;
    void region_remote_free(span_header* s) noexcept;

    /// This thread's cache of the site, if the thread is attached to the group: its fast
    /// paths read the group's id and the cache's offset from this line (no call, no null test).
    [[gnu::always_inline]] bool attached() const noexcept { return tl_slot.group == group_id_; }
    [[gnu::always_inline]] thread_site& mine() const noexcept {
        return *reinterpret_cast<thread_site*>(reinterpret_cast<char*>(tl_slot.sites) +
                                               cache_offset_);
    }

    site_group* group_ = nullptr;
    std::uint64_t group_id_ = ~std::uint64_t{0};  // the group's id (never 0: that is no group)
    std::size_t cache_offset_ = 0;                 // index_ * sizeof(thread_site)
    std::uint32_t index_ = 0;
    strategy kind_ = strategy::pool;
    std::size_t block_ = 0;          // pool: the block size
    std::size_t limit_ = 0;          // requests below it are served (0: none)
    std::size_t chunk_ = span_bytes;  // region: bytes of a span used (the rest is never touched)
    std::uint32_t cache_limit_ = 0;  // pool: blocks a thread's cache holds at most
    std::uint32_t batch_ = 0;        // pool: blocks moved per refill
    // Shared by the site's threads, under lock_ (pool only: a region's chunks are per thread).
    alignas(64) site_lock lock_;
    void* free_list_ = nullptr;
    char* carve_ = nullptr;  // the span blocks are carved from
    char* carve_end_ = nullptr;
};

}  // namespace rtmem::site_plan
