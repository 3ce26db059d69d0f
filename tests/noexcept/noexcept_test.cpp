// Built with -fno-exceptions: exhaustion reaches the out-of-memory handler.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory_resource>
#include <vector>

#include "../adapt/test_allocators.hpp"
#include "rtmem/adapt/pmr.hpp"
#include "rtmem/adapt/std_allocator.hpp"
#include "rtmem/adapt/typed.hpp"

#if RTMEM_HAS_EXCEPTIONS
#error "this test must be compiled with -fno-exceptions"
#endif

namespace {
using rtmem::testing::counting_allocator;

struct seen_request {
    int calls = 0;
    std::size_t size = 0, align = 0;
};
seen_request seen;

void recording_handler(std::size_t size, std::size_t align) {
    ++seen.calls;
    seen.size = size;
    seen.align = align;
    std::fprintf(stderr, "out-of-memory handler: %zu bytes\n", size);
}

class NoExceptions : public ::testing::Test {
  protected:
    void SetUp() override {
        seen = {};
        previous = rtmem::set_out_of_memory_handler(&recording_handler);
    }
    void TearDown() override { rtmem::set_out_of_memory_handler(previous); }
    rtmem::out_of_memory_handler previous = nullptr;
};

struct alignas(32) widget {
    int value;
    explicit widget(int v) : value(v) {}
};

TEST_F(NoExceptions, MakeCallsTheHandlerWithTheRequestAndReturnsNull) {
    counting_allocator a{16};
    EXPECT_EQ(rtmem::make<widget>(a, 1), nullptr);
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.size, sizeof(widget));
    EXPECT_EQ(seen.align, 32u);
}

TEST_F(NoExceptions, MakeArrayAndMakeUniqueGiveEmptyResults) {
    counting_allocator a{16};
    auto arr = rtmem::make_array<int>(a, 1000);
    EXPECT_EQ(arr.data(), nullptr);
    EXPECT_TRUE(arr.empty());
    auto p = rtmem::make_unique<widget>(a, 3);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(seen.calls, 2);
    auto overflow = rtmem::make_array<std::uint64_t>(a, static_cast<std::size_t>(-1) / 2);
    EXPECT_TRUE(overflow.empty());
    EXPECT_EQ(seen.calls, 3);
    EXPECT_EQ(a.allocations, 0u);
}

TEST_F(NoExceptions, SuccessIsUnchanged) {
    counting_allocator a;
    auto p = rtmem::make_unique<widget>(a, 9);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->value, 9);
    auto arr = rtmem::make_array<widget>(a, 4, 2);
    EXPECT_EQ(arr[3].value, 2);
    rtmem::destroy_array(a, arr);
    EXPECT_EQ(seen.calls, 0);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST_F(NoExceptions, ContainersCannotContinueSoTheyAbortAfterTheHandler) {
    counting_allocator a{64};
    std::vector<int, rtmem::std_allocator<int, counting_allocator>> v{
        rtmem::std_allocator<int, counting_allocator>(a)};
    EXPECT_DEATH(v.resize(1000), "out-of-memory handler: 4000 bytes");
    rtmem::resource r{a};
    std::pmr::vector<int> pv{&r};
    EXPECT_DEATH(pv.resize(1000), "out-of-memory handler: 4000 bytes");
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(NoExceptionsDefault, DefaultHandlerReportsOutOfMemoryAndAborts) {
    counting_allocator a{8};
    EXPECT_DEATH((void)rtmem::make<widget>(a, 1), "out_of_memory.*32 bytes");
}
#endif
}  // namespace
