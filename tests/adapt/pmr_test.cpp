#include "rtmem/adapt/pmr.hpp"

#include <gtest/gtest.h>

#include <memory_resource>
#include <string>
#include <unordered_map>
#include <vector>

#include "conformance.hpp"
#include "every_allocator.hpp"
#include "test_allocators.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::testing::counting_allocator;

static_assert(rtmem::allocator<rtmem::resource_allocator>);

// The point of pmr: one container type whatever allocator is behind it.
float sum(const std::pmr::vector<float>& v) {
    float s = 0;
    for (float x : v) s += x;
    return s;
}

template <class Factory>
class PmrOnEveryAllocator : public ::testing::Test {
  protected:
    Factory factory;
};
TYPED_TEST_SUITE(PmrOnEveryAllocator, rtmem::testing::every_allocator);

TYPED_TEST(PmrOnEveryAllocator, VectorStringAndUnorderedMapWork) {
    using F = TypeParam;
    constexpr int n = static_cast<int>(F::elements);
    auto& a = this->factory.get();
    rtmem::resource r{a};
    if constexpr (F::lifo_only) {
        // A stack allocator serves containers whose blocks are freed in reverse order: reserve
        // once (no reallocation, which frees the old block while the new one is on top).
        std::pmr::vector<int> v{&r};
        v.reserve(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v.push_back(i * 3);
        std::pmr::string s{&r};
        s.reserve(3000);
        for (int i = 0; i < 500; ++i) s += "frame ";
        EXPECT_EQ(v[static_cast<std::size_t>(n - 1)], (n - 1) * 3);
        EXPECT_EQ(s.size(), 3000u);
        // No unordered_map: its nodes and buckets are freed in no particular order.
    } else {
        std::pmr::vector<int> v{&r};
        for (int i = 0; i < n; ++i) v.push_back(i * 3);
        for (int i = 0; i < n; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], i * 3);

        std::pmr::string s{&r};
        for (int i = 0; i < n / 20; ++i) s += "frame ";  // well past the small-string buffer
        EXPECT_EQ(s.size(), static_cast<std::size_t>(n / 20 * 6));
        EXPECT_EQ(s.substr(s.size() - 6), "frame ");

        std::pmr::unordered_map<int, std::pmr::string> m{&r};
        const int entries = n / 5;
        for (int i = 0; i < entries; ++i)
            m.emplace(i, std::pmr::string(static_cast<std::size_t>(40 + i % 7), 'a'));
        ASSERT_EQ(m.size(), static_cast<std::size_t>(entries));
        for (int i = 0; i < entries; i += 7) {
            EXPECT_EQ(m.at(i).size(), static_cast<std::size_t>(40 + i % 7));
            EXPECT_EQ(m.at(i).get_allocator().resource(), &r);  // uses-allocator construction
        }
        for (int i = 0; i < entries; i += 2) m.erase(i);
        EXPECT_EQ(m.size(), static_cast<std::size_t>(entries / 2));
        for (const auto& [k, str] : m)
            ASSERT_EQ(std::string_view(str), std::string(str.size(), 'a')) << k;
    }
    using A = std::remove_reference_t<decltype(a)>;
    if constexpr (rtmem::stats_allocator<A> && F::frees) {
        EXPECT_EQ(a.stats().live_count, 0u) << "every block went back through the resource";
    }
    if constexpr (rtmem::checkable_allocator<A>) {
        EXPECT_TRUE(a.check());
    }
}

TEST(Resource, EveryCallReachesTheAllocatorWithItsSizeAndAlignment) {
    counting_allocator a;
    rtmem::resource r{a};
    {
        std::pmr::vector<double> v{&r};
        v.resize(1000);
        EXPECT_EQ(a.live_blocks(), 1u);
        EXPECT_GE(a.live_bytes, 1000 * sizeof(double));
        EXPECT_EQ(sum(std::pmr::vector<float>({1.f, 2.f, 3.f}, &r)), 6.f);
    }
    EXPECT_EQ(a.live_blocks(), 0u);
    EXPECT_EQ(a.mismatched_frees, 0u);
    EXPECT_EQ(a.bad_frees, 0u);
    EXPECT_GE(a.allocations, 2u);
}

TEST(Resource, SwitchingTheAllocatorDoesNotChangeTheContainerType) {
    counting_allocator first, second;
    rtmem::resource r1{first}, r2{second};
    std::pmr::vector<float> a({1.f, 2.f}, &r1), b({3.f, 4.f, 5.f}, &r2);
    EXPECT_EQ(sum(a), 3.f);  // same function, same type, different allocators
    EXPECT_EQ(sum(b), 12.f);
    EXPECT_EQ(first.live_blocks(), 1u);
    EXPECT_EQ(second.live_blocks(), 1u);
}

TEST(Resource, EqualityIsIdentity) {
    counting_allocator a;
    rtmem::resource r1{a}, r2{a};
    EXPECT_TRUE(r1.is_equal(r1));
    EXPECT_FALSE(r1.is_equal(r2));
    EXPECT_FALSE(r1.is_equal(*std::pmr::new_delete_resource()));
    EXPECT_EQ(&r1.underlying(), &a);
}

TEST(Resource, ExhaustionThrowsBadAlloc) {
    counting_allocator a{4096};
    rtmem::resource r{a};
    std::pmr::vector<char> v{&r};
    v.reserve(1000);
    EXPECT_THROW(v.reserve(100000), std::bad_alloc);
    EXPECT_EQ(v.capacity(), 1000u) << "the container is left as it was";
}

TEST(ResourceAllocator, PassesConformanceOverTheDefaultResource) {
    rtmem::resource_allocator a{std::pmr::new_delete_resource()};
    rtmem::testing::conformance_options o;
    o.max_size = 2048;
    o.max_align = 256;
    o.expect_no_exhaustion = true;
    o.operations = o.operations / 4;
    const auto r = rtmem::testing::run_conformance(a, o);
    EXPECT_GT(r.allocations, o.operations / 4);
}

TEST(ResourceAllocator, PmrResourceAsUpstreamOfAnRtmemAdapter) {
    std::byte buffer[4096];
    std::pmr::monotonic_buffer_resource arena{buffer, sizeof buffer,
                                              std::pmr::null_memory_resource()};
    rtmem::resource_allocator up{&arena};
    rtmem::guarded<rtmem::resource_allocator> g{up};
    void* p = g.allocate(100, 16);
    ASSERT_NE(p, nullptr);
    EXPECT_GE(static_cast<std::byte*>(p), buffer);
    EXPECT_LT(static_cast<std::byte*>(p), buffer + sizeof buffer);
    g.deallocate(p, 100, 16);
}

TEST(ResourceAllocator, ThrowingResourceBecomesNullptrAndZeroSizeIsUnique) {
    rtmem::resource_allocator none{std::pmr::null_memory_resource()};
    EXPECT_EQ(none.allocate(16, 8), nullptr);

    rtmem::resource_allocator heap{std::pmr::new_delete_resource()};
    void* p = heap.allocate(0, 1);
    void* q = heap.allocate(0, 1);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p, q);
    heap.deallocate(p, 0, 1);
    heap.deallocate(q, 0, 1);
    heap.deallocate(nullptr, 8, 8);
    EXPECT_TRUE(heap == rtmem::resource_allocator{std::pmr::new_delete_resource()});
    EXPECT_FALSE(heap == none);
}

TEST(ResourceAllocator, BadAlignmentIsAViolation) {
    rtmem::testing::violation_recorder rec;
    rtmem::resource_allocator a;
    EXPECT_EQ(a.allocate(16, 12), nullptr);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::bad_alignment);
}
}  // namespace
