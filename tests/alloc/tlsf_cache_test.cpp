// tlsf_allocator's front cache: freed blocks parked per exact size and handed back by the next
// request of that size; bounded per size; flushed (coalesced) rather than failing a request.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "tlsf_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
using block = rtmem::detail::tlsf_block;

using rtmem::testing::count_blocks;
using rtmem::testing::heap_buffer;

// The heap is one free block: everything coalesced.
void expect_empty(const rtmem::tlsf_allocator& t) {
    EXPECT_EQ(count_blocks(t, true), 0u);
    EXPECT_EQ(count_blocks(t, false), 1u);
    EXPECT_EQ(t.largest_free_block() + block::overhead, t.stats().capacity);
    EXPECT_TRUE(t.check());
}

TEST(TlsfCache, IsOffByDefault) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span()};
    EXPECT_EQ(t.cache_depth(), 0u);
    void* a = t.allocate(100);
    t.deallocate(a, 100);
    EXPECT_EQ(t.cached_blocks(), 0u);
    expect_empty(t);
}

TEST(TlsfCache, TheNextRequestOfTheSameSizeTakesTheParkedBlock) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 4};
    void* a = t.allocate(100);
    void* guard = t.allocate(24);  // a's neighbours are used either way; no merge decides this
    t.deallocate(a, 100);
    EXPECT_EQ(t.cached_blocks(), 1u);
    EXPECT_EQ(count_blocks(t, false), 2u);  // a (parked, shown as unused) and the heap's rest
    EXPECT_EQ(t.stats().live_count, 1u);
    EXPECT_TRUE(t.check());
    EXPECT_EQ(t.allocate(100), a);
    EXPECT_EQ(t.cached_blocks(), 0u);
    EXPECT_EQ(t.stats().live_count, 2u);
    // A request in the same 16-byte bin (same block size) takes it too; another size does not.
    t.deallocate(a, 100);
    EXPECT_EQ(t.allocate(97), a);
    t.deallocate(a, 97);
    void* c = t.allocate(120);
    EXPECT_NE(c, a);
    EXPECT_EQ(t.cached_blocks(), 1u);
    t.deallocate(c, 120);
    t.deallocate(guard, 24);
    EXPECT_TRUE(t.check());
    EXPECT_TRUE(t.flush_cache());
    EXPECT_FALSE(t.flush_cache());
    expect_empty(t);
}

TEST(TlsfCache, ParksAtMostDepthBlocksPerSizeLastInFirstOut) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 2};
    std::vector<void*> v;
    for (int i = 0; i < 5; ++i) v.push_back(t.allocate(200));
    for (void* p : v) t.deallocate(p, 200);
    EXPECT_EQ(t.cached_blocks(), 2u);  // v[0], v[1]; v[2..4] coalesced with the heap's rest
    EXPECT_EQ(count_blocks(t, false), 3u);
    EXPECT_TRUE(t.check());
    EXPECT_EQ(t.allocate(200), v[1]);
    EXPECT_EQ(t.allocate(200), v[0]);
    t.deallocate(v[0], 200);
    t.deallocate(v[1], 200);
    t.flush_cache();
    expect_empty(t);
}

TEST(TlsfCache, BlocksAboveTheCacheLimitAreNeverParked) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 8};
    constexpr std::size_t biggest = rtmem::tlsf_allocator::cache_max_block;
    void* a = t.allocate(biggest);
    void* b = t.allocate(biggest + 1);
    t.deallocate(b, biggest + 1);
    EXPECT_EQ(t.cached_blocks(), 0u);
    t.deallocate(a, biggest);
    EXPECT_EQ(t.cached_blocks(), 1u);
    EXPECT_TRUE(t.check());
}

TEST(TlsfCache, StatsCountParkedBlocksAsFreedAndFragmentationAsFree) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 8};
    void* a = t.allocate(300);
    void* b = t.allocate(40);
    void* c = t.allocate(500);
    t.deallocate(a, 300);
    t.deallocate(c, 500);  // merges into the heap's rest? no: parked, c stays a block of its own
    const rtmem::stats s = t.stats();
    EXPECT_EQ(s.live_count, 1u);
    EXPECT_EQ(s.used, rtmem::tlsf_allocator::usable_size(b) + block::overhead);
    const rtmem::fragmentation f = t.fragmentation();
    EXPECT_EQ(f.requested_live, 40u);
    EXPECT_EQ(f.free_blocks, 3u);  // a, c and the rest
    EXPECT_EQ(f.free_bytes + s.used + 3 * block::overhead, s.capacity);
    EXPECT_GT(f.external(), 0.0);  // a and c are not coalesced
    t.deallocate(b, 40);
    t.flush_cache();
    EXPECT_EQ(t.fragmentation().external(), 0.0);
    expect_empty(t);
}

TEST(TlsfCache, AFullHeapFlushesTheCacheInsteadOfFailing) {
    heap_buffer buf(256 << 10);
    for (const std::size_t align : {std::size_t{16}, std::size_t{4096}}) {
        rtmem::tlsf_allocator t{buf.span(), rtmem::tlsf_allocator::max_cache_depth};
        std::vector<std::pair<void*, std::size_t>> v;
        for (std::size_t i = 0;; ++i) {  // every cached size, until the heap is full
            const std::size_t size = 16 + (i * 16) % 2000;
            void* p = t.allocate(size);
            if (p == nullptr) break;
            v.emplace_back(p, size);
        }
        for (auto [p, size] : v) t.deallocate(p, size);
        EXPECT_GT(t.cached_blocks(), v.size() / 2);
        EXPECT_LT(t.fragmentation().largest_free, 32u << 10);  // the lists alone cannot serve it
        void* big = t.allocate(32 << 10, align);
        ASSERT_NE(big, nullptr);
        EXPECT_EQ(t.cached_blocks(), 0u);
        EXPECT_TRUE(t.check());
        t.deallocate(big, 32 << 10, align);
        t.flush_cache();
        expect_empty(t);
    }
}

TEST(TlsfCache, ConformanceWithTheCacheOn) {
    heap_buffer buf(24u << 20);
    for (const unsigned depth : {1u, 7u}) {
        rtmem::tlsf_allocator t{buf.span(), depth};
        rtmem::testing::conformance_options o;
        o.seed = depth;
        o.max_size = 4096;
        o.large_size = 1 << 20;
        o.max_align = 4096;
        o.max_live = 400;
        o.scale = 0.2;
        const auto r = rtmem::testing::run_conformance(t, o);
        EXPECT_GT(r.allocations, 1000u);
        EXPECT_GT(t.cached_blocks(), 0u);
        t.flush_cache();
        expect_empty(t);
    }
}

TEST(TlsfCache, ConformanceUnderPressureWithSeveralPools) {
    heap_buffer a(256 << 10), b(64 << 10), c(1 << 20);
    rtmem::tlsf_allocator t;
    t.set_cache_depth(16);
    ASSERT_TRUE(t.add_pool(a.span()));
    ASSERT_TRUE(t.add_pool(b.span()));
    ASSERT_TRUE(t.add_pool(c.span()));
    rtmem::testing::conformance_options o;
    o.max_size = 8192;
    o.max_align = 256;
    o.max_live = 2000;  // more than fits: exhaustion and flush paths run too
    o.scale = 0.25;
    const auto r = rtmem::testing::run_conformance(t, o);
    EXPECT_GT(r.exhausted, 0u);
    t.flush_cache();
    EXPECT_EQ(count_blocks(t, false), 3u);  // one free block per pool
    EXPECT_GT(rtmem::testing::run_exhaustion(t, 1000, 16), 1000u);
}

TEST(TlsfCache, LoweringTheDepthFlushesAndTooDeepIsClamped) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 8};
    void* a = t.allocate(64);
    t.deallocate(a, 64);
    t.set_cache_depth(9);  // raising keeps what is parked
    EXPECT_EQ(t.cached_blocks(), 1u);
    t.set_cache_depth(0);
    EXPECT_EQ(t.cached_blocks(), 0u);
    expect_empty(t);
    EXPECT_EQ(rec.count(), 0u);
    t.set_cache_depth(1000);
    EXPECT_EQ(rec.last().kind, violation_kind::bad_argument);
    EXPECT_EQ(t.cache_depth(), rtmem::tlsf_allocator::max_cache_depth);
}

TEST(TlsfCache, MoveTakesTheParkedBlocksAlong) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 4};
    void* a = t.allocate(64);
    t.deallocate(a, 64);
    rtmem::tlsf_allocator u = std::move(t);
    EXPECT_EQ(t.cached_blocks(), 0u);
    EXPECT_EQ(t.cache_depth(), 0u);
    EXPECT_EQ(u.cached_blocks(), 1u);
    EXPECT_EQ(u.cache_depth(), 4u);
    EXPECT_EQ(u.allocate(64), a);
    u.deallocate(a, 64);
    u.flush_cache();
    expect_empty(u);
}

TEST(TlsfCache, ReallocateNeverGrowsIntoAParkedNeighbour) {
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 4};
    auto* a = static_cast<std::byte*>(t.allocate(100));
    void* b = t.allocate(100);
    void* guard = t.allocate(24);
    for (int i = 0; i < 100; ++i) a[i] = std::byte(i);
    t.deallocate(b, 100);  // parked right after a
    auto* grown = static_cast<std::byte*>(t.reallocate(a, 100, 200));
    ASSERT_NE(grown, nullptr);
    EXPECT_NE(grown, a);  // moved: the parked block is not free memory to the lists
    for (int i = 0; i < 100; ++i) ASSERT_EQ(grown[i], std::byte(i));
    EXPECT_TRUE(t.check());
    t.deallocate(grown, 200);
    t.deallocate(guard, 24);
    t.flush_cache();
    expect_empty(t);
}

#if RTMEM_CHECKS >= 1
TEST(TlsfCache, FreeingAParkedBlockAgainIsADoubleFree) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 4};
    void* a = t.allocate(64);
    t.deallocate(a, 64);
    t.deallocate(a, 64);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_EQ(rec.count(), 1u);
    EXPECT_EQ(t.cached_blocks(), 1u);  // parked once, not twice
    EXPECT_TRUE(t.check());
}
#endif

TEST(TlsfCache, CheckFindsAWriteAfterFreeIntoAParkedBlock) {
    rtmem::testing::violation_recorder rec;
    heap_buffer buf(64 << 10);
    rtmem::tlsf_allocator t{buf.span(), 4};
    void* live = t.allocate(64);
    auto** a = static_cast<void**>(t.allocate(64));
    t.deallocate(a, 64);
    void* saved = *a;
    *a = live;  // a stale pointer writes into the parked block's link word
    EXPECT_FALSE(t.check());
    EXPECT_EQ(rec.last().kind, violation_kind::corrupted);
    *a = saved;
    EXPECT_TRUE(t.check());
    t.deallocate(live, 64);
}
}  // namespace
