// Pool and region sites: the paths of site_strategies.hpp that leave a thread's own cache.
#include "site_strategies.hpp"

#include <algorithm>

namespace rtmem::site_plan {

namespace {

constexpr std::size_t round_up(std::size_t n, std::size_t a) noexcept {
    return (n + a - 1) & ~(a - 1);
}

char* first_block(span_header* s) noexcept {
    return reinterpret_cast<char*>(s) + span_header_bytes;
}

// A pool thread cache holds up to this many bytes of blocks (at least 8, at most 256 blocks):
// what a thread may keep that others cannot use, per site.
constexpr std::size_t pool_cache_bytes = std::size_t{16} << 10;

}  // namespace

void planned_site::configure(site_group* group, std::uint32_t index, strategy s,
                             std::size_t block, std::size_t max_request) noexcept {
    group_ = group;
    group_id_ = group->id() != 0 ? group->id() : ~std::uint64_t{0};  // configured after init
    cache_offset_ = std::size_t{index} * sizeof(thread_site);
    index_ = index;
    kind_ = s;
    if (s == strategy::pool) {
        block_ = round_up(block == 0 ? 1 : block, block_align);
        limit_ = block_ > span_bytes - span_header_bytes ? 0 : block_ + 1;  // 0: serves nothing
        cache_limit_ = static_cast<std::uint32_t>(
            std::clamp<std::size_t>(pool_cache_bytes / block_, 8, 256));
        batch_ = cache_limit_ / 2;
        return;
    }
    chunk_ = block == 0 || block > span_bytes ? span_bytes : round_up(block, block_align);
    if (chunk_ < span_header_bytes + region_prefix + block_align)
        chunk_ = span_header_bytes + region_prefix + block_align;
    const std::size_t fits = chunk_ - span_header_bytes - region_prefix;
    limit_ = (max_request == 0 || max_request > fits ? fits : max_request) + 1;
}

// ---- a thread's own cache: no lock ---------------------------------------------------------

void* planned_site::allocate(std::size_t size, std::size_t align) noexcept {
    if (!attached()) [[unlikely]]
        return allocate_attaching(size, align);
    thread_site& t = mine();
    if (size >= limit_ || align > block_align) [[unlikely]] {
        t.declined.add();
        return nullptr;
    }
    if (kind_ == strategy::pool) {
        if (void* p = t.free) [[likely]] {
            std::memcpy(&t.free, p, sizeof(void*));
            --t.count;
            t.served.add();
            return p;
        }
        return pool_refill(t);
    }
    const std::size_t need = block_need(size);
    if (static_cast<std::size_t>(t.end - t.bump) >= need) [[likely]] {
        char* p = t.bump + region_prefix;
        std::memcpy(t.bump, &size, sizeof size);
        t.bump += need;
        ++t.live;
        t.served.add();
        return p;
    }
    return region_refill(t, size);
}

void planned_site::deallocate(void* p) noexcept {
    if (!attached()) [[unlikely]]
        return deallocate_attaching(p);
    thread_site& t = mine();
    t.freed.add();
    if (kind_ == strategy::pool) {
        if (t.count >= cache_limit_) [[unlikely]]
            return pool_flush_and_push(t, p);
        if (t.free == nullptr) t.tail = p;
        std::memcpy(p, &t.free, sizeof(void*));
        t.free = p;
        ++t.count;
        return;
    }
    span_header* s = span_arena::span_of(p);
    if (s != t.chunk) [[unlikely]]
        return region_remote_free(s);
    // The chunk this thread bumps. Its blocks still live are t.live + s->remote, and other
    // threads' frees only lower s->remote (from 0): at t.live == 0 none is left anywhere, so
    // the chunk is bumped from its start again (without reading its header).
    if (--t.live == 0) t.bump = reinterpret_cast<char*>(s) + span_header_bytes;
}

void* planned_site::allocate_attaching(std::size_t size, std::size_t align) noexcept {
    (void)group_->mine(index_);
    return allocate(size, align);
}

void planned_site::deallocate_attaching(void* p) noexcept {
    (void)group_->mine(index_);
    deallocate(p);
}

// The thread's pool cache is full: it goes to the site's list whole, then takes `p`.
void planned_site::pool_flush_and_push(thread_site& t, void* p) noexcept {
    pool_flush(t, false);
    t.tail = p;
    std::memcpy(p, &t.free, sizeof(void*));
    t.free = p;
    ++t.count;
}

site_counters planned_site::counters() noexcept {
    site_counters c;
    group_->counters(index_, c.served, c.declined, c.freed);
    return c;
}

// ---- pool ------------------------------------------------------------------------------------

// The thread's cache is empty: up to a batch from the site's list, else carved from its span.
void* planned_site::pool_refill(thread_site& t) noexcept {
    void* got = nullptr;
    void* tail = nullptr;  // the first block pushed onto `got`
    std::uint32_t n = 0;
    char* carved = nullptr;
    std::size_t carved_n = 0;
    lock_.lock();
    while (n < batch_ && free_list_ != nullptr) {
        void* p = free_list_;
        std::memcpy(&free_list_, p, sizeof(void*));
        std::memcpy(p, &got, sizeof(void*));
        if (got == nullptr) tail = p;
        got = p;
        ++n;
    }
    if (n == 0) {
        if (static_cast<std::size_t>(carve_end_ - carve_) < block_) {
            span_header* s = group_->arena().take(index_);
            if (s != nullptr) {
                carve_ = first_block(s);
                carve_end_ = reinterpret_cast<char*>(s) + span_bytes;
            }
        }
        carved_n = std::min<std::size_t>(batch_, static_cast<std::size_t>(carve_end_ - carve_) / block_);
        carved = carve_;
        carve_ += carved_n * block_;
    }
    lock_.unlock();
    // Carved blocks are linked outside the lock (no other thread sees them yet).
    if (carved_n != 0) tail = carved + (carved_n - 1) * block_;
    for (std::size_t k = carved_n; k-- > 0;) {
        void* p = carved + k * block_;
        std::memcpy(p, &got, sizeof(void*));
        got = p;
        ++n;
    }
    if (got == nullptr) {  // the range is used up
        t.declined.add();
        return nullptr;
    }
    std::memcpy(&t.free, got, sizeof(void*));
    t.tail = tail;
    t.count = n - 1;
    t.served.add();
    return got;
}

// The thread's cache is full (or the thread leaves): all its blocks go to the site's list in
// one splice (the recorded tail: no block is read).
void planned_site::pool_flush(thread_site& t, bool walk) noexcept {
    void* head = t.free;
    if (head == nullptr) return;
    void* tail = t.tail;
    if (walk) {
        tail = head;
        for (void* next = nullptr;; tail = next) {
            std::memcpy(&next, tail, sizeof(void*));
            if (next == nullptr) break;
        }
    }
    t.free = nullptr;
    t.count = 0;
    lock_.lock();
    std::memcpy(tail, &free_list_, sizeof(void*));
    free_list_ = head;
    lock_.unlock();
}

// ---- region ----------------------------------------------------------------------------------

// The thread's chunk cannot hold the request: reuse it if every block of it was freed (here or
// by other threads), else retire it and bump a new span.
void* planned_site::region_refill(thread_site& t, std::size_t size) noexcept {
    span_header* s = t.chunk;
    // Empty through other threads' frees (the acquire pairs with theirs): no block of it is
    // left, so no free can race with resetting its count.
    if (s != nullptr && t.live + s->remote.load(std::memory_order_acquire) == 0) {
        s->remote.store(0, std::memory_order_relaxed);
        t.live = 0;
        t.bump = first_block(s);
    } else {
        if (s != nullptr) region_retire(t);
        s = group_->arena().take(index_);
        if (s == nullptr) {
            t.declined.add();
            return nullptr;
        }
        t.chunk = s;
        t.live = 0;
        t.bump = first_block(s);
        t.end = reinterpret_cast<char*>(s) + chunk_;
    }
    // A chunk holds any request below limit_ (configure), so this cannot fail.
    return allocate(size, block_align);
}

// The thread stops bumping its chunk: the blocks it left live move to the span's count; the
// span is given back by whoever frees its last block (here, if that already happened).
void planned_site::region_retire(thread_site& t) noexcept {
    span_header* s = t.chunk;
    const std::int64_t live = t.live;  // blocks not freed here; other threads' frees are in remote
    t.chunk = nullptr;
    t.bump = t.end = nullptr;
    t.live = 0;
    if (s->remote.fetch_add(live, std::memory_order_acq_rel) + live == 0)
        group_->arena().give_back(s);
}

// A block of a chunk this thread does not bump. While its bumping thread still holds it the
// count stays at or below 0, so only a retired span's last free gives it back.
void planned_site::region_remote_free(span_header* s) noexcept {
    if (s->remote.fetch_sub(1, std::memory_order_acq_rel) == 1) group_->arena().give_back(s);
}

void planned_site::flush(thread_site& t, bool walk) noexcept {
    if (kind_ == strategy::pool) {
        pool_flush(t, walk);
    } else if (t.chunk != nullptr) {
        region_retire(t);
    }
}

}  // namespace rtmem::site_plan
