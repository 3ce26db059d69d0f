#include "rtmem/diag/guarded.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "conformance.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "violation_recorder.hpp"

namespace {
using guarded_malloc = rtmem::guarded<rtmem::malloc_allocator>;
using rtmem::violation_kind;

static_assert(rtmem::allocator<guarded_malloc>);
static_assert(rtmem::checkable_allocator<guarded_malloc>);

class Guarded : public ::testing::Test {
  protected:
    rtmem::testing::violation_recorder rec;
    rtmem::malloc_allocator up;
    guarded_malloc g{up};
    std::string here() const {
        return std::string(__FILE__).substr(std::string(__FILE__).rfind('/') + 1);
    }
};

TEST(GuardedConformance, PassesWithChecksAfterEveryOperation) {
    rtmem::malloc_allocator up;
    guarded_malloc g{up};
    rtmem::testing::conformance_options o;
    o.max_size = 512;
    o.max_align = 128;
    o.expect_no_exhaustion = true;
    o.check_every = 64;  // check() walks every live block
    const auto r = rtmem::testing::run_conformance(g, o);
    EXPECT_GT(r.checks, 100u);
}

TEST_F(Guarded, FreshMemoryIsFilledAndFencedFreedMemoryIsFilled) {
    auto* p = static_cast<unsigned char*>(g.allocate(40, 16));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(rtmem::is_aligned(p, 16));
    for (int i = 0; i < 40; ++i) EXPECT_EQ(p[i], 0xCD);
    for (std::size_t i = 1; i <= g.fence_size(); ++i) EXPECT_EQ(p[-static_cast<long>(i)], 0xFD);
    for (std::size_t i = 0; i < g.fence_size(); ++i) EXPECT_EQ(p[40 + i], 0xFD);
    std::memset(p, 1, 40);
    g.deallocate(p, 40, 16);
    for (int i = 0; i < 40; ++i) EXPECT_EQ(p[i], 0xDD) << "still in quarantine, filled";
    EXPECT_TRUE(g.check());
    EXPECT_EQ(rec.count(), 0u);
}

TEST_F(Guarded, OverflowIsReportedWithAddressSizeAndCallSite) {
    const int line = __LINE__ + 1;
    auto* p = static_cast<char*>(g.allocate(24, 8));
    p[24] = 'x';  // one past the end
    const int check_line = __LINE__ + 1;
    EXPECT_FALSE(g.check());
    ASSERT_EQ(rec.count(violation_kind::fence_overwritten), 1u);
    const std::string& message = rec.last().message;
    EXPECT_NE(message.find(here() + ":" + std::to_string(check_line), message.find("reported at ")),
              std::string::npos)
        << "names the check() call, not the allocation: " << message;
    EXPECT_EQ(rec.last().pointer, p);
    EXPECT_EQ(rec.last().size, 24u);
    EXPECT_NE(rec.last().message.find("overflow"), std::string::npos) << rec.last().message;
    EXPECT_NE(rec.last().message.find(here() + ":" + std::to_string(line)), std::string::npos)
        << rec.last().message;
    rec.clear();
    g.deallocate(p, 24, 8);
    EXPECT_FALSE(g.check());
    EXPECT_EQ(rec.count(), 0u) << "one overflow is one report, not one per check or free";
    EXPECT_EQ(g.stats().live_count, 1u) << "a corrupted block is not reused";
    p[24] = static_cast<char>(0xFD);  // repair so the test can free it
    g.deallocate(p, 24, 8);
    EXPECT_EQ(g.stats().live_count, 0u);
}

TEST_F(Guarded, UnderflowIsReported) {
    auto* p = static_cast<char*>(g.allocate(16, 16));
    p[-3] = 0;
    g.deallocate(p, 16, 16);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, violation_kind::fence_overwritten);
    EXPECT_NE(rec.last().message.find("underflow"), std::string::npos) << rec.last().message;
    p[-3] = static_cast<char>(0xFD);
    g.deallocate(p, 16, 16);
}

TEST_F(Guarded, DoubleFreeNamesBothCallSites) {
    void* p = g.allocate(32, 8);
    const int first = __LINE__ + 1;
    g.deallocate(p, 32, 8);
    const int second = __LINE__ + 1;
    g.deallocate(p, 32, 8);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, violation_kind::double_free);
    EXPECT_EQ(rec.last().pointer, p);
    EXPECT_NE(rec.last().message.find("first freed at"), std::string::npos) << rec.last().message;
    EXPECT_NE(rec.last().message.find(":" + std::to_string(first)), std::string::npos);
    EXPECT_NE(rec.last().message.find(":" + std::to_string(second)), std::string::npos);
    EXPECT_EQ(g.stats().live_count, 0u);
}

TEST_F(Guarded, ForeignPointerIsReported) {
    alignas(64) std::array<unsigned char, 512> buffer{};
    g.deallocate(buffer.data() + 256, 16, 8);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, violation_kind::foreign_pointer);
    EXPECT_EQ(rec.last().pointer, buffer.data() + 256);
    // A pointer into the middle of a live block is not a block either.
    auto* p = static_cast<unsigned char*>(g.allocate(256, 8));
    g.deallocate(p + 128, 16, 8);
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 2u);
    g.deallocate(p, 256, 8);
    EXPECT_EQ(rec.count(), 2u);
}

TEST_F(Guarded, SizeOrAlignmentMismatchIsReportedAndNothingIsFreed) {
    void* p = g.allocate(100, 32);
    g.deallocate(p, 99, 32);
    EXPECT_EQ(rec.last().kind, violation_kind::size_mismatch);
    EXPECT_NE(rec.last().message.find("size 99"), std::string::npos) << rec.last().message;
    g.deallocate(p, 100, 16);
    EXPECT_EQ(rec.count(violation_kind::size_mismatch), 2u);
    EXPECT_EQ(g.stats().live_count, 1u);
    g.deallocate(p, 100, 32);
    EXPECT_EQ(g.stats().live_count, 0u);
}

TEST_F(Guarded, WriteAfterFreeIsFoundWhenTheBlockLeavesQuarantine) {
    rtmem::malloc_allocator up2;
    guarded_malloc small{up2, rtmem::guarded_options{16, 1}};
    auto* p = static_cast<char*>(small.allocate(8, 8));
    small.deallocate(p, 8, 8);
    p[3] = 'u';  // use after free
    EXPECT_FALSE(small.check());
    EXPECT_EQ(rec.last().kind, violation_kind::corrupted);
    EXPECT_NE(rec.last().message.find("write after free at offset 3"), std::string::npos);
    rec.clear();
    small.deallocate(small.allocate(8, 8), 8, 8);  // pushes p out of the quarantine
    EXPECT_EQ(rec.count(), 0u) << "already reported by check()";
}

TEST_F(Guarded, AnOverflowFoundOnFreeIsReportedOnceThere) {
    {
        guarded_malloc local{up};
        auto* p = static_cast<char*>(local.allocate(16, 8));
        p[16] = 'x';
        const int line = __LINE__ + 1;
        local.deallocate(p, 16, 8);
        ASSERT_EQ(rec.count(violation_kind::fence_overwritten), 1u);
        const std::string& message = rec.last().message;
        EXPECT_NE(message.find(here() + ":" + std::to_string(line), message.find("reported at ")),
                  std::string::npos)
            << message;
        EXPECT_FALSE(local.check());
        p[16] = static_cast<char>(0xFD);  // repaired: the destructor may free it
        local.deallocate(p, 16, 8);
    }
    EXPECT_EQ(rec.count(), 1u) << "not again by check(), the destructor or the eviction";
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(GuardedDeath, DefaultHandlerAbortsWithTheKind) {
    EXPECT_DEATH(
        {
            rtmem::malloc_allocator up;
            guarded_malloc g{up};
            auto* p = static_cast<char*>(g.allocate(8, 8));
            p[8] = 0;
            g.deallocate(p, 8, 8);
        },
        "fence_overwritten.*overflow");
}
#endif
}  // namespace
