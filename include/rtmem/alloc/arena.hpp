// arena: a growable linear allocator over a chain of chunks from an upstream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rtmem/core/allocator.hpp"
#include "rtmem/detail/bump.hpp"
#include "rtmem/detail/retreat_log.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem {

namespace detail {
class temporary_resource;  // bumps the current chunk inline, uncounted (counts_blocks_ off)
}  // namespace detail

/// How an arena sizes the chunks it asks its upstream for.
enum class arena_growth {
    fixed,      ///< every chunk is chunk_size bytes
    geometric,  ///< each new chunk doubles the previous one, up to max_chunk_size
};

struct arena_options {
    std::size_t chunk_size = 64 * 1024;  ///< bytes per chunk (header included), or the first one
    arena_growth growth = arena_growth::fixed;
    std::size_t max_chunk_size = std::size_t{64} << 20;  ///< cap for geometric growth
    /// false: chunks freed by rewind()/reset() go back to the upstream at once.
    /// true: they are kept in a cache for the next chunks (shrink_to_fit() hands them back).
    bool keep_chunks = false;
};

/// A linear allocator that grows: when the current chunk is full it takes another from the
/// upstream; a request larger than a chunk gets a dedicated chunk of its own (the current chunk
/// keeps its free space). Markers work across chunks: rewind() hands back (or caches) every
/// chunk newer than the marker. reset() keeps the oldest chunk so a per-frame arena stops
/// calling its upstream once warm. deallocate does nothing.
class arena {
  public:
    static constexpr std::string_view name = "arena";

    struct chunk;
    /// The same layout at every check level (the arena's slow paths are compiled into the
    /// library); the serials, `taken` and `owner` are only tested with checks on.
    struct marker_type {
        chunk* regular = nullptr;  // chunk that held the top (nullptr: none yet)
        std::byte* top = nullptr;
        chunk* dedicated = nullptr;  // newest dedicated chunk at the time
        std::size_t live = 0;
        std::uint64_t regular_serial = 0;
        std::uint64_t dedicated_serial = 0;
        std::uint64_t taken = 0;  // allocations before the marker
        std::uint32_t owner = 0;
    };

    explicit arena(arena_options options = {}) noexcept : arena(options, detail::upstream_ref()) {}
    template <allocator Upstream>
    arena(arena_options options, Upstream& upstream) noexcept
        : arena(options, detail::upstream_ref(upstream)) {}
    explicit arena(std::size_t chunk_bytes) noexcept
        : arena(arena_options{.chunk_size = chunk_bytes}, detail::upstream_ref()) {}
    template <allocator Upstream>
    arena(std::size_t chunk_bytes, Upstream& upstream) noexcept
        : arena(arena_options{.chunk_size = chunk_bytes}, detail::upstream_ref(upstream)) {}
    arena(arena_options options, detail::upstream_ref upstream) noexcept;

    arena(arena&& o) noexcept;
    arena& operator=(arena&& o) noexcept;
    arena(const arena&) = delete;
    arena& operator=(const arena&) = delete;
    ~arena();

    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) noexcept {
        if constexpr (check_level >= 1)
            if (!is_pow2(align)) [[unlikely]]
                return detail::bad_alignment(name, size, align);
        size += static_cast<std::size_t>(size == 0);
        std::byte* p;
        if (!detail::fits(top_, end_, size, align, p)) [[unlikely]]
            return grow(size, align);
        top_ = p + size;
        detail::unpoison(p, size);
        ++total_;
        return p;
    }

    /// Does nothing (blocks come back by rewind or reset). With checks at level 2 a pointer the
    /// arena does not own is reported (owns() walks the chunks).
    void deallocate([[maybe_unused]] void* p, [[maybe_unused]] std::size_t size,
                    std::size_t /*align*/ = default_alignment) noexcept {
        if constexpr (check_level >= 2)
            if (p != nullptr && !owns(p)) [[unlikely]]
                detail::not_live(name, p, size);
    }

    [[nodiscard]] marker_type marker() const noexcept;
    /// Frees every block allocated after m; chunks newer than m go back to the upstream (or the
    /// cache). A marker already rewound past or from another arena is a stale_marker violation.
    /// A marker in the current chunk with no dedicated chunk since (a temp_scope's usual case)
    /// is rewound inline with checks off; the rest, and every rewind with checks on (it
    /// validates the marker), goes out of line.
    RTMEM_ALWAYS_INLINE void rewind(marker_type m) noexcept {
        if constexpr (check_level == 0) {
            if (m.regular == head_ && m.dedicated == dedicated_) [[likely]] {
                note_peak();
                detail::retreat(top_, m.top);
                base_ = total_ - m.live;
                return;
            }
        }
        rewind_across(m);
    }
    /// Frees every block; keeps the oldest chunk, hands back (or caches) the others.
    void reset() noexcept;
    /// Hands back the cached chunks, and the kept chunk too when the arena is empty.
    void shrink_to_fit() noexcept;

    [[nodiscard]] bool owns(const void* p) const noexcept;
    [[nodiscard]] rtmem::stats stats() const noexcept;
    [[nodiscard]] bool check() const noexcept;

    /// Bytes held from the upstream (chunks in use and cached).
    [[nodiscard]] std::size_t reserved_bytes() const noexcept {
        return reserved_;
    }
    /// Chunks in use (regular and dedicated) and cached.
    [[nodiscard]] std::size_t chunk_count() const noexcept {
        return chunks_;
    }
    [[nodiscard]] std::size_t cached_chunk_count() const noexcept {
        return cached_;
    }
    [[nodiscard]] const arena_options& options() const noexcept {
        return options_;
    }

  private:
    friend class detail::temporary_resource;
    RTMEM_NOINLINE void* grow(std::size_t size, std::size_t align) noexcept;
    RTMEM_NOINLINE void rewind_across(marker_type m) noexcept;
    chunk* new_chunk(std::size_t bytes) noexcept;
    void retire(chunk* c) noexcept;
    void give_back(chunk* c) noexcept;  // to the upstream, whatever keep_chunks says
    void drop_cache() noexcept;         // gives back every cached chunk
    void drop_regular_until(chunk* keep, bool keep_oldest) noexcept;
    void drop_dedicated_until(const chunk* keep) noexcept;
    [[nodiscard]] bool valid(const marker_type& m) const noexcept;
    [[nodiscard]] std::size_t used() const noexcept;
    [[nodiscard]] static std::size_t regular_position(const chunk* c, const std::byte* top) noexcept;
    void note_peak() noexcept {
        const std::size_t u = used();
        if (u > peak_) peak_ = u;
    }
    void release_all() noexcept;

    chunk* head_ = nullptr;       // current regular chunk (newest)
    std::byte* top_ = nullptr;    // bump pointer in head_
    std::byte* end_ = nullptr;    // end of head_
    chunk* dedicated_ = nullptr;  // newest dedicated chunk
    chunk* cache_ = nullptr;      // retired chunks kept for reuse (keep_chunks)
    std::size_t dedicated_used_ = 0;
    std::size_t base_ = 0;
    std::size_t total_ = 0;
    std::size_t peak_ = 0;
    std::size_t next_chunk_ = 0;
    std::size_t reserved_ = 0;
    std::size_t chunks_ = 0;
    std::size_t cached_ = 0;
    std::uint64_t serial_ = 0;
    std::uint32_t owner_ = detail::next_owner_tag();
    bool counts_blocks_ = true;  // false: stats() reports no live_count / total_count
    arena_options options_;
    detail::upstream_ref upstream_;
    detail::retreat_log retreats_;  // with checks on, over regular_position(): stale markers
};

/// Header at the start of every chunk; the payload follows it (at chunk_header_bytes).
struct arena::chunk {
    chunk* prev;              // older chunk in the same list
    std::size_t bytes;        // whole chunk, header included (what the upstream gave)
    std::byte* top;           // top when the chunk stopped being current / end of a dedicated block
    std::size_t used_before;  // used bytes of all older regular chunks
    std::uint64_t serial;     // distinguishes a reused address from the chunk a marker saw
};

namespace detail {
inline constexpr std::size_t arena_chunk_header_bytes =
    align_up(sizeof(arena::chunk), default_alignment);
}

inline std::size_t arena::used() const noexcept {
    const std::size_t regular =
        head_ == nullptr
            ? 0
            : head_->used_before +
                  static_cast<std::size_t>(top_ - (reinterpret_cast<std::byte*>(head_) +
                                                   detail::arena_chunk_header_bytes));
    return regular + dedicated_used_;
}

}  // namespace rtmem
