// The sites of one plan, their range, and each thread's caches of them. A thread allocates and
// frees through its own cache without a lock: per pool site a bounded free list (refilled from
// and flushed to the site's shared list in batches, under the site's lock), per region site
// the chunk it is bumping. A thread's caches are found through one thread_local slot; they go
// back to their sites when the thread exits (a pthread key's destructor) and, in a forked
// child, for every thread that no longer exists.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "span_arena.hpp"

namespace rtmem::site_plan {

class planned_site;

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RTMEM_PLAN_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define RTMEM_PLAN_TSAN 1
#endif

/// A count written by one thread and read by any (relaxed).
struct owned_count {
    std::atomic<std::uint64_t> value{0};
    void add() noexcept {
#if defined(__x86_64__) && !defined(RTMEM_PLAN_TSAN)
        // One instruction instead of a load, an add and a store: the count's only writer is its
        // thread, and a reader's load of the aligned word sees it before or after, whole. (TSan
        // builds take the atomic load and store, which it can see.)
        asm("addq $1, %0" : "+m"(value));
#else
        value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#endif
    }
    [[nodiscard]] std::uint64_t get() const noexcept { return value.load(std::memory_order_relaxed); }
};

/// One thread's cache of one site, one cache line. Only its thread touches it (a dead thread's:
/// its exit handler, or a forked child's single thread).
struct alignas(64) thread_site {
    void* free = nullptr;          ///< pool: cached blocks, linked through their first word
    std::uint32_t count = 0;       ///< pool: blocks in `free`
    /// Region: blocks of `chunk` allocated minus freed here (a chunk holds at most 16 K blocks).
    /// 0 means the chunk is empty: other threads' frees only count once it is retired.
    std::int32_t live = 0;
    span_header* chunk = nullptr;  ///< region: the span this thread bumps
    char* bump = nullptr;
    union {
        char* end = nullptr;  ///< region: the end of `chunk`'s bytes
        void* tail;           ///< pool: the last block of `free` (a flush splices it whole)
    };
    owned_count served, declined, freed;
};
static_assert(sizeof(thread_site) == 64);

class site_group;

struct alignas(64) thread_cache {
    site_group* group;
    thread_cache* next;       ///< in the group's list (never removed: reused after a thread exits)
    pthread_t owner;
    bool in_use;
    std::size_t bytes;        ///< of its mapping
    thread_site* sites;       ///< one per site of the group, after this header in the mapping
};

/// Which group's cache this thread used last (its id: a group's address may be reused).
struct thread_slot {
    std::uint64_t group;
    thread_site* sites;
    thread_cache* cache;
};
extern constinit thread_local thread_slot tl_slot __attribute__((tls_model("initial-exec")));

class site_group {
  public:
    /// `sites` must outlive the group; configure each with this group before any allocation.
    void init(planned_site* sites, std::uint32_t count) noexcept;
    /// The range for the sites' blocks (nothing is served before it is reserved).
    bool reserve(std::size_t bytes) noexcept { return arena_.reserve(bytes); }
    /// Unmaps the range and every thread's cache; no thread may use the sites after this.
    void release() noexcept;
    [[nodiscard]] span_arena& arena() noexcept { return arena_; }
    [[nodiscard]] const span_arena& arena() const noexcept { return arena_; }
    [[nodiscard]] std::uint32_t size() const noexcept { return count_; }
    /// What tl_slot.group holds while this thread's caches are this group's (0 before init).
    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

    /// This thread's cache of site `i`.
    [[gnu::always_inline]] thread_site& mine(std::uint32_t i) noexcept {
        if (tl_slot.group == id_) [[likely]]
            return tl_slot.sites[i];
        return attach()->sites[i];
    }
    /// Gives this thread's cached blocks and chunks back to their sites (also run by the
    /// thread's exit). The thread may go on allocating: it gets a cache again.
    void detach_this_thread() noexcept;

    /// Sums the counters of site `i` over every thread's cache.
    void counters(std::uint32_t i, std::uint64_t& served, std::uint64_t& declined,
                  std::uint64_t& freed) noexcept;

    /// Fork: every lock held across it; in the child the caches of the threads that did not
    /// survive the fork go back to their sites.
    void lock_for_fork() noexcept;
    void unlock_after_fork_in_parent() noexcept;
    void unlock_after_fork_in_child() noexcept;

  private:
    thread_cache* attach() noexcept;
    void flush(thread_cache* c, bool walk) noexcept;
    static void on_thread_exit(void* cache) noexcept;

    std::uint64_t id_ = 0;
    planned_site* sites_ = nullptr;
    std::uint32_t count_ = 0;
    span_arena arena_;
    site_lock caches_lock_;
    thread_cache* caches_ = nullptr;
    pthread_key_t key_{};
    bool has_key_ = false;
};

}  // namespace rtmem::site_plan
