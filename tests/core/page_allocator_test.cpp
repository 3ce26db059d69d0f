#include "rtmem/core/page_allocator.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "conformance.hpp"
#include "rtmem/core/virtual_memory.hpp"
#include "violation_recorder.hpp"

namespace {
namespace vm = rtmem::virtual_memory;
static_assert(rtmem::allocator<rtmem::page_allocator>);
static_assert(rtmem::stats_allocator<rtmem::page_allocator>);

rtmem::testing::conformance_options page_options() {
    rtmem::testing::conformance_options o;
    o.scale = 0.05;  // one mmap per block: keep the run short
    o.max_size = 3 * 4096;
    o.max_align = 1 << 16;
    o.max_live = 64;
    o.expect_no_exhaustion = true;
    o.exact_empty_used = true;
    return o;
}

TEST(PageAllocator, Conformance) {
    rtmem::page_allocator a;
    rtmem::testing::run_conformance(a, page_options());
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.stats().live_count, 0u);
}

TEST(PageAllocator, ConformanceWithAllOptions) {
    rtmem::page_allocator a{{.prefault = true, .lock = false, .huge_pages = true,
                             .guard_before = RTMEM_HAS_GUARD_PAGES != 0,
                             .guard_after = RTMEM_HAS_GUARD_PAGES != 0}};
    auto o = page_options();
    o.seed = 7;
    rtmem::testing::run_conformance(a, o);
}

TEST(PageAllocator, BlocksArePageRoundedAndAccounted) {
    rtmem::page_allocator a;
    const std::size_t page = vm::page_size();
    void* p = a.allocate(page + 1, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(rtmem::is_aligned(p, page));
    EXPECT_EQ(a.stats().used, 2 * page);
    std::memset(p, 0xAB, 2 * page);  // the whole rounded size is usable
    a.deallocate(p, page + 1, 8);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.stats().peak, 2 * page);
}

TEST(PageAllocator, LargeAlignment) {
    rtmem::page_allocator a;
    void* p = a.allocate(100, std::size_t{1} << 21);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(rtmem::is_aligned(p, std::size_t{1} << 21));
    a.deallocate(p, 100, std::size_t{1} << 21);
}

TEST(PageAllocator, LockedAndPrefaulted) {
    rtmem::page_allocator a{{.prefault = true, .lock = true}};
    void* p = a.allocate(8192, 16);
    // mlock can be refused by RLIMIT_MEMLOCK; then allocation fails cleanly, never half-done.
    if (p == nullptr) {
        EXPECT_EQ(a.stats().live_count, 0u);
        GTEST_SKIP() << "mlock refused by this machine's limits";
    }
    std::memset(p, 1, 8192);
    a.deallocate(p, 8192, 16);
}

#if !RTMEM_HAS_GUARD_PAGES
// WebAssembly: no page protection, so a guard page would be a lie; the request is refused.
TEST(PageAllocator, GuardPagesAreRefusedWithoutPageProtection) {
    rtmem::testing::violation_recorder rec;
    rtmem::page_allocator a{{.guard_after = true}};
    EXPECT_EQ(a.allocate(64, 16), nullptr);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::bad_argument);
    EXPECT_FALSE(vm::protect_none(nullptr, 0));
}
#else
using PageAllocatorDeathTest = ::testing::Test;

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(PageAllocatorDeathTest, WriteIntoGuardAfterFaults) {
    rtmem::page_allocator a{{.guard_after = true}};
    const std::size_t page = vm::page_size();
    auto* p = static_cast<volatile char*>(a.allocate(page, 16));
    ASSERT_NE(p, nullptr);
    p[page - 1] = 1;  // last byte of the block: fine
    EXPECT_DEATH(p[page] = 1, "");
    a.deallocate(const_cast<char*>(p), page, 16);
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(PageAllocatorDeathTest, WriteIntoGuardBeforeFaults) {
    rtmem::page_allocator a{{.guard_before = true}};
    auto* p = static_cast<volatile char*>(a.allocate(64, 16));
    ASSERT_NE(p, nullptr);
    p[0] = 1;
    EXPECT_DEATH(p[-1] = 1, "");
    a.deallocate(const_cast<char*>(p), 64, 16);
}
#endif
#endif

TEST(VirtualMemory, ReserveCommitDecommitRelease) {
    const std::size_t page = vm::page_size();
    EXPECT_EQ(vm::round_to_pages(1), page);
    EXPECT_EQ(vm::round_to_pages(page), page);
    auto* p = static_cast<unsigned char*>(vm::reserve(4 * page));
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(vm::commit(p, 2 * page));
    p[0] = 42;
    p[2 * page - 1] = 43;
#if RTMEM_HAS_GUARD_PAGES
    EXPECT_TRUE(vm::decommit(p, 2 * page));
    ASSERT_TRUE(vm::commit(p, page));
    EXPECT_EQ(p[0], 0) << "decommitted pages come back zeroed";
#else
    EXPECT_FALSE(vm::decommit(p, 2 * page)) << "wasm linear memory cannot give pages back";
    EXPECT_EQ(p[0], 42);
#endif
    vm::release(p, 4 * page);
    EXPECT_EQ(vm::reserve(0), nullptr);
}

#if RTMEM_HAS_GUARD_PAGES
#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(VirtualMemoryDeathTest, ReservedButUncommittedFaults) {
    auto* p = static_cast<volatile char*>(vm::reserve(vm::page_size()));
    ASSERT_NE(p, nullptr);
    EXPECT_DEATH(p[0] = 1, "");
    vm::release(const_cast<char*>(p), vm::page_size());
}
#endif
#endif
}  // namespace
