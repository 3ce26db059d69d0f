#include "rtmem/alloc/tlsf.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "conformance.hpp"
#include "tlsf_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
static_assert(rtmem::allocator<rtmem::tlsf_allocator>);
static_assert(rtmem::owning_allocator<rtmem::tlsf_allocator>);
static_assert(rtmem::stats_allocator<rtmem::tlsf_allocator>);
static_assert(rtmem::checkable_allocator<rtmem::tlsf_allocator>);
static_assert(!std::is_copy_constructible_v<rtmem::tlsf_allocator>);
static_assert(std::is_nothrow_move_constructible_v<rtmem::tlsf_allocator>);

using rtmem::testing::count_blocks;
using rtmem::testing::heap_buffer;

TEST(TlsfAllocator, ConformanceSmallAndLarge) {
    heap_buffer buf(24u << 20);
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        rtmem::tlsf_allocator t{buf.span()};
        rtmem::testing::conformance_options o;
        o.seed = seed;
        o.min_size = seed == 2 ? 1 : 0;
        o.max_size = 4096;
        o.large_size = 1 << 20;  // 1 request in 64 up to 1 MiB
        o.max_align = 4096;
        o.max_live = 400;
        o.scale = 0.2;  // 2 x 20000 operations, check() after each: ~1 s here, ~10 s under ASan
        const auto r = rtmem::testing::run_conformance(t, o);
        EXPECT_GT(static_cast<double>(r.allocations),
                  static_cast<double>(o.operations) * o.scale / 3);
        EXPECT_EQ(r.checks, static_cast<std::size_t>(static_cast<double>(o.operations) * o.scale) +
                                1);  // every step
        // Return to empty: the pool is one free block again.
        EXPECT_EQ(count_blocks(t, false), 1u);
        EXPECT_EQ(count_blocks(t, true), 0u);
        EXPECT_EQ(t.largest_free_block() + rtmem::detail::tlsf_block::overhead, t.stats().capacity);
    }
}

TEST(TlsfAllocator, ConformanceUnderPressureWithSeveralPools) {
    heap_buffer a(256 << 10), b(64 << 10), c(1 << 20);
    rtmem::tlsf_allocator t;
    ASSERT_TRUE(t.add_pool(a.span()));
    ASSERT_TRUE(t.add_pool(b.span()));
    ASSERT_TRUE(t.add_pool(c.span()));
    rtmem::testing::conformance_options o;
    o.max_size = 8192;
    o.max_align = 256;
    o.max_live = 2000;  // more than fits: exhaustion paths run too
    o.scale = 0.25;
    const auto r = rtmem::testing::run_conformance(t, o);
    EXPECT_GT(r.exhausted, 0u);
    EXPECT_EQ(count_blocks(t, false), 3u);  // one free block per pool
}

TEST(TlsfAllocator, BoundarySweepEveryAlignment) {
    rtmem::testing::violation_recorder rec;  // a broken invariant fails the test, not the run
    heap_buffer buf(4u << 20);
    rtmem::tlsf_allocator t{buf.span()};
    const std::size_t empty_largest = t.largest_free_block();
    for (std::size_t align = 1; align <= 64 * 1024; align *= 2) {
        for (unsigned k = 5; k <= 20; ++k) {
            for (long delta : {-32L, -8L, -1L, 0L, 1L, 8L, 32L}) {
                const auto size = static_cast<std::size_t>(static_cast<long>(1UL << k) + delta);
                auto* p = static_cast<std::byte*>(t.allocate(size, align));
                ASSERT_NE(p, nullptr) << size << " @ " << align;
                ASSERT_TRUE(rtmem::is_aligned(p, align));
                ASSERT_GE(rtmem::tlsf_allocator::usable_size(p), size);
                if (size > 0) {  // touch both ends (2^5 - 32 is 0: a valid, empty block)
                    p[0] = std::byte{1};
                    p[size - 1] = std::byte{2};
                }
                auto* q = static_cast<std::byte*>(t.allocate(24, 8));  // a neighbour
                ASSERT_TRUE(t.check()) << size << " @ " << align << ": " << rec.last().message;
                t.deallocate(p, size, align);
                t.deallocate(q, 24, 8);
            }
        }
        ASSERT_TRUE(t.check()) << align;
        ASSERT_EQ(t.largest_free_block(), empty_largest);
        ASSERT_TRUE(rec.empty());  // back to one block each time
    }
}

TEST(TlsfClasses, SameClassAgreesWithTheListIndex) {
    using classes = rtmem::detail::tlsf_classes;
    auto index = [](std::size_t size) {
        unsigned fl = 0, sl = 0;
        classes::insert_index(size, fl, sl);
        return std::pair{fl, sl};
    };
    std::size_t agreeing = 0;
    for (std::size_t a = 24; a < (std::size_t{1} << 22); a += a < 4096 ? 16 : 16 * 61) {
        for (const std::size_t b : {a + 16, a + 32, a + 48, a + 1024, a + a / 31, a + a / 16, a * 2,
                                    a * 2 + 16, classes::max_block - classes::align}) {
            const bool same = index(a) == index(b);
            ASSERT_EQ(classes::same_class(a, b), same) << a << " and " << b;
            ASSERT_EQ(classes::same_class(b, a), same) << b << " and " << a;
            agreeing += same ? 1 : 0;
        }
    }
    EXPECT_GT(agreeing, 1000u);  // both answers occur
}

TEST(TlsfAllocator, ExhaustionAndEmptyAgain) {
    heap_buffer buf(1 << 20);
    rtmem::tlsf_allocator t{buf.span()};
    const std::size_t n = rtmem::testing::run_exhaustion(t, 1000, 16);
    EXPECT_GT(n, (1u << 20) / 1100);
    EXPECT_EQ(count_blocks(t, false), 1u);
    EXPECT_EQ(t.stats().used, 0u);
}

TEST(TlsfAllocator, FreeCoalescesWithBothNeighbours) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    void* a = t.allocate(100, 8);
    void* b = t.allocate(200, 8);
    void* c = t.allocate(300, 8);
    void* d = t.allocate(400, 8);
    t.deallocate(a, 100, 8);
    t.deallocate(c, 300, 8);
    EXPECT_EQ(count_blocks(t, false), 3u);  // a, c, and the tail
    t.deallocate(b, 200, 8);                // joins a and c
    EXPECT_EQ(count_blocks(t, false), 2u);
    const auto f = t.fragmentation();
    EXPECT_EQ(f.free_blocks, 2u);
    EXPECT_GT(f.external(), 0.0);
    EXPECT_EQ(f.requested_live, 400u);
    EXPECT_GE(f.held_live, 408u);
    t.deallocate(d, 400, 8);
    EXPECT_EQ(count_blocks(t, false), 1u);
    EXPECT_EQ(t.fragmentation().external(), 0.0);
    EXPECT_TRUE(t.check());
}

// FIFO frees grow the free block before them (it keeps its list place while its size class
// does not change), LIFO frees merge into the free block after them (the freed block takes that
// block's place), and carving the heap top keeps the top in its list: every step must leave
// lists, bitmaps and tags consistent, whether the class changes or not.
void carve_then_free(bool fifo) {
    heap_buffer buf(1 << 20);
    rtmem::tlsf_allocator t{buf.span()};
    std::vector<void*> blocks;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < 600; ++i) {
        sizes.push_back(16 + (i * 37) % 1000);
        blocks.push_back(t.allocate(sizes.back(), 16));
        ASSERT_NE(blocks.back(), nullptr);
        ASSERT_TRUE(t.check()) << "after allocation " << i;
    }
    EXPECT_EQ(count_blocks(t, false), 1u);  // only the heap top
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const std::size_t i = fifo ? k : blocks.size() - 1 - k;
        t.deallocate(blocks[i], sizes[i], 16);
        ASSERT_TRUE(t.check()) << "after free " << k;
        ASSERT_EQ(count_blocks(t, false), fifo && k + 1 < blocks.size() ? 2u : 1u);
    }
    EXPECT_EQ(t.stats().used, 0u);
    EXPECT_EQ(t.largest_free_block(), t.stats().capacity - rtmem::tlsf_allocator::block::overhead);
}

TEST(TlsfAllocator, FifoFreesGrowTheFreeBlockBefore) {
    carve_then_free(true);
}

TEST(TlsfAllocator, LifoFreesMergeIntoTheFreeBlockAfter) {
    carve_then_free(false);
}

TEST(TlsfAllocator, DefaultAlignmentNeedsNoPadding) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    std::vector<void*> got;
    for (std::size_t n = 0; n < 200; ++n) {
        void* p = t.allocate(n, rtmem::default_alignment);
        ASSERT_TRUE(rtmem::is_aligned(p, 16)) << n;
        got.push_back(p);
    }
    // Consecutive blocks are packed: one header word and size rounding only, no alignment gaps.
    const auto used = t.stats().used;
    std::size_t requested = 0;
    for (std::size_t n = 0; n < 200; ++n) requested += n;
    EXPECT_LT(used, requested + 200 * (8 + 16));
    for (std::size_t n = 0; n < 200; ++n) t.deallocate(got[n], n, rtmem::default_alignment);
    EXPECT_EQ(count_blocks(t, false), 1u);
}

TEST(TlsfAllocator, GoodFitReusesTheFreedBlock) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    void* a = t.allocate(512, 8);
    void* guard = t.allocate(16, 8);
    t.deallocate(a, 512, 8);
    EXPECT_EQ(t.allocate(500, 8), a);  // same class: the freed block comes back
    t.deallocate(guard, 16, 8);
}

TEST(TlsfAllocator, ReallocateInPlaceWhenTheNeighbourIsFree) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    auto* p = static_cast<unsigned char*>(t.allocate(100, 8));
    for (int i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
    auto* grown = static_cast<unsigned char*>(t.reallocate(p, 100, 5000, 8));
    EXPECT_EQ(grown, p);  // the tail of the pool was free
    for (int i = 0; i < 100; ++i) ASSERT_EQ(grown[i], i);
    EXPECT_TRUE(t.check());
    auto* shrunk = static_cast<unsigned char*>(t.reallocate(grown, 5000, 50, 8));
    EXPECT_EQ(shrunk, p);
    EXPECT_LT(rtmem::tlsf_allocator::usable_size(shrunk), 100u);
    EXPECT_TRUE(t.check());
    void* blocker = t.allocate(64, 8);  // right after p now
    auto* moved = static_cast<unsigned char*>(t.reallocate(shrunk, 50, 4000, 8));
    EXPECT_NE(moved, p);
    for (int i = 0; i < 50; ++i) ASSERT_EQ(moved[i], i);
    EXPECT_EQ(t.stats().live_count, 2u);
    t.deallocate(moved, 4000, 8);
    t.deallocate(blocker, 64, 8);
    EXPECT_EQ(t.reallocate(nullptr, 0, 10, 8) != nullptr, true);
    EXPECT_TRUE(t.check());
}

TEST(TlsfAllocator, StatsAndMove) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    const std::size_t cap = t.stats().capacity;
    EXPECT_GT(cap, (64u << 10) - rtmem::tlsf_allocator::pool_overhead - 8);
    void* a = t.allocate(1000, 64);
    EXPECT_EQ(t.stats().live_count, 1u);
    EXPECT_GE(t.stats().used, 1000u);
    rtmem::tlsf_allocator u = std::move(t);
    EXPECT_TRUE(u.owns(a));
    EXPECT_FALSE(t.owns(a));
    EXPECT_EQ(t.allocate(8, 8), nullptr);  // moved-from: empty
    u.deallocate(a, 1000, 64);
    EXPECT_EQ(u.stats().used, 0u);
    EXPECT_GE(u.stats().peak, 1000u);
    EXPECT_TRUE(u.check());
}

TEST(TlsfAllocator, MisuseIsReported) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    EXPECT_EQ(t.allocate(16, 12), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_alignment);
    EXPECT_EQ(t.allocate(std::numeric_limits<std::size_t>::max() / 4, 8), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_size);
    std::byte tiny[16];
    EXPECT_FALSE(t.add_pool(tiny));
    EXPECT_EQ(rec.last().kind, violation_kind::bad_argument);
    EXPECT_EQ(rec.count(), 3u);
    EXPECT_TRUE(t.check());
}

#if RTMEM_CHECKS >= 1
TEST(TlsfAllocator, BadFreesAreReportedAndIgnored) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    auto* a = static_cast<std::byte*>(t.allocate(100, 8));
    auto* b = static_cast<std::byte*>(t.allocate(100, 8));
    auto* c = static_cast<std::byte*>(t.allocate(100, 8));
    int local = 0;
    t.deallocate(&local, 4, 4);
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    t.deallocate(b + 48, 8, 8);  // inside a live block
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    t.deallocate(b, 4096, 8);  // more than the block holds
    EXPECT_EQ(rec.last().kind, violation_kind::size_mismatch);
    t.deallocate(b, 100, 8);
    t.deallocate(b, 100, 8);  // b is a free block of its own
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    t.deallocate(a, 100, 8);  // merges with b: b's header is now inside a free block
    t.deallocate(b, 100, 8);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_EQ(rec.count(), 5u);
    EXPECT_EQ(t.reallocate(b, 100, 200, 8), nullptr);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_TRUE(t.check());  // nothing was corrupted
    EXPECT_EQ(t.stats().live_count, 1u);
    t.deallocate(c, 100, 8);
    EXPECT_EQ(count_blocks(t, false), 1u);
}

TEST(TlsfAllocator, CheckFindsCorruption) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    auto* a = static_cast<std::byte*>(t.allocate(64, 8));
    void* b = t.allocate(64, 8);
    auto* header = reinterpret_cast<std::size_t*>(a - rtmem::tlsf_allocator::block::overhead);
    const std::size_t saved = *header;
    *header = saved + 8;  // an underflow from the previous block overwrote the size slot
    EXPECT_FALSE(t.check());
    EXPECT_EQ(rec.last().kind, violation_kind::corrupted);
    *header = saved;
    EXPECT_TRUE(t.check());
    t.deallocate(a, 64, 8);
    t.deallocate(b, 64, 8);
}

[[maybe_unused]] void free_twice() {  // used by the death test
    static std::byte buf[4096];
    rtmem::tlsf_allocator t{buf};
    void* a = t.allocate(32, 8);
    t.deallocate(a, 32, 8);
    t.deallocate(a, 32, 8);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(TlsfAllocatorDeathTest, DoubleFreeAbortsByDefault) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(free_twice(), "double_free");
}
#endif
#endif
}  // namespace
