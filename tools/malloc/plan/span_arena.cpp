// The plan's reserved range and its spans (see span_arena.hpp).
#include "span_arena.hpp"

#include <sched.h>
#include <sys/mman.h>

namespace rtmem::site_plan {

void site_lock::lock_contended() noexcept {
    for (unsigned spins = 0;; ++spins) {
        if (!held_.load(std::memory_order_relaxed) &&
            !held_.exchange(true, std::memory_order_acquire))
            return;
        if (spins >= 64) sched_yield();  // the holder may have been preempted
    }
}

bool span_arena::reserve(std::size_t bytes) noexcept {
    bytes = (bytes + span_bytes - 1) & ~(span_bytes - 1);
    const std::size_t map_bytes = bytes + span_bytes;  // room to align the start
    void* m = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    mapping_ = m;
    mapping_bytes_ = map_bytes;
    base_ = (reinterpret_cast<std::uintptr_t>(m) + span_bytes - 1) & ~(span_bytes - 1);
    size_ = bytes;
    return true;
}

void span_arena::release() noexcept {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
    mapping_ = nullptr;
    mapping_bytes_ = used_ = size_ = 0;
    base_ = 0;
    free_ = nullptr;
}

span_header* span_arena::take(std::uint32_t site) noexcept {
    lock_.lock();
    span_header* s = free_;
    if (s != nullptr) {
        free_ = s->next_free;
    } else if (used_ + span_bytes <= size_) {
        s = reinterpret_cast<span_header*>(base_ + used_);
        used_ += span_bytes;
    }
    lock_.unlock();
    if (s != nullptr) {
        s->site = site;
        s->remote.store(0, std::memory_order_relaxed);
        s->next_free = nullptr;
    }
    return s;
}

void span_arena::give_back(span_header* s) noexcept {
    lock_.lock();
    s->next_free = free_;
    free_ = s;
    lock_.unlock();
}

}  // namespace rtmem::site_plan
