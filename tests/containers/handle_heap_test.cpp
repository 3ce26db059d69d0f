#include "rtmem/containers/handle_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "violation_recorder.hpp"

namespace {
using rtmem::defrag_budget;
using rtmem::handle;
using rtmem::violation_kind;

// Fills a block with bytes derived from its id, so any lost or mixed-up byte is seen.
void fill(void* p, std::size_t n, std::uint32_t id) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t k = 0; k < n; ++k) b[k] = static_cast<unsigned char>(id * 131u + k * 7u);
}
bool intact(const void* p, std::size_t n, std::uint32_t id) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t k = 0; k < n; ++k)
        if (b[k] != static_cast<unsigned char>(id * 131u + k * 7u)) return false;
    return true;
}

TEST(HandleHeap, AllocateResolveFree) {
    rtmem::handle_heap heap{4096, 16};
    handle h = heap.allocate(100);
    ASSERT_TRUE(h);
    void* p = heap.resolve(h);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(rtmem::is_aligned(p, rtmem::default_alignment));
    fill(p, 100, 1);
    EXPECT_EQ(heap.size_of(h), 100u);
    EXPECT_EQ(heap.stats().live_count, 1u);
    EXPECT_EQ(heap.stats().used, 112u);  // rounded up to the 16-byte granule
    heap.free(h);
    EXPECT_FALSE(heap.valid(h));
    EXPECT_EQ(heap.stats().used, 0u);
    EXPECT_TRUE(heap.check());
}

TEST(HandleHeap, HonoursAlignment) {
    rtmem::handle_heap heap{8192, 16};
    (void)heap.allocate(8);
    handle h = heap.allocate(10, 256);
    ASSERT_TRUE(h);
    EXPECT_TRUE(rtmem::is_aligned(heap.resolve(h), 256));
    // Compaction keeps the alignment.
    heap.free(heap.allocate(1));
    EXPECT_TRUE(heap.defragment().complete);
    EXPECT_TRUE(rtmem::is_aligned(heap.resolve(h), 256));
    EXPECT_TRUE(heap.check());
}

// The scenario: a plain free list (this heap without defragment) cannot place a block
// although enough bytes are free; after defragment the same request succeeds.
TEST(HandleHeap, DefragmentMakesAFragmentedAllocationSucceed) {
    rtmem::handle_heap heap{64 * 1024, 128};
    std::vector<handle> blocks;
    for (std::uint32_t i = 0; i < 64; ++i) {
        blocks.push_back(heap.allocate(1024));
        ASSERT_TRUE(blocks.back());
        fill(heap.resolve(blocks.back()), 1024, i);
    }
    for (std::size_t i = 0; i < blocks.size(); i += 2) heap.free(blocks[i]);  // every other
    EXPECT_EQ(heap.free_bytes(), 32u * 1024);
    EXPECT_EQ(heap.largest_free_block(), 1024u);
    EXPECT_FALSE(heap.allocate(16 * 1024));  // fragmented: 32 KiB free, no 16 KiB gap

    const auto r = heap.defragment();
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.blocks_moved, 32u);  // every survivor slid down once
    EXPECT_EQ(heap.largest_free_block(), 32u * 1024);
    handle big = heap.allocate(16 * 1024);
    EXPECT_TRUE(big);
    for (std::size_t i = 1; i < blocks.size(); i += 2)
        EXPECT_TRUE(intact(heap.resolve(blocks[i]), 1024, static_cast<std::uint32_t>(i)));
    EXPECT_TRUE(heap.check());
}

TEST(HandleHeap, BudgetLimitsBlocksAndBytesPerCall) {
    rtmem::handle_heap heap{64 * 1024, 128};
    std::vector<handle> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(heap.allocate(512));
    heap.free(blocks[0]);  // every later block now has a gap before it
    std::size_t calls = 0;
    std::size_t moved = 0;
    while (true) {
        const auto r = heap.defragment(defrag_budget{.max_bytes = 4096, .max_blocks = 16});
        EXPECT_LE(r.blocks_moved, 8u);  // 4096 bytes / 512 per block binds before 16 blocks
        EXPECT_LE(r.bytes_moved, 4096u);
        moved += r.blocks_moved;
        ++calls;
        if (r.complete) break;
        ASSERT_LT(calls, 100u);
    }
    EXPECT_EQ(moved, 39u);
    EXPECT_EQ(calls, 5u);  // 8 + 8 + 8 + 8 + 7
    const auto r = heap.defragment(defrag_budget{.max_blocks = 2});
    EXPECT_EQ(r.blocks_moved, 0u);  // nothing left to do
    EXPECT_TRUE(r.complete);
    EXPECT_TRUE(heap.check());
}

TEST(HandleHeap, BlockLargerThanByteBudgetStillMovesAlone) {
    rtmem::handle_heap heap{64 * 1024, 16};
    handle a = heap.allocate(64);
    handle big = heap.allocate(8192);
    fill(heap.resolve(big), 8192, 9);
    heap.free(a);
    const auto r = heap.defragment(defrag_budget{.max_bytes = 100});
    EXPECT_EQ(r.blocks_moved, 1u);
    EXPECT_TRUE(r.complete);
    EXPECT_TRUE(intact(heap.resolve(big), 8192, 9));
}

TEST(HandleHeap, PinnedBlocksStayAndOthersCompactAroundThem) {
    rtmem::handle_heap heap{16 * 1024, 32};
    handle a = heap.allocate(1024), b = heap.allocate(1024), c = heap.allocate(1024),
           d = heap.allocate(1024);
    fill(heap.resolve(d), 1024, 4);
    void* pinned = heap.pin(c);
    fill(pinned, 1024, 3);
    heap.free(a);
    heap.free(b);
    EXPECT_TRUE(heap.defragment().complete);
    EXPECT_EQ(heap.resolve(c), pinned);  // did not move
    EXPECT_TRUE(intact(pinned, 1024, 3));
    EXPECT_EQ(static_cast<std::byte*>(heap.resolve(d)), static_cast<std::byte*>(pinned) + 1024);
    EXPECT_TRUE(heap.pinned(c));
    heap.unpin(c);
    EXPECT_FALSE(heap.pinned(c));
    const auto r = heap.defragment();  // now c (and d behind it) slide to the start
    EXPECT_EQ(r.blocks_moved, 2u);
    EXPECT_TRUE(intact(heap.resolve(c), 1024, 3));
    EXPECT_TRUE(intact(heap.resolve(d), 1024, 4));
    EXPECT_EQ(heap.largest_free_block(), heap.capacity() - 2048);
}

struct relocation_log {
    int calls = 0;
    bool overlapped = false;
};
void logging_relocate(void* dst, void* src, std::size_t size, void* user) noexcept {
    auto* log = static_cast<relocation_log*>(user);
    ++log->calls;
    auto* d = static_cast<std::byte*>(dst);
    auto* s = static_cast<std::byte*>(src);
    log->overlapped = log->overlapped || (d < s + size && s < d + size);
    std::memcpy(dst, src, size);
}

TEST(HandleHeap, CustomRelocatorGetsDisjointRanges) {
    rtmem::handle_heap heap{16 * 1024, 32};
    relocation_log log;
    handle gap_small = heap.allocate(64);
    handle gap_big = heap.allocate(4096);
    handle typed = heap.allocate(2048, 16, &logging_relocate, &log);
    fill(heap.resolve(typed), 2048, 5);
    heap.free(gap_small);  // a 64-byte gap: moving there would overlap, so it waits
    heap.defragment();
    EXPECT_EQ(log.calls, 0);
    heap.free(gap_big);  // now the gap before it is large enough to move without overlap
    heap.defragment();
    EXPECT_EQ(log.calls, 1);
    EXPECT_FALSE(log.overlapped);
    EXPECT_TRUE(intact(heap.resolve(typed), 2048, 5));
    EXPECT_EQ(heap.resolve(typed), heap.resolve(typed));
}

// Random allocate / free / defragment with a budget of one block per call, so contents are
// verified after every single move, under several seeds.
TEST(HandleHeap, RandomWorkloadWithInterleavedDefragmentation) {
    for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
        rtmem::handle_heap heap{256 * 1024, 512};
        struct block {
            handle h;
            std::size_t size;
            std::uint32_t id;
        };
        std::vector<block> live;
        std::mt19937 rng(seed);
        std::uint32_t next_id = 0;
        std::size_t failures_healed = 0;
        auto verify_all = [&] {
            for (const auto& b : live) ASSERT_TRUE(intact(heap.resolve(b.h), b.size, b.id));
        };
        for (int step = 0; step < 4000; ++step) {
            const auto op = rng() % 10;
            if (op < 5) {
                const std::size_t size = 1 + rng() % 3000;
                const std::size_t align = std::size_t{16} << (rng() % 4);
                handle h = heap.allocate(size, align);
                if (!h) {  // full or fragmented: compact completely and try once more
                    heap.defragment();
                    h = heap.allocate(size, align);
                    if (h) ++failures_healed;
                }
                if (h) {
                    ASSERT_TRUE(rtmem::is_aligned(heap.resolve(h), align));
                    fill(heap.resolve(h), size, next_id);
                    live.push_back({h, size, next_id++});
                }
            } else if (op < 8 && !live.empty()) {
                const auto i = rng() % live.size();
                heap.free(live[i].h);
                live[i] = live.back();
                live.pop_back();
            } else {
                for (int k = 0; k < 4; ++k) {
                    const auto r = heap.defragment(defrag_budget{.max_blocks = 1});
                    verify_all();
                    if (r.complete) break;
                }
            }
            ASSERT_EQ(heap.stats().live_count, live.size());
            if (step % 256 == 0) {
                ASSERT_TRUE(heap.check());
            }
        }
        verify_all();
        EXPECT_TRUE(heap.check());
        EXPECT_GT(failures_healed, 0u) << "seed " << seed << " never needed a defragment";
    }
}

TEST(HandleHeap, StaleHandlesAreReportedNotResolved) {
    rtmem::testing::violation_recorder rec;
    rtmem::handle_heap heap{4096, 8};
    handle h = heap.allocate(32);
    heap.free(h);
    handle reused = heap.allocate(32);  // same slot, new generation
    EXPECT_EQ(reused.index, h.index);
    EXPECT_EQ(heap.resolve(h), nullptr);
    heap.free(h);  // double free through a stale handle
    (void)heap.pin(h);
    EXPECT_EQ(rec.count(violation_kind::stale_handle), 3u);
    EXPECT_TRUE(heap.valid(reused));  // the new owner was not disturbed
    EXPECT_EQ(heap.resolve(handle{}), nullptr);
    EXPECT_EQ(rec.count(violation_kind::stale_handle), 4u);
}

TEST(HandleHeap, MisuseIsReported) {
    rtmem::testing::violation_recorder rec;
    rtmem::handle_heap heap{4096, 2};
    EXPECT_FALSE(heap.allocate(16, 3));
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    EXPECT_FALSE(heap.allocate(16, 1u << 20));  // above what the heap base guarantees
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 2u);
    handle h = heap.allocate(16);
    heap.unpin(h);
    EXPECT_EQ(rec.count(violation_kind::bad_argument), 1u);
    // Exhaustion is not misuse: empty handles, no violation.
    (void)heap.allocate(16);
    EXPECT_FALSE(heap.allocate(16));      // out of handles
    EXPECT_FALSE(heap.allocate(100000));  // larger than the heap
    EXPECT_EQ(rec.count(), 2u + 1u);
}

TEST(HandleHeap, WorksOverCallerMemory) {
    alignas(64) static std::byte buffer[8192];
    rtmem::handle_heap heap{std::span<std::byte>(buffer), 16};
    EXPECT_EQ(heap.capacity(), 8192u);
    handle h = heap.allocate(100);
    auto* p = static_cast<std::byte*>(heap.resolve(h));
    EXPECT_GE(p, buffer);
    EXPECT_LT(p, buffer + sizeof buffer);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(HandleHeapDeathTest, StaleHandleAbortsByDefault) {
    EXPECT_DEATH(
        {
            rtmem::handle_heap<> heap(4096, 8);
            handle h = heap.allocate(32);
            heap.free(h);
            (void)heap.resolve(h);
        },
        "handle_heap: stale_handle violation: resolve of handle");
}
#endif

}  // namespace

#ifdef RTMEM_HAS_ASAN
namespace {
#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(HandleHeapDeathTest, FreedAndVacatedBytesArePoisoned) {
    EXPECT_DEATH(
        {
            rtmem::handle_heap<> heap(4096, 8);
            handle h = heap.allocate(64);
            auto* p = static_cast<volatile char*>(heap.resolve(h));
            heap.free(h);
            p[0] = 1;
        },
        "use-after-poison");
    EXPECT_DEATH(
        {
            rtmem::handle_heap<> heap(4096, 8);
            handle a = heap.allocate(256);
            handle b = heap.allocate(256);
            auto* old = static_cast<volatile char*>(heap.resolve(b));
            heap.free(a);
            heap.defragment();  // b moved down; its old tail is free space now
            old[255] = 1;
        },
        "use-after-poison");
}
#endif
}  // namespace
#endif
