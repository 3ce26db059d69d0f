#include "rtmem/core/alignment.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {
constexpr std::size_t max = std::numeric_limits<std::size_t>::max();

TEST(Alignment, PowerOfTwo) {
    EXPECT_FALSE(rtmem::is_pow2(0));
    EXPECT_TRUE(rtmem::is_pow2(1));
    EXPECT_TRUE(rtmem::is_pow2(4096));
    EXPECT_FALSE(rtmem::is_pow2(48));
    EXPECT_TRUE(rtmem::is_pow2(std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1)));
}

TEST(Alignment, AlignUpAndDown) {
    EXPECT_EQ(rtmem::align_up(0, 16), 0u);
    EXPECT_EQ(rtmem::align_up(1, 16), 16u);
    EXPECT_EQ(rtmem::align_up(16, 16), 16u);
    EXPECT_EQ(rtmem::align_up(17, 1), 17u);
    EXPECT_EQ(rtmem::align_down(31, 16), 16u);
    alignas(64) std::byte buf[128];
    EXPECT_EQ(rtmem::align_pointer_up(buf + 1, 64), buf + 64);
    EXPECT_EQ(rtmem::align_padding(buf + 1, 64), 63u);
    EXPECT_EQ(rtmem::align_padding(buf, 64), 0u);
    EXPECT_TRUE(rtmem::is_aligned(buf + 32, 32));
    EXPECT_FALSE(rtmem::is_aligned(buf + 8, 16));
}

TEST(Alignment, CheckedArithmeticReportsOverflow) {
    std::size_t out = 7;
    EXPECT_TRUE(rtmem::checked_add(2, 3, out));
    EXPECT_EQ(out, 5u);
    EXPECT_FALSE(rtmem::checked_add(max, 1, out));
    EXPECT_EQ(out, 5u) << "out must be untouched on overflow";
    EXPECT_TRUE(rtmem::checked_mul(1u << 20, 1u << 10, out));
    EXPECT_EQ(out, std::size_t{1} << 30);
    EXPECT_FALSE(rtmem::checked_mul(max / 2 + 1, 2, out));
    EXPECT_FALSE(rtmem::checked_align_up(max - 2, 16, out));
    EXPECT_TRUE(rtmem::checked_align_up(max - 15 - 15, 16, out));
    EXPECT_EQ(out % 16, 0u);
}
}  // namespace
