#include "rtmem/core/violation.hpp"

#include <gtest/gtest.h>

#include "violation_recorder.hpp"

namespace {
using rtmem::violation_kind;

TEST(Violation, RecorderSeesKindAllocatorAndMessage) {
    rtmem::testing::violation_recorder rec;
    int x = 0;
    rtmem::report_violation(violation_kind::lifo_order, "stack_allocator", &x, 48,
                            "freed %zu bytes out of order", std::size_t{48});
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, violation_kind::lifo_order);
    EXPECT_EQ(rec.last().allocator, "stack_allocator");
    EXPECT_EQ(rec.last().message, "freed 48 bytes out of order");
    EXPECT_EQ(rec.last().pointer, &x);
    EXPECT_EQ(rec.last().size, 48u);
}

TEST(Violation, RecorderRestoresPreviousHandler) {
    const auto before = rtmem::get_violation_handler();
    {
        rtmem::testing::violation_recorder rec;
        EXPECT_NE(rtmem::get_violation_handler(), before);
    }
    EXPECT_EQ(rtmem::get_violation_handler(), before);
}

TEST(Violation, KindsHaveStableNames) {
    EXPECT_EQ(rtmem::to_string(violation_kind::double_free), "double_free");
    EXPECT_EQ(rtmem::to_string(violation_kind::stale_marker), "stale_marker");
    EXPECT_EQ(rtmem::to_string(violation_kind::fence_overwritten), "fence_overwritten");
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(ViolationDeathTest, DefaultHandlerPrintsAndAborts) {
    EXPECT_DEATH(rtmem::report_violation(violation_kind::double_free, "pool_allocator", nullptr,
                                         0, "block %d freed twice", 7),
                 "pool_allocator: double_free violation: block 7 freed twice");
}
#endif

TEST(Violation, LongMessagesAreTruncatedNotOverflowed) {
    rtmem::testing::violation_recorder rec;
    std::string big(2000, 'x');
    rtmem::report_violation(violation_kind::bad_argument, "t", nullptr, 0, "%s", big.c_str());
    EXPECT_EQ(rec.last().message.size(), 511u);
}
}  // namespace
