#include "rtmem/adapt/temporary.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory_resource>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "violation_recorder.hpp"

namespace {
using rtmem::temp_scope;
using rtmem::temporary_allocator;

// A function called every frame that needs scratch containers.
int sum_of_visible(int n, bool* from_arena = nullptr) {
    temp_scope scope;
    std::pmr::vector<int> visible{scope.resource()};
    for (int i = 0; i < n; ++i)
        if (i % 3 != 0) visible.push_back(i);
    std::pmr::string label{"visible objects", scope.resource()};
    if (from_arena != nullptr) *from_arena = temporary_allocator().owns(visible.data());
    return std::accumulate(visible.begin(), visible.end(), 0) + static_cast<int>(label.size());
}

TEST(Temporary, ScopeFreesEverythingItAllocated) {
    const auto before = temporary_allocator().stats();
    bool from_arena = false;
    EXPECT_EQ(sum_of_visible(1000, &from_arena), 332667 + 15);
    EXPECT_TRUE(from_arena);  // the containers did use the arena
    const auto after = temporary_allocator().stats();
    EXPECT_EQ(after.used, before.used);
    EXPECT_GE(after.peak, 1000u / 3 * 2 * sizeof(int));
}

// The temporary arena counts bytes, not blocks: whichever path allocated (the pmr resource, the
// scope's allocate, the arena itself), stats() has used and peak but no block counts.
TEST(Temporary, ArenaCountsBytesNotBlocks) {
    temp_scope scope;
    const auto before = temporary_allocator().stats();
    ASSERT_NE(scope.resource()->allocate(100, 8), nullptr);
    ASSERT_NE(scope.allocate(100, 8), nullptr);
    ASSERT_NE(scope.allocator().allocate(100, 8), nullptr);
    const auto after = temporary_allocator().stats();
    EXPECT_GE(after.used - before.used, 300u);
    EXPECT_EQ(after.live_count, 0u);
    EXPECT_EQ(after.total_count, 0u);
    rtmem::arena other;  // any other arena counts both
    ASSERT_NE(other.allocate(100, 8), nullptr);
    EXPECT_EQ(other.stats().live_count, 1u);
    EXPECT_EQ(other.stats().total_count, 1u);
}

TEST(Temporary, WarmThreadMakesNoUpstreamCall) {
    (void)sum_of_visible(20000);  // warm up: chunks are kept in the cache
    const std::size_t reserved = temporary_allocator().reserved_bytes();
    const std::size_t chunks = temporary_allocator().chunk_count();
    for (int frame = 0; frame < 50; ++frame) (void)sum_of_visible(20000);
    EXPECT_EQ(temporary_allocator().reserved_bytes(), reserved);
    EXPECT_EQ(temporary_allocator().chunk_count(), chunks);
}

TEST(Temporary, ScopesNest) {
    temp_scope outer;
    void* a = outer.allocate(100);
    ASSERT_NE(a, nullptr);
    const std::size_t used_outer = temporary_allocator().stats().used;
    {
        temp_scope inner;
        ASSERT_NE(inner.allocate(5000), nullptr);
        EXPECT_GT(temporary_allocator().stats().used, used_outer);
    }
    EXPECT_EQ(temporary_allocator().stats().used, used_outer);
    EXPECT_TRUE(temporary_allocator().owns(a));
}

TEST(Temporary, EachThreadHasItsOwnArena) {
    rtmem::arena* mine = &temporary_allocator();
    rtmem::arena* theirs = nullptr;
    std::thread t([&] {
        theirs = &temporary_allocator();
        EXPECT_EQ(sum_of_visible(100), 3267 + 15);
    });
    t.join();
    EXPECT_NE(mine, theirs);
}

#ifdef RTMEM_THREAD_EXIT_CALLBACK
// Windows: per-thread cleanup runs from the fiber-local-storage callback when a thread exits,
// newest registration first, and not for threads still running.
TEST(Temporary, ThreadExitCallbacksRunWhenTheThreadExits) {
    std::vector<int> order;
    std::thread t([&] {
        const auto push = [](void* p) {
            auto* o = static_cast<std::vector<int>*>(p);
            o->push_back(static_cast<int>(o->size()) + 1);
        };
        ASSERT_TRUE(rtmem::detail::at_thread_exit(push, &order));
        ASSERT_TRUE(rtmem::detail::at_thread_exit(push, &order));
        (void)temporary_allocator().allocate(100);  // its arena is destroyed the same way
        EXPECT_TRUE(order.empty());
    });
    t.join();
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
}
#endif

TEST(Temporary, PmrResourceThrowsBadAllocNeverReturnsNull) {
    temp_scope scope;
    std::pmr::memory_resource* r = scope.resource();
    EXPECT_TRUE(r->is_equal(*rtmem::temporary_resource()));
    void* p = r->allocate(64, 64);
    EXPECT_TRUE(rtmem::is_aligned(p, 64));
    r->deallocate(p, 64, 64);  // a no-op; the scope frees
}

// The resource bumps the current chunk inline (checks off) and goes out of line for the rest:
// every block is aligned and disjoint from the others, across many chunk changes.
TEST(Temporary, PmrResourceBlocksAreAlignedAndDisjointAcrossChunks) {
    temp_scope scope;
    std::pmr::memory_resource* r = scope.resource();
    const auto before = temporary_allocator().stats();
    std::size_t requested = 0;
    std::vector<std::pair<unsigned char*, std::size_t>> blocks;
    const std::size_t sizes[] = {1, 24, 48, 100, 4096, 70000};
    for (int i = 0; i < 600; ++i) {
        const std::size_t size = sizes[i % 6];
        const std::size_t align = std::size_t{1} << (i % 8);  // 1 .. 128
        auto* p = static_cast<unsigned char*>(r->allocate(size, align));
        ASSERT_TRUE(rtmem::is_aligned(p, align));
        std::memset(p, i & 0xFF, size);
        blocks.emplace_back(p, size);
        requested += size;
    }
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto [p, size] = blocks[i];
        EXPECT_EQ(p[0], i & 0xFF);
        EXPECT_EQ(p[size - 1], i & 0xFF);  // no later block overlapped this one
    }
    EXPECT_GE(temporary_allocator().stats().used - before.used, requested);
}

TEST(Temporary, PmrResourceZeroSizeBlocksAreDistinct) {
    temp_scope scope;
    std::pmr::memory_resource* r = scope.resource();
    void* a = r->allocate(0, 1);
    void* b = r->allocate(0, 1);
    EXPECT_NE(a, nullptr);
    EXPECT_NE(a, b);
}

TEST(Temporary, EndingAnOuterScopeFirstIsLifoViolation) {
    rtmem::testing::violation_recorder rec;
    const std::size_t base = temporary_allocator().stats().used;
    std::optional<temp_scope> outer{std::in_place};
    (void)outer->allocate(64);
    std::optional<temp_scope> inner{std::in_place};
    void* kept = inner->allocate(64);
    outer.reset();  // out of order: inner is still alive
    ASSERT_EQ(rec.count(rtmem::violation_kind::lifo_order), 1u);
    EXPECT_TRUE(temporary_allocator().owns(kept));  // inner's blocks were not rewound
    inner.reset();
    EXPECT_EQ(rec.count(), 1u);
    EXPECT_GE(temporary_allocator().stats().used, base);
    {
        temp_scope again;  // the chain is consistent afterwards
        (void)again.allocate(8);
    }
    EXPECT_EQ(rec.count(), 1u);
}
}  // namespace

namespace {
#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(TemporaryDeathTest, DefaultHandlerAbortsOnOutOfOrderScope) {
    EXPECT_DEATH(
        {
            std::optional<rtmem::temp_scope> outer{std::in_place};
            rtmem::temp_scope inner;
            outer.reset();
        },
        "lifo_order");
}
#endif
}  // namespace
