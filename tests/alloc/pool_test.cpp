#include "rtmem/alloc/pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "conformance.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
static_assert(rtmem::allocator<rtmem::pool_allocator<>>);
static_assert(rtmem::owning_allocator<rtmem::pool_allocator<>>);
static_assert(rtmem::stats_allocator<rtmem::pool_allocator<>>);
static_assert(rtmem::checkable_allocator<rtmem::pool_allocator<>>);
static_assert(!std::is_copy_constructible_v<rtmem::pool_allocator<>>);
static_assert(std::is_nothrow_move_constructible_v<rtmem::pool_allocator<>>);

TEST(PoolAllocator, ConformanceOverBuffer) {
    alignas(64) static std::byte buf[64 * 1024];
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        rtmem::pool_allocator p{std::span<std::byte>(buf), 96, 32};
        rtmem::testing::conformance_options o;
        o.seed = seed;
        o.max_size = 96;
        o.max_align = 32;
        o.max_live = 1000;        // more than fit: exhaustion is exercised too
        o.use_reset = seed == 1;  // resets keep the pool from ever filling up
        const auto r = rtmem::testing::run_conformance(p, o);
        EXPECT_GT(r.allocations, o.operations / 4);
        EXPECT_GT(seed == 1 ? r.resets : r.exhausted, 0u);
        EXPECT_EQ(p.free_blocks(), p.capacity_blocks());
    }
}

TEST(PoolAllocator, ConformanceGrowing) {
    rtmem::malloc_allocator up;
    for (std::size_t block : {1u, 8u, 24u, 256u, 4096u}) {
        rtmem::pool_allocator p{block, 16, 256, up};
        rtmem::testing::conformance_options o;
        o.seed = block;
        o.min_size = 0;
        o.max_size = block;
        o.max_align = 16;
        o.max_live = 1000;  // a few chunks: growth happens several times
        o.expect_no_exhaustion = true;
        o.scale = block >= 4096 ? 0.2 : 0.4;
        rtmem::testing::run_conformance(p, o);
        EXPECT_GE(p.capacity_blocks(), 512u);
    }
}

TEST(PoolAllocator, LargeAlignedBlocks) {
    rtmem::pool_allocator p{std::size_t{100}, std::size_t{4096}, std::size_t{4}};
    std::vector<void*> got;
    for (int i = 0; i < 10; ++i) {
        void* b = p.allocate(100, 4096);
        ASSERT_NE(b, nullptr);
        EXPECT_TRUE(rtmem::is_aligned(b, 4096));
        got.push_back(b);
    }
    EXPECT_EQ(p.block_stride(), 4096u);
    for (void* b : got) p.deallocate(b, 100, 4096);
    EXPECT_TRUE(p.check());
}

TEST(PoolAllocator, ExhaustionOverBufferAndRefillAfterFree) {
    alignas(16) static std::byte buf[4096];
    rtmem::pool_allocator p{std::span<std::byte>(buf), 64, 16};
    const std::size_t n = rtmem::testing::run_exhaustion(p, 64, 16);
    EXPECT_EQ(n, p.capacity_blocks());
    EXPECT_GE(n, 4096u / 64 - 4);  // header and bit map cost at most a few blocks
}

TEST(PoolAllocator, GrowthNeverMovesBlocks) {
    rtmem::malloc_allocator up;
    rtmem::pool_allocator p{32, 8, 4, up};
    std::vector<std::uint64_t*> blocks;
    for (std::uint64_t i = 0; i < 100; ++i) {
        auto* b = static_cast<std::uint64_t*>(p.allocate_block());
        ASSERT_NE(b, nullptr);
        *b = i;
        blocks.push_back(b);
    }
    for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(*blocks[i], i);
    EXPECT_EQ(p.capacity_blocks(), 100u);  // 25 chunks of 4
    EXPECT_EQ(p.stats().live_count, 100u);
    for (auto* b : blocks) p.deallocate_block(b);
    EXPECT_TRUE(p.check());
    EXPECT_EQ(p.stats().used, 0u);
    EXPECT_EQ(p.stats().peak, 100u * p.block_stride());
}

TEST(PoolAllocator, PeakIsTheHighWaterMarkOfLiveBlocks) {
    alignas(16) static std::byte buf[4096];
    rtmem::pool_allocator<rtmem::malloc_allocator, rtmem::pool_counting::calls> p{
        std::span<std::byte>(buf), 16, 16};
    std::vector<void*> got;
    for (int i = 0; i < 10; ++i) got.push_back(p.allocate_block());
    for (int i = 0; i < 5; ++i) p.deallocate_block(got[static_cast<std::size_t>(i)]);
    for (int i = 0; i < 3; ++i) got[static_cast<std::size_t>(i)] = p.allocate_block();
    EXPECT_EQ(p.stats().peak, 10 * p.block_stride());  // 8 live now, 10 at most
    got.push_back(p.allocate_block());
    got.push_back(p.allocate_block());
    got.push_back(p.allocate_block());
    EXPECT_EQ(p.stats().peak, 11 * p.block_stride());
    EXPECT_EQ(p.stats().live_count, 11u);
    EXPECT_EQ(p.stats().total_count, 16u);
    p.reset();
    EXPECT_EQ(p.stats().peak, 11 * p.block_stride());  // survives reset
    EXPECT_TRUE(p.check());
}

TEST(PoolAllocator, FreedBlockIsReusedFirst) {
    alignas(16) static std::byte buf[1024];
    rtmem::pool_allocator p{std::span<std::byte>(buf), 16, 16};
    void* a = p.allocate_block();
    void* b = p.allocate_block();
    p.deallocate_block(a);
    EXPECT_EQ(p.allocate_block(), a);  // LIFO: the warm block comes back
    p.deallocate_block(b);
}

TEST(PoolAllocator, ResetFreesEverything) {
    alignas(16) static std::byte buf[2048];
    rtmem::pool_allocator p{std::span<std::byte>(buf), 16, 16};
    while (p.allocate_block() != nullptr) {
    }
    p.reset();
    EXPECT_EQ(p.free_blocks(), p.capacity_blocks());
    EXPECT_TRUE(p.check());
    EXPECT_NE(p.allocate_block(), nullptr);
}

TEST(PoolAllocator, MoveKeepsBlocks) {
    rtmem::pool_allocator p{std::size_t{48}, std::size_t{16}, std::size_t{8}};
    void* a = p.allocate(40, 16);
    rtmem::pool_allocator q = std::move(p);
    EXPECT_TRUE(q.owns(a));
    EXPECT_FALSE(p.owns(a));
    q.deallocate(a, 40, 16);
    EXPECT_TRUE(q.check());
}

TEST(PoolAllocator, OversizeAndOveralignedAreReported) {
    rtmem::testing::violation_recorder rec;
    rtmem::pool_allocator p{std::size_t{64}, std::size_t{16}, std::size_t{8}};
    EXPECT_EQ(p.allocate(65, 8), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_size);
    EXPECT_EQ(p.allocate(16, 32), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_alignment);
    EXPECT_EQ(p.allocate(16, 3), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_alignment);
    EXPECT_EQ(rec.count(), 3u);
    EXPECT_NE(p.allocate(64, 16), nullptr);  // still usable
}

// Hands out memory from the top of a buffer downwards, so every new chunk lies below the
// previous ones and the pool's address-sorted chunk index inserts at its front.
class descending_upstream {
  public:
    void* allocate(std::size_t size, std::size_t align) noexcept {
        const auto base = reinterpret_cast<std::uintptr_t>(buffer_.data());
        if (size > top_) return nullptr;
        const std::uintptr_t start = rtmem::align_down(base + top_ - size, align);
        if (start < base) return nullptr;
        top_ = start - base;
        return reinterpret_cast<void*>(start);
    }
    void deallocate(void*, std::size_t, std::size_t) noexcept {}

  private:
    std::vector<std::byte> buffer_ = std::vector<std::byte>(1 << 20);
    std::size_t top_ = 1 << 20;
};

// owns() and the checked lookups binary-search the chunks by address: exercise many chunks,
// added in ascending (malloc, mostly) and descending address order.
template <class Upstream>
void many_chunks(Upstream& up) {
    rtmem::pool_allocator<Upstream> p{24, 8, 3, up};
    std::vector<std::byte*> blocks;
    for (int i = 0; i < 600; ++i) {
        auto* b = static_cast<std::byte*>(p.allocate_block());
        ASSERT_NE(b, nullptr);
        blocks.push_back(b);
    }
    EXPECT_EQ(p.capacity_blocks(), 600u);  // 200 chunks
    int local = 0;
    EXPECT_FALSE(p.owns(&local));
    for (auto* b : blocks) {
        EXPECT_TRUE(p.owns(b));
        EXPECT_FALSE(p.owns(b + 8));  // interior
    }
    std::sort(blocks.begin(), blocks.end());
    EXPECT_FALSE(p.owns(blocks.front() - p.block_stride()));  // just below the lowest chunk
    for (std::size_t i = 0; i < blocks.size(); i += 2) p.deallocate_block(blocks[i]);
    EXPECT_TRUE(p.check());
    EXPECT_EQ(p.stats().live_count, 300u);
#if RTMEM_CHECKS >= 1
    rtmem::testing::violation_recorder rec;
    for (std::size_t i = 0; i < blocks.size(); i += 50) p.deallocate_block(blocks[i]);  // freed
    EXPECT_EQ(rec.count(violation_kind::double_free), 12u);
    p.deallocate_block(blocks.back() + 8);
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    EXPECT_EQ(p.stats().live_count, 300u);
#endif
    for (std::size_t i = 1; i < blocks.size(); i += 2) p.deallocate_block(blocks[i]);
    EXPECT_TRUE(p.check());
    EXPECT_EQ(p.stats().live_count, 0u);
}

TEST(PoolAllocator, ManyChunksAscending) {
    rtmem::malloc_allocator up;
    many_chunks(up);
}

TEST(PoolAllocator, ManyChunksDescending) {
    descending_upstream up;
    many_chunks(up);
}

TEST(PoolAllocator, MovedGrowingPoolKeepsItsChunkIndex) {
    rtmem::malloc_allocator up;
    rtmem::pool_allocator p{32, 8, 2, up};
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(p.allocate_block());
    rtmem::pool_allocator q{std::move(p)};
    for (void* b : blocks) EXPECT_TRUE(q.owns(b));
    EXPECT_FALSE(p.owns(blocks[0]));  // NOLINT(bugprone-use-after-move): moved-from is empty
    for (void* b : blocks) q.deallocate_block(b);
    EXPECT_TRUE(q.check());
    p = std::move(q);
    EXPECT_TRUE(p.owns(blocks[5]));
    EXPECT_EQ(p.stats().live_count, 0u);
}

#if RTMEM_CHECKS >= 1
TEST(PoolAllocator, DoubleFreeIsReportedAndIgnored) {
    rtmem::testing::violation_recorder rec;
    rtmem::pool_allocator p{std::size_t{32}, std::size_t{8}, std::size_t{8}};
    void* a = p.allocate_block();
    void* b = p.allocate_block();
    p.deallocate_block(a);
    p.deallocate_block(a);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_EQ(rec.last().pointer, a);
    EXPECT_TRUE(p.check());  // the list was not corrupted
    void* c = p.allocate_block();
    void* d = p.allocate_block();
    EXPECT_NE(c, d);  // a double push would hand the same block out twice
    p.deallocate_block(b);
    p.deallocate_block(c);
    p.deallocate_block(d);
    EXPECT_EQ(p.stats().live_count, 0u);
}

TEST(PoolAllocator, ForeignAndInteriorPointersAreReported) {
    rtmem::testing::violation_recorder rec;
    rtmem::pool_allocator p{std::size_t{32}, std::size_t{8}, std::size_t{8}};
    auto* a = static_cast<std::byte*>(p.allocate_block());
    int local = 0;
    p.deallocate_block(&local);
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    p.deallocate_block(a + 8);  // inside a block, not its start
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    EXPECT_EQ(rec.count(), 2u);
    EXPECT_EQ(p.stats().live_count, 1u);
    p.deallocate(a, 64, 8);  // claims a bigger block than the pool hands out
    EXPECT_EQ(rec.last().kind, violation_kind::size_mismatch);
    p.deallocate(a, 32, 8);
    EXPECT_TRUE(p.check());
}

TEST(PoolAllocator, FreedBlocksAreFilled) {
    rtmem::pool_allocator p{std::size_t{32}, std::size_t{8}, std::size_t{8}};
    auto* a = static_cast<unsigned char*>(p.allocate_block());
    std::fill(a, a + 32, 0x11);
    p.deallocate_block(a);
#ifndef RTMEM_HAS_ASAN  // under ASan the freed bytes are poisoned: reading them is the error
    EXPECT_EQ(a[8], 0xDD);
    EXPECT_EQ(a[31], 0xDD);
#endif
    auto* b = static_cast<unsigned char*>(p.allocate_block());
    EXPECT_EQ(b, a);
}

[[maybe_unused]] void free_twice() {  // used by the death test
    rtmem::pool_allocator p{std::size_t{32}, std::size_t{8}, std::size_t{8}};
    void* a = p.allocate_block();
    p.deallocate_block(a);
    p.deallocate_block(a);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(PoolAllocatorDeathTest, DoubleFreeAbortsByDefault) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(free_twice(), "double_free");
}
#endif
#endif
}  // namespace

// The default pool counts nothing on its fast path: live_count walks the free list and
// total_count says "not counted" (0), while the counting pool's figures are O(1) and exact.
TEST(PoolAllocator, UncountedPoolDerivesLiveCountFromTheFreeList) {
    alignas(16) static std::byte buf[4096];
    rtmem::pool_allocator p{std::span<std::byte>(buf), 16, 16};
    static_assert(!decltype(p)::counts_calls);
    std::vector<void*> got;
    for (int i = 0; i < 10; ++i) got.push_back(p.allocate_block());
    for (int i = 0; i < 4; ++i) p.deallocate_block(got[static_cast<std::size_t>(i)]);
    EXPECT_EQ(p.live_count(), 6u);
    EXPECT_EQ(p.stats().live_count, 6u);
    EXPECT_EQ(p.stats().used, 6 * p.block_stride());
    EXPECT_EQ(p.stats().total_count, 0u);
    (void)p.allocate_block();
    EXPECT_EQ(p.live_count(), 7u);
    p.reset();
    EXPECT_EQ(p.live_count(), 0u);
    EXPECT_TRUE(p.check());
}
