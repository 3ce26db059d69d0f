// rt_heap: a general-purpose heap for many threads with a stated worst case per call. Each
// thread gets its own TLSF heap behind bounded size-class free lists and allocates and frees its
// own blocks without a lock; a block freed by another thread goes into its owner's wait-free
// queue and the owner takes it back in bounded batches.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/remote_free_list.hpp"
#include "rtmem/detail/rt_heap_front.hpp"
#include "rtmem/sync/cache_aligned.hpp"

namespace rtmem {

struct rt_heap_options {
    /// Address space reserved at construction: the most memory the heap can ever hold. Only
    /// what is used gets committed, unless real_time.
    std::size_t reserve_bytes = sizeof(void*) == 8 ? std::size_t{4} << 30 : std::size_t{256} << 20;
    /// The unit a thread heap grows by (a power of two, at least 64 KiB). A request larger than
    /// a segment takes several adjacent ones.
    std::size_t segment_bytes = std::size_t{1} << 20;
    /// Thread heaps that can exist at once (a thread's heap is reused after it exits). A thread
    /// that finds none free gets nullptr from allocate (its frees still work).
    unsigned max_threads = 64;
    /// Front lists: a thread's freed blocks of up to 2040 bytes wait on a free list per exact
    /// block size (16-byte classes) for the next request of that size, at most cache_depth per
    /// class and at most cache_class_bytes of them (one at least). 0: off, every free is a
    /// TLSF free. A full list hands the freed block to TLSF.
    unsigned cache_depth = 32;
    std::size_t cache_class_bytes = std::size_t{16} << 10;
    /// An allocate that finds its class's list empty takes up to this many blocks of the class
    /// from TLSF in one search and split (a run), hands out one and lists the rest: a program
    /// allocating many blocks of one size pays TLSF's search once per run. Per class the run
    /// starts at 1 block and doubles at each refill up to this (and to what the list can
    /// hold), so a size allocated only a few times holds little back. The refill's worst case
    /// is one TLSF allocate plus a push per block (docs/rt-heap.md); 1 turns runs off.
    unsigned refill_batch = 16;
    /// When a thread heap starts refilling by runs. `after_remote_free` (the default): once it
    /// first takes back a block another thread freed. A heap whose blocks its own thread frees
    /// gets them back on its lists; its misses are mostly growth, where TLSF's split of the top
    /// block costs about what a run saves and keeps blocks in the order they were made, which
    /// programs that read their objects in that order depend on (Lua 5.4: 1.35x glibc's time
    /// with runs, 0.95x without). A heap fed by other threads' frees misses on most allocates
    /// (its blocks come back late, through its queue): there runs cut the allocator's
    /// instructions by a third (the demo's game thread). `always`: from the first refill.
    enum class run_start : unsigned char { always, after_remote_free };
    run_start refill_runs = run_start::after_remote_free;
    /// At most this many blocks freed by other threads are taken back per allocate call: the
    /// allocate's worst case grows by one TLSF free per block (4: p99.99 of a producer/consumer
    /// run 1085 ns against 2268 ns with 16, docs/rt-heap.md). An owner that allocates less often
    /// than others free into it takes the rest back when it would otherwise grow.
    unsigned drain_batch = 4;
    /// Commit every reserved byte (and the thread heaps' bookkeeping) at construction, so no
    /// call makes a system call afterwards; an exhausted heap returns nullptr.
    bool real_time = false;
    bool prefault = false;  ///< real_time: touch every page now, so none faults later
    bool lock = false;      ///< real_time: mlock everything (failing that, the heap is empty)

    /// Options for real-time use: `bytes` reserved, committed and prefaulted at construction.
    static rt_heap_options real_time_with(std::size_t bytes, bool lock_pages = false) noexcept {
        rt_heap_options o;
        o.reserve_bytes = bytes;
        o.real_time = true;
        o.prefault = true;
        o.lock = lock_pages;
        return o;
    }
};

/// Per-thread TLSF heaps in one reserved address range split into segments. A segment belongs to
/// one thread heap for the life of the rt_heap; a table indexed by (address - base) / segment
/// size finds a block's owner in O(1).
///
/// Bounds per call (x86-64 instructions with RTMEM_CHECKS=0, measured in tests/perf):
/// - allocate, own blocks: a pop from the size-class list (~15); when it is empty, a TLSF
///   allocate (<= ~200) of a run of up to refill_batch blocks of the class (a header store and
///   a link each: the rest are listed), after at most drain_batch blocks other threads gave
///   back are taken (each a push onto a list or a TLSF free, <= ~200).
/// - deallocate by the owning thread: a push onto the size-class list (~20); when it is full,
///   a TLSF free (<= ~200).
/// - deallocate by another thread: wait-free, one atomic exchange and a few stores.
/// - Growing (the thread heap is full): one segment claim (a CAS loop, lock-free) and, unless
///   real_time, one mprotect to commit it. Before growing, every block other threads gave back
///   is taken (O(those blocks)), then the size-class lists are given back to TLSF (O(blocks
///   they hold), at most 128 x cache_depth).
/// - The first call from a thread binds it to a heap: O(max_threads) scan, and a thread-exit
///   hook (a pthread key; on Windows an FLS callback and one malloc). Outside real-time mode it
///   also initialises the thread heap (~10 KiB of list heads). Call attach() at thread start.
/// When a thread exits, its heap is handed back (its blocks stay valid and can be freed from any
/// thread) and the next thread that binds adopts it with its memory.
///
/// Not movable (threads hold its id and the address of their heaps). Destroy it only when no
/// other thread uses it. Checks (RTMEM_CHECKS >= 1): a pointer outside every granted segment or
/// misaligned (foreign_pointer), a block freed twice from other threads (double_free); frees by
/// the owner get tlsf_allocator's checks, and so do the blocks others gave back when drained.
class rt_heap {
  public:
    static constexpr std::string_view name = "rt_heap";

    explicit rt_heap(const rt_heap_options& options = {}) noexcept;
    ~rt_heap();
    rt_heap(const rt_heap&) = delete;
    rt_heap& operator=(const rt_heap&) = delete;

    /// False when the reservation (or, in real-time mode, commit/lock) failed: every allocate
    /// then returns nullptr.
    [[nodiscard]] bool ready() const noexcept { return base_ != nullptr; }

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        if (current_.id != id_) [[unlikely]]  // a binding to this heap is never null
            return allocate_unbound(size, align);
        thread_heap* h = current_.heap;
        if (size <= front_list::max_request && align <= front_align) [[likely]] {
            if (void* p = h->front.pop(size)) [[likely]]
                return p;
        }
        return allocate_miss(*h, size, align);
    }

    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t size,
                                        std::size_t align = default_alignment) noexcept {
        (void)align;
        const std::uintptr_t offset =
            reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_);
        thread_heap* owner = nullptr;
        if (offset < reserved_) [[likely]]
            owner = owners_[offset >> segment_shift_].load(std::memory_order_acquire);
        // A binding for this heap is never null, so a match also means the segment was granted.
        if (owner == current_.heap && current_.id == id_) [[likely]]
            return free_own(*owner, p, size);
        free_remote(owner, p, size);  // nullptr too (it lies in no segment)
    }

    /// free() for a block whose size the caller does not know: deallocates p (as deallocate with
    /// its usable size) and returns true when p lies in a segment granted to a thread heap;
    /// returns false, touching nothing, for any other pointer (nullptr included), so a malloc
    /// shim can hand it to the next allocator. One table lookup serves the test and the free.
    [[nodiscard]] RTMEM_ALWAYS_INLINE bool deallocate_if_owned(void* p) noexcept {
        const std::uintptr_t offset =
            reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_);
        if (offset >= reserved_) [[unlikely]]
            return false;
        thread_heap* owner = owners_[offset >> segment_shift_].load(std::memory_order_acquire);
        if (owner == nullptr) [[unlikely]]
            return false;
        const std::size_t size = usable_size(p);
        if (owner == current_.heap && current_.id == id_) [[likely]]
            free_own(*owner, p, size);
        else
            free_remote(owner, p, size);
        return true;
    }

    /// Resizes a live block of `old_size` requested bytes: in place when the calling thread owns
    /// it and TLSF can (shrinking, or the next block free and big enough), else allocate, copy
    /// and free (a cross-thread free when another thread owns it). nullptr, with the block left
    /// as it was, when no memory is left. reallocate(nullptr, ...) allocates.
    [[nodiscard]] void* reallocate(void* p, std::size_t old_size, std::size_t new_size,
                                   std::size_t align = default_alignment) noexcept;

    /// Binds the calling thread to a thread heap now (what the first allocate does). False when
    /// every one of max_threads heaps is taken. In real-time mode a thread heap without memory
    /// also gets its first segment here, so the thread's first allocate does not grow it: each
    /// attached thread holds at least one. Then it reads the thread heap's bookkeeping (~12 KiB,
    /// written by whichever thread built or last used it) into this core's cache, so the thread's
    /// first calls do not each wait for memory (~1 us for the first allocate without it).
    bool attach() noexcept;

    /// Takes back every block other threads freed into the calling thread's heap, and into the
    /// heaps of exited threads not yet adopted. O(those blocks).
    void collect() noexcept;

    /// Fork handlers (pthread_atfork prepare, then parent and child): hold the lock thread exit
    /// and binding take, so a child never inherits it held by a thread it does not have.
    static void lock_for_fork() noexcept;
    static void unlock_after_fork() noexcept;

    /// Whether p lies in a segment granted to a thread heap. O(1).
    [[nodiscard]] bool owns(const void* p) const noexcept;
    /// Bytes the block at p can hold.
    [[nodiscard]] static std::size_t usable_size(const void* p) noexcept {
        return tlsf_allocator::usable_size(p);
    }

    /// Sums of every thread heap's accounting: capacity (segments granted), used, peak (the sum
    /// of each heap's peak: an upper bound), live and total counts. A block another thread
    /// freed counts as live until its owner takes it back. Exact only while no other thread
    /// allocates or frees (read it from one thread at a quiet moment).
    [[nodiscard]] rtmem::stats stats() const noexcept;
    /// Freed blocks waiting on the size-class lists of every thread heap (each list holds at
    /// most min(cache_depth, cache_class_bytes / block size) of them). O(max_threads x 128);
    /// exact only at a quiet moment, like stats().
    [[nodiscard]] std::size_t cached_blocks() const noexcept;
    /// Thread heaps bound to running threads, and those left by exited threads.
    [[nodiscard]] unsigned threads_attached() const noexcept;
    [[nodiscard]] unsigned threads_abandoned() const noexcept;
    /// Segments granted so far, of segment_count().
    [[nodiscard]] std::size_t segments_used() const noexcept {
        return next_segment_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::size_t segment_count() const noexcept { return segment_count_; }

    /// Every thread heap's TLSF invariants, that each granted segment belongs to a thread heap
    /// that was created, and the waiting queues' marks. Only while no other thread uses the heap.
    [[nodiscard]] bool check() const noexcept;

  private:
    enum slot_state : int { slot_free = 0, slot_owned = 1, slot_abandoned = 2, slot_busy = 3 };

    using front_list = detail::rt_heap_front;
    // Requests aligned to more than TLSF's natural 16 bypass the lists.
    static constexpr std::size_t front_align = tlsf_allocator::classes::user_align;

    struct alignas(destructive_interference_size) thread_heap {
        front_list front;  // first: the fast paths touch only its lists
        tlsf_allocator tlsf;
        std::size_t segments = 0;  // granted to this heap
        // Blocks put on a list that no caller allocated (attach()'s, the rest of refill runs):
        // stats() leaves them out of the allocation count.
        std::size_t prepared = 0;
        unsigned index = 0;
        detail::remote_free_list remote;
    };

    // The calling thread's heap in the last rt_heap it used (one compare on the fast path).
    struct binding {
        std::uint64_t id;
        thread_heap* heap;
    };
    static constinit inline thread_local binding current_{0, nullptr};

    [[nodiscard]] RTMEM_ALWAYS_INLINE thread_heap* local() const noexcept {
        return current_.id == id_ ? current_.heap : nullptr;
    }

    // The owner's free: onto its size-class list, else (full, or too large) a TLSF free.
    RTMEM_ALWAYS_INLINE static void free_own(thread_heap& h, void* p, std::size_t size) noexcept {
        if constexpr (check_level >= 1) {
            if (!valid_own(h, p, size)) return;
        }
        const std::size_t whole = usable_size(p);
        if (h.front.push(p, whole)) [[likely]]
            return;
        free_to_tlsf(h, p, size);
    }
    static bool valid_own(thread_heap& h, void* p, std::size_t size) noexcept;
    static void free_to_tlsf(thread_heap& h, void* p, std::size_t size) noexcept;
    static void flush_front(thread_heap& h) noexcept;

    thread_heap* bind() noexcept;
    void* allocate_unbound(std::size_t size, std::size_t align) noexcept;
    void* allocate_miss(thread_heap& h, std::size_t size, std::size_t align) noexcept;
    void* allocate_tlsf(thread_heap& h, std::size_t size, std::size_t align) noexcept;
    void* allocate_refill(thread_heap& h, unsigned c, std::size_t size,
                          std::size_t align) noexcept;
    void* allocate_drained(thread_heap& h, std::size_t size, std::size_t align) noexcept;
    void* allocate_slow(thread_heap& h, std::size_t size, std::size_t align) noexcept;
    void free_remote(thread_heap* owner, void* p, std::size_t size) noexcept;
    static void drain(thread_heap& h, std::size_t limit) noexcept;
    bool grow(thread_heap& h, std::size_t size, std::size_t align) noexcept;
    static void warm(const thread_heap& h) noexcept;
    thread_heap* heap_at(unsigned i) const noexcept;
    thread_heap* construct_heap(unsigned i) noexcept;
    void release(thread_heap* h) noexcept;  // the owning thread exits
    friend struct rt_heap_thread_exit;
    friend struct rt_heap_registry;

    std::uint64_t id_;
    std::byte* base_ = nullptr;  // the segments
    std::size_t reserved_ = 0;   // bytes of segments
    unsigned segment_shift_ = 20;
    std::size_t segment_count_ = 0;
    std::atomic<thread_heap*>* owners_ = nullptr;  // per segment
    std::atomic<int>* states_ = nullptr;           // per thread heap (slot_state)
    std::byte* heaps_ = nullptr;                   // max_threads thread_heap slots
    std::byte* meta_ = nullptr;                    // owners_, states_, heaps_
    std::size_t meta_bytes_ = 0;
    rt_heap_options options_;
    unsigned drain_batch_;
    unsigned refill_batch_;
    alignas(destructive_interference_size) std::atomic<std::size_t> next_segment_{0};
    rt_heap* registry_prev_ = nullptr;  // live rt_heaps (see rt_heap_registry)
    rt_heap* registry_next_ = nullptr;
};

}  // namespace rtmem
