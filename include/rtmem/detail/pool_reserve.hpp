// The cold half of a pool_allocator: its chunks and the never-used blocks in them, and growth.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>

#include "rtmem/core/alignment.hpp"
#include "rtmem/core/config.hpp"
#include "rtmem/detail/pool_chunk.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem::detail {

/// Everything a pool's slow path reads and writes. It lives outside the pool object (in the
/// last bytes of the caller's buffer, or taken from the upstream at construction) and the
/// slow path receives only a pointer to it: a pool object whose address never reaches a call
/// lets the compiler keep the free-list head in a register across a loop of allocations and
/// frees (with the slow path a member function, `this` escapes and the head is stored on every
/// allocate). A pointer to a member of the pool would not do: alias analysis tracks the object.
template <class Upstream>
struct pool_reserve {
    pool_chunk* chunks = nullptr;
    pool_chunk* carve = nullptr;  // chunk whose never-used blocks go out next
    pool_chunk_index index;       // the chunks by address (growing pools only)
    Upstream* upstream = nullptr; // null: the caller's buffer, never grows
    std::size_t stride = 0, block_align = 0, per_chunk = 0;
    std::size_t blocks = 0;  // in all chunks
    std::size_t carved = 0;  // handed out at least once since reset: the peak live count
    std::size_t peak = 0;    // largest carved before a reset

    static constexpr bool with_bits = check_level >= 1;

    /// In the last bytes of `buffer`, the rest of which becomes the one chunk (so the blocks
    /// start where they would without a reserve); nullptr when the buffer is too small for the
    /// reserve itself, a reserve without a chunk when no block fits beside it.
    static pool_reserve* create_in(std::span<std::byte> buffer, std::size_t stride,
                                   std::size_t block_align) noexcept {
        const auto begin = reinterpret_cast<std::uintptr_t>(buffer.data());
        const std::uintptr_t end = begin + buffer.size();
        if (buffer.data() == nullptr || buffer.size() < sizeof(pool_reserve) + alignof(pool_reserve))
            return nullptr;
        const std::uintptr_t at = align_down(end - sizeof(pool_reserve), alignof(pool_reserve));
        if (at < begin) return nullptr;
        auto* r = new (reinterpret_cast<void*>(at)) pool_reserve{};
        r->stride = stride;
        r->block_align = block_align;
        if (auto* c = pool_chunk::carve(buffer.first(at - begin), stride, block_align, with_bits))
            r->adopt(c);
        return r;
    }

    /// Taken from `upstream`, which later chunks come from too (nullptr: it had no memory).
    static pool_reserve* create_from(Upstream& upstream, std::size_t stride,
                                     std::size_t block_align, std::size_t per_chunk) noexcept {
        void* mem = upstream.allocate(sizeof(pool_reserve), alignof(pool_reserve));
        if (mem == nullptr) return nullptr;
        auto* r = new (mem) pool_reserve{};
        r->upstream = &upstream;
        r->stride = stride;
        r->block_align = block_align;
        r->per_chunk = per_chunk;
        return r;
    }

    /// Gives back the chunks, the index and (upstream form) the reserve itself.
    static void destroy(pool_reserve* r) noexcept {
        if (r == nullptr) return;
        r->release_chunks();
        if (Upstream* up = r->upstream) {
            r->~pool_reserve();
            up->deallocate(r, sizeof(pool_reserve), alignof(pool_reserve));
        }
    }

    /// The free list is empty: a never-used block, growing by a chunk if needed (nullptr: none).
    RTMEM_NOINLINE static void* carve_block(pool_reserve* r) noexcept {
        if (r == nullptr) return nullptr;  // moved from, or the pool's memory never came
        while (r->carve != nullptr && r->carve->carved == r->carve->count) r->carve = r->carve->next;
        if (r->carve == nullptr && !r->grow()) return nullptr;
        void* p = r->carve->carve(r->stride);
        unpoison(p, r->stride);
        ++r->carved;
        return p;
    }

    /// Every block becomes never-used again; chunks are kept.
    void reset() noexcept {
        if (carved > peak) peak = carved;
        for (auto* c = chunks; c != nullptr; c = c->next) c->prepare(stride);
        carve = chunks;
        carved = 0;
    }

    [[nodiscard]] std::size_t peak_count() const noexcept { return carved > peak ? carved : peak; }

    // O(log chunks): the buffer form has its one chunk, a growing pool binary-searches the index.
    [[nodiscard]] pool_block_ref find_block(const void* p) const noexcept {
        pool_chunk* c = index.size == 0 ? chunks : index.find(p);
        return c == nullptr ? pool_block_ref{} : c->locate(p, stride);
    }

  private:
    void adopt(pool_chunk* c) noexcept {
        c->next = chunks;
        chunks = c;
        blocks += c->count;
        c->prepare(stride);
        carve = c;
    }

    bool grow() noexcept {
        if (upstream == nullptr || per_chunk == 0) return false;
        if (index.size == index.capacity && !grow_index()) return false;
        std::size_t bytes = 0;
        if (!checked_mul(stride, per_chunk, bytes) ||
            !checked_add(bytes, pool_chunk::overhead(per_chunk, with_bits) + block_align, bytes))
            return false;
        auto* mem = static_cast<std::byte*>(upstream->allocate(bytes, alignof(pool_chunk)));
        if (mem == nullptr) return false;
        auto* c = pool_chunk::carve({mem, bytes}, stride, block_align, with_bits);
        if (c == nullptr) {
            upstream->deallocate(mem, bytes, alignof(pool_chunk));
            return false;
        }
        c->upstream_bytes = bytes;
        adopt(c);
        index.insert(c);
        return true;
    }

    // Doubles the chunk index (amortised O(1) per chunk; growth already calls the upstream).
    bool grow_index() noexcept {
        const std::size_t cap = index.capacity == 0 ? 8 : 2 * index.capacity;
        std::size_t bytes = 0;
        if (!checked_mul(cap, sizeof(pool_chunk*), bytes)) return false;
        auto** mem = static_cast<pool_chunk**>(upstream->allocate(bytes, alignof(pool_chunk*)));
        if (mem == nullptr) return false;
        if (index.size != 0) std::memcpy(mem, index.chunks, index.size * sizeof(*mem));
        release_index();
        index.chunks = mem;
        index.capacity = cap;
        return true;
    }

    void release_index() noexcept {
        if (index.chunks != nullptr)
            upstream->deallocate(index.chunks, index.capacity * sizeof(pool_chunk*),
                                 alignof(pool_chunk*));
        index.chunks = nullptr;
        index.capacity = 0;
    }

    void release_chunks() noexcept {
        while (chunks != nullptr) {
            auto* c = chunks;
            chunks = c->next;
            if (c->upstream_bytes != 0 && upstream != nullptr) {
                unpoison(c->base, c->upstream_bytes);
                upstream->deallocate(c->base, c->upstream_bytes, alignof(pool_chunk));
            } else {
                unpoison(c->first, c->count * stride);
            }
        }
        if (upstream != nullptr) release_index();
        index.size = 0;
        carve = nullptr;
    }
};

}  // namespace rtmem::detail
