// The per-site strategies of `rtmem run --plan` (tools/malloc/plan/site_strategies.*), outside
// the preload so that ASan and TSan see them: the conformance harness, what each declines,
// chunk recycling, and blocks freed by another thread than the one that allocated them.
#include "../../../tools/malloc/plan/site_strategies.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "../../common/conformance.hpp"

namespace {

using namespace rtmem::site_plan;

// One site in its own range, as the allocator concept sees it.
struct one_site {
    span_arena arena;
    planned_site site;
    one_site(strategy s, std::size_t block, std::size_t range = std::size_t{64} << 20) {
        EXPECT_TRUE(arena.reserve(range));
        site.configure(&arena, 0, s, block, 0);
    }
    ~one_site() { arena.release(); }
    one_site(const one_site&) = delete;
    one_site& operator=(const one_site&) = delete;
    void* allocate(std::size_t size, std::size_t align) noexcept { return site.allocate(size, align); }
    void deallocate(void* p, std::size_t, std::size_t) noexcept {
        if (p != nullptr) site.deallocate(p);
    }
    [[nodiscard]] bool owns(const void* p) const noexcept { return arena.owns(p); }
};

TEST(SiteStrategies, PoolConforms) {
    one_site pool(strategy::pool, 200);
    rtmem::testing::conformance_options o;
    o.max_size = 200;
    o.max_align = 16;
    const auto r = rtmem::testing::run_conformance(pool, o);
    EXPECT_GT(r.allocations, 1000u);
    EXPECT_EQ(r.exhausted, 0u);
}

TEST(SiteStrategies, RegionConforms) {
    one_site region(strategy::region, 64 * 1024);
    rtmem::testing::conformance_options o;
    o.max_size = 4096;
    o.max_align = 16;
    const auto r = rtmem::testing::run_conformance(region, o);
    EXPECT_GT(r.allocations, 1000u);
    EXPECT_EQ(r.exhausted, 0u);
}

TEST(SiteStrategies, EachDeclinesWhatItCannotServe) {
    one_site pool(strategy::pool, 48);
    EXPECT_EQ(pool.allocate(49, 16), nullptr);  // larger than a block
    EXPECT_EQ(pool.allocate(16, 32), nullptr);  // aligned above malloc's 16
    void* p = pool.allocate(48, 16);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(pool.site.usable_size(p), 48u);
    EXPECT_EQ(site_of(p), 0u);
    pool.deallocate(p, 48, 16);
    EXPECT_EQ(pool.site.counters().declined, 2u);

    one_site region(strategy::region, 4096);
    EXPECT_EQ(region.allocate(4096, 16), nullptr);  // a block must fit one chunk
    void* q = region.allocate(1000, 16);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(region.site.usable_size(q), 1000u);
    region.deallocate(q, 1000, 16);
}

TEST(SiteStrategies, APoolWithABlockLargerThanASpanServesNothing) {
    one_site pool(strategy::pool, span_bytes);
    EXPECT_EQ(pool.allocate(0, 16), nullptr);
    EXPECT_EQ(pool.allocate(100, 16), nullptr);
    EXPECT_EQ(pool.site.counters().served, 0u);
}

TEST(SiteStrategies, ARegionChunkIsRecycledWhenItsLastBlockIsFreed) {
    one_site region(strategy::region, 64 * 1024);
    void* kept = region.allocate(100, 16);  // lives throughout: its chunk is never recycled
    for (int round = 0; round < 1000; ++round) {
        std::vector<void*> blocks;
        for (int i = 0; i < 100; ++i) blocks.push_back(region.allocate(500, 16));
        for (void* b : blocks) region.deallocate(b, 500, 16);
    }
    // 100 x 500 bytes per round fit one chunk: the kept block's chunk plus a couple in turn.
    EXPECT_LE(region.arena.spans_used(), 3u);
    region.deallocate(kept, 100, 16);
}

TEST(SiteStrategies, ThePoolKeepsItsSpansForItsOwnBlocks) {
    one_site pool(strategy::pool, 64);
    for (int round = 0; round < 100; ++round) {
        std::vector<void*> blocks;
        for (int i = 0; i < 1000; ++i) blocks.push_back(pool.allocate(64, 16));
        for (void* b : blocks) pool.deallocate(b, 64, 16);
    }
    EXPECT_EQ(pool.arena.spans_used(), 1u);  // 1000 x 64 bytes: one span, reused
}

TEST(SiteStrategies, TheRangeRunsOutCleanly) {
    one_site pool(strategy::pool, 4096, 2 * span_bytes);
    std::vector<void*> blocks;
    while (void* p = pool.allocate(4096, 16)) blocks.push_back(p);
    EXPECT_EQ(blocks.size(), 2 * ((span_bytes - span_header_bytes) / 4096));
    for (void* b : blocks) pool.deallocate(b, 4096, 16);
    EXPECT_NE(pool.allocate(4096, 16), nullptr);  // usable again after frees
}

// Blocks made on one thread and freed on another (the program's hand-offs), concurrently with
// allocations: every block keeps its contents until freed; TSan sees every access.
TEST(SiteStrategies, BlocksFreedByAnotherThreadStayCorrect) {
    span_arena arena;
    ASSERT_TRUE(arena.reserve(std::size_t{256} << 20));
    planned_site sites[2];
    sites[0].configure(&arena, 0, strategy::pool, 96, 0);
    sites[1].configure(&arena, 1, strategy::region, 32 * 1024, 0);
    constexpr int per_thread = 20000;
    std::atomic<void*> mailbox[4][64] = {};
    std::atomic<int> bad{0};
    auto worker = [&](int me) {
        for (int i = 0; i < per_thread; ++i) {
            planned_site& s = sites[i % 2];
            const std::size_t size = i % 2 == 0 ? 96 : 16 + static_cast<std::size_t>(i % 700);
            auto* p = static_cast<unsigned char*>(s.allocate(size, 16));
            if (p == nullptr) {
                ++bad;
                continue;
            }
            std::memset(p, me + 1, size);
            std::memcpy(p, &size, sizeof size);
            // Hand it to the next thread's mailbox; free whatever was there.
            void* old = mailbox[(me + 1) % 4][i % 64].exchange(p, std::memory_order_acq_rel);
            if (old != nullptr) {
                std::size_t old_size = 0;
                std::memcpy(&old_size, old, sizeof old_size);
                const auto* b = static_cast<unsigned char*>(old);
                if (b[old_size - 1] == 0 || old_size < 16) ++bad;
                sites[site_of(old)].deallocate(old);
            }
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
    for (auto& t : threads) t.join();
    std::uint64_t live = 0;
    for (auto& box : mailbox)
        for (auto& slot : box)
            if (void* p = slot.load()) {
                sites[site_of(p)].deallocate(p);
                ++live;
            }
    EXPECT_EQ(bad.load(), 0);
    const auto pool = sites[0].counters(), region = sites[1].counters();
    EXPECT_EQ(pool.served + region.served, 4u * per_thread);
    EXPECT_EQ(pool.freed + region.freed, 4u * per_thread);
    EXPECT_GT(live, 0u);
    arena.release();
}

}  // namespace
