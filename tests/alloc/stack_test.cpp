#include "rtmem/alloc/stack.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "conformance.hpp"
#include "stack_ordered_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::stack_allocator;
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

static_assert(rtmem::allocator<stack_allocator>);
static_assert(rtmem::marker_allocator<stack_allocator>);
static_assert(!std::is_copy_constructible_v<stack_allocator>);

rtmem::testing::conformance_options lifo_options(std::uint64_t seed) {
    rtmem::testing::conformance_options o;
    o.seed = seed;
    o.order = rtmem::testing::free_order::lifo;
    // Without checks there is no header: a freed block's padding stays used until the block
    // below it is freed, so "used == 0 when empty" only holds with checks on.
    o.exact_empty_used = rtmem::check_level >= 1;
    return o;
}

TEST(StackAllocator, ConformanceLifoWithMarkers) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        stack_allocator a{std::size_t{1} << 20};
        const auto o = lifo_options(seed);
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.frees, o.operations / 8);
        EXPECT_GT(r.rewinds, 0u);
    }
}

TEST(StackAllocator, ConformanceSmallBufferLargeBlocks) {
    std::vector<std::byte> buffer(32 * 1024);
    for (std::uint64_t seed = 20; seed <= 22; ++seed) {
        stack_allocator a{std::span<std::byte>(buffer)};
        auto o = lifo_options(seed);
        o.max_size = 1024;
        o.large_size = 8192;
        o.max_align = 512;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.exhausted, 0u);
    }
}

TEST(StackAllocator, Exhaustion) {
    stack_allocator a{4096};
    EXPECT_GT(rtmem::testing::run_exhaustion(a, 32, 16), 60u);
    EXPECT_GT(rtmem::testing::run_exhaustion(a, 1, 1), 200u);
}

TEST(StackAllocator, LifoFreeRestoresTheTopExactly) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "exact restore needs the checked header";
    stack_allocator a{4096};
    void* p = a.allocate(3, 1);
    const std::size_t before = a.used();
    void* q = a.allocate(100, 64);  // padding in front of q
    a.deallocate(q, 100, 64);
    EXPECT_EQ(a.used(), before);
    a.deallocate(p, 3, 1);
    EXPECT_EQ(a.used(), 0u);
    EXPECT_EQ(a.stats().live_count, 0u);
    EXPECT_GE(a.stats().peak, 103u);
}

TEST(StackAllocator, OutOfOrderFreeIsLifoViolation) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    stack_allocator a{4096};
    void* p = a.allocate(16, 8);
    void* q = a.allocate(16, 8);
    a.deallocate(p, 16, 8);  // q is the top: p may not go first
    ASSERT_EQ(rec.count(violation_kind::lifo_order), 1u);
    EXPECT_EQ(a.stats().live_count, 2u);  // nothing was freed
    EXPECT_TRUE(a.owns(q));
    a.deallocate(q, 16, 8);
    a.deallocate(p, 16, 8);
    EXPECT_EQ(rec.count(), 1u);
    EXPECT_EQ(a.used(), 0u);
}

TEST(StackAllocator, DoubleFreeSizeMismatchAndForeignPointer) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    stack_allocator a{4096};
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
    EXPECT_EQ(a.stats().live_count, 1u);
    a.deallocate(p, 16, 8);
    EXPECT_EQ(a.used(), 0u);
}

TEST(StackAllocator, StaleMarkerAfterFreeingBelowIt) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    stack_allocator a{4096};
    void* p = a.allocate(64, 8);
    const auto m = a.marker();
    a.deallocate(p, 64, 8);  // the top is now below m
    a.rewind(m);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.used(), 0u);
    stack_allocator other{4096};
    (void)other.allocate(128, 8);
    other.rewind(a.marker());  // a marker of another allocator
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(other.stats().live_count, 1u);
}

TEST(StackAllocator, RewindThenLifoContinues) {
    stack_allocator a{4096};
    void* p = a.allocate(8, 8);
    const auto m = a.marker();
    (void)a.allocate(8, 8);
    (void)a.allocate(8, 8);
    a.rewind(m);
    EXPECT_EQ(a.stats().live_count, 1u);
    a.deallocate(p, 8, 8);  // p is the top again
    EXPECT_EQ(a.stats().live_count, 0u);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(StackAllocatorDeathTest, DefaultHandlerAbortsOnLifoViolation) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            stack_allocator a{256};
            void* p = a.allocate(8, 8);
            (void)a.allocate(8, 8);
            a.deallocate(p, 8, 8);
        },
        "lifo_order");
}
#endif
TEST(StackAllocator, StaleMarkerBelowTheTopIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    stack_allocator a{4096};
    void* first = a.allocate(64, 8);
    ASSERT_NE(first, nullptr);
    const auto m = a.marker();
    void* second = a.allocate(64, 8);
    a.deallocate(second, 64, 8);
    a.deallocate(first, 64, 8);  // LIFO frees below the marker: m is stale
    auto* live = static_cast<std::byte*>(a.allocate(200, 8));
    a.rewind(m);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    auto* next = static_cast<std::byte*>(a.allocate(16, 8));
    EXPECT_GE(next, live + 200);
}

TEST(StackAllocator, EmptyAgainAfterLifoFrees) {
    stack_allocator a{4096};
    const std::size_t aligns[] = {256, 8, 32, 1, 128, 16};  // 256: padding before the bottom block
    std::vector<std::pair<void*, std::size_t>> blocks;
    const void* first_bottom = nullptr;
    for (int round = 0; round < 2; ++round) {
        for (std::size_t i = 0; i < std::size(aligns); ++i) {
            void* p = a.allocate(24 + i, aligns[i]);
            ASSERT_NE(p, nullptr);
            blocks.emplace_back(p, 24 + i);
        }
        const void* bottom = blocks.front().first;
        for (std::size_t i = blocks.size(); i-- > 0;) {
            const std::size_t align = aligns[i];
            a.deallocate(blocks[i].first, blocks[i].second, align);
        }
        EXPECT_EQ(a.stats().used, 0u);
        EXPECT_EQ(a.stats().live_count, 0u);
        EXPECT_EQ(a.remaining(), a.capacity());
        if (round == 0) first_bottom = bottom;
        EXPECT_EQ(bottom, first_bottom);  // the same start: the allocator is as new
        blocks.clear();
    }
}

}  // namespace
