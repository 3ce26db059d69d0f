// Each thread's caches of a plan's sites (see site_group.hpp). Caches are mmap'd (nothing here
// calls malloc), kept in the group's list, and reused by later threads once their thread exits.
#include "site_group.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "site_strategies.hpp"

namespace rtmem::site_plan {

constinit thread_local thread_slot tl_slot __attribute__((tls_model("initial-exec"))) = {0, nullptr, nullptr};

namespace {

std::atomic<std::uint64_t> g_next_group_id{1};

}  // namespace

void site_group::init(planned_site* sites, std::uint32_t count) noexcept {
    id_ = g_next_group_id.fetch_add(1, std::memory_order_relaxed);
    sites_ = sites;
    count_ = count;
    has_key_ = pthread_key_create(&key_, &site_group::on_thread_exit) == 0;
}

void site_group::release() noexcept {
    if (has_key_) pthread_key_delete(key_);
    has_key_ = false;
    for (thread_cache* c = caches_; c != nullptr;) {
        thread_cache* next = c->next;
        munmap(c, c->bytes);
        c = next;
    }
    caches_ = nullptr;
    if (tl_slot.group == id_) tl_slot = {0, nullptr, nullptr};
    id_ = 0;
    arena_.release();
}

// This thread has no cache of this group in its slot: its own (it used another group since),
// one a finished thread left, or a new one.
thread_cache* site_group::attach() noexcept {
    const pthread_t me = pthread_self();
    thread_cache* found = nullptr;
    caches_lock_.lock();
    for (thread_cache* c = caches_; c != nullptr && found == nullptr; c = c->next)
        if (c->in_use && pthread_equal(c->owner, me)) found = c;
    for (thread_cache* c = caches_; c != nullptr && found == nullptr; c = c->next)
        if (!c->in_use) found = c;
    if (found != nullptr) {
        found->owner = me;
        found->in_use = true;
    }
    caches_lock_.unlock();
    if (found == nullptr) {
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const std::size_t bytes =
            (sizeof(thread_cache) + sizeof(thread_site) * (count_ == 0 ? 1 : count_) + page - 1) &
            ~(page - 1);
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            // Without a cache this thread cannot use the sites (they have no locked path);
            // a process out of address space for a few pages cannot go on anyway.
            static const char why[] = "rtmem: cannot map a thread cache for the plan's sites\n";
            (void)!write(2, why, sizeof why - 1);
            _exit(127);
        }
        found = static_cast<thread_cache*>(m);
        found->group = this;
        found->owner = me;
        found->in_use = true;
        found->bytes = bytes;
        static_assert(sizeof(thread_cache) % alignof(thread_site) == 0);
        found->sites = reinterpret_cast<thread_site*>(found + 1);
        for (std::uint32_t i = 0; i < count_; ++i) new (&found->sites[i]) thread_site();
        caches_lock_.lock();
        found->next = caches_;
        caches_ = found;
        caches_lock_.unlock();
    }
    if (has_key_) pthread_setspecific(key_, found);
    tl_slot = {id_, found->sites, found};
    return found;
}

void site_group::flush(thread_cache* c, bool walk) noexcept {
    for (std::uint32_t i = 0; i < count_; ++i) sites_[i].flush(c->sites[i], walk);
}

void site_group::detach_this_thread() noexcept {
    if (tl_slot.group != id_) return;
    thread_cache* c = tl_slot.cache;
    tl_slot = {0, nullptr, nullptr};
    flush(c, false);
    if (has_key_) pthread_setspecific(key_, nullptr);
    caches_lock_.lock();
    c->in_use = false;
    caches_lock_.unlock();
}

// The key's destructor: a later destructor of this thread that allocates attaches again (and
// sets the key again, so this runs again).
void site_group::on_thread_exit(void* cache) noexcept {
    auto* c = static_cast<thread_cache*>(cache);
    site_group* g = c->group;
    if (tl_slot.cache != c) tl_slot = {g->id_, c->sites, c};  // the slot may name another group
    g->detach_this_thread();
}

void site_group::counters(std::uint32_t i, std::uint64_t& served, std::uint64_t& declined,
                          std::uint64_t& freed) noexcept {
    served = declined = freed = 0;
    caches_lock_.lock();
    for (thread_cache* c = caches_; c != nullptr; c = c->next) {
        served += c->sites[i].served.get();
        declined += c->sites[i].declined.get();
        freed += c->sites[i].freed.get();
    }
    caches_lock_.unlock();
}

void site_group::lock_for_fork() noexcept {
    caches_lock_.lock();
    for (std::uint32_t i = 0; i < count_; ++i) sites_[i].lock_for_fork();
    arena_.lock_for_fork();
}

void site_group::unlock_after_fork_in_parent() noexcept {
    arena_.unlock_after_fork();
    for (std::uint32_t i = 0; i < count_; ++i) sites_[i].unlock_after_fork();
    caches_lock_.unlock();
}

// Only the forking thread exists in the child: the other threads' caches go back to their
// sites (a block one of them was taking or giving at the fork may stay out: a leak, not a
// corruption), and are free for the child's new threads.
void site_group::unlock_after_fork_in_child() noexcept {
    unlock_after_fork_in_parent();
    const pthread_t me = pthread_self();
    for (thread_cache* c = caches_; c != nullptr; c = c->next) {
        if (!c->in_use || pthread_equal(c->owner, me)) continue;
        flush(c, true);  // its thread may have stopped between two of its stores
        c->in_use = false;
    }
}

}  // namespace rtmem::site_plan
