// growing_stack_allocator slow paths: growing and shrinking the chunk chain, markers across
// chunks, diagnosing bad frees, validation.
#include "rtmem/alloc/growing_stack.hpp"

#include <new>
#include <utility>

namespace rtmem {

/// Header at the start of every chunk; the payload follows it. The saved fields describe the
/// chunk while a newer one is current.
struct growing_stack_allocator::chunk {
    chunk* prev;          // older chunk in use (or next spare)
    std::size_t bytes;    // whole chunk, header included (what the upstream gave)
    std::byte* top;       // saved top
    std::byte* first;     // saved first block
    std::size_t below;    // used bytes of the older chunks
    std::uint64_t serial; // distinguishes a reused chunk from the one a marker saw
};

namespace {
using chunk = growing_stack_allocator::chunk;
constexpr std::size_t chunk_header = align_up(sizeof(chunk), default_alignment);

std::byte* payload(chunk* c) noexcept {
    return reinterpret_cast<std::byte*>(c) + chunk_header;
}
// Where top (in chunk c) lies in the allocation order: the used bytes below it.
[[maybe_unused]] std::size_t position(chunk* c, const std::byte* top) noexcept {  // checks on
    return c->below + static_cast<std::size_t>(top - payload(c));
}
std::byte* chunk_end(chunk* c) noexcept {
    return reinterpret_cast<std::byte*>(c) + c->bytes;
}
}  // namespace

growing_stack_allocator::growing_stack_allocator(growing_stack_options options,
                                                 detail::upstream_ref upstream) noexcept
    : options_(options), upstream_(upstream) {
    if (options_.chunk_size < chunk_header + default_alignment)
        options_.chunk_size = chunk_header + default_alignment;
}

growing_stack_allocator::growing_stack_allocator(growing_stack_allocator&& o) noexcept
    : top_(std::exchange(o.top_, nullptr)),
      live_(std::exchange(o.live_, 0)),
      end_(std::exchange(o.end_, nullptr)),
      begin_(std::exchange(o.begin_, nullptr)),
      first_(std::exchange(o.first_, nullptr)),
      total_(o.total_),
      below_(std::exchange(o.below_, 0)),
      peak_(o.peak_),
      current_(std::exchange(o.current_, nullptr)),
      spare_(std::exchange(o.spare_, nullptr)),
      reserved_(std::exchange(o.reserved_, 0)),
      chunks_(std::exchange(o.chunks_, 0)),
      spares_(std::exchange(o.spares_, 0)),
      serial_(o.serial_),
      owner_(o.owner_),
      options_(o.options_),
      upstream_(o.upstream_),
      retreats_(o.retreats_) {}

growing_stack_allocator& growing_stack_allocator::operator=(growing_stack_allocator&& o) noexcept {
    if (this != &o) {
        this->~growing_stack_allocator();
        new (this) growing_stack_allocator(std::move(o));
    }
    return *this;
}

growing_stack_allocator::~growing_stack_allocator() {
    release_all();
}

void growing_stack_allocator::release_all() noexcept {
    while (current_ != nullptr) give_back(std::exchange(current_, current_->prev));
    while (spare_ != nullptr) {
        --spares_;
        give_back(std::exchange(spare_, spare_->prev));
    }
    top_ = end_ = begin_ = first_ = nullptr;
    below_ = 0;
}

void growing_stack_allocator::give_back(chunk* c) noexcept {
    --chunks_;
    reserved_ -= c->bytes;
    detail::unpoison(c, c->bytes);
    upstream_.deallocate(c, c->bytes, default_alignment);
}

void growing_stack_allocator::retire(chunk* c) noexcept {
    if (spares_ < options_.spare_chunks) {
        detail::poison(payload(c), c->bytes - chunk_header);
        c->prev = spare_;
        spare_ = c;
        ++spares_;
        return;
    }
    give_back(c);
}

chunk* growing_stack_allocator::take_chunk(std::size_t bytes) noexcept {
    for (chunk** link = &spare_; *link != nullptr; link = &(*link)->prev) {
        if ((*link)->bytes >= bytes) {
            chunk* c = *link;
            *link = c->prev;
            --spares_;
            c->serial = ++serial_;
            return c;
        }
    }
    if (bytes < options_.chunk_size) bytes = options_.chunk_size;
    void* mem = upstream_.allocate(bytes, default_alignment);
    if (mem == nullptr) return nullptr;
    auto* c = static_cast<chunk*>(mem);
    *c = chunk{nullptr, bytes, nullptr, nullptr, 0, ++serial_};
    detail::poison(payload(c), bytes - chunk_header);
    reserved_ += bytes;
    ++chunks_;
    return c;
}

void growing_stack_allocator::make_current(chunk* c) noexcept {
    current_ = c;
    begin_ = payload(c);
    end_ = chunk_end(c);
    top_ = c->top;
    first_ = c->first;
    below_ = c->below;
}

void growing_stack_allocator::pop_current() noexcept {
    chunk* c = current_;
    make_current(c->prev);
    retire(c);
}

void* growing_stack_allocator::grow(std::size_t size, std::size_t align) noexcept {
    std::size_t need = 0;  // chunk bytes that hold the block at any alignment
    if (!checked_add(size, align - 1, need) || !checked_add(need, header_bytes, need) ||
        !checked_add(need, chunk_header, need)) {
        report_violation(violation_kind::bad_size, name, nullptr, size,
                         "allocate(%zu, %zu) overflows", size, align);
        return nullptr;
    }
    chunk* c = take_chunk(need);
    if (c == nullptr) return nullptr;
    if (current_ != nullptr) {
        current_->top = top_;
        current_->first = first_;
        c->below = used();
    } else {
        c->below = 0;
    }
    c->prev = current_;
    c->top = payload(c);
    c->first = nullptr;
    make_current(c);
    std::byte* p = detail::bump(top_ + header_bytes, end_, size, align);  // need covers it
    if constexpr (check_level >= 1) {
        const header h{top_, size};
        detail::unpoison(p - header_bytes, header_bytes + size);
        std::memcpy(p - header_bytes, &h, sizeof h);
    } else {
        detail::unpoison(p, size);
    }
    first_ = p;
    top_ = p + size;
    ++live_;
    ++total_;
    return p;
}

void growing_stack_allocator::chunk_emptied() noexcept {
    if (current_->prev != nullptr) {
        pop_current();
    } else if (live_ == 0) {
        // The oldest chunk stays; emptied, it is as new (the padding before its first block
        // goes too, which the headers do with checks on and nothing does without them).
        detail::retreat(top_, begin_);
    }
}

void growing_stack_allocator::bad_free(const std::byte* b, std::size_t size) const noexcept {
    const void* v = b;
    for (chunk* c = current_; c != nullptr; c = c->prev) {
        const std::byte* limit = c == current_ ? top_ : c->top;
        if (b >= payload(c) && b < limit) {
            report_violation(violation_kind::lifo_order, name, v, size,
                             "deallocate of %p out of LIFO order: it is not the most recent live "
                             "block (%s; top is %p)",
                             v, c == current_ ? "same chunk" : "in an older chunk",
                             static_cast<const void*>(top_));
            return;
        }
        if (b >= limit && b < chunk_end(c)) {
            report_violation(violation_kind::double_free, name, v, size,
                             "deallocate of %p: the block was already freed or rewound", v);
            return;
        }
    }
    for (chunk* c = spare_; c != nullptr; c = c->prev) {
        if (b >= payload(c) && b < chunk_end(c)) {
            report_violation(violation_kind::double_free, name, v, size,
                             "deallocate of %p: the block was already freed (its chunk is empty)",
                             v);
            return;
        }
    }
    report_violation(violation_kind::foreign_pointer, name, v, size,
                     "deallocate of %p: not a block of this allocator", v);
}

growing_stack_allocator::marker_type growing_stack_allocator::marker() const noexcept {
    marker_type m;
    m.current = current_;
    m.top = top_;
    m.live = live_;
    m.serial = current_ != nullptr ? current_->serial : 0;
    m.taken = total_;
    m.owner = owner_;
    return m;
}

bool growing_stack_allocator::valid(const marker_type& m) const noexcept {
    if constexpr (check_level >= 1) {
        if (m.owner != owner_ || m.live > live_) return false;
        if (m.current == nullptr) return m.live == 0 && retreats_.intact(0, m.taken);
        for (chunk* c = current_; c != nullptr; c = c->prev) {
            if (c != m.current) continue;
            const std::byte* limit = c == current_ ? top_ : c->top;
            return c->serial == m.serial && m.top >= payload(c) && m.top <= limit &&
                   retreats_.intact(position(c, m.top), m.taken);
        }
        return false;
    }
    return true;
}

void growing_stack_allocator::rewind(marker_type m) noexcept {
    if (!valid(m)) [[unlikely]] {
        report_violation(violation_kind::stale_marker, name, m.top, 0,
                         "rewind to %p: the marker was already rewound or freed past (its chunk "
                         "or position is gone) or belongs to another allocator",
                         static_cast<void*>(m.top));
        return;
    }
    if (m.current == nullptr) return reset();
    note_peak();
    while (current_ != m.current) pop_current();
    detail::retreat(top_, m.top);
    live_ = m.live;
    if constexpr (check_level >= 1) retreats_.note(used(), total_);
}

void growing_stack_allocator::reset() noexcept {
    if constexpr (check_level >= 1) retreats_.note(0, total_);
    if (current_ == nullptr) return;
    note_peak();
    while (current_->prev != nullptr) pop_current();
    detail::retreat(top_, begin_);
    live_ = 0;
}

void growing_stack_allocator::shrink_to_fit() noexcept {
    while (spare_ != nullptr) {
        --spares_;
        give_back(std::exchange(spare_, spare_->prev));
    }
    if (current_ != nullptr && current_->prev == nullptr && live_ == 0) {
        note_peak();
        release_all();
    }
}

bool growing_stack_allocator::owns(const void* p) const noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    for (chunk* c = current_; c != nullptr; c = c->prev) {
        const std::byte* limit = c == current_ ? top_ : c->top;
        if (b >= payload(c) && b < limit) return true;
    }
    return false;
}

rtmem::stats growing_stack_allocator::stats() const noexcept {
    rtmem::stats s;
    s.capacity = 0;  // grows on demand
    s.used = used();
    s.peak = peak_ > s.used ? peak_ : s.used;
    s.live_count = live_;
    s.total_count = total_;
    return s;
}

bool growing_stack_allocator::check() const noexcept {
    bool ok = live_ <= total_;
    std::size_t n = 0, bytes = 0, spares = 0;
    if (current_ != nullptr)
        ok = ok && begin_ == payload(current_) && end_ == chunk_end(current_) &&
             top_ >= begin_ && top_ <= end_ && below_ == current_->below &&
             (current_->prev == nullptr || (first_ >= begin_ && first_ < top_));
    else
        ok = ok && top_ == nullptr && below_ == 0;
    for (chunk* c = current_; ok && c != nullptr; c = c->prev, ++n) {
        const std::byte* limit = c == current_ ? top_ : c->top;
        ok = limit >= payload(c) && limit <= chunk_end(c);
        if (ok && c->prev != nullptr)
            ok = c->below == c->prev->below + static_cast<std::size_t>(c->prev->top -
                                                                       payload(c->prev));
        if (ok && c->prev == nullptr) ok = c->below == 0;
        bytes += c->bytes;
    }
    for (chunk* c = spare_; ok && c != nullptr; c = c->prev, ++n, ++spares) bytes += c->bytes;
    ok = ok && n == chunks_ && spares == spares_ && bytes == reserved_;
    if (!ok)
        report_violation(violation_kind::corrupted, name, top_, 0,
                         "chunk chain inconsistent (%zu chunks walked, %zu recorded)", n, chunks_);
    return ok;
}

}  // namespace rtmem
