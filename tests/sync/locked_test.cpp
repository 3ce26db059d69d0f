#include "rtmem/sync/locked.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <span>

#include "../adapt/every_allocator.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "rtmem/diag/guarded.hpp"
#include "rtmem/diag/tracked.hpp"
#include "stress.hpp"

namespace {
using rtmem::locked;
using rtmem::spin_mutex;

static_assert(rtmem::allocator<locked<rtmem::malloc_allocator>>);
static_assert(rtmem::stats_allocator<locked<rtmem::page_allocator>>);
static_assert(!rtmem::stats_allocator<locked<rtmem::malloc_allocator>>);
static_assert(rtmem::checkable_allocator<locked<rtmem::guarded<rtmem::malloc_allocator>>>);

TEST(Locked, ForwardsCapabilities) {
    locked<rtmem::page_allocator, spin_mutex> pages;
    void* p = pages.allocate(100, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(pages.stats().live_count, 1u);
    pages.deallocate(p, 100, 64);
    EXPECT_EQ(pages.stats().live_count, 0u);
    EXPECT_EQ(pages.with_lock([](rtmem::page_allocator& a) { return a.stats().total_count; }), 1u);
}

TEST(Locked, StressMallocWithSpinMutex) {
    locked<rtmem::malloc_allocator, spin_mutex> shared;
    const auto r = rtmem::testing::run_stress(shared, {});
    EXPECT_EQ(r.corrupted, 0u);
    EXPECT_EQ(r.exhausted, 0u);
    EXPECT_EQ(r.allocated, 8u * 4000u);
    EXPECT_GT(r.freed_elsewhere, r.allocated / 4) << "most frees cross threads";
}

TEST(Locked, StressTlsfCrossThreadFrees) {
    constexpr std::size_t bytes = std::size_t{32} << 20;
    std::unique_ptr<std::byte[]> memory{new std::byte[bytes]};
    locked<rtmem::tlsf_allocator> shared{std::span<std::byte>(memory.get(), bytes)};
    const auto r = rtmem::testing::run_stress(shared, {});
    EXPECT_EQ(r.corrupted, 0u) << "no block changed while another thread held it";
    EXPECT_EQ(r.exhausted, 0u);
    EXPECT_GT(r.freed_elsewhere, r.allocated / 4);
    EXPECT_EQ(shared.stats().live_count, 0u);
    EXPECT_EQ(shared.stats().total_count, r.allocated);
    EXPECT_TRUE(shared.check()) << "free lists and block headers consistent after the run";
}

TEST(Locked, StressPoolCrossThreadFreesWithSpinMutex) {
    locked<rtmem::pool_allocator<>, spin_mutex> shared{512, 8, 256};  // grows by chunks
    rtmem::testing::stress_options o;
    o.max_size = 512;  // one block size fits every request
    const auto r = rtmem::testing::run_stress(shared, o);
    EXPECT_EQ(r.corrupted, 0u);
    EXPECT_EQ(r.exhausted, 0u);
    EXPECT_GT(r.freed_elsewhere, r.allocated / 4);
    EXPECT_EQ(shared.stats().live_count, 0u);
    EXPECT_TRUE(shared.check());
}

TEST(Locked, StressGuardedWithStdMutexFindsNoViolation) {
    rtmem::malloc_allocator up;
    locked<rtmem::guarded<rtmem::malloc_allocator>> shared{up};
    const auto r = rtmem::testing::run_stress(shared, {});
    EXPECT_EQ(r.corrupted, 0u);
    EXPECT_TRUE(shared.check()) << "every fence intact after cross-thread frees";
    EXPECT_EQ(shared.stats().live_count, 0u);
    EXPECT_EQ(shared.stats().total_count, r.allocated);
}

TEST(Locked, TrackedCountersStayExactAcrossThreads) {
    locked<rtmem::malloc_allocator, spin_mutex> up;
    rtmem::tracked<locked<rtmem::malloc_allocator, spin_mutex>> shared{up};
    const rtmem::tag tag{"stress"};
    rtmem::testing::stress_result r;
    {
        // tag_scope is per thread: the stress threads charge the root.
        rtmem::tag_scope scope{tag};
        r = rtmem::testing::run_stress(shared, {});
    }
    EXPECT_EQ(r.corrupted, 0u);
    const auto root = shared.stats(rtmem::tag{});
    EXPECT_EQ(root.allocations, r.allocated);
    EXPECT_EQ(root.deallocations, r.allocated);
    EXPECT_EQ(root.live_bytes, 0u);
    EXPECT_GT(root.peak_bytes, 0u);
    EXPECT_EQ(shared.stats().live_count, 0u);
    EXPECT_EQ(shared.stats().used, 0u);
    EXPECT_TRUE(shared.live_blocks().empty());
}
}  // namespace
