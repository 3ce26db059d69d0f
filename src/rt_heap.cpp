// rt_heap slow paths: construction, binding threads to heaps and releasing them at thread exit,
// growing a thread heap by segments, cross-thread frees, draining, stats and checks.
#include "rtmem/alloc/rt_heap.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "rtmem/core/virtual_memory.hpp"
#include "rtmem/detail/thread_exit.hpp"

#ifndef RTMEM_THREAD_EXIT_CALLBACK
#include <pthread.h>
#endif

namespace rtmem {
namespace {

std::atomic<std::uint64_t> next_heap_id{1};

#ifndef RTMEM_THREAD_EXIT_CALLBACK
// Set once the calling thread's exit hook has run: a call from a later thread_local destructor
// must not bind again (its hook would never run).
constinit thread_local bool thread_exiting = false;
#endif

constexpr std::size_t min_segment_bytes = std::size_t{64} << 10;

}  // namespace

// Every live rt_heap, so a thread's exit hook touches only heaps that still exist. Taken when a
// thread exits or evicts a binding, and when a heap is created or destroyed; never on a fast path.
struct rt_heap_registry {
    static std::mutex& mutex() noexcept {
        static std::mutex m;  // not constinit: MinGW's std::mutex constructor is not constexpr
        return m;
    }
    static rt_heap*& head() noexcept {
        static constinit rt_heap* h = nullptr;
        return h;
    }
    static void add(rt_heap* heap) noexcept {
        std::lock_guard guard(mutex());
        heap->registry_next_ = head();
        if (head() != nullptr) head()->registry_prev_ = heap;
        head() = heap;
    }
    static void remove(rt_heap* heap) noexcept {
        std::lock_guard guard(mutex());
        if (heap->registry_prev_ != nullptr)
            heap->registry_prev_->registry_next_ = heap->registry_next_;
        else
            head() = heap->registry_next_;
        if (heap->registry_next_ != nullptr)
            heap->registry_next_->registry_prev_ = heap->registry_prev_;
    }
    // With mutex() held.
    static rt_heap* find(std::uint64_t id) noexcept {
        for (rt_heap* h = head(); h != nullptr; h = h->registry_next_)
            if (h->id_ == id) return h;
        return nullptr;
    }
};

// The thread heaps the calling thread holds (one per rt_heap it used), released at thread exit.
struct rt_heap_thread_exit {
    static constexpr unsigned capacity = 16;
    struct entry {
        std::uint64_t id;
        rt_heap::thread_heap* heap;
    };
    entry entries[capacity] = {};
    unsigned count = 0;

#ifndef RTMEM_THREAD_EXIT_CALLBACK
    // The pthread key's destructor (see this_threads_hook).
    static void on_thread_exit(void* self) noexcept {
        thread_exiting = true;
        rt_heap::current_ = {0, nullptr};
        static_cast<rt_heap_thread_exit*>(self)->release_all();
    }
#endif

    // Touches no thread_local: on Windows it runs after the thread's emulated TLS is gone.
    void release_all() noexcept {
        std::lock_guard guard(rt_heap_registry::mutex());
        for (unsigned i = 0; i < count; ++i)
            if (rt_heap* h = rt_heap_registry::find(entries[i].id)) h->release(entries[i].heap);
        count = 0;
    }

    // Makes room for one entry: drops entries of destroyed heaps, else releases the oldest.
    void make_room() noexcept {
        std::lock_guard guard(rt_heap_registry::mutex());
        unsigned kept = 0;
        for (unsigned i = 0; i < count; ++i)
            if (rt_heap_registry::find(entries[i].id) != nullptr) entries[kept++] = entries[i];
        count = kept;
        if (count < capacity) return;
        if (rt_heap* h = rt_heap_registry::find(entries[0].id)) {
            h->release(entries[0].heap);
            if (rt_heap::current_.heap == entries[0].heap) rt_heap::current_ = {0, nullptr};
        }
        std::copy(entries + 1, entries + count, entries);
        --count;
    }
};

namespace {
#ifdef RTMEM_THREAD_EXIT_CALLBACK
// Windows (core/config.hpp): MinGW runs thread_local destructors, and frees the emulated TLS,
// before Windows runs fiber-local storage callbacks. So the hook lives on the C heap and is
// released by the callback detail::at_thread_exit registers at the thread's first binding.
constinit thread_local rt_heap_thread_exit* thread_exit_hook = nullptr;

rt_heap_thread_exit* this_threads_hook() noexcept {
    if (thread_exit_hook != nullptr) [[likely]]
        return thread_exit_hook;
    void* storage = std::malloc(sizeof(rt_heap_thread_exit));
    if (storage == nullptr) return nullptr;
    auto* hook = ::new (storage) rt_heap_thread_exit;
    const auto run = [](void* p) {
        static_cast<rt_heap_thread_exit*>(p)->release_all();
        std::free(p);
    };
    if (!detail::at_thread_exit(run, hook)) {  // never handed back: refuse the binding instead
        std::free(storage);
        return nullptr;
    }
    thread_exit_hook = hook;
    return hook;
}
#else
// A pthread key's destructor hands the heaps back, not a thread_local destructor: registering
// one (__cxa_thread_atexit) makes glibc calloc, which in a new thread may create a malloc arena
// (mmap: system calls in a real-time thread's first call), while setting a key allocates nothing.
// Key destructors also run after the thread's thread_local destructors, which may still allocate.
constinit thread_local rt_heap_thread_exit thread_exit_hook;
constinit thread_local bool exit_hook_registered = false;

rt_heap_thread_exit* this_threads_hook() noexcept {
    if (thread_exiting) return nullptr;  // no binding after the hook ran
    if (!exit_hook_registered) [[unlikely]] {
        static pthread_key_t key;
        static const bool key_made =
            pthread_key_create(&key, &rt_heap_thread_exit::on_thread_exit) == 0;
        if (!key_made || pthread_setspecific(key, &thread_exit_hook) != 0) return nullptr;
        exit_hook_registered = true;
    }
    return &thread_exit_hook;
}
#endif
}  // namespace

rt_heap::rt_heap(const rt_heap_options& options) noexcept
    : id_(next_heap_id.fetch_add(1, std::memory_order_relaxed)),
      options_(options),
      drain_batch_(options.drain_batch == 0 ? 1 : options.drain_batch),
      refill_batch_(options.refill_batch == 0 ? 1 : options.refill_batch) {
    const std::size_t seg = options.segment_bytes;
    if (!is_pow2(seg) || seg < min_segment_bytes || options.reserve_bytes < seg ||
        options.max_threads == 0) {
        report_violation(violation_kind::bad_argument, name, nullptr, seg,
                         "segment_bytes %zu must be a power of two >= %zu and <= reserve_bytes "
                         "(%zu), max_threads (%u) > 0",
                         seg, min_segment_bytes, options.reserve_bytes, options.max_threads);
        return;
    }
    segment_shift_ = static_cast<unsigned>(std::countr_zero(seg));
    segment_count_ = options.reserve_bytes >> segment_shift_;
    const std::size_t bytes = segment_count_ << segment_shift_;

    // Bookkeeping: [states][owners][thread heaps], one mapping.
    const std::size_t states_bytes =
        align_up(options.max_threads * sizeof(std::atomic<int>), alignof(thread_heap));
    const std::size_t owners_bytes =
        align_up(segment_count_ * sizeof(std::atomic<thread_heap*>), alignof(thread_heap));
    meta_bytes_ = virtual_memory::round_to_pages(states_bytes + owners_bytes +
                                                 options.max_threads * sizeof(thread_heap));
    meta_ = static_cast<std::byte*>(virtual_memory::reserve(meta_bytes_));
    auto* segments = static_cast<std::byte*>(virtual_memory::reserve(bytes));
    bool ok = meta_ != nullptr && segments != nullptr && virtual_memory::commit(meta_, meta_bytes_);
    if (ok && options.real_time) {
        ok = virtual_memory::commit(segments, bytes);
        if (ok && options.prefault) {
            virtual_memory::prefault(meta_, meta_bytes_);
            virtual_memory::prefault(segments, bytes);
        }
        if (ok && options.lock)
            ok = virtual_memory::lock(meta_, meta_bytes_) && virtual_memory::lock(segments, bytes);
    }
    if (!ok) {
        if (segments != nullptr) virtual_memory::release(segments, bytes);
        if (meta_ != nullptr) virtual_memory::release(meta_, meta_bytes_);
        meta_ = nullptr;
        return;
    }
    states_ = reinterpret_cast<std::atomic<int>*>(meta_);
    for (unsigned i = 0; i < options.max_threads; ++i)
        new (&states_[i]) std::atomic<int>(slot_free);
    owners_ = reinterpret_cast<std::atomic<thread_heap*>*>(meta_ + states_bytes);
    for (std::size_t i = 0; i < segment_count_; ++i)  // 8 bytes per segment: 32 KiB for 4 GiB
        new (&owners_[i]) std::atomic<thread_heap*>(nullptr);
    heaps_ = meta_ + states_bytes + owners_bytes;
    base_ = segments;
    reserved_ = bytes;
    // Real time: every thread heap's bookkeeping (~10 KiB of list heads each) is initialised now,
    // so a thread's first call does not write it (about 8,000 of its 15,000 instructions).
    if (options.real_time)
        for (unsigned i = 0; i < options.max_threads; ++i) construct_heap(i);
    rt_heap_registry::add(this);
}

rt_heap::~rt_heap() {
    if (base_ == nullptr) return;
    rt_heap_registry::remove(this);
    for (unsigned i = 0; i < options_.max_threads; ++i)
        if (options_.real_time || states_[i].load(std::memory_order_acquire) != slot_free)
            heap_at(i)->~thread_heap();
    if (options_.lock) {
        virtual_memory::unlock(base_, reserved_);
        virtual_memory::unlock(meta_, meta_bytes_);
    }
    virtual_memory::release(base_, reserved_);
    virtual_memory::release(meta_, meta_bytes_);
    if (current_.id == id_) current_ = {0, nullptr};
}

rt_heap::thread_heap* rt_heap::heap_at(unsigned i) const noexcept {
    return reinterpret_cast<thread_heap*>(heaps_ + std::size_t{i} * sizeof(thread_heap));
}

rt_heap::thread_heap* rt_heap::bind() noexcept {
    if (base_ == nullptr) return nullptr;
    rt_heap_thread_exit* exit_hook = this_threads_hook();
    if (exit_hook == nullptr) return nullptr;
    rt_heap_thread_exit& hook = *exit_hook;
    for (unsigned i = 0; i < hook.count; ++i) {
        if (hook.entries[i].id == id_) {
            current_ = {id_, hook.entries[i].heap};
            return current_.heap;
        }
    }
    if (hook.count == rt_heap_thread_exit::capacity) hook.make_room();
    // Adopt the heap of an exited thread first (its memory is reused), else create one.
    thread_heap* h = nullptr;
    for (unsigned i = 0; i < options_.max_threads && h == nullptr; ++i) {
        int expected = slot_abandoned;  // a plain load first: a failing CAS writes the line
        if (states_[i].load(std::memory_order_relaxed) == slot_abandoned &&
            states_[i].compare_exchange_strong(expected, slot_owned, std::memory_order_acquire))
            h = heap_at(i);
    }
    for (unsigned i = 0; i < options_.max_threads && h == nullptr; ++i) {
        int expected = slot_free;
        if (states_[i].compare_exchange_strong(expected, slot_busy, std::memory_order_acquire)) {
            h = options_.real_time ? heap_at(i) : construct_heap(i);  // real time: built already
            states_[i].store(slot_owned, std::memory_order_release);
        }
    }
    if (h == nullptr) return nullptr;
    hook.entries[hook.count++] = {id_, h};
    current_ = {id_, h};
    return h;
}

rt_heap::thread_heap* rt_heap::construct_heap(unsigned i) noexcept {
    thread_heap* h = new (heap_at(i)) thread_heap;
    h->index = i;
    h->front.set_depth(options_.cache_depth, options_.cache_class_bytes, refill_batch_);
    if (options_.refill_runs == rt_heap_options::run_start::always) h->front.enable_runs();
    return h;
}

bool rt_heap::attach() noexcept {
    if (local() != nullptr) return true;
    thread_heap* h = bind();
    if (h == nullptr) return false;
    if (options_.real_time && h->segments == 0) (void)grow(*h, 1, default_alignment);
    warm(*h);
    // Walks the miss path once (its code, TLSF's top block's lines) for a block that waits on
    // the smallest class's list: in a program's first thread that code never ran, and the first
    // allocate that misses would fetch it from memory (~1 us). Not a caller's allocation:
    // stats() leaves it out. Outside real-time mode a heap without memory skips it (no growth).
    if (h->front.pushes_left(1) != 0 && h->segments != 0) {
        if (void* p = allocate_miss(*h, 1, default_alignment)) {
            if (h->front.push(p, usable_size(p)))
                ++h->prepared;
            else
                h->tlsf.deallocate(p, 1);
        }
    }
    return true;
}

void rt_heap::warm(const thread_heap& h) noexcept {
    // The lists and TLSF's bookkeeping, a read per 64-byte line; the remote queue, which other
    // threads write, only through its own (atomic) test.
    const auto* line = reinterpret_cast<const volatile unsigned char*>(&h);
    const std::size_t owner_only =
        static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&h.remote) -
                                 reinterpret_cast<const unsigned char*>(&h));
    unsigned char sum = 0;
    for (std::size_t at = 0; at < owner_only; at += 64)
        sum = static_cast<unsigned char>(sum + line[at]);
    (void)sum;
    (void)h.remote.empty();
}

void rt_heap::release(thread_heap* h) noexcept {
    drain(*h, static_cast<std::size_t>(-1));
    states_[h->index].store(slot_abandoned, std::memory_order_release);
}

void* rt_heap::allocate_unbound(std::size_t size, std::size_t align) noexcept {
    thread_heap* h = bind();
    if (h == nullptr) return nullptr;
    return allocate(size, align);
}

namespace {
// A second look after a drain, which may just have put a block on the request's list.
RTMEM_ALWAYS_INLINE void* pop_again(detail::rt_heap_front& front, std::size_t size,
                                    std::size_t align) noexcept {
    if (size > detail::rt_heap_front::max_request || align > tlsf_allocator::classes::user_align)
        return nullptr;
    return front.pop(size);
}
}  // namespace

// The request's list is empty: one TLSF block, or a run of its class (refill); growing the
// heap when TLSF has neither. The run's work is out of line: with the lists off (or for a
// class whose list holds one block) this path is the plain TLSF allocate it was.
RTMEM_ALWAYS_INLINE void* rt_heap::allocate_tlsf(thread_heap& h, std::size_t size,
                                             std::size_t align) noexcept {
    if (size <= front_list::max_request && align <= front_align) {
        const unsigned c = front_list::class_of(size);
        if (h.front.refills(c)) return allocate_refill(h, c, size, align);
    }
    if (void* p = h.tlsf.allocate(size, align)) [[likely]]
        return p;
    return allocate_slow(h, size, align);
}

void* rt_heap::allocate_refill(thread_heap& h, unsigned c, std::size_t size,
                               std::size_t align) noexcept {
    const std::uint32_t n = is_pow2(align) ? h.front.refill_count(c) : 1;  // else reported
    if (n > 1) {
        if (void* p = h.tlsf.allocate_run(front_list::class_block(c), n)) [[likely]] {
            h.front.push_run(c, p, n);
            h.prepared += n - 1;
            return p;
        }
    }
    if (void* p = h.tlsf.allocate(size, align)) [[likely]]
        return p;
    return allocate_slow(h, size, align);
}

void* rt_heap::allocate_miss(thread_heap& h, std::size_t size, std::size_t align) noexcept {
    if (!h.remote.empty()) [[unlikely]]
        return allocate_drained(h, size, align);
    return allocate_tlsf(h, size, align);
}

void* rt_heap::allocate_drained(thread_heap& h, std::size_t size, std::size_t align) noexcept {
    drain(h, drain_batch_);
    if (void* p = pop_again(h.front, size, align)) return p;
    return allocate_tlsf(h, size, align);
}

void* rt_heap::allocate_slow(thread_heap& h, std::size_t size, std::size_t align) noexcept {
    if (size > tlsf_allocator::max_pool_bytes || !is_pow2(align)) return nullptr;  // reported
    if (!h.remote.empty()) {
        drain(h, static_cast<std::size_t>(-1));
        if (void* p = pop_again(h.front, size, align)) return p;
        if (void* p = h.tlsf.allocate(size, align)) return p;
    }
    if (h.front.blocks() != 0) {  // the lists hold what TLSF lacks: give it all back
        flush_front(h);
        if (void* p = h.tlsf.allocate(size, align)) return p;
    }
    if (!grow(h, size, align)) return nullptr;
    return h.tlsf.allocate(size, align);
}

bool rt_heap::valid_own(thread_heap& h, void* p, std::size_t size) noexcept {
    if (!h.tlsf.valid_live(p, size, "deallocate")) return false;  // reported
    if (front_list::marked(p)) {
        report_violation(violation_kind::double_free, name, p, size,
                         "deallocate(%p): the block is already free (on its size-class list, "
                         "or waiting for its owner thread)",
                         p);
        return false;
    }
    return true;
}

void rt_heap::free_to_tlsf(thread_heap& h, void* p, std::size_t size) noexcept {
    h.tlsf.deallocate(p, size);
}

void rt_heap::flush_front(thread_heap& h) noexcept {
    (void)h.front.flush([&h](void* p, std::size_t whole) { h.tlsf.deallocate(p, whole); });
}

bool rt_heap::grow(thread_heap& h, std::size_t size, std::size_t align) noexcept {
    using classes = tlsf_allocator::classes;
    // What TLSF will search for: the block size (with room to align), rounded up to the next
    // size class (good fit: a block in that class or above always fits), plus the pool's own
    // bookkeeping. Less, and the new pool's one free block can sit in a class below the search.
    std::size_t request = classes::block_size_for(size);
    if (align > classes::user_align) request += align + sizeof(tlsf_allocator::block);
    if (request >= classes::small_block)
        request += (std::size_t{1} << (classes::fls(request) - classes::sl_log2)) - 1;
    const std::size_t need =
        request + tlsf_allocator::pool_overhead + tlsf_allocator::block::min_size;
    const std::size_t k = (need + (std::size_t{1} << segment_shift_) - 1) >> segment_shift_;
    std::size_t first = next_segment_.load(std::memory_order_relaxed);
    do {
        if (k > segment_count_ - first) return false;  // exhausted
    } while (!next_segment_.compare_exchange_weak(first, first + k, std::memory_order_relaxed));
    std::byte* p = base_ + (first << segment_shift_);
    const std::size_t bytes = k << segment_shift_;
    if (!options_.real_time && !virtual_memory::commit(p, bytes)) return false;
    for (std::size_t i = first; i < first + k; ++i) owners_[i].store(&h, std::memory_order_release);
    h.segments += k;
    return h.tlsf.add_pool(std::span<std::byte>(p, bytes));
}

void rt_heap::free_remote(thread_heap* owner, void* p, std::size_t size) noexcept {
    if (p == nullptr) return;  // kept off the owner's path: nullptr lies in no segment
    if (owner == nullptr || !is_aligned(p, tlsf_allocator::classes::user_align)) [[unlikely]] {
        report_violation(violation_kind::foreign_pointer, name, p, size,
                         "deallocate(%p): not a block of this heap", p);
        return;
    }
    if constexpr (check_level >= 1) {
        const auto* n = static_cast<const detail::remote_node*>(p);
        if (n->mark == detail::queued_mark(n)) {
            report_violation(violation_kind::double_free, name, p, size,
                             "deallocate(%p): the block already waits for its owner thread", p);
            return;
        }
    }
    owner->remote.push(p, size);
}

void rt_heap::drain(thread_heap& h, std::size_t limit) noexcept {
    for (std::size_t i = 0; i < limit; ++i) {
        detail::remote_node* n = h.remote.pop();
        if (n == nullptr) return;
        if (!h.front.runs_on()) [[unlikely]]
            h.front.enable_runs();  // a heap fed by other threads (rt_heap_options::refill_runs)
        const std::size_t size = n->size;
        n->mark = 0;  // a block handed out again must not look queued
        free_own(h, n, size);
    }
}

void* rt_heap::reallocate(void* p, std::size_t old_size, std::size_t new_size,
                          std::size_t align) noexcept {
    if (p == nullptr) return allocate(new_size, align);
    if (thread_heap* h = local(); h != nullptr && owns(p)) {
        const std::uintptr_t offset =
            reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_);
        if (owners_[offset >> segment_shift_].load(std::memory_order_relaxed) == h) {
            // TLSF sees a block on a list as live: its own checks would let a freed one through.
            if constexpr (check_level >= 1) {
                if (!h->tlsf.valid_live(p, old_size, "reallocate")) return nullptr;  // reported
                if (front_list::marked(p)) {
                    report_violation(violation_kind::double_free, name, p, old_size,
                                     "reallocate(%p): the block was freed (it waits on its "
                                     "size-class list or its owner's queue)",
                                     p);
                    return nullptr;
                }
            }
            if (void* q = h->tlsf.reallocate(p, old_size, new_size, align)) return q;
            if (new_size > tlsf_allocator::max_pool_bytes || !is_pow2(align)) return nullptr;
        }
    }
    void* q = allocate(new_size, align);  // grows the heap if it must
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, std::min(old_size, new_size));
    deallocate(p, old_size, align);
    return q;
}

void rt_heap::collect() noexcept {
    if (base_ == nullptr) return;
    if (thread_heap* h = local()) drain(*h, static_cast<std::size_t>(-1));
    for (unsigned i = 0; i < options_.max_threads; ++i) {
        int expected = slot_abandoned;
        if (!states_[i].compare_exchange_strong(expected, slot_busy, std::memory_order_acquire))
            continue;
        drain(*heap_at(i), static_cast<std::size_t>(-1));
        states_[i].store(slot_abandoned, std::memory_order_release);
    }
}

void rt_heap::lock_for_fork() noexcept {
    rt_heap_registry::mutex().lock();
}

void rt_heap::unlock_after_fork() noexcept {
    rt_heap_registry::mutex().unlock();
}

bool rt_heap::owns(const void* p) const noexcept {
    const std::uintptr_t offset =
        reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_);
    return offset < reserved_ &&
           owners_[offset >> segment_shift_].load(std::memory_order_acquire) != nullptr;
}

rtmem::stats rt_heap::stats() const noexcept {
    rtmem::stats s;
    if (base_ == nullptr) return s;
    for (unsigned i = 0; i < options_.max_threads; ++i) {
        const int state = states_[i].load(std::memory_order_acquire);
        if (state != slot_owned && state != slot_abandoned) continue;
        // TLSF counts the blocks on the size-class lists as live.
        const thread_heap* h = heap_at(i);
        const rtmem::stats t = h->tlsf.stats();
        s.capacity += t.capacity;
        s.used += t.used - h->front.bytes();
        s.peak += t.peak;
        s.live_count += t.live_count - h->front.blocks();
        s.total_count += t.total_count + h->front.pops() - h->prepared;
    }
    return s;
}

std::size_t rt_heap::cached_blocks() const noexcept {
    std::size_t n = 0;
    for (unsigned i = 0; base_ != nullptr && i < options_.max_threads; ++i) {
        const int state = states_[i].load(std::memory_order_acquire);
        if (state == slot_owned || state == slot_abandoned) n += heap_at(i)->front.blocks();
    }
    return n;
}

unsigned rt_heap::threads_attached() const noexcept {
    unsigned n = 0;
    for (unsigned i = 0; base_ != nullptr && i < options_.max_threads; ++i)
        n += states_[i].load(std::memory_order_relaxed) == slot_owned;
    return n;
}

unsigned rt_heap::threads_abandoned() const noexcept {
    unsigned n = 0;
    for (unsigned i = 0; base_ != nullptr && i < options_.max_threads; ++i)
        n += states_[i].load(std::memory_order_relaxed) == slot_abandoned;
    return n;
}

bool rt_heap::check() const noexcept {
    if (base_ == nullptr) return true;
    auto fail = [](const char* what, const void* where) {
        report_violation(violation_kind::corrupted, name, where, 0, "check(): %s at %p", what,
                         where);
        return false;
    };
    const std::size_t granted = next_segment_.load(std::memory_order_acquire);
    if (granted > segment_count_) return fail("more segments granted than reserved", nullptr);
    for (unsigned i = 0; i < options_.max_threads; ++i) {
        const int state = states_[i].load(std::memory_order_acquire);
        if (state == slot_free) continue;
        const thread_heap* h = heap_at(i);
        if (state == slot_busy) return fail("a thread heap is busy in a quiet check", h);
        if (h->index != i) return fail("a thread heap's index is wrong", h);
        if (!h->tlsf.check()) return false;  // reported by tlsf_allocator
        const auto in_heap = [this, h](const void* p) {
            const std::uintptr_t offset =
                reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_);
            return offset < reserved_ &&
                   owners_[offset >> segment_shift_].load(std::memory_order_relaxed) == h;
        };
        if (!h->front.check(in_heap)) return fail("a size-class list is corrupted", h);
        std::size_t segments = 0;
        for (std::size_t s = 0; s < granted; ++s)
            segments += owners_[s].load(std::memory_order_relaxed) == h;
        if (segments != h->segments) return fail("segment count disagrees with the table", h);
        if (!h->remote.check(h->tlsf.stats().live_count))
            return fail("a queued block lost its mark, or the queue is longer than live", h);
    }
    for (std::size_t s = 0; s < granted; ++s) {
        const thread_heap* owner = owners_[s].load(std::memory_order_relaxed);
        if (owner == nullptr) continue;  // a grant whose commit failed
        const auto at = reinterpret_cast<const std::byte*>(owner);
        if (at < heaps_ || at >= heaps_ + options_.max_threads * sizeof(thread_heap) ||
            static_cast<std::size_t>(at - heaps_) % sizeof(thread_heap) != 0 ||
            states_[owner->index].load(std::memory_order_relaxed) == slot_free)
            return fail("a segment's owner is not a thread heap", base_ + (s << segment_shift_));
    }
    return true;
}

}  // namespace rtmem
