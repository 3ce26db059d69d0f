// tlsf_allocator slow paths: pools, aligned allocation, reallocate, checks and reporting.
#include "rtmem/alloc/tlsf.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace rtmem {
namespace {

using detail::tlsf_block;

// Whether [p, p+n) may be read: under ASan, freed interiors are poisoned, and a wild pointer's
// "header" may lie in one. Elsewhere every byte of a pool is readable.
bool readable(const void* p, std::size_t n) noexcept {
#ifdef RTMEM_HAS_ASAN
    return __asan_region_is_poisoned(const_cast<void*>(p), n) == nullptr;
#else
    (void)p;
    (void)n;
    return true;
#endif
}

// Cuts b into [b: size bytes][rest]; returns rest (flags: this_free cleared, prev unset).
tlsf_block* split(tlsf_block* b, std::size_t size) noexcept {
    auto* rest = reinterpret_cast<tlsf_block*>(b->user() + size - tlsf_block::overhead);
    rest->size_flags = b->size() - (size + tlsf_block::overhead);
    b->set_size(size);
    return rest;
}

}  // namespace

tlsf_allocator::tlsf_allocator(tlsf_allocator&& o) noexcept {
    steal(o);
}

tlsf_allocator& tlsf_allocator::operator=(tlsf_allocator&& o) noexcept {
    if (this != &o) {
        this->~tlsf_allocator();
        steal(o);
    }
    return *this;
}

tlsf_allocator::~tlsf_allocator() {
    for (pool_record* r = pools_; r != nullptr;) {
        pool_record* next = r->next;
        detail::unpoison(r, static_cast<std::size_t>(r->end - reinterpret_cast<std::byte*>(r)));
        r = next;
    }
    pools_ = nullptr;
}

void tlsf_allocator::steal(tlsf_allocator& o) noexcept {
    fl_bitmap_ = std::exchange(o.fl_bitmap_, 0);
    std::memcpy(sl_bitmap_, o.sl_bitmap_, sizeof(sl_bitmap_));
    std::memcpy(heads_, o.heads_, sizeof(heads_));
    std::memset(o.sl_bitmap_, 0, sizeof(o.sl_bitmap_));
    std::memset(o.heads_, 0, sizeof(o.heads_));
    pools_ = std::exchange(o.pools_, nullptr);
    capacity_ = std::exchange(o.capacity_, 0);
    used_ = std::exchange(o.used_, 0);
    peak_used_ = o.peak_used_;
    requested_ = std::exchange(o.requested_, 0);
    live_ = std::exchange(o.live_, 0);
    total_ = o.total_;
    top_ = std::exchange(o.top_, nullptr);
    top_room_ = std::exchange(o.top_room_, 0);
    top_fl_below_ = o.top_fl_below_;
    top_sl_below_ = o.top_sl_below_;
    top_fl_ = o.top_fl_;
    top_sl_ = o.top_sl_;
    std::memcpy(cache_, o.cache_, sizeof(cache_));
    std::memcpy(cache_count_, o.cache_count_, sizeof(cache_count_));
    std::memset(o.cache_, 0, sizeof(o.cache_));
    std::memset(o.cache_count_, 0, sizeof(o.cache_count_));
    cache_depth_ = std::exchange(o.cache_depth_, 0);
    parked_ = std::exchange(o.parked_, 0);
}

void tlsf_allocator::set_cache_depth(unsigned depth) noexcept {
    if (depth > max_cache_depth) {
        report_violation(violation_kind::bad_argument, name, nullptr, depth,
                         "cache depth %u is more than %u; using %u", depth, max_cache_depth,
                         max_cache_depth);
        depth = max_cache_depth;
    }
    if (depth < cache_depth_) flush_cache();
    cache_depth_ = depth;
}

bool tlsf_allocator::flush_cache() noexcept {
    if (parked_ == 0) return false;
    bool any = false;
    for (unsigned bin = 0; bin < cache_bins; ++bin) {
        while (block* b = cache_[bin]) {
            cache_[bin] = b->next_free;
            detail::unpoison(b->user(), b->size());
            b->size_flags &= ~block::cached_bit;
            free_to_lists(b, b->size_flags);  // its prev_free bit is current: read it now
            any = true;
        }
        cache_count_[bin] = 0;
    }
    parked_ = 0;
    return any;
}

void* tlsf_allocator::allocate_after_flush(std::size_t size, std::size_t align) noexcept {
    // The lists cannot serve the request; parked blocks may, once coalesced.
    if (!flush_cache()) return nullptr;
    return allocate(size, align);
}

bool tlsf_allocator::add_pool(std::span<std::byte> memory) noexcept {
    const auto raw = reinterpret_cast<std::uintptr_t>(memory.data());
    const std::uintptr_t begin = align_up(raw, classes::user_align);
    std::uintptr_t end = align_down(raw + memory.size(), classes::align);
    if (memory.data() == nullptr || end < begin || end - begin < pool_overhead + block::min_size) {
        report_violation(violation_kind::bad_argument, name, memory.data(), memory.size(),
                         "a pool needs at least %zu bytes, got %zu",
                         pool_overhead + block::min_size, memory.size());
        return false;
    }
    // Layout: [pool_record][first block header ... ][sentinel header (size 0, used)].
    static_assert(sizeof(pool_record) == 4 * block::slot);  // keeps the first user pointer 16-aligned
    auto* first = reinterpret_cast<block*>(begin + sizeof(pool_record));
    const std::uintptr_t first_addr = reinterpret_cast<std::uintptr_t>(first);
    std::size_t size = end - first_addr - 3 * block::slot;
    if (size > classes::max_block) size = classes::max_block;
    size -= (size - classes::align) % classes::user_align;  // keep the size 8 mod 16
    end = first_addr + size + 3 * block::slot;
    first->prev_phys = nullptr;
    first->size_flags = size | block::this_free_bit;
    block* sentinel = first->link_next();
    sentinel->size_flags = block::prev_free_bit;
    auto* r = reinterpret_cast<pool_record*>(begin);
    r->next = pools_;
    r->first = first;
    r->begin = reinterpret_cast<std::byte*>(first) + block::slot;
    r->end = reinterpret_cast<std::byte*>(end);
    pools_ = r;
    capacity_ += size + block::overhead;
    insert_free(first);
    return true;
}

void* tlsf_allocator::allocate_run(std::size_t block_size, unsigned count) noexcept {
    const std::size_t step = block_size + block::overhead;
    const std::size_t whole = count * step - block::overhead;  // 8 mod 16, like block_size
    void* first = allocate(whole);
    if (first == nullptr || count == 1) return first;
    // One block of `whole` (or more) bytes, accounted as one: cut it into `count`. The bytes
    // used stay the same (the headers were inside it), the block counts grow.
    block* b = block::from_user(first);
    const std::size_t extra = b->size() - whole;  // a tail too small to split off
    b->set_size(block_size + extra);
    std::byte* header = b->user() + block_size + extra - block::overhead;
    for (unsigned i = 1; i < count; ++i, header += step)
        reinterpret_cast<block*>(header)->size_flags = block_size;  // used, previous used
    live_ += count - 1;
    total_ += count - 1;
    return first;
}

void* tlsf_allocator::reject(std::size_t size, std::size_t align) const noexcept {
    if (!is_pow2(align))
        report_violation(violation_kind::bad_alignment, name, nullptr, size,
                         "alignment %zu is not a power of two", align);
    else
        report_violation(violation_kind::bad_size, name, nullptr, size,
                         "%zu bytes is more than the largest block (%zu)", size,
                         classes::max_block);
    return nullptr;
}

void* tlsf_allocator::allocate_aligned(std::size_t size, std::size_t adjusted,
                                       std::size_t align) noexcept {
    // Ask for enough to cut a free block of at least one header off the front.
    constexpr std::size_t gap_min = sizeof(block);
    if (align > classes::max_block || adjusted + align + gap_min > classes::max_block)
        return nullptr;
    drop_top();  // the block taken, or the one cut off its front, may be the top
    block* b = take_free(adjusted + align + gap_min);
    if (b == nullptr && flush_cache()) {
        drop_top();
        b = take_free(adjusted + align + gap_min);
    }
    if (b == nullptr) return nullptr;
    const auto ptr = reinterpret_cast<std::uintptr_t>(b->user());
    std::uintptr_t aligned = align_up(ptr, align);
    std::size_t gap = aligned - ptr;
    if (gap != 0 && gap < gap_min) {  // too small to hold a free block: move one step further
        aligned = align_up(aligned + std::max(gap_min - gap, align), align);
        gap = aligned - ptr;
    }
    if (gap != 0) {
        block* rest = split(b, gap - block::overhead);
        rest->set_prev_free(true);
        b->link_next();
        insert_free(b);  // still flagged free; its own prev is never free (coalesced)
        b = rest;
    }
    return hand_out(b, adjusted, size);
}

// Marks b (taken from the lists, unpoisoned) used, giving any tail that can hold a block
// back to the lists.
void* tlsf_allocator::hand_out(block* b, std::size_t adjusted, std::size_t requested) noexcept {
    const std::size_t flags = b->size_flags;
    const std::size_t size = flags & ~block::flag_bits;
    const std::size_t prev_bit = flags & block::prev_free_bit;  // set after an aligned split
    if (size >= adjusted + sizeof(block)) {
        insert_free(cut_tail(b, adjusted, size - adjusted - block::overhead, prev_bit));
        account_allocate(adjusted, requested);
    } else {
        b->size_flags = size | prev_bit;
        b->next_phys()->set_prev_free(false);
        account_allocate(size, requested);
    }
    return b->user();
}

// Absorbs b's next block when it is free (b's own flags and its next's prev_free are the
// caller's to set).
tlsf_allocator::block* tlsf_allocator::merge_next(block* b) noexcept {
    block* next = b->next_phys();
    if (!next->is_free()) return b;
    remove_free(next);
    b->set_size(b->size() + next->size() + block::overhead);
    return b;
}

void* tlsf_allocator::reallocate(void* p, std::size_t old_size, std::size_t new_size,
                                 std::size_t align) noexcept {
    if (p == nullptr) return allocate(new_size, align);
    if constexpr (check_level >= 1) {
        if (!valid_live_block(p, old_size, "reallocate")) return nullptr;
    }
    if (new_size > classes::max_block || !is_pow2(align)) return reject(new_size, align);
    const std::size_t adjusted = classes::block_size_for(new_size);
    block* b = block::from_user(p);
    const std::size_t cur = b->size();
    if (is_aligned(p, align)) {
        block* next = b->next_phys();
        drop_top_if(next);  // grown into, or merged with the tail given back
        const bool fits_here = adjusted <= cur;
        if (!fits_here && next->is_free() && cur + next->size() + block::overhead >= adjusted) {
            remove_free(next);
            b->set_size(cur + next->size() + block::overhead);
            detail::unpoison(b->user(), b->size());
            b->next_phys()->set_prev_free(false);
        }
        if (adjusted <= b->size()) {
            if (b->size() >= adjusted + sizeof(block)) {  // give the tail back
                block* rest = split(b, adjusted);  // no boundary tag: b's last word is live data
                rest->set_free(true);
                rest = merge_next(rest);
                rest->link_next()->set_prev_free(true);
                insert_free(rest);
            }
            used_ = used_ - cur + b->size();
            peak_used_ = std::max(peak_used_, used_);
            requested_ = requested_ - std::min(old_size, requested_) + new_size;
            return p;
        }
    }
    void* q = allocate(new_size, align);
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, std::min(old_size, new_size));
    deallocate(p, old_size, align);
    return q;
}

const tlsf_allocator::pool_record* tlsf_allocator::pool_of(const void* p) const noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    for (const pool_record* r = pools_; r != nullptr; r = r->next)
        if (b >= r->begin && b < r->end) return r;
    return nullptr;
}

bool tlsf_allocator::owns(const void* p) const noexcept {
    return pool_of(p) != nullptr;
}

bool tlsf_allocator::valid_live_block(const void* p, std::size_t size,
                                      const char* op) const noexcept {
    const pool_record* r = pool_of(p);
    const auto* user = static_cast<const std::byte*>(p);
    if (r == nullptr || !is_aligned(p, classes::user_align) ||
        user < reinterpret_cast<std::byte*>(r->first) + block::user_offset) {
        report_violation(violation_kind::foreign_pointer, name, p, size,
                         "%s(%p): not a block of this allocator", op, p);
        return false;
    }
    block* b = block::from_user(p);
    if (!readable(&b->size_flags, sizeof(std::size_t)) || b->is_free()) {
        report_violation(violation_kind::double_free, name, p, size,
                         "%s(%p): the block is already free", op, p);
        return false;
    }
    const std::size_t s = b->size();
    // The next header fits before the end (compared as sizes: a stray s must not overflow).
    bool sane = s >= block::min_size && classes::valid_size(s) &&
                s <= static_cast<std::size_t>(r->end - user) - block::slot;
    if (sane) {
        block* next = b->next_phys();
        sane = readable(&next->size_flags, sizeof(std::size_t)) && !next->is_prev_free();
    }
    if (sane && b->is_prev_free()) {
        block* prev = b->prev_phys;
        sane = pool_of(&prev->size_flags) == r && readable(prev, sizeof(block)) &&
               prev->is_free() && prev->next_phys() == b;
    }
    if (!sane) {
        report_violation(violation_kind::foreign_pointer, name, p, size,
                         "%s(%p): not the start of a live block", op, p);
        return false;
    }
    if (b->is_cached()) {  // after the sanity checks: a stray word may have that bit set
        report_violation(violation_kind::double_free, name, p, size,
                         "%s(%p): the block is already free (parked in the cache)", op, p);
        return false;
    }
    if (size > s) {
        report_violation(violation_kind::size_mismatch, name, p, size,
                         "%s(%p, %zu): the block holds only %zu bytes", op, p, size, s);
        return false;
    }
    return true;
}

rtmem::fragmentation tlsf_allocator::fragmentation() const noexcept {
    rtmem::fragmentation f;
    f.requested_live = requested_;
    f.held_live = used_;
    for (unsigned fl = 0; fl < classes::fl_count; ++fl)
        for (unsigned sl = 0; sl < classes::sl_count; ++sl)
            for (const block* b = heads_[fl][sl]; b != nullptr; b = b->next_free) {
                f.free_bytes += b->size();
                f.largest_free = std::max(f.largest_free, b->size());
                ++f.free_blocks;
            }
    for (unsigned bin = 0; bin < cache_bins; ++bin) {  // parked blocks are free, not coalesced
        if (cache_count_[bin] == 0) continue;
        const std::size_t size = cache_bin_size(bin);
        f.free_bytes += cache_count_[bin] * size;
        f.largest_free = std::max(f.largest_free, size);
        f.free_blocks += cache_count_[bin];
    }
    return f;
}

std::size_t tlsf_allocator::largest_free_block() const noexcept {
    std::size_t largest = 0;
    for (unsigned bin = cache_bins; bin-- > 0;) {  // a parked block serves its own size
        if (cache_count_[bin] != 0) {
            largest = cache_bin_size(bin);
            break;
        }
    }
    if (fl_bitmap_ == 0) return largest;
    const unsigned fl = classes::fls(fl_bitmap_);
    const unsigned sl = classes::fls(sl_bitmap_[fl]);
    for (const block* b = heads_[fl][sl]; b != nullptr; b = b->next_free)
        largest = std::max(largest, b->size());
    return largest;
}

bool tlsf_allocator::fail(const char* what, const void* where) const noexcept {
    report_violation(violation_kind::corrupted, name, where, 0, "check(): %s at %p", what, where);
    return false;
}

bool tlsf_allocator::check() const noexcept {
    std::size_t free_count = 0, parked = 0, used = 0, live = 0, capacity = 0;
    bool top_seen = false;
    for (const pool_record* r = pools_; r != nullptr; r = r->next) {
        const auto* last = reinterpret_cast<const block*>(r->end - 2 * block::slot);
        bool prev_free = false;
        const block* prev = nullptr;
        for (block* b = r->first;; b = b->next_phys()) {
            if (b < r->first || b > last) return fail("block outside its pool", b);
            if (b->is_prev_free() != prev_free) return fail("prev_free flag disagrees", b);
            if (prev_free && b->prev_phys != prev) return fail("boundary tag is wrong", b);
            if (b->is_last()) {
                if (b != last || b->is_free()) return fail("sentinel misplaced", b);
                break;
            }
            if (b->size() < block::min_size || !classes::valid_size(b->size()))
                return fail("block size is invalid", b);
            if (b->is_free()) {
                if (b->is_cached()) return fail("a free block is flagged cached", b);
                if (prev_free) return fail("two adjacent free blocks", b);
                top_seen = top_seen || b == top_;
                ++free_count;
            } else if (b->is_cached()) {
                ++parked;
            } else {
                used += b->size() + block::overhead;
                ++live;
            }
            prev_free = b->is_free();
            prev = b;
        }
        capacity += static_cast<std::size_t>(reinterpret_cast<const std::byte*>(last) -
                                             reinterpret_cast<const std::byte*>(r->first));
    }
    std::size_t listed = 0;
    for (unsigned fl = 0; fl < classes::fl_count; ++fl) {
        if (((fl_bitmap_ >> fl) & 1u) != (sl_bitmap_[fl] != 0 ? 1u : 0u))
            return fail("first-level bitmap disagrees with second level", &sl_bitmap_[fl]);
        for (unsigned sl = 0; sl < classes::sl_count; ++sl) {
            const block* head = heads_[fl][sl];
            if (((sl_bitmap_[fl] >> sl) & 1u) != (head != nullptr ? 1u : 0u))
                return fail("second-level bitmap disagrees with its list", &heads_[fl][sl]);
            const block* prev = nullptr;
            for (const block* b = head; b != nullptr; b = b->next_free) {
                if (++listed > free_count) return fail("free lists hold more blocks than free", b);
                if (pool_of(&b->size_flags) == nullptr)
                    return fail("free list node outside the pools", b);
                if (!b->is_free()) return fail("free list node is not free", b);
                if (b->prev_free != prev) return fail("free list back link is wrong", b);
                unsigned f = 0, s = 0;
                classes::insert_index(b->size(), f, s);
                if (f != fl || s != sl) return fail("free block in the wrong size class", b);
                prev = b;
            }
        }
    }
    if (listed != free_count) return fail("a free block is missing from the lists", nullptr);
    if (top_ == nullptr && top_room_ != 0) return fail("room without a cached top", nullptr);
    if (top_ != nullptr) {  // the cached top is a free block and its class data is current
        if (!top_seen) return fail("the cached top is not a free block", top_);
        unsigned f = 0, s = 0;
        classes::insert_index(top_->size(), f, s);
        if (f != top_fl_ || s != top_sl_ || top_room_ != top_->size() - class_floor(f, s) ||
            top_fl_below_ != (classes::fl_map{1} << f) - 1 ||
            top_sl_below_ != (std::uint32_t{1} << s) - 1)
            return fail("the cached top's size class is stale", top_);
    }
    std::size_t listed_parked = 0;
    for (unsigned bin = 0; bin < cache_bins; ++bin) {
        if (cache_count_[bin] > cache_depth_)
            return fail("a cache bin holds more than its depth", &cache_count_[bin]);
        std::size_t n = 0;
        for (const block* b = cache_[bin]; b != nullptr; b = b->next_free) {
            if (++n > cache_count_[bin])
                return fail("a cache bin holds more blocks than counted", b);
            if (pool_of(&b->size_flags) == nullptr)
                return fail("cached block outside the pools", b);
            if (!b->is_cached() || b->is_free())
                return fail("cached block is not flagged cached", b);
            if (b->size() != cache_bin_size(bin)) return fail("cached block in the wrong bin", b);
        }
        if (n != cache_count_[bin])
            return fail("a cache bin holds fewer blocks than counted", &cache_count_[bin]);
        listed_parked += n;
    }
    if (listed_parked != parked || parked != parked_)
        return fail("a cached block is missing from its bin", nullptr);
    if (parked_ != 0 && top_ != nullptr)
        return fail("a top is cached while blocks are parked", top_);
    if (used != used_ || live != live_ || capacity != capacity_)
        return fail("byte or block accounting disagrees with the blocks", nullptr);
    return true;
}

}  // namespace rtmem
