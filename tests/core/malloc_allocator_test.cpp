#include "rtmem/core/malloc_allocator.hpp"

#include <gtest/gtest.h>

#include "conformance.hpp"
#include "violation_recorder.hpp"

namespace {
static_assert(rtmem::allocator<rtmem::malloc_allocator>);

TEST(MallocAllocator, Conformance) {
    rtmem::malloc_allocator a;
    rtmem::testing::conformance_options o;
    o.max_size = 4096;
    o.large_size = 1 << 20;
    o.max_align = 4096;
    o.expect_no_exhaustion = true;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        o.seed = seed;
        const auto r = rtmem::testing::run_conformance(a, o);
        EXPECT_GT(r.allocations, o.operations / 4);
        EXPECT_EQ(r.exhausted, 0u);
    }
}

TEST(MallocAllocator, ZeroSizeGivesUniquePointers) {
    rtmem::malloc_allocator a;
    void* p = a.allocate(0, 1);
    void* q = a.allocate(0, 1);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p, q);
    a.deallocate(p, 0, 1);
    a.deallocate(q, 0, 1);
    a.deallocate(nullptr, 0, 1);  // no-op
}

TEST(MallocAllocator, BadAlignmentIsAViolation) {
    rtmem::testing::violation_recorder rec;
    rtmem::malloc_allocator a;
    EXPECT_EQ(a.allocate(16, 24), nullptr);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::bad_alignment);
}
}  // namespace
