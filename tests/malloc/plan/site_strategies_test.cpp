// The per-site strategies of `rtmem run --plan` (tools/malloc/plan/site_strategies.*), outside
// the preload so that ASan and TSan see them: the conformance harness, what each declines,
// chunk recycling, and blocks freed by another thread than the one that allocated them.
#include "../../../tools/malloc/plan/site_strategies.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "../../common/conformance.hpp"

namespace {

using namespace rtmem::site_plan;

// One site in its own range, as the allocator concept sees it.
struct one_site {
    site_group group;
    planned_site site;
    one_site(strategy s, std::size_t block, std::size_t range = std::size_t{64} << 20) {
        group.init(&site, 1);
        EXPECT_TRUE(group.reserve(range));
        site.configure(&group, 0, s, block, 0);
    }
    ~one_site() { group.release(); }
    one_site(const one_site&) = delete;
    one_site& operator=(const one_site&) = delete;
    void* allocate(std::size_t size, std::size_t align) noexcept { return site.allocate(size, align); }
    void deallocate(void* p, std::size_t, std::size_t) noexcept {
        if (p != nullptr) site.deallocate(p);
    }
    [[nodiscard]] bool owns(const void* p) const noexcept { return group.arena().owns(p); }
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
    EXPECT_LE(region.group.arena().spans_used(), 3u);
    region.deallocate(kept, 100, 16);
}

TEST(SiteStrategies, ThePoolKeepsItsSpansForItsOwnBlocks) {
    one_site pool(strategy::pool, 64);
    for (int round = 0; round < 100; ++round) {
        std::vector<void*> blocks;
        for (int i = 0; i < 1000; ++i) blocks.push_back(pool.allocate(64, 16));
        for (void* b : blocks) pool.deallocate(b, 64, 16);
    }
    EXPECT_EQ(pool.group.arena().spans_used(), 1u);  // 1000 x 64 bytes: one span, reused
}

TEST(SiteStrategies, TheRangeRunsOutCleanly) {
    one_site pool(strategy::pool, 4096, 2 * span_bytes);
    std::vector<void*> blocks;
    while (void* p = pool.allocate(4096, 16)) blocks.push_back(p);
    EXPECT_EQ(blocks.size(), 2 * ((span_bytes - span_header_bytes) / 4096));
    for (void* b : blocks) pool.deallocate(b, 4096, 16);
    EXPECT_NE(pool.allocate(4096, 16), nullptr);  // usable again after frees
}

// Two sites (a pool and a region) in one group, for the tests with threads.
struct two_sites {
    site_group group;
    planned_site sites[2];
    two_sites() {
        group.init(sites, 2);
        EXPECT_TRUE(group.reserve(std::size_t{256} << 20));
        sites[0].configure(&group, 0, strategy::pool, 96, 0);
        sites[1].configure(&group, 1, strategy::region, 32 * 1024, 0);
    }
    ~two_sites() { group.release(); }
    two_sites(const two_sites&) = delete;
    two_sites& operator=(const two_sites&) = delete;
    void* allocate(int i) noexcept {
        return sites[i % 2].allocate(i % 2 == 0 ? 96 : 16 + static_cast<std::size_t>(i % 700), 16);
    }
    void deallocate(void* p) noexcept { sites[site_of(p)].deallocate(p); }
};

// Blocks made on one thread and freed on another (the program's hand-offs), concurrently with
// allocations: every block keeps its contents until freed; TSan sees every access.
TEST(SiteStrategies, BlocksFreedByAnotherThreadStayCorrect) {
    two_sites g;
    constexpr int per_thread = 20000;
    std::atomic<void*> mailbox[4][64] = {};
    std::atomic<int> bad{0};
    auto worker = [&](int me) {
        for (int i = 0; i < per_thread; ++i) {
            const std::size_t size = i % 2 == 0 ? 96 : 16 + static_cast<std::size_t>(i % 700);
            auto* p = static_cast<unsigned char*>(g.allocate(i));
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
                g.deallocate(old);
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
                g.deallocate(p);
                ++live;
            }
    EXPECT_EQ(bad.load(), 0);
    const auto pool = g.sites[0].counters(), region = g.sites[1].counters();
    EXPECT_EQ(pool.served + region.served, 4u * per_thread);
    EXPECT_EQ(pool.freed + region.freed, 4u * per_thread);
    EXPECT_GT(live, 0u);
}

// One thread allocates, another frees everything (a producer and a consumer): the region's
// spans come back through the consumer's frees, the pool's blocks through its cache flushes,
// so the range does not grow with the number of blocks passed.
TEST(SiteStrategies, AConsumerThreadsFreesRecycleTheProducersMemory) {
    two_sites g;
    constexpr int blocks = 200000;
    constexpr int ring_size = 256;
    std::atomic<void*> ring[ring_size] = {};
    std::thread consumer([&] {
        for (int i = 0; i < blocks; ++i) {
            void* p = nullptr;
            while ((p = ring[i % ring_size].exchange(nullptr, std::memory_order_acq_rel)) == nullptr)
                std::this_thread::yield();
            g.deallocate(p);
        }
    });
    for (int i = 0; i < blocks; ++i) {
        void* p = g.allocate(i);
        ASSERT_NE(p, nullptr);
        std::memset(p, 1, 16);
        void* expected = nullptr;
        while (!ring[i % ring_size].compare_exchange_weak(expected, p, std::memory_order_acq_rel)) {
            expected = nullptr;
            std::this_thread::yield();
        }
    }
    consumer.join();
    // 100k region blocks of ~370 bytes on average: ~140 chunks of 32 KiB if none came back.
    EXPECT_LE(g.group.arena().spans_used(), 12u);
    const auto pool = g.sites[0].counters(), region = g.sites[1].counters();
    EXPECT_EQ(pool.freed + region.freed, static_cast<std::uint64_t>(blocks));
}

// A thread that exits gives its caches back: another thread reuses its pool blocks and its
// region chunk rather than taking new spans.
TEST(SiteStrategies, AThreadsCachesGoBackWhenItExits) {
    two_sites g;
    std::vector<void*> kept;
    for (int round = 0; round < 20; ++round) {
        std::thread t([&] {
            std::vector<void*> mine;
            for (int i = 0; i < 200; ++i) mine.push_back(g.allocate(i));
            for (void* p : mine) g.deallocate(p);
        });
        t.join();
    }
    // Each thread's region chunk and pool blocks went back at its exit: one span for the pool,
    // and the region's chunks recycled (a thread's chunk is given back when it retires empty).
    EXPECT_LE(g.group.arena().spans_used(), 3u);
    const auto pool = g.sites[0].counters(), region = g.sites[1].counters();
    EXPECT_EQ(pool.served, 20u * 100);
    EXPECT_EQ(region.freed, 20u * 100);
}

// fork while another thread allocates and frees: the child finds no lock held, its own blocks
// and the other thread's (which no longer runs there) valid, and can allocate and free.
TEST(SiteStrategies, ForkWhileAnotherThreadAllocates) {
    two_sites g;
    std::atomic<bool> stop{false};
    std::atomic<void*> shared_block{nullptr};
    std::thread busy([&] {
        for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
            void* p = g.allocate(i);
            std::memset(p, 7, 16);
            if (void* old = shared_block.exchange(p, std::memory_order_acq_rel)) g.deallocate(old);
        }
    });
    std::vector<void*> mine;
    for (int i = 0; i < 1000; ++i) mine.push_back(g.allocate(i));
    for (int k = 0; k < 5; ++k) {
        g.group.lock_for_fork();
        const pid_t pid = fork();
        if (pid == 0) {
            g.group.unlock_after_fork_in_child();
            int status = 0;
            void* theirs = shared_block.load();
            if (theirs != nullptr && static_cast<unsigned char*>(theirs)[15] != 7) status = 1;
            if (theirs != nullptr) g.deallocate(theirs);
            for (void* p : mine) g.deallocate(p);
            for (int i = 0; i < 10000; ++i) {
                void* p = g.allocate(i);
                if (p == nullptr) status = 2;
                else g.deallocate(p);
            }
            _exit(status);
        }
        g.group.unlock_after_fork_in_parent();
        ASSERT_GT(pid, 0);
        int status = -1;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0);
    }
    stop = true;
    busy.join();
    for (void* p : mine) g.deallocate(p);
    if (void* p = shared_block.load()) g.deallocate(p);
}

}  // namespace
