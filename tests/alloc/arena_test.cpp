#include "rtmem/alloc/arena.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "conformance.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "stack_ordered_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::arena;
using rtmem::arena_growth;
using rtmem::arena_options;
using rtmem::violation_kind;
using rtmem::testing::counting_upstream;
using rtmem::testing::violation_recorder;

static_assert(rtmem::allocator<arena>);
static_assert(rtmem::marker_allocator<arena>);
static_assert(rtmem::checkable_allocator<arena>);
static_assert(!std::is_copy_constructible_v<arena>);

rtmem::testing::conformance_options none_options(std::uint64_t seed) {
    rtmem::testing::conformance_options o;
    o.seed = seed;
    o.order = rtmem::testing::free_order::none;
    o.expect_no_exhaustion = true;  // it grows
    o.check_every = 16;             // check() walks the chunk chain
    return o;
}

TEST(Arena, ConformanceFixedChunksWithOversizeBlocks) {
    counting_upstream up;
    {
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            arena a{4096, up};
            auto o = none_options(seed);
            o.max_size = 512;
            o.large_size = 20000;  // larger than a chunk: dedicated chunks
            o.max_align = 256;
            const auto r = rtmem::testing::run_conformance(a, o);
            EXPECT_GT(r.rewinds, 0u);
        }
        EXPECT_GT(up.allocations, 10u);
    }
    EXPECT_EQ(up.live.size(), 0u);  // every chunk went back
    EXPECT_EQ(up.bad_frees, 0u);
}

TEST(Arena, ConformanceGeometricWithCache) {
    counting_upstream up;
    for (std::uint64_t seed = 4; seed <= 6; ++seed) {
        arena a{arena_options{.chunk_size = 1024,
                              .growth = arena_growth::geometric,
                              .max_chunk_size = 64 * 1024,
                              .keep_chunks = true},
                up};
        auto o = none_options(seed);
        o.max_size = 2048;
        rtmem::testing::run_conformance(a, o);
        EXPECT_TRUE(a.check());
        EXPECT_EQ(up.live.size(), a.chunk_count());
    }
}

TEST(Arena, ConformanceOverPageAllocator) {
    rtmem::page_allocator pages;
    arena a{64 * 1024, pages};
    auto o = none_options(7);
    o.scale = 0.3;  // mmap per chunk is slow
    o.max_size = 4096;
    o.large_size = 256 * 1024;
    rtmem::testing::run_conformance(a, o);
    a.shrink_to_fit();
    EXPECT_EQ(a.reserved_bytes(), 0u);
}

TEST(Arena, MarkersWorkAcrossChunksAndHandChunksBack) {
    counting_upstream up;
    arena a{1024, up};
    (void)a.allocate(100, 8);
    const auto m = a.marker();
    for (int i = 0; i < 50; ++i) ASSERT_NE(a.allocate(200, 8), nullptr);
    EXPECT_GE(a.chunk_count(), 10u);
    const std::size_t peak = a.stats().used;
    a.rewind(m);
    EXPECT_EQ(a.chunk_count(), 1u);  // every chunk newer than the marker went back
    EXPECT_EQ(up.live.size(), 1u);
    EXPECT_EQ(a.stats().used, 100u);
    EXPECT_EQ(a.stats().live_count, 1u);
    EXPECT_EQ(a.stats().peak, peak);
    EXPECT_TRUE(a.check());
}

TEST(Arena, KeepChunksCachesThemUntilShrinkToFit) {
    counting_upstream up;
    arena a{arena_options{.chunk_size = 1024, .keep_chunks = true}, up};
    for (int round = 0; round < 5; ++round) {
        for (int i = 0; i < 20; ++i) ASSERT_NE(a.allocate(200, 8), nullptr);
        a.reset();
    }
    const std::size_t after_first_round = up.allocations;
    EXPECT_LE(after_first_round, 6u);  // later rounds reuse the cached chunks
    EXPECT_GT(a.cached_chunk_count(), 0u);
    a.shrink_to_fit();
    EXPECT_EQ(a.cached_chunk_count(), 0u);
    EXPECT_EQ(a.chunk_count(), 0u);  // empty: even the kept chunk went back
    EXPECT_EQ(up.live.size(), 0u);
    EXPECT_NE(a.allocate(8, 8), nullptr);  // and it grows again
}

TEST(Arena, ResetKeepsOneChunkAndFreesTheRest) {
    counting_upstream up;
    arena a{1024, up};
    for (int i = 0; i < 30; ++i) ASSERT_NE(a.allocate(300, 8), nullptr);
    ASSERT_NE(a.allocate(10000, 64), nullptr);  // dedicated
    a.reset();
    EXPECT_EQ(a.chunk_count(), 1u);
    EXPECT_EQ(up.live.size(), 1u);
    EXPECT_EQ(a.stats().used, 0u);
    const std::size_t before = up.allocations;
    ASSERT_NE(a.allocate(500, 8), nullptr);
    EXPECT_EQ(up.allocations, before);  // served by the kept chunk
}

TEST(Arena, OversizeBlockDoesNotWasteTheCurrentChunk) {
    counting_upstream up;
    arena a{4096, up};
    auto* first = static_cast<std::byte*>(a.allocate(16, 16));
    const auto m = a.marker();
    auto* big = static_cast<std::byte*>(a.allocate(100000, 64));
    ASSERT_NE(big, nullptr);
    EXPECT_TRUE(rtmem::is_aligned(big, 64));
    auto* next = static_cast<std::byte*>(a.allocate(16, 16));
    EXPECT_EQ(next, first + 16);  // same chunk, right after
    EXPECT_EQ(up.allocations, 2u);
    a.rewind(m);
    EXPECT_EQ(up.live.size(), 1u);  // the dedicated chunk went back
    EXPECT_FALSE(a.owns(big));
}

TEST(Arena, StaleMarkers) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    arena a{1024};
    (void)a.allocate(16, 8);
    const auto early = a.marker();
    for (int i = 0; i < 20; ++i) (void)a.allocate(200, 8);
    const auto late = a.marker();  // in a later chunk
    a.rewind(early);
    for (int i = 0; i < 20; ++i) (void)a.allocate(200, 8);  // chunks may reuse old addresses
    const std::size_t used = a.stats().used;
    a.rewind(late);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.stats().used, used);
    arena b{1024};
    (void)b.allocate(8, 8);
    b.rewind(a.marker());
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(b.stats().live_count, 1u);
    EXPECT_TRUE(a.check());
}

TEST(Arena, StaleMarkerBelowTheTopIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    arena a{4096};
    const auto m1 = a.marker();
    ASSERT_NE(a.allocate(64, 8), nullptr);
    const auto m2 = a.marker();
    ASSERT_NE(a.allocate(64, 8), nullptr);
    a.rewind(m1);
    auto* live = static_cast<std::byte*>(a.allocate(200, 8));  // spans m2's position
    a.rewind(m2);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    auto* next = static_cast<std::byte*>(a.allocate(16, 8));
    EXPECT_TRUE(next >= live + 200 || next + 16 <= live);
    const auto m3 = a.marker();
    (void)a.allocate(8, 8);
    a.rewind(m3);
    a.rewind(m1);  // older markers that were never rewound past stay valid
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.stats().used, 0u);
}

TEST(Arena, BadAlignmentAndOverflowAreReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    arena a{1024};
    EXPECT_EQ(a.allocate(8, 48), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    EXPECT_EQ(a.allocate(SIZE_MAX - 8, 64), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_size), 1u);
    EXPECT_NE(a.allocate(8, 8), nullptr);
}

TEST(Arena, UpstreamFailureReturnsNull) {
    struct refusing {
        void* allocate(std::size_t, std::size_t) noexcept { return nullptr; }
        void deallocate(void*, std::size_t, std::size_t) noexcept {}
    } up;
    arena a{1024, up};
    EXPECT_EQ(a.allocate(8, 8), nullptr);
    EXPECT_EQ(a.stats().total_count, 0u);
}

TEST(Arena, MoveTransfersChunks) {
    counting_upstream up;
    {
        arena a{1024, up};
        void* p = a.allocate(8, 8);
        arena b{std::move(a)};
        EXPECT_TRUE(b.owns(p));
        arena c{1024, up};
        (void)c.allocate(8, 8);
        c = std::move(b);
        EXPECT_TRUE(c.owns(p));
        EXPECT_EQ(up.live.size(), 1u);
    }
    EXPECT_EQ(up.live.size(), 0u);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(ArenaDeathTest, DefaultHandlerAbortsOnStaleMarker) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            arena a{1024};
            (void)a.allocate(8, 8);
            const auto m = a.marker();
            a.reset();
            a.rewind(m);
        },
        "stale_marker");
}
#endif
}  // namespace
