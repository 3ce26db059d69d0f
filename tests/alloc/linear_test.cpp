#include "rtmem/alloc/linear.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "conformance.hpp"
#include "stack_ordered_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::linear_allocator;
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

static_assert(rtmem::allocator<linear_allocator>);
static_assert(rtmem::marker_allocator<linear_allocator>);
static_assert(rtmem::resettable_allocator<linear_allocator>);
static_assert(rtmem::stats_allocator<linear_allocator>);
static_assert(!std::is_copy_constructible_v<linear_allocator>);
static_assert(std::is_nothrow_move_constructible_v<linear_allocator>);

TEST(LinearAllocator, ConformanceSmallBlocks) {
    rtmem::testing::conformance_options o;
    o.order = rtmem::testing::free_order::none;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        linear_allocator a{std::size_t{1} << 20};  // the harness expects a fresh allocator
        o.seed = seed;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.allocations, o.operations / 4);
        EXPECT_GT(r.rewinds, 0u);
        EXPECT_GT(r.resets, 0u);
    }
}

TEST(LinearAllocator, ConformanceLargeBlocksUntilExhaustion) {
    std::vector<std::byte> buffer(16 * 1024);
    rtmem::testing::conformance_options o;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 2048;
    o.large_size = 16 * 1024;
    o.max_align = 256;
    for (std::uint64_t seed = 10; seed <= 12; ++seed) {
        linear_allocator a{std::span<std::byte>(buffer)};
        o.seed = seed;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.exhausted, 0u);  // a 16 KiB buffer runs out: exhaustion is exercised
    }
}

TEST(LinearAllocator, ExhaustionIsExact) {
    std::array<std::byte, 1024> buffer{};
    linear_allocator a{std::span<std::byte>(buffer)};
    // 1024 bytes hold exactly 64 blocks of 16 at alignment 1.
    EXPECT_EQ(rtmem::testing::run_exhaustion(a, 16, 1), 64u);
    EXPECT_GT(rtmem::testing::run_exhaustion(a, 24, 8), 40u);
}

TEST(LinearAllocator, BumpsContiguouslyAndAligns) {
    alignas(64) std::array<std::byte, 256> buffer{};
    linear_allocator a{std::span<std::byte>(buffer)};
    auto* p = static_cast<std::byte*>(a.allocate(3, 1));
    auto* q = static_cast<std::byte*>(a.allocate(8, 8));
    auto* r = static_cast<std::byte*>(a.allocate(1, 64));
    EXPECT_EQ(p, buffer.data());
    EXPECT_EQ(q, buffer.data() + 8);
    EXPECT_EQ(r, buffer.data() + 64);
    EXPECT_EQ(a.used(), 65u);
    EXPECT_NE(a.allocate(0, 1), a.allocate(0, 1));  // size 0 still gives unique pointers
}

TEST(LinearAllocator, MarkerRewindAndPeak) {
    linear_allocator a{4096};
    ASSERT_NE(a.allocate(100, 1), nullptr);
    const auto m = a.marker();
    void* p = a.allocate(500, 1);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(a.owns(p));
    a.rewind(m);
    EXPECT_FALSE(a.owns(p));
    EXPECT_EQ(a.stats().used, 100u);
    EXPECT_EQ(a.stats().peak, 600u);
    EXPECT_EQ(a.stats().live_count, 1u);
    EXPECT_EQ(a.allocate(1, 1), p);  // the rewound memory is handed out again
    a.reset();
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.stats().peak, 600u);  // peak survives reset
    EXPECT_EQ(a.stats().total_count, 3u);
}

TEST(LinearAllocator, ScopedRewindAndScopeMacro) {
    linear_allocator a{4096};
    ASSERT_NE(a.allocate(10, 1), nullptr);
    {
        rtmem::scoped_rewind scope{a};
        ASSERT_NE(a.allocate(1000, 1), nullptr);
        EXPECT_EQ(a.used(), 1010u);
    }
    EXPECT_EQ(a.used(), 10u);
    {
        RTMEM_SCOPE(a);
        ASSERT_NE(a.allocate(50, 1), nullptr);
        {
            RTMEM_SCOPE(a);
            ASSERT_NE(a.allocate(50, 1), nullptr);
            EXPECT_EQ(a.used(), 110u);
        }
        EXPECT_EQ(a.used(), 60u);
    }
    EXPECT_EQ(a.used(), 10u);
}

TEST(LinearAllocator, TakesAndReturnsUpstreamMemoryOnce) {
    rtmem::testing::counting_upstream up;
    {
        linear_allocator a{1000, up};
        EXPECT_EQ(up.allocations, 1u);
        EXPECT_EQ(a.capacity(), 1000u);
        linear_allocator b{std::move(a)};
        EXPECT_EQ(a.capacity(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
        EXPECT_EQ(a.allocate(1, 1), nullptr);  // NOLINT(bugprone-use-after-move)
        EXPECT_NE(b.allocate(1, 1), nullptr);
        linear_allocator c{std::span<std::byte>{}};
        c = std::move(b);
        EXPECT_EQ(c.capacity(), 1000u);
    }
    EXPECT_EQ(up.deallocations, 1u);
    EXPECT_EQ(up.bad_frees, 0u);
}

TEST(LinearAllocator, StaleMarkerAboveTopIsReportedAndIgnored) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    linear_allocator a{4096};
    const auto early = a.marker();
    ASSERT_NE(a.allocate(64, 1), nullptr);
    const auto late = a.marker();
    a.rewind(early);
    ASSERT_NE(a.allocate(16, 1), nullptr);
    a.rewind(late);  // late is above the top now: stale
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.used(), 16u);  // nothing moved
    a.reset();
    a.rewind(late);
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(a.used(), 0u);
}

TEST(LinearAllocator, StaleMarkerBelowTheTopIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    linear_allocator a{4096};
    const auto m1 = a.marker();
    ASSERT_NE(a.allocate(64, 1), nullptr);
    const auto m2 = a.marker();
    ASSERT_NE(a.allocate(64, 1), nullptr);
    a.rewind(m1);  // m2 is stale from here on
    auto* live = static_cast<std::byte*>(a.allocate(100, 1));  // spans m2's position
    ASSERT_NE(live, nullptr);
    a.rewind(m2);  // below the top again, but stale
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.used(), 100u);
    auto* next = static_cast<std::byte*>(a.allocate(16, 1));
    EXPECT_GE(next, live + 100);  // no overlap with the live block
}

TEST(LinearAllocator, NestedAndReusedMarkersStayValid) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    linear_allocator a{1 << 16};
    std::vector<linear_allocator::marker_type> marks;
    for (int depth = 0; depth < 10; ++depth) {  // deeper than the retreat log
        marks.push_back(a.marker());
        ASSERT_NE(a.allocate(32, 8), nullptr);
    }
    for (auto it = marks.rbegin(); it != marks.rend(); ++it) {
        a.rewind(*it);
        ASSERT_NE(a.allocate(8, 8), nullptr);
        a.rewind(*it);  // the same marker again: still valid
    }
    const auto outer = a.marker();  // a frame loop with a scope inside
    for (int frame = 0; frame < 100; ++frame) {
        ASSERT_NE(a.allocate(16, 8), nullptr);
        const auto inner = a.marker();
        ASSERT_NE(a.allocate(64, 8), nullptr);
        a.rewind(inner);
        if (frame % 10 == 9) a.rewind(outer);
    }
    EXPECT_TRUE(rec.empty());
    EXPECT_EQ(a.used(), 0u);
}

TEST(LinearAllocator, MarkerFromAnotherAllocatorIsStale) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    std::array<std::byte, 256> buffer{};
    linear_allocator a{std::span<std::byte>(buffer)};
    ASSERT_NE(a.allocate(8, 1), nullptr);
    const auto m = a.marker();
    linear_allocator b{std::span<std::byte>(buffer)};  // same memory, another allocator
    ASSERT_NE(b.allocate(64, 1), nullptr);
    b.rewind(m);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(b.used(), 64u);
}

TEST(LinearAllocator, BadAlignmentAndForeignFreeAreReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    linear_allocator a{256};
    EXPECT_EQ(a.allocate(8, 3), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    int local = 0;
    a.deallocate(&local, sizeof local, alignof(int));
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 1u);
    EXPECT_NE(a.allocate(8, 8), nullptr);  // still usable
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(LinearAllocatorDeathTest, DefaultHandlerAbortsOnStaleMarker) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            linear_allocator a{256};
            const auto m = a.marker();
            (void)a.allocate(8, 1);
            const auto late = a.marker();
            a.rewind(m);
            a.rewind(late);
        },
        "stale_marker");
}
#endif

TEST(LinearAllocator, FailedUpstreamGivesAnEmptyAllocator) {
    struct refusing {
        void* allocate(std::size_t, std::size_t) noexcept { return nullptr; }
        void deallocate(void*, std::size_t, std::size_t) noexcept {}
    } up;
    linear_allocator a{1024, up};
    EXPECT_EQ(a.capacity(), 0u);
    EXPECT_EQ(a.allocate(1, 1), nullptr);
}
}  // namespace
