#include "rtmem/adapt/std_allocator.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_allocators.hpp"

namespace {
using rtmem::testing::counting_allocator;
template <class T>
using alloc = rtmem::std_allocator<T, counting_allocator>;

static_assert(!alloc<int>::propagate_on_container_copy_assignment::value);
static_assert(!alloc<int>::propagate_on_container_move_assignment::value);
static_assert(alloc<int>::propagate_on_container_swap::value);
static_assert(!alloc<int>::is_always_equal::value);
static_assert(sizeof(alloc<int>) == sizeof(void*));

TEST(StdAllocator, EveryStandardContainerAllocatesAndFreesThroughIt) {
    counting_allocator a;
    {
        std::vector<int, alloc<int>> v{alloc<int>(a)};
        for (int i = 0; i < 1000; ++i) v.push_back(i);
        std::map<int, int, std::less<>, alloc<std::pair<const int, int>>> m{alloc<int>(a)};
        std::list<int, alloc<int>> l{alloc<int>(a)};
        std::unordered_map<int, int, std::hash<int>, std::equal_to<>,
                           alloc<std::pair<const int, int>>>
            u{alloc<int>(a)};
        std::deque<int, alloc<int>> d{alloc<int>(a)};
        for (int i = 0; i < 500; ++i) {
            m[i] = i * 2;
            l.push_front(i);
            u[i] = i * 3;
            d.push_front(i);
            d.push_back(-i);
        }
        EXPECT_EQ(v[999], 999);
        EXPECT_EQ(m.at(250), 500);
        EXPECT_EQ(l.front(), 499);
        EXPECT_EQ(u.at(100), 300);
        EXPECT_EQ(d.front(), 499);
        EXPECT_EQ(d.back(), -499);
        EXPECT_GE(a.live_blocks(), 1u + 500 + 500 + 500 + 2)
            << "vector, one node per map/list/unordered_map element, deque blocks";
    }
    EXPECT_EQ(a.live_blocks(), 0u);
    EXPECT_EQ(a.mismatched_frees, 0u) << "sizes and alignments come back as allocated";
    EXPECT_EQ(a.bad_frees, 0u);
}

TEST(StdAllocator, EqualityIsIdentityOfTheAllocatorAcrossRebinds) {
    counting_allocator a, b;
    alloc<int> x{a}, y{a}, z{b};
    alloc<double> rebound{x};
    EXPECT_TRUE(x == y);
    EXPECT_FALSE(x == z);
    EXPECT_TRUE(rebound == x);
    EXPECT_TRUE(x == rebound);
    EXPECT_EQ(&rebound.underlying(), &a);
}

TEST(StdAllocator, MoveAssignmentKeepsTheDestinationAllocator) {
    counting_allocator frame, level;
    std::vector<int, alloc<int>> temporary({1, 2, 3}, alloc<int>(frame));
    std::vector<int, alloc<int>> kept{alloc<int>(level)};
    kept = std::move(temporary);
    EXPECT_EQ(&kept.get_allocator().underlying(), &level);
    EXPECT_EQ(kept, (std::vector<int, alloc<int>>({1, 2, 3}, alloc<int>(level))));
    temporary.clear();
    temporary.shrink_to_fit();
    EXPECT_EQ(frame.live_blocks(), 0u) << "nothing of `kept` lives in the frame allocator";
}

TEST(StdAllocator, CopyAssignmentKeepsTheDestinationAllocator) {
    counting_allocator frame, level;
    std::list<int, alloc<int>> temporary({1, 2, 3}, alloc<int>(frame));
    std::list<int, alloc<int>> kept{alloc<int>(level)};
    kept = temporary;
    EXPECT_EQ(&kept.get_allocator().underlying(), &level);
    EXPECT_EQ(level.live_blocks(), 3u);
}

TEST(StdAllocator, SwapExchangesAllocatorsWithContents) {
    counting_allocator a, b;
    std::vector<int, alloc<int>> x({1, 2}, alloc<int>(a)), y({3}, alloc<int>(b));
    x.swap(y);
    EXPECT_EQ(&x.get_allocator().underlying(), &b);
    EXPECT_EQ(&y.get_allocator().underlying(), &a);
    EXPECT_EQ(x.size(), 1u);
    EXPECT_EQ(y.size(), 2u);
}

TEST(StdAllocator, ExhaustionAndOverflowThrowBadAlloc) {
    counting_allocator a{1024};
    std::vector<int, alloc<int>> v{alloc<int>(a)};
    v.reserve(100);
    EXPECT_THROW(v.reserve(10000), std::bad_alloc);
    EXPECT_EQ(v.capacity(), 100u);
    alloc<std::uint64_t> x{a};
    EXPECT_THROW((void)x.allocate(static_cast<std::size_t>(-1) / 4), std::bad_alloc);
}

TEST(StdAllocator, OveralignedElementsAreAligned) {
    struct alignas(64) line {
        char bytes[64];
    };
    counting_allocator a;
    std::vector<line, alloc<line>> v{alloc<line>(a)};
    v.resize(10);
    EXPECT_TRUE(rtmem::is_aligned(v.data(), 64));
}
}  // namespace
