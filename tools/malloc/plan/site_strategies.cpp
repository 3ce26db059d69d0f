// Pool and region sites in the reserved span range (see site_strategies.hpp).
#include "site_strategies.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <cstring>

namespace rtmem::site_plan {

namespace {

constexpr std::size_t round_up(std::size_t n, std::size_t a) noexcept {
    return (n + a - 1) & ~(a - 1);
}

char* first_block(span_header* s) noexcept {
    return reinterpret_cast<char*>(s) + span_header_bytes;
}

}  // namespace

void site_lock::lock_contended() noexcept {
    for (unsigned spins = 0;; ++spins) {
        if (!held_.load(std::memory_order_relaxed) &&
            !held_.exchange(true, std::memory_order_acquire))
            return;
        if (spins >= 64) sched_yield();  // the holder may have been preempted
    }
}

bool span_arena::reserve(std::size_t bytes) noexcept {
    bytes = round_up(bytes, span_bytes);
    const std::size_t map_bytes = bytes + span_bytes;  // room to align the start
    void* m = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    mapping_ = m;
    mapping_bytes_ = map_bytes;
    base_ = round_up(reinterpret_cast<std::uintptr_t>(m), span_bytes);
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
    if (s != nullptr) *s = {site, 0, 0, 0, nullptr};
    return s;
}

void span_arena::give_back(span_header* s) noexcept {
    lock_.lock();
    s->next_free = free_;
    free_ = s;
    lock_.unlock();
}

void planned_site::configure(span_arena* arena, std::uint32_t index, strategy s,
                             std::size_t block, std::size_t max_request) noexcept {
    arena_ = arena;
    index_ = index;
    kind_ = s;
    if (s == strategy::pool) {
        block_ = round_up(block == 0 ? 1 : block, block_align);
        if (block_ > largest_block) block_ = 0;  // serves nothing: every request declined
        max_request_ = block_;
        return;
    }
    chunk_ = block == 0 || block > span_bytes ? span_bytes
                                              : round_up(block, block_align);
    if (chunk_ < span_header_bytes + region_prefix + block_align)
        chunk_ = span_header_bytes + region_prefix + block_align;
    const std::size_t fits = chunk_ - span_header_bytes - region_prefix;
    max_request_ = max_request == 0 || max_request > fits ? fits : max_request;
}

void* planned_site::allocate(std::size_t size, std::size_t align) noexcept {
    // A pool whose block is larger than a span serves nothing (block_ 0), not even size 0.
    const bool fits = align <= block_align && (kind_ == strategy::pool
                                                   ? block_ != 0 && size <= block_
                                                   : size <= max_request_);
    lock_.lock();
    void* p = nullptr;
    if (fits) p = kind_ == strategy::pool ? pool_allocate() : region_allocate(size);
    if (p != nullptr) ++counters_.served;
    else ++counters_.declined;
    lock_.unlock();
    return p;
}

void planned_site::deallocate(void* p) noexcept {
    lock_.lock();
    ++counters_.freed;
    if (kind_ == strategy::pool) {
        std::memcpy(p, &free_list_, sizeof free_list_);
        free_list_ = p;
    } else {
        region_free(p);
    }
    lock_.unlock();
}

std::size_t planned_site::usable_size(const void* p) const noexcept {
    if (kind_ == strategy::pool) return block_;
    std::size_t size = 0;
    std::memcpy(&size, static_cast<const char*>(p) - region_prefix, sizeof size);
    return size;
}

site_counters planned_site::counters() noexcept {
    lock_.lock();
    site_counters c = counters_;
    lock_.unlock();
    return c;
}

void* planned_site::pool_allocate() noexcept {
    if (void* p = free_list_) {
        std::memcpy(&free_list_, p, sizeof free_list_);
        return p;
    }
    if (bump_ == nullptr || static_cast<std::size_t>(end_ - bump_) < block_) {
        span_header* s = arena_->take(index_);
        if (s == nullptr) return nullptr;
        bump_ = first_block(s);
        end_ = reinterpret_cast<char*>(s) + span_bytes;
    }
    void* p = bump_;
    bump_ += block_;
    return p;
}

// Blocks are bumped from the current span; when it is full it is retired, and given back to
// the arena when its last block is freed (or reused at once if that already happened).
void* planned_site::region_allocate(std::size_t size) noexcept {
    const std::size_t need = region_prefix + round_up(size == 0 ? 1 : size, block_align);
    if (current_ == nullptr || static_cast<std::size_t>(end_ - bump_) < need) {
        if (current_ != nullptr && current_->live == 0) {
            bump_ = first_block(current_);
        } else {
            span_header* s = arena_->take(index_);
            if (s == nullptr) return nullptr;
            if (current_ != nullptr) current_->retired = 1;
            current_ = s;
            bump_ = first_block(s);
            end_ = reinterpret_cast<char*>(s) + chunk_;
        }
    }
    char* p = bump_ + region_prefix;
    std::memcpy(bump_, &size, sizeof size);
    bump_ += need;
    ++current_->live;
    return p;
}

void planned_site::region_free(void* p) noexcept {
    span_header* s = span_arena::span_of(p);
    if (--s->live != 0) return;
    if (s == current_) {
        bump_ = first_block(s);  // empty again: bump from its start
    } else if (s->retired != 0) {
        arena_->give_back(s);
    }
}

}  // namespace rtmem::site_plan
