#include "rtmem/alloc/growing_stack.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "conformance.hpp"
#include "stack_ordered_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::growing_stack_allocator;
using rtmem::growing_stack_options;
using rtmem::violation_kind;
using rtmem::testing::counting_upstream;
using rtmem::testing::violation_recorder;

static_assert(rtmem::allocator<growing_stack_allocator>);
static_assert(rtmem::marker_allocator<growing_stack_allocator>);
static_assert(rtmem::resettable_allocator<growing_stack_allocator>);
static_assert(rtmem::checkable_allocator<growing_stack_allocator>);
static_assert(!std::is_copy_constructible_v<growing_stack_allocator>);

rtmem::testing::conformance_options lifo_options(std::uint64_t seed) {
    rtmem::testing::conformance_options o;
    o.seed = seed;
    o.order = rtmem::testing::free_order::lifo;
    o.expect_no_exhaustion = true;  // it grows
    o.check_every = 16;             // check() walks the chunk chain
    // Without checks there is no header: a freed block's padding stays used until the block
    // below it is freed (as in stack_allocator).
    o.exact_empty_used = rtmem::check_level >= 1;
    return o;
}

// Small chunks, so frees, markers and rewinds cross chunk boundaries all the time; 1 request in
// 64 is larger than a chunk and gets a chunk of its own size.
TEST(GrowingStack, ConformanceAcrossChunksWithOversizeBlocks) {
    counting_upstream up;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        growing_stack_allocator a{growing_stack_options{.chunk_size = 2048, .spare_chunks = 1},
                                  up};
        auto o = lifo_options(seed);
        o.max_size = 512;
        o.large_size = 9000;
        o.max_align = 256;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.frees, o.operations / 8);
        EXPECT_GT(r.rewinds, 0u);
        EXPECT_GT(up.allocations, 20u);
        EXPECT_LE(a.spare_chunk_count(), 1u);
    }
    EXPECT_EQ(up.live.size(), 0u);  // every chunk went back
    EXPECT_EQ(up.bad_frees, 0u);
}

TEST(GrowingStack, ConformanceNoSparesAndMarkersOnly) {
    counting_upstream up;
    for (std::uint64_t seed = 4; seed <= 5; ++seed) {
        growing_stack_allocator a{growing_stack_options{.chunk_size = 1024, .spare_chunks = 0},
                                  up};
        auto o = lifo_options(seed);
        o.max_live = 4000;  // deep stacks: many chunks in use
        o.marker_per_mille = 40;
        o.rewind_per_mille = 30;
        (void)rtmem::testing::run_conformance(a, o);
        EXPECT_EQ(a.spare_chunk_count(), 0u);
        EXPECT_EQ(a.chunk_count(), 1u);  // empty: only the oldest chunk is left
    }
    EXPECT_EQ(up.live.size(), 0u);
}

TEST(GrowingStack, FreeingTheLastBlockOfAChunkHandsItBack) {
    counting_upstream up;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024, .spare_chunks = 0}, up};
    std::vector<void*> blocks;
    while (a.chunk_count() < 3) blocks.push_back(a.allocate(100, 8));
    EXPECT_EQ(up.live.size(), 3u);
    const std::size_t used_before_pop = a.used();
    void* last = blocks.back();  // the first (and only) block of the third chunk
    blocks.pop_back();
    a.deallocate(last, 100, 8);
    EXPECT_EQ(a.chunk_count(), 2u);
    EXPECT_EQ(up.live.size(), 2u);
    EXPECT_LT(a.used(), used_before_pop);
    EXPECT_TRUE(a.owns(blocks.back()));
    EXPECT_FALSE(a.owns(last));
    while (!blocks.empty()) {
        a.deallocate(blocks.back(), 100, 8);
        blocks.pop_back();
    }
    EXPECT_EQ(a.chunk_count(), 1u);  // the oldest stays
    if (rtmem::check_level >= 1) {
        EXPECT_EQ(a.used(), 0u);
    }
    EXPECT_GE(a.stats().peak, 3 * 100u);
    a.shrink_to_fit();
    EXPECT_EQ(up.live.size(), 0u);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, ASpareChunkStopsThrashingAtABoundary) {
    counting_upstream up;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024, .spare_chunks = 1}, up};
    while (a.chunk_count() < 2) (void)a.allocate(64, 8);  // the second chunk's first block
    const std::size_t calls = up.allocations;
    // Free the block that opened the chunk and allocate it again, 100 times.
    for (int i = 0; i < 100; ++i) {
        const auto m = a.marker();
        void* p = a.allocate(2000, 8);  // does not fit: a chunk of its own, then back
        a.deallocate(p, 2000, 8);
        a.rewind(m);
    }
    EXPECT_LE(up.allocations, calls + 1);  // one chunk for the 2000-byte block, reused
    EXPECT_EQ(a.spare_chunk_count(), 1u);
}

TEST(GrowingStack, MarkersRewindAcrossChunks) {
    counting_upstream up;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024, .spare_chunks = 0}, up};
    void* base = a.allocate(16, 8);
    const auto m = a.marker();
    for (int i = 0; i < 100; ++i) (void)a.allocate(64, 16);
    EXPECT_GT(a.chunk_count(), 5u);
    a.rewind(m);
    EXPECT_EQ(a.chunk_count(), 1u);
    EXPECT_EQ(up.live.size(), 1u);
    EXPECT_EQ(a.stats().live_count, 1u);
    a.deallocate(base, 16, 8);  // base is the top again
    EXPECT_EQ(a.stats().live_count, 0u);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, OutOfOrderFreeIsLifoViolationInEitherChunk) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 512}};
    std::vector<void*> blocks;
    while (a.chunk_count() < 2) blocks.push_back(a.allocate(64, 8));
    void* older_chunk = blocks.front();
    void* same_chunk = blocks.back();
    void* top = a.allocate(8, 8);
    a.deallocate(same_chunk, 64, 8);
    ASSERT_EQ(rec.count(violation_kind::lifo_order), 1u);
    EXPECT_NE(rec.last().message.find("same chunk"), std::string::npos);
    a.deallocate(older_chunk, 64, 8);
    ASSERT_EQ(rec.count(violation_kind::lifo_order), 2u);
    EXPECT_NE(rec.last().message.find("older chunk"), std::string::npos);
    EXPECT_EQ(a.stats().live_count, blocks.size() + 1);  // nothing was freed
    a.deallocate(top, 8, 8);
    while (!blocks.empty()) {
        a.deallocate(blocks.back(), 64, 8);
        blocks.pop_back();
    }
    EXPECT_EQ(rec.count(), 2u);
    EXPECT_EQ(a.used(), 0u);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, DoubleFreeSizeMismatchForeignPointerBadAlignment) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 512}};
    void* p = a.allocate(16, 8);
    void* q = a.allocate(24, 8);
    a.deallocate(q, 16, 8);
    EXPECT_EQ(rec.count(violation_kind::size_mismatch), 1u);
    a.deallocate(q, 24, 8);
    a.deallocate(q, 24, 8);
    EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
    alignas(16) std::byte local[64] = {};  // room before it: the check reads no header of it
    a.deallocate(local + 32, 8, 8);
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 1u);
    EXPECT_EQ(a.allocate(8, 48), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    EXPECT_EQ(a.allocate(SIZE_MAX - 8, 64), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_size), 1u);
    EXPECT_EQ(a.stats().live_count, 1u);
    a.deallocate(p, 16, 8);
    EXPECT_EQ(a.used(), 0u);
}

TEST(GrowingStack, FreeOfABlockWhoseChunkWasHandedBackIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 512, .spare_chunks = 1}};
    (void)a.allocate(8, 8);
    void* big = a.allocate(4000, 8);  // its own chunk
    a.deallocate(big, 4000, 8);       // the chunk becomes the spare
    a.deallocate(big, 4000, 8);
    EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
}

TEST(GrowingStack, StaleMarkers) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 512, .spare_chunks = 1}};
    (void)a.allocate(8, 8);
    void* big = a.allocate(4000, 8);
    const auto m = a.marker();  // in the big block's chunk
    a.deallocate(big, 4000, 8);
    (void)a.allocate(4000, 8);  // the same chunk again, from the spare: a new serial
    a.rewind(m);
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 1u);
    growing_stack_allocator other;
    (void)other.allocate(8, 8);
    other.rewind(a.marker());
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(other.stats().live_count, 1u);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, StaleMarkerBelowTheTopIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024}};
    void* first = a.allocate(64, 8);
    const auto m = a.marker();
    void* second = a.allocate(64, 8);
    a.deallocate(second, 64, 8);
    a.deallocate(first, 64, 8);  // freed below the marker: m is stale
    auto* live = static_cast<std::byte*>(a.allocate(200, 8));
    a.rewind(m);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    auto* next = static_cast<std::byte*>(a.allocate(16, 8));
    EXPECT_GE(next, live + 200);
    const auto outer = a.marker();
    for (int i = 0; i < 30; ++i) {  // nested markers across chunks stay valid
        const auto inner = a.marker();
        (void)a.allocate(100, 8);
        a.rewind(inner);
        (void)a.allocate(100, 8);
    }
    a.rewind(outer);
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 1u);
}

TEST(GrowingStack, EmptyAgainAfterLifoFrees) {
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024}};
    const std::size_t aligns[] = {256, 8, 32, 1, 128, 16};  // 256: padding before the bottom block
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < std::size(aligns); ++i) blocks.push_back(a.allocate(24, aligns[i]));
    for (std::size_t i = blocks.size(); i-- > 0;) a.deallocate(blocks[i], 24, aligns[i]);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.allocate(24, 256), blocks.front());
}

TEST(GrowingStack, ResetKeepsTheOldestChunk) {
    counting_upstream up;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 1024, .spare_chunks = 2}, up};
    for (int i = 0; i < 60; ++i) (void)a.allocate(100, 8);
    a.reset();
    EXPECT_EQ(a.stats().live_count, 0u);
    EXPECT_EQ(a.chunk_count(), 3u);  // oldest + 2 spares
    EXPECT_EQ(up.live.size(), 3u);
    EXPECT_NE(a.allocate(8, 8), nullptr);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, UpstreamFailureReturnsNull) {
    struct refusing {
        void* allocate(std::size_t, std::size_t) noexcept { return nullptr; }
        void deallocate(void*, std::size_t, std::size_t) noexcept {}
    } up;
    growing_stack_allocator a{growing_stack_options{}, up};
    EXPECT_EQ(a.allocate(8, 8), nullptr);
    EXPECT_EQ(a.stats().total_count, 0u);
    EXPECT_TRUE(a.check());
}

TEST(GrowingStack, MoveTransfersChunks) {
    counting_upstream up;
    {
        growing_stack_allocator a{growing_stack_options{.chunk_size = 1024}, up};
        void* p = a.allocate(8, 8);
        growing_stack_allocator b{std::move(a)};
        EXPECT_TRUE(b.owns(p));
        EXPECT_FALSE(a.owns(p));  // NOLINT(bugprone-use-after-move): moved-from is empty
        growing_stack_allocator c{growing_stack_options{.chunk_size = 1024}, up};
        (void)c.allocate(8, 8);
        c = std::move(b);
        EXPECT_TRUE(c.owns(p));
        EXPECT_EQ(up.live.size(), 1u);
        c.deallocate(p, 8, 8);
    }
    EXPECT_EQ(up.live.size(), 0u);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(GrowingStackDeathTest, DefaultHandlerAbortsOnLifoViolation) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            growing_stack_allocator a{growing_stack_options{.chunk_size = 256}};
            void* p = a.allocate(8, 8);
            (void)a.allocate(8, 8);
            a.deallocate(p, 8, 8);
        },
        "lifo_order");
}
#endif
}  // namespace
