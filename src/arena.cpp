// arena slow paths: growing the chunk chain, rewinding across chunks, validation.
#include "rtmem/alloc/arena.hpp"

#include <new>
#include <utility>

namespace rtmem {

namespace {
constexpr std::size_t header_bytes = detail::arena_chunk_header_bytes;

std::byte* payload(arena::chunk* c) noexcept {
    return reinterpret_cast<std::byte*>(c) + header_bytes;
}
std::byte* chunk_end(arena::chunk* c) noexcept {
    return reinterpret_cast<std::byte*>(c) + c->bytes;
}
}  // namespace

arena::arena(arena_options options, detail::upstream_ref upstream) noexcept
    : options_(options), upstream_(upstream) {
    if (options_.chunk_size < header_bytes + default_alignment)
        options_.chunk_size = header_bytes + default_alignment;
    if (options_.max_chunk_size < options_.chunk_size)
        options_.max_chunk_size = options_.chunk_size;
    next_chunk_ = options_.chunk_size;
}

arena::arena(arena&& o) noexcept
    : head_(std::exchange(o.head_, nullptr)),
      top_(std::exchange(o.top_, nullptr)),
      end_(std::exchange(o.end_, nullptr)),
      dedicated_(std::exchange(o.dedicated_, nullptr)),
      cache_(std::exchange(o.cache_, nullptr)),
      dedicated_used_(std::exchange(o.dedicated_used_, 0)),
      base_(o.base_),
      total_(o.total_),
      peak_(o.peak_),
      next_chunk_(o.next_chunk_),
      reserved_(std::exchange(o.reserved_, 0)),
      chunks_(std::exchange(o.chunks_, 0)),
      cached_(std::exchange(o.cached_, 0)),
      serial_(o.serial_),
      owner_(o.owner_),
      counts_blocks_(o.counts_blocks_),
      options_(o.options_),
      upstream_(o.upstream_),
      retreats_(o.retreats_) {}

arena& arena::operator=(arena&& o) noexcept {
    if (this != &o) {
        release_all();
        this->~arena();
        new (this) arena(std::move(o));
    }
    return *this;
}

arena::~arena() {
    release_all();
}

void arena::release_all() noexcept {
    drop_dedicated_until(nullptr);
    const bool keep = options_.keep_chunks;
    options_.keep_chunks = false;
    drop_regular_until(nullptr, false);
    options_.keep_chunks = keep;
    drop_cache();
}

void arena::give_back(chunk* c) noexcept {
    --chunks_;
    reserved_ -= c->bytes;
    detail::unpoison(c, c->bytes);
    upstream_.deallocate(c, c->bytes, default_alignment);
}

void arena::drop_cache() noexcept {
    while (cache_ != nullptr) {
        --cached_;
        give_back(std::exchange(cache_, cache_->prev));
    }
}

arena::chunk* arena::new_chunk(std::size_t bytes) noexcept {
    void* mem = upstream_.allocate(bytes, default_alignment);
    if (mem == nullptr) return nullptr;
    auto* c = static_cast<chunk*>(mem);
    *c = chunk{nullptr, bytes, payload(c), 0, ++serial_};
    detail::poison(payload(c), bytes - header_bytes);
    reserved_ += bytes;
    ++chunks_;
    return c;
}

void arena::retire(chunk* c) noexcept {
    detail::poison(payload(c), c->bytes - header_bytes);
    if (options_.keep_chunks) {
        c->prev = cache_;
        cache_ = c;
        ++cached_;
        return;
    }
    give_back(c);
}

void* arena::grow(std::size_t size, std::size_t align) noexcept {
    std::size_t need = 0;  // payload bytes that hold size at any alignment
    if (!checked_add(size, align - 1, need) || !checked_add(need, header_bytes, need)) {
        report_violation(violation_kind::bad_size, name, nullptr, size,
                         "allocate(%zu, %zu) overflows", size, align);
        return nullptr;
    }
    std::byte* p = nullptr;
    if (need > next_chunk_) {
        // Oversize: a dedicated chunk, so the current chunk keeps its free space.
        chunk* c = new_chunk(need);
        if (c == nullptr) return nullptr;
        p = align_pointer_up(payload(c), align);
        c->top = p + size;
        c->used_before = static_cast<std::size_t>(c->top - payload(c));  // its own used bytes
        c->prev = dedicated_;
        dedicated_ = c;
        dedicated_used_ += c->used_before;
    } else {
        chunk* c = nullptr;
        for (chunk** link = &cache_; *link != nullptr; link = &(*link)->prev) {
            if ((*link)->bytes >= need) {
                c = *link;
                *link = c->prev;
                --cached_;
                c->serial = ++serial_;
                break;
            }
        }
        if (c == nullptr) {
            c = new_chunk(next_chunk_);
            if (c == nullptr) return nullptr;
            if (options_.growth == arena_growth::geometric)
                next_chunk_ = next_chunk_ > options_.max_chunk_size / 2 ? options_.max_chunk_size
                                                                        : next_chunk_ * 2;
        }
        if (head_ != nullptr) {
            head_->top = top_;
            c->used_before = head_->used_before + static_cast<std::size_t>(top_ - payload(head_));
        } else {
            c->used_before = 0;
        }
        c->prev = head_;
        head_ = c;
        top_ = payload(c);
        end_ = chunk_end(c);
        p = detail::bump(top_, end_, size, align);
        if (p == nullptr) return nullptr;  // cannot happen: need covers padding
        top_ = p + size;
    }
    ++total_;
    detail::unpoison(p, size);
    return p;
}

arena::marker_type arena::marker() const noexcept {
    marker_type m;
    m.regular = head_;
    m.top = top_;
    m.dedicated = dedicated_;
    m.live = total_ - base_;
    m.regular_serial = head_ != nullptr ? head_->serial : 0;
    m.dedicated_serial = dedicated_ != nullptr ? dedicated_->serial : 0;
    m.taken = total_;
    m.owner = owner_;
    return m;
}

// Where top (in regular chunk c, or nowhere) lies in the regular chunks' allocation order.
std::size_t arena::regular_position(const chunk* c, const std::byte* top) noexcept {
    if (c == nullptr) return 0;
    return c->used_before +
           static_cast<std::size_t>(top - (reinterpret_cast<const std::byte*>(c) + header_bytes));
}

bool arena::valid(const marker_type& m) const noexcept {
    if constexpr (check_level >= 1) {
        if (m.owner != owner_ || m.live > total_ - base_) return false;
        if (m.regular != nullptr) {
            chunk* c = head_;
            while (c != nullptr && c != m.regular) c = c->prev;
            if (c == nullptr || c->serial != m.regular_serial) return false;
            const std::byte* limit = c == head_ ? top_ : c->top;
            if (m.top < payload(c) || m.top > limit) return false;
        }
        if (m.dedicated != nullptr) {
            chunk* c = dedicated_;
            while (c != nullptr && c != m.dedicated) c = c->prev;
            if (c == nullptr || c->serial != m.dedicated_serial) return false;
        }
        if (!retreats_.intact(regular_position(m.regular, m.top), m.taken)) return false;
    }
    return true;
}

void arena::drop_regular_until(chunk* keep, bool keep_oldest) noexcept {
    while (head_ != keep && head_ != nullptr) {
        if (keep_oldest && head_->prev == nullptr) break;
        chunk* c = head_;
        head_ = c->prev;
        retire(c);
    }
    if (head_ == nullptr) {
        top_ = end_ = nullptr;
    } else {
        end_ = chunk_end(head_);
        top_ = head_->top;  // refined by the caller
    }
}

void arena::drop_dedicated_until(const chunk* keep) noexcept {
    while (dedicated_ != keep && dedicated_ != nullptr) {
        chunk* c = dedicated_;
        dedicated_ = c->prev;
        dedicated_used_ -= c->used_before;
        give_back(c);  // never cached: sizes vary
    }
}

void arena::rewind_across(marker_type m) noexcept {
    if (!valid(m)) [[unlikely]] {
        report_violation(violation_kind::stale_marker, name, m.top, 0,
                         "rewind to %p: the marker was already rewound past (its chunk or "
                         "position is gone) or belongs to another arena",
                         static_cast<void*>(m.top));
        return;
    }
    if constexpr (check_level >= 1) retreats_.note(regular_position(m.regular, m.top), total_);
    note_peak();
    if (m.regular == head_) {
        detail::poison(m.top, static_cast<std::size_t>(top_ - m.top));
        top_ = m.top;
    } else {
        if (head_ != nullptr) head_->top = top_;
        drop_regular_until(m.regular, m.regular == nullptr);
        if (m.regular != nullptr) {
            top_ = m.top;
        } else if (head_ != nullptr) {
            top_ = payload(head_);  // the kept oldest chunk, now empty
        }
        if (head_ != nullptr) detail::poison(top_, static_cast<std::size_t>(end_ - top_));
    }
    drop_dedicated_until(m.dedicated);
    base_ = total_ - m.live;
}

void arena::reset() noexcept {
    if constexpr (check_level >= 1) retreats_.note(0, total_);
    note_peak();
    drop_dedicated_until(nullptr);
    drop_regular_until(nullptr, true);
    if (head_ != nullptr) {
        top_ = payload(head_);
        head_->used_before = 0;
        detail::poison(top_, static_cast<std::size_t>(end_ - top_));
    }
    base_ = total_;
}

void arena::shrink_to_fit() noexcept {
    drop_cache();
    if (head_ != nullptr && head_->prev == nullptr && top_ == payload(head_)) {
        give_back(std::exchange(head_, nullptr));
        top_ = end_ = nullptr;
    }
}

bool arena::owns(const void* p) const noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    for (chunk* c = head_; c != nullptr; c = c->prev) {
        const std::byte* limit = c == head_ ? top_ : c->top;
        if (b >= payload(c) && b < limit) return true;
    }
    for (chunk* c = dedicated_; c != nullptr; c = c->prev)
        if (b >= payload(c) && b < c->top) return true;
    return false;
}

rtmem::stats arena::stats() const noexcept {
    rtmem::stats s;
    s.capacity = 0;  // grows on demand
    s.used = used();
    s.peak = peak_ > s.used ? peak_ : s.used;
    if (counts_blocks_) {  // the temporary arena's inline bump does not count (temporary.hpp)
        s.live_count = total_ - base_;
        s.total_count = total_;
    }
    return s;
}

bool arena::check() const noexcept {
    bool ok = base_ <= total_;
    std::size_t n = 0, bytes = 0;
    for (chunk* c = head_; ok && c != nullptr; c = c->prev, ++n) {
        const std::byte* limit = c == head_ ? top_ : c->top;
        ok = limit >= payload(c) && limit <= chunk_end(c);
        if (ok && c->prev != nullptr)
            ok = c->used_before ==
                 c->prev->used_before + static_cast<std::size_t>(c->prev->top - payload(c->prev));
        if (ok && c->prev == nullptr) ok = c->used_before == 0;
        bytes += c->bytes;
    }
    std::size_t dedicated_used = 0;
    for (chunk* c = dedicated_; ok && c != nullptr; c = c->prev, ++n) {
        ok = c->top >= payload(c) && c->top <= chunk_end(c);
        dedicated_used += c->used_before;
        bytes += c->bytes;
    }
    for (chunk* c = cache_; ok && c != nullptr; c = c->prev, ++n) bytes += c->bytes;
    ok = ok && dedicated_used == dedicated_used_ && n == chunks_ && bytes == reserved_ &&
         (head_ == nullptr || (top_ >= payload(head_) && end_ == chunk_end(head_)));
    if (!ok)
        report_violation(violation_kind::corrupted, name, top_, 0,
                         "chunk chain inconsistent (%zu chunks walked, %zu recorded)", n, chunks_);
    return ok;
}

}  // namespace rtmem
