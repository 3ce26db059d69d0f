#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "rtmem/sync/cache_aligned.hpp"
#include "rtmem/sync/per_thread.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace {

TEST(SpinMutex, ExcludesAndCountsExactly) {
    rtmem::spin_mutex m;
    std::uint64_t counter = 0;  // plain: only the mutex protects it (TSan checks)
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 20000; ++i) {
                std::lock_guard guard(m);
                ++counter;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(counter, 8u * 20000u);
}

TEST(SpinMutex, TryLockFailsWhileHeld) {
    rtmem::spin_mutex m;
    ASSERT_TRUE(m.try_lock());
    bool other = true;
    std::thread([&] { other = m.try_lock(); }).join();
    EXPECT_FALSE(other);
    m.unlock();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(CacheAligned, ElementsOfAnArrayNeverShareALinePair) {
    static_assert(alignof(rtmem::cache_aligned<int>) == rtmem::destructive_interference_size);
    rtmem::cache_aligned<int> a[4];
    for (int i = 1; i < 4; ++i) {
        const auto gap =
            reinterpret_cast<std::uintptr_t>(&*a[i]) - reinterpret_cast<std::uintptr_t>(&*a[i - 1]);
        EXPECT_GE(gap, rtmem::destructive_interference_size);
    }
#if defined(__x86_64__)
    EXPECT_EQ(rtmem::destructive_interference_size, 128u) << "adjacent-line prefetch pairs lines";
#endif
    rtmem::cache_aligned<std::vector<int>> v{std::in_place, 3u, 7};
    EXPECT_EQ(v->size(), 3u);
    EXPECT_EQ((*v)[2], 7);
}

TEST(PerThread, ThreadsUseDistinctSlotsAndTheSumIsExact) {
    rtmem::per_thread<std::atomic<std::uint64_t>, 16> counts;
    std::vector<std::thread> threads;
    std::vector<const void*> slots(8);
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            slots[static_cast<std::size_t>(t)] = &counts.local();
            for (int i = 0; i < 10000; ++i) counts.local().fetch_add(1, std::memory_order_relaxed);
        });
    for (auto& t : threads) t.join();
    std::uint64_t total = 0;
    counts.for_each([&](const std::atomic<std::uint64_t>& c) { total += c.load(); });
    EXPECT_EQ(total, 80000u);
    // Thread indices are dense, so 8 threads in 16 slots land in 8 different slots.
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(std::unique(slots.begin(), slots.end()), slots.end());
}

TEST(PerThread, ThreadIndexIsStablePerThreadAndDistinctAcrossThreads) {
    const std::size_t mine = rtmem::thread_index();
    EXPECT_EQ(rtmem::thread_index(), mine);
    std::size_t other = mine;
    std::thread([&] { other = rtmem::thread_index(); }).join();
    EXPECT_NE(other, mine);
}
}  // namespace
