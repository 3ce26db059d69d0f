#include "rtmem/alloc/free_list.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "conformance.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
static_assert(rtmem::allocator<rtmem::free_list_allocator<rtmem::first_fit>>);
static_assert(rtmem::allocator<rtmem::free_list_allocator<rtmem::best_fit>>);
static_assert(rtmem::checkable_allocator<rtmem::free_list_allocator<>>);
static_assert(rtmem::resettable_allocator<rtmem::free_list_allocator<>>);
static_assert(!std::is_copy_constructible_v<rtmem::free_list_allocator<>>);

template <class Policy>
class FreeListAllocator : public ::testing::Test {};
using policies = ::testing::Types<rtmem::first_fit, rtmem::best_fit>;
TYPED_TEST_SUITE(FreeListAllocator, policies);

TYPED_TEST(FreeListAllocator, Conformance) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        rtmem::free_list_allocator<TypeParam> a{std::size_t{8} << 20};
        rtmem::testing::conformance_options o;
        o.seed = seed;
        o.max_size = 2048;
        o.large_size = 1 << 20;
        o.max_align = 4096;
        o.max_live = 300;
        o.use_reset = seed == 1;
        o.scale = 0.15;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(static_cast<double>(r.allocations),
                  static_cast<double>(o.operations) * o.scale / 3);
        EXPECT_TRUE(a.check());
        EXPECT_EQ(a.fragmentation().free_blocks, 1u);  // return to empty: one free block
    }
}

TYPED_TEST(FreeListAllocator, ConformanceUnderPressure) {
    alignas(64) static std::byte buf[128 << 10];
    rtmem::free_list_allocator<TypeParam> a{std::span<std::byte>(buf)};
    rtmem::testing::conformance_options o;
    o.max_size = 4096;
    o.max_align = 256;
    o.max_live = 1000;
    o.use_reset = false;
    const auto r = rtmem::testing::run_conformance(a, o);
    EXPECT_GT(r.exhausted, 0u);
    EXPECT_EQ(a.fragmentation().free_blocks, 1u);
}

TYPED_TEST(FreeListAllocator, BoundarySweepEveryAlignment) {
    rtmem::testing::violation_recorder rec;
    rtmem::free_list_allocator<TypeParam> a{std::size_t{4} << 20};
    for (std::size_t align = 1; align <= 64 * 1024; align *= 2) {
        for (unsigned k = 5; k <= 20; ++k) {
            for (long delta : {-32L, -1L, 0L, 1L, 32L}) {
                const auto size = static_cast<std::size_t>(static_cast<long>(1UL << k) + delta);
                auto* p = static_cast<std::byte*>(a.allocate(size, align));
                ASSERT_NE(p, nullptr) << size << " @ " << align;
                ASSERT_TRUE(rtmem::is_aligned(p, align));
                if (size > 0) p[size - 1] = std::byte{7};
                void* q = a.allocate(8, 8);
                ASSERT_TRUE(a.check()) << size << " @ " << align;
                a.deallocate(p, size, align);
                a.deallocate(q, 8, 8);
            }
        }
        ASSERT_EQ(a.fragmentation().free_blocks, 1u) << align;
    }
    EXPECT_TRUE(rec.empty());
}

TYPED_TEST(FreeListAllocator, ExhaustionAndEmptyAgain) {
    rtmem::free_list_allocator<TypeParam> a{std::size_t{64} << 10};
    const std::size_t n = rtmem::testing::run_exhaustion(a, 100, 16);
    EXPECT_GT(n, (64u << 10) / 160);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.fragmentation().free_blocks, 1u);
}

TYPED_TEST(FreeListAllocator, CoalescesWithBothNeighbours) {
    rtmem::free_list_allocator<TypeParam> a{std::size_t{64} << 10};
    void* b1 = a.allocate(100, 8);
    void* b2 = a.allocate(100, 8);
    void* b3 = a.allocate(100, 8);
    void* b4 = a.allocate(100, 8);
    a.deallocate(b1, 100, 8);
    a.deallocate(b3, 100, 8);
    EXPECT_EQ(a.fragmentation().free_blocks, 3u);
    a.deallocate(b2, 100, 8);  // joins b1 and b3
    EXPECT_EQ(a.fragmentation().free_blocks, 2u);
    EXPECT_GT(a.fragmentation().external(), 0.0);
    EXPECT_EQ(a.fragmentation().requested_live, 100u);
    a.deallocate(b4, 100, 8);
    EXPECT_EQ(a.fragmentation().free_blocks, 1u);
    EXPECT_EQ(a.fragmentation().external(), 0.0);
    EXPECT_TRUE(a.check());
}

TEST(FreeListPolicies, BestFitPicksTheSmallestHoleFirstFitTheFirst) {
    auto run = [](auto& a) {
        void* big = a.allocate(1000, 8);
        void* g1 = a.allocate(8, 8);
        void* small = a.allocate(200, 8);
        void* g2 = a.allocate(8, 8);
        a.deallocate(big, 1000, 8);
        a.deallocate(small, 200, 8);
        void* p = a.allocate(150, 8);
        const bool in_big_hole = p == big;
        a.deallocate(p, 150, 8);
        a.deallocate(g1, 8, 8);
        a.deallocate(g2, 8, 8);
        return in_big_hole;
    };
    rtmem::free_list_allocator<rtmem::first_fit> ff{std::size_t{64} << 10};
    rtmem::free_list_allocator<rtmem::best_fit> bf{std::size_t{64} << 10};
    EXPECT_TRUE(run(ff));
    EXPECT_FALSE(run(bf));
}

TEST(FreeListAllocator, MoveAndStats) {
    rtmem::free_list_allocator<> a{std::size_t{64} << 10};
    void* p = a.allocate(1000, 64);
    EXPECT_GT(a.stats().used, 1000u);  // the block and its header (8 or 16 bytes by word size)
    rtmem::free_list_allocator<> b = std::move(a);
    EXPECT_TRUE(b.owns(p));
    EXPECT_FALSE(a.owns(p));
    EXPECT_EQ(a.allocate(8, 8), nullptr);
    b.deallocate(p, 1000, 64);
    EXPECT_EQ(b.stats().used, 0u);
    EXPECT_GT(b.stats().peak, 1000u);
}

#if RTMEM_CHECKS >= 1
TEST(FreeListAllocator, BadFreesAreReportedAndIgnored) {
    rtmem::testing::violation_recorder rec;
    rtmem::free_list_allocator<> a{std::size_t{64} << 10};
    auto* x = static_cast<std::byte*>(a.allocate(100, 8));
    auto* y = static_cast<std::byte*>(a.allocate(100, 8));
    auto* z = static_cast<std::byte*>(a.allocate(100, 8));
    int local = 0;
    a.deallocate(&local, 4, 4);
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    a.deallocate(y, 500, 8);
    EXPECT_EQ(rec.last().kind, violation_kind::size_mismatch);
    a.deallocate(y, 100, 8);
    a.deallocate(y, 100, 8);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    a.deallocate(x, 100, 8);  // merges with y
    a.deallocate(y, 100, 8);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_EQ(rec.count(), 4u);
    EXPECT_TRUE(a.check());
    EXPECT_EQ(a.stats().live_count, 1u);
    a.deallocate(z, 100, 8);
    EXPECT_EQ(a.fragmentation().free_blocks, 1u);
}

[[maybe_unused]] void free_twice() {  // used by the death test
    rtmem::free_list_allocator<> a{std::size_t{4096}};
    void* p = a.allocate(32, 8);
    a.deallocate(p, 32, 8);
    a.deallocate(p, 32, 8);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(FreeListAllocatorDeathTest, DoubleFreeAbortsByDefault) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(free_twice(), "double_free");
}
#endif
#endif
}  // namespace
