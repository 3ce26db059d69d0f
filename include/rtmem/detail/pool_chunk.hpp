// One chunk of a pool_allocator: a header, an optional free bit map, then equal blocks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>

#include "rtmem/core/alignment.hpp"
#include "rtmem/detail/sanitizer.hpp"

namespace rtmem::detail {

struct pool_chunk;

/// A block found inside a chunk: which chunk and which index (chunk == nullptr: not found).
struct pool_block_ref {
    pool_chunk* chunk = nullptr;
    std::size_t index = 0;
};

struct pool_chunk {
    pool_chunk* next = nullptr;
    std::byte* base = nullptr;           // start of the memory the chunk lives in
    std::byte* first = nullptr;          // first block
    std::size_t count = 0;               // blocks
    std::size_t upstream_bytes = 0;      // bytes to give back upstream (0: caller memory)
    std::size_t carved = 0;              // blocks [0, carved) were handed out at least once
    std::uint64_t* free_bits = nullptr;  // bit i set: block i is free (checks on only)

    static constexpr std::size_t bitmap_words(std::size_t n) noexcept { return (n + 63) / 64; }

    /// Bytes a chunk of n blocks needs besides the blocks (header and bit map).
    static constexpr std::size_t overhead(std::size_t n, bool with_bits) noexcept {
        return sizeof(pool_chunk) + (with_bits ? bitmap_words(n) * sizeof(std::uint64_t) : 0);
    }

    /// Lays a chunk out in `mem`: as many blocks as fit after the header (and bit map).
    /// Returns nullptr when not even one block fits.
    static pool_chunk* carve(std::span<std::byte> mem, std::size_t stride, std::size_t align,
                             bool with_bits) noexcept {
        const auto begin = reinterpret_cast<std::uintptr_t>(mem.data());
        const std::uintptr_t end = begin + mem.size();
        const std::uintptr_t hdr = align_up(begin, alignof(pool_chunk));
        if (hdr + sizeof(pool_chunk) > end || mem.data() == nullptr) return nullptr;
        auto layout_end = [&](std::size_t n) {
            return align_up(hdr + overhead(n, with_bits), align) + n * stride;
        };
        std::size_t n = (end - hdr) / stride;
        while (n > 0 && layout_end(n) > end) --n;  // a few steps: the overhead is small
        if (n == 0) return nullptr;
        auto* c = new (reinterpret_cast<void*>(hdr)) pool_chunk{};
        c->base = mem.data();
        c->count = n;
        if (with_bits) c->free_bits = reinterpret_cast<std::uint64_t*>(hdr + sizeof(pool_chunk));
        c->first = reinterpret_cast<std::byte*>(align_up(hdr + overhead(n, with_bits), align));
        return c;
    }

    /// Marks every block free and not yet handed out: blocks are carved lazily, lowest address
    /// first, so a block is touched only when it is first needed. Poisons the blocks for ASan.
    void prepare(std::size_t stride) noexcept {
        carved = 0;
        if (free_bits != nullptr) {
            std::memset(free_bits, 0xFF, bitmap_words(count) * sizeof(std::uint64_t));
        }
        poison(first, count * stride);
    }

    /// The next never-used block (carved < count).
    std::byte* carve(std::size_t stride) noexcept { return first + carved++ * stride; }

    /// p as a block of this chunk, if it is exactly a block start.
    [[nodiscard]] pool_block_ref locate(const void* p, std::size_t stride) noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        const auto f = reinterpret_cast<std::uintptr_t>(first);
        if (a < f || a >= f + count * stride || (a - f) % stride != 0) return {};
        return {this, (a - f) / stride};
    }

    [[nodiscard]] bool is_free(std::size_t i) const noexcept {
        return (free_bits[i / 64] >> (i % 64)) & 1u;
    }
    void set_free(std::size_t i, bool value) noexcept {
        const std::uint64_t bit = std::uint64_t{1} << (i % 64);
        free_bits[i / 64] = value ? (free_bits[i / 64] | bit) : (free_bits[i / 64] & ~bit);
    }
};

/// A growing pool's chunks sorted by address, so the chunk holding a pointer is found by binary
/// search: O(log chunks) for owns() and for every checked allocate/deallocate. A chunk's header
/// precedes its blocks and chunks are disjoint, so the chunk holding p is the last one whose
/// header address is <= p. The array's memory belongs to the pool (taken from its upstream).
struct pool_chunk_index {
    pool_chunk** chunks = nullptr;  // sorted by address
    std::size_t size = 0, capacity = 0;

    [[nodiscard]] pool_chunk* find(const void* p) const noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        std::size_t lo = 0, hi = size;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (reinterpret_cast<std::uintptr_t>(chunks[mid]) <= a)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo == 0 ? nullptr : chunks[lo - 1];
    }

    /// Adds c in address order; the caller made room (size < capacity).
    void insert(pool_chunk* c) noexcept {
        std::size_t i = size;
        const auto a = reinterpret_cast<std::uintptr_t>(c);
        while (i > 0 && reinterpret_cast<std::uintptr_t>(chunks[i - 1]) > a) {
            chunks[i] = chunks[i - 1];
            --i;
        }
        chunks[i] = c;
        ++size;
    }
};

}  // namespace rtmem::detail
