// What each check level guarantees, compiled once per level against the library built at that
// level (tests/levels/CMakeLists.txt): the empty state after LIFO frees, stale markers (level
// >= 1), ASan poisoning of pool blocks, link word included (every level, ASan builds only), and
// the temporary resource's bump, inline at level 0 only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#if __has_include(<memory_resource>)  // temp_scope is std::pmr based (absent on emscripten 3.1)
#include "rtmem/adapt/temporary.hpp"
#endif

#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/growing_stack.hpp"
#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/stack.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/detail/sanitizer.hpp"
#include "rtmem/diag/tracked.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

TEST(Levels, TheLibraryHasThisLevel) {
    // Linking at all proves it (config.hpp's link-time symbol); the constant says which level.
    EXPECT_EQ(rtmem::check_level, RTMEM_CHECKS);
}

TEST(Levels, StackIsAsNewAfterLifoFrees) {
    rtmem::stack_allocator a{4096};
    const std::size_t aligns[] = {256, 8, 32, 1, 128, 16};  // 256: padding before the bottom block
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < std::size(aligns); ++i) blocks.push_back(a.allocate(24, aligns[i]));
    for (std::size_t i = blocks.size(); i-- > 0;) a.deallocate(blocks[i], 24, aligns[i]);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.remaining(), a.capacity());
    EXPECT_EQ(a.allocate(24, 256), blocks.front());
}

TEST(Levels, GrowingStackIsAsNewAfterLifoFrees) {
    rtmem::growing_stack_allocator a{rtmem::growing_stack_options{.chunk_size = 1024}};
    const std::size_t aligns[] = {256, 8, 32, 1, 128, 16};  // 256: padding before the bottom block
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < std::size(aligns); ++i) blocks.push_back(a.allocate(24, aligns[i]));
    for (std::size_t i = blocks.size(); i-- > 0;) a.deallocate(blocks[i], 24, aligns[i]);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.allocate(24, 256), blocks.front());
}

TEST(Levels, StaleMarkerBelowTheTop) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "level 0 checks no markers";
    violation_recorder rec;
    rtmem::linear_allocator lin{4096};
    rtmem::arena ar{4096};
    const auto l1 = lin.marker();
    const auto a1 = ar.marker();
    (void)lin.allocate(64, 8);
    (void)ar.allocate(64, 8);
    const auto l2 = lin.marker();
    const auto a2 = ar.marker();
    lin.rewind(l1);
    ar.rewind(a1);
    (void)lin.allocate(200, 8);
    (void)ar.allocate(200, 8);
    lin.rewind(l2);
    ar.rewind(a2);
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(lin.used(), 200u);
}

#if __has_include(<memory_resource>)
// The temporary resource and temp_scope::allocate bump the current chunk inline at level 0 only
// (with a runtime size and alignment, uncounted); every level must hand out aligned, disjoint
// blocks (zero sizes distinct), refuse sizes that cannot fit without moving the top, and count
// bytes, not blocks.
TEST(Levels, TemporaryBlocksAreAlignedDisjointAndBounded) {
    violation_recorder rec;  // a size whose padding overflows is a bad_size report
    rtmem::temp_scope scope;
    std::pmr::memory_resource* r = scope.resource();
    const auto before = rtmem::temporary_allocator().stats();
    std::vector<std::pair<unsigned char*, std::size_t>> blocks;
    const std::size_t sizes[] = {0, 1, 24, 48, 100, 4096, 70000};
    std::size_t requested = 0;
    for (int i = 0; i < 700; ++i) {
        const std::size_t size = sizes[i % 7];
        const std::size_t align = std::size_t{1} << (i % 9);  // 1 .. 256
        void* v = i % 3 == 0 ? scope.allocate(size, align) : r->allocate(size, align);
        ASSERT_NE(v, nullptr);
        ASSERT_TRUE(rtmem::is_aligned(v, align)) << size << " " << align;
        auto* p = static_cast<unsigned char*>(v);
        if (size != 0) std::memset(p, i & 0xFF, size);
        blocks.emplace_back(p, size);
        requested += size;
        if (i == 350) {  // sizes that cannot fit, half-way: the top must not move
            EXPECT_THROW((void)r->allocate(SIZE_MAX, 16), std::bad_alloc);  // bad_size
#ifndef RTMEM_HAS_ASAN  // these reach malloc, which ASan aborts instead of returning null
            EXPECT_THROW((void)r->allocate(SIZE_MAX / 2 + 1, 16), std::bad_alloc);
            EXPECT_THROW((void)r->allocate(SIZE_MAX - 4095, 64), std::bad_alloc);  // wraps top
            EXPECT_EQ(scope.allocate(SIZE_MAX - 100, 16), nullptr);
#endif
        }
    }
    EXPECT_EQ(rec.count(violation_kind::bad_size), 1u);  // the others: the upstream said no
    std::sort(blocks.begin(), blocks.end());
    for (std::size_t i = 1; i < blocks.size(); ++i) {
        const auto [p, size] = blocks[i - 1];
        EXPECT_LE(p + std::max<std::size_t>(size, 1), blocks[i].first) << i;  // disjoint, distinct
    }
    const auto after = rtmem::temporary_allocator().stats();
    EXPECT_GE(after.used - before.used, requested);
    EXPECT_EQ(after.live_count, 0u);  // the temporary arena counts bytes, not blocks
    EXPECT_EQ(after.total_count, 0u);
}
#endif

TEST(Levels, LegalUseRaisesNoSanitizerReport) {
    std::vector<std::byte> heap(1 << 20);
    rtmem::tlsf_allocator t{heap};
    auto* p = static_cast<std::byte*>(t.allocate(4096, 64));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 4096);
    rtmem::tracked<rtmem::tlsf_allocator> tr{t};
    auto* q = static_cast<std::byte*>(tr.allocate(100, 16));
    ASSERT_NE(q, nullptr);
    std::memset(q, 2, 100);
    tr.deallocate(q, 100, 16);
    t.deallocate(p, 4096, 64);
}

#ifdef RTMEM_HAS_ASAN
void pool_use_after_free() {
    rtmem::pool_allocator<> pool{64, 16, 8};
    auto* p = static_cast<volatile unsigned char*>(pool.allocate_block());
    (void)pool.allocate_block();
    pool.deallocate_block(const_cast<unsigned char*>(p));
    p[20] = 1;
}

void pool_link_read() {
    rtmem::pool_allocator<> pool{64, 16, 8};
    auto* p = static_cast<void* volatile*>(pool.allocate_block());
    (void)pool.allocate_block();
    pool.deallocate_block(const_cast<void**>(p));
    void* link = p[0];  // the free list's link word
    std::printf("%p\n", link);
}

TEST(LevelsDeathTest, PoolUseAfterFreeIsCaughtByAsan) {
    EXPECT_DEATH(pool_use_after_free(), "use-after-poison");
}

TEST(LevelsDeathTest, PoolLinkWordReadIsCaughtByAsan) {
    EXPECT_DEATH(pool_link_read(), "use-after-poison");
}

TEST(Levels, PoolStaysUsableUnderAsan) {
    rtmem::pool_allocator<> pool{64, 16, 8};
    std::vector<void*> blocks;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 20; ++i) blocks.push_back(pool.allocate_block());
        for (void* b : blocks) std::memset(b, 7, 64);
        for (void* b : blocks) pool.deallocate_block(b);
        blocks.clear();
        EXPECT_TRUE(pool.check());
    }
}
#endif

}  // namespace
