// guarded<A>: a debugging decorator over any rtmem allocator. Every block gets a header (size,
// alignment, allocating call site, checksum) and fences before and after it; fresh memory is
// filled with 0xCD and freed memory with 0xDD; freed blocks wait in a quarantine before going
// back upstream. Detects overflow and underflow (fence_overwritten), double free, foreign
// pointers, size mismatch, and writes to freed blocks, each reported with the block's address,
// size and call sites.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/source_location.hpp"

namespace rtmem {

/// Byte patterns guarded<A> writes (the MSVC debug heap's, familiar from debuggers).
namespace guard_pattern {
inline constexpr std::byte fence{0xFD};      ///< before and after every live block
inline constexpr std::byte allocated{0xCD};  ///< a fresh block, until the caller writes it
inline constexpr std::byte freed{0xDD};      ///< a freed block waiting in quarantine
}  // namespace guard_pattern

struct guarded_options {
    std::size_t fence_size = 16;  ///< bytes of fence on each side (rounded up to 8)
    std::size_t quarantine = 64;  ///< freed blocks held back (double free / use after free)
};

/// Wraps an upstream A it refers to. Single-threaded like every rtmem allocator: share it between
/// threads as locked<guarded<A>>. The foreign-pointer check reads the header
/// bytes just before the pointer; double frees are detected while the block is still in the
/// quarantine (the last `quarantine` frees).
template <allocator A>
class guarded {
  public:
    static constexpr std::string_view name = "guarded";

    explicit guarded(A& upstream, guarded_options options = {}) noexcept
        : up_(&upstream),
          fence_(align_up(options.fence_size == 0 ? 8 : options.fence_size, 8)),
          quarantine_max_(options.quarantine) {}
    guarded(guarded&& o) noexcept
        : up_(o.up_),
          fence_(o.fence_),
          quarantine_max_(o.quarantine_max_),
          live_(o.live_),
          q_head_(o.q_head_),
          q_tail_(o.q_tail_),
          q_count_(o.q_count_),
          stats_(o.stats_) {
        o.live_ = o.q_head_ = o.q_tail_ = nullptr;
        o.q_count_ = 0;
    }
    guarded& operator=(guarded&&) = delete;
    guarded(const guarded&) = delete;
    guarded& operator=(const guarded&) = delete;

    /// Checks every live block's fences and the quarantine, then returns quarantined blocks.
    /// (A problem already reported is not reported again.)
    ~guarded() {
        const auto here = rtmem::source_location::current();
        (void)check(here);
        while (q_head_ != nullptr) evict_oldest(here);
    }

    [[nodiscard]] void* allocate(
        std::size_t size, std::size_t align = default_alignment,
        rtmem::source_location where = rtmem::source_location::current()) noexcept {
        if (!is_pow2(align)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two (%s:%u)", align,
                             where.file_name(), static_cast<unsigned>(where.line()));
            return nullptr;
        }
        std::size_t front = 0, total = 0;
        if (!checked_align_up(sizeof(header) + fence_, block_align(align), front) ||
            !checked_add(front, size, total) || !checked_add(total, fence_, total)) [[unlikely]] {
            report_violation(violation_kind::bad_size, name, nullptr, size,
                             "size %zu overflows with guard overhead (%s:%u)", size,
                             where.file_name(), static_cast<unsigned>(where.line()));
            return nullptr;
        }
        auto* base = static_cast<std::byte*>(up_->allocate(total, block_align(align)));
        if (base == nullptr) return nullptr;
        std::byte* user = base + front;
        std::memset(base, static_cast<int>(guard_pattern::fence), front - fence_);
        std::memset(user - fence_, static_cast<int>(guard_pattern::fence), fence_);
        std::memset(user, static_cast<int>(guard_pattern::allocated), size);
        std::memset(user + size, static_cast<int>(guard_pattern::fence), fence_);
        header* h = header_of(user);
        h->size = size;
        h->align = align;
        h->allocated_at = where;
        h->freed_at = where;
        h->state = live_state;
        h->reported = 0;
        h->prev = nullptr;
        h->next = live_;
        if (live_ != nullptr) live_->prev = h;
        live_ = h;
        seal(h);
        stats_.used += total;
        stats_.peak = stats_.used > stats_.peak ? stats_.used : stats_.peak;
        ++stats_.live_count;
        ++stats_.total_count;
        return user;
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment,
                    rtmem::source_location where = rtmem::source_location::current()) noexcept {
        if (p == nullptr) return;
        auto* user = static_cast<std::byte*>(p);
        header* h = header_of(user);
        if (!sealed(h)) [[unlikely]]
            return report(violation_kind::foreign_pointer, p, size, where,
                          "no valid guard header before the pointer (not from this allocator, "
                          "or a header destroyed by an underflow)");
        if constexpr (owning_allocator<A>) {
            // A header that verifies but lies outside the upstream's memory was copied there.
            if (!up_->owns(user - front_of(h))) [[unlikely]]
                return report(violation_kind::foreign_pointer, p, size, where,
                              "not allocated by this guarded allocator's upstream");
        }
        if (h->state == freed_state) [[unlikely]]
            return report_block(violation_kind::double_free, h, where, "block freed twice");
        if (h->size != size || h->align != align) [[unlikely]]
            return report_block(violation_kind::size_mismatch, h, where,
                                "freed with size %zu / alignment %zu", size, align);
        if (!fences_intact(h, where)) return;  // reported; the block is leaked, not reused
        unlink(h);
        std::memset(user, static_cast<int>(guard_pattern::freed), h->size);
        h->state = freed_state;
        h->freed_at = where;
        seal(h);
        stats_.used -= total_bytes(h);
        --stats_.live_count;
        h->prev = q_tail_;
        h->next = nullptr;
        if (q_tail_ != nullptr)
            q_tail_->next = h;
        else
            q_head_ = h;
        q_tail_ = h;
        if (++q_count_ > quarantine_max_) evict_oldest(where);
    }

    /// Verifies every live block (header and fences) and every quarantined block (still filled
    /// with 0xDD); reports each problem once (a later check, free or the destructor does not
    /// repeat it), naming `where` (the caller) as where it was found. True when all is intact.
    [[nodiscard]] bool check(
        rtmem::source_location where = rtmem::source_location::current()) const noexcept {
        bool ok = true;
        for (const header* h = live_; h != nullptr; h = h->next) {
            if (!sealed(h)) {
                report_block(violation_kind::corrupted, h, where,
                             "guard header of a live block overwritten");
                ok = false;
                continue;
            }
            ok = fences_intact(h, where) && ok;
        }
        for (const header* h = q_head_; h != nullptr; h = h->next)
            ok = free_fill_intact(h, where) && ok;
        return ok;
    }

    /// used counts live blocks with their guard overhead; quarantined blocks are not live.
    [[nodiscard]] rtmem::stats stats() const noexcept { return stats_; }
    [[nodiscard]] A& upstream() const noexcept { return *up_; }
    [[nodiscard]] std::size_t fence_size() const noexcept { return fence_; }

  private:
    static constexpr std::uint32_t live_state = 0x4c495645;   // "LIVE"
    static constexpr std::uint32_t freed_state = 0x46524545;  // "FREE"

    struct header {
        header* prev;
        header* next;
        std::size_t size;
        std::size_t align;
        rtmem::source_location allocated_at;
        rtmem::source_location freed_at;
        std::uint64_t checksum;
        std::uint32_t state;
        std::uint32_t reported;  // 1 + the violation_kind last reported for this block (0: none)
    };

    static constexpr std::size_t block_align(std::size_t align) noexcept {
        return align > alignof(header) ? align : alignof(header);
    }
    header* header_of(std::byte* user) const noexcept {
        return reinterpret_cast<header*>(user - fence_ - sizeof(header));
    }
    std::byte* user_of(const header* h) const noexcept {
        return const_cast<std::byte*>(reinterpret_cast<const std::byte*>(h)) + sizeof(header) +
               fence_;
    }
    std::size_t front_of(const header* h) const noexcept {
        return align_up(sizeof(header) + fence_, block_align(h->align));
    }
    std::size_t total_bytes(const header* h) const noexcept {
        return front_of(h) + h->size + fence_;
    }

    // Ties the header to its address, size, alignment and state: a stray copy, a random pointer
    // or an overwritten header does not verify.
    std::uint64_t checksum_of(const header* h) const noexcept {
        std::uint64_t x = reinterpret_cast<std::uintptr_t>(h) ^ 0x9E3779B97F4A7C15ull;
        for (std::uint64_t v :
             {std::uint64_t{h->size}, std::uint64_t{h->align}, std::uint64_t{h->state}}) {
            x ^= v + 0x9E3779B97F4A7C15ull + (x << 6) + (x >> 2);
            x *= 0xBF58476D1CE4E5B9ull;
        }
        return x ^ (x >> 31);
    }
    void seal(header* h) const noexcept { h->checksum = checksum_of(h); }
    bool sealed(const header* h) const noexcept {
        return (h->state == live_state || h->state == freed_state) &&
               h->checksum == checksum_of(h) && is_pow2(h->align);
    }

    bool fences_intact(const header* h, const rtmem::source_location& where) const noexcept {
        const std::byte* user = user_of(h);
        for (std::size_t i = 1; i <= fence_; ++i)
            if (user[-static_cast<std::ptrdiff_t>(i)] != guard_pattern::fence) {
                report_block(violation_kind::fence_overwritten, h, where,
                             "underflow: fence byte %zu before the block overwritten", i);
                return false;
            }
        for (std::size_t i = 0; i < fence_; ++i)
            if (user[h->size + i] != guard_pattern::fence) {
                report_block(violation_kind::fence_overwritten, h, where,
                             "overflow: fence byte %zu past the end overwritten", i);
                return false;
            }
        return true;
    }

    bool free_fill_intact(const header* h, const rtmem::source_location& where) const noexcept {
        const std::byte* user = user_of(h);
        for (std::size_t i = 0; i < h->size; ++i)
            if (user[i] != guard_pattern::freed) {
                report_block(violation_kind::corrupted, h, where, "write after free at offset %zu",
                             i);
                return false;
            }
        return fences_intact(h, where);
    }

    void unlink(header* h) noexcept {
        if (h->prev != nullptr)
            h->prev->next = h->next;
        else
            live_ = h->next;
        if (h->next != nullptr) h->next->prev = h->prev;
    }

    void evict_oldest(const rtmem::source_location& where) noexcept {
        header* h = q_head_;
        q_head_ = h->next;
        if (q_head_ == nullptr)
            q_tail_ = nullptr;
        else
            q_head_->prev = nullptr;
        --q_count_;
        (void)free_fill_intact(h, where);
        const std::size_t front = front_of(h), total = total_bytes(h), align = h->align;
        std::byte* base = user_of(h) - front;
        std::memset(static_cast<void*>(h), 0,
                    sizeof(header));  // a later double free fails the seal
        up_->deallocate(base, total, block_align(align));
    }

    void report(violation_kind kind, const void* p, std::size_t size,
                const rtmem::source_location& where, const char* what) const noexcept {
        report_violation(kind, name, p, size, "%s: %p (%zu bytes) at %s:%u in %s", what, p, size,
                         where.file_name(), static_cast<unsigned>(where.line()),
                         where.function_name());
    }

    template <class... Args>
    void report_block(violation_kind kind, const header* h, const rtmem::source_location& where,
                      const char* fmt, Args... args) const noexcept {
        // Damage found by inspection (fences, free fill, header) is reported once per block and
        // kind: a later check, free, eviction or the destructor sees the same problem. Each
        // wrong call (double free, size mismatch) is reported. (The header is our own memory.)
        if (kind == violation_kind::fence_overwritten || kind == violation_kind::corrupted) {
            const auto tag = static_cast<std::uint32_t>(kind) + 1;
            if (h->reported == tag) return;
            const_cast<header*>(h)->reported = tag;
        }
        char what[160];
        if constexpr (sizeof...(Args) == 0) {
            std::snprintf(what, sizeof what, "%s", fmt);
        } else {
            std::snprintf(what, sizeof what, fmt, args...);
        }
        char freed[200] = "";
        if (h->state == freed_state)
            std::snprintf(freed, sizeof freed, "; first freed at %s:%u", h->freed_at.file_name(),
                          static_cast<unsigned>(h->freed_at.line()));
        const void* p = user_of(h);
        report_violation(kind, name, p, h->size,
                         "%s: block %p of %zu bytes allocated at %s:%u (%s)%s; reported at %s:%u",
                         what, p, h->size, h->allocated_at.file_name(),
                         static_cast<unsigned>(h->allocated_at.line()),
                         h->allocated_at.function_name(), freed, where.file_name(),
                         static_cast<unsigned>(where.line()));
    }

    A* up_;
    std::size_t fence_;
    std::size_t quarantine_max_;
    header* live_ = nullptr;
    header* q_head_ = nullptr;
    header* q_tail_ = nullptr;
    std::size_t q_count_ = 0;
    rtmem::stats stats_{};
};

}  // namespace rtmem
