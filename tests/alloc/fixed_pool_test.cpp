#include "rtmem/alloc/fixed_pool.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "conformance.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
using pool_96 = rtmem::fixed_pool_allocator<96, 32>;
static_assert(rtmem::allocator<pool_96>);
static_assert(rtmem::owning_allocator<pool_96>);
static_assert(rtmem::stats_allocator<pool_96>);
static_assert(rtmem::checkable_allocator<pool_96>);
static_assert(std::is_nothrow_move_constructible_v<pool_96>);
// The fit test is a constant expression: nothing is tested at a constant call site.
static_assert(pool_96::fits(96, 32) && pool_96::fits(0, 1) && !pool_96::fits(97, 8));
static_assert(!pool_96::fits(8, 64) && !pool_96::fits(8, 3));
static_assert(rtmem::fixed_pool_allocator<4, 1>::block_alignment == alignof(void*));

TEST(FixedPoolAllocator, ConformanceOverBuffer) {
    alignas(64) static std::byte buf[64 * 1024];
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        pool_96 p{std::span<std::byte>(buf)};
        rtmem::testing::conformance_options o;
        o.seed = seed;
        o.max_size = 96;
        o.max_align = 32;
        o.max_live = 1000;  // more than fit: exhaustion is exercised too
        o.use_reset = false;
        const auto r = rtmem::testing::run_conformance(p, o);
        EXPECT_GT(r.exhausted, 0u);
        EXPECT_EQ(p.free_blocks(), p.capacity_blocks());
    }
}

TEST(FixedPoolAllocator, ConformanceGrowing) {
    rtmem::fixed_pool_allocator<24, 8> p{128};
    rtmem::testing::conformance_options o;
    o.min_size = 0;
    o.max_size = 24;
    o.max_align = 8;
    o.max_live = 1000;
    o.expect_no_exhaustion = true;
    o.scale = 0.4;
    rtmem::testing::run_conformance(p, o);
    EXPECT_GE(p.capacity_blocks(), 512u);
}

TEST(FixedPoolAllocator, SameBlocksAsTheRuntimeSizedPool) {
    rtmem::malloc_allocator up;
    rtmem::fixed_pool_allocator<40, 16> p{8, up};
    EXPECT_EQ(p.block_size(), 40u);
    EXPECT_EQ(p.block_align(), 16u);
    EXPECT_EQ(p.block_stride(), 48u);
    std::vector<void*> got;
    for (int i = 0; i < 20; ++i) {
        void* b = p.allocate(40, 16);
        ASSERT_NE(b, nullptr);
        EXPECT_TRUE(rtmem::is_aligned(b, 16));
        got.push_back(b);
    }
    EXPECT_EQ(p.stats().live_count, 20u);
    for (void* b : got) p.deallocate(b, 40, 16);
    p.deallocate(nullptr, 40, 16);  // the concept: does nothing
    EXPECT_TRUE(p.check());
    EXPECT_EQ(p.stats().live_count, 0u);
}

TEST(FixedPoolAllocator, OversizeAndOveralignedAreReported) {
    rtmem::testing::violation_recorder rec;
    rtmem::fixed_pool_allocator<64, 16> p{8};
    EXPECT_EQ(p.allocate(65, 8), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_size);
    EXPECT_EQ(p.allocate(16, 32), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_alignment);
    volatile std::size_t runtime_size = 200;  // the same report for a size not known at compile time
    EXPECT_EQ(p.allocate(runtime_size, 8), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_size);
    EXPECT_EQ(rec.count(), 3u);
    EXPECT_NE(p.allocate(64, 16), nullptr);  // still usable
}

}  // namespace
