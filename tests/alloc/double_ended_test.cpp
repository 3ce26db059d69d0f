#include "rtmem/alloc/double_ended.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/linear.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::double_ended_allocator;
using rtmem::side;
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

static_assert(rtmem::marker_allocator<double_ended_allocator>);
static_assert(rtmem::marker_allocator<double_ended_allocator::view>);
static_assert(rtmem::resettable_allocator<double_ended_allocator::view>);

/// Both sides at random, one shared marker: the harness's model (blocks after a marker are
/// dropped by rewind) holds because a combined marker rewinds both sides.
class either_side {
  public:
    using marker_type = double_ended_allocator::marker_type;
    explicit either_side(double_ended_allocator& a) : a_(&a) {}
    void* allocate(std::size_t size, std::size_t align) noexcept {
        flip_ = flip_ * 1103515245u + 12345u;
        return a_->allocate(size, align, (flip_ >> 16) & 1 ? side::top : side::bottom);
    }
    void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        a_->deallocate(p, size, align);
    }
    marker_type marker() noexcept { return a_->marker(); }
    void rewind(marker_type m) noexcept { a_->rewind(m); }
    void reset() noexcept { a_->reset(); }
    bool owns(const void* p) const noexcept { return a_->owns(p); }
    rtmem::stats stats() const noexcept { return a_->stats(); }
    bool check() const noexcept { return a_->check(); }

  private:
    double_ended_allocator* a_;
    std::uint32_t flip_ = 1;
};

rtmem::testing::conformance_options none_options(std::uint64_t seed) {
    rtmem::testing::conformance_options o;
    o.seed = seed;
    o.order = rtmem::testing::free_order::none;
    return o;
}

TEST(DoubleEndedAllocator, ConformanceEachSideAsAView) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        double_ended_allocator a{std::size_t{256} * 1024};
        auto bottom = a.bottom();
        rtmem::testing::run_conformance(bottom, none_options(seed));
        auto top = a.top();
        rtmem::testing::run_conformance(top, none_options(seed + 10));
    }
}

TEST(DoubleEndedAllocator, ConformanceOneSideWhileTheOtherHoldsData) {
    std::vector<std::byte> buffer(64 * 1024);
    double_ended_allocator a{std::span<std::byte>(buffer)};
    auto* permanent = static_cast<std::byte*>(a.allocate(40000, 16, side::top));
    ASSERT_NE(permanent, nullptr);
    std::fill_n(permanent, 40000, std::byte{0x5A});
    auto bottom = a.bottom();
    auto o = none_options(3);
    o.max_size = 1024;
    const auto r = rtmem::testing::run_conformance(bottom, o);
    EXPECT_GT(r.exhausted, 0u);  // the bottom runs into the top's data
    for (std::size_t i = 0; i < 40000; ++i) ASSERT_EQ(permanent[i], std::byte{0x5A});
}

TEST(DoubleEndedAllocator, ConformanceBothSidesMixed) {
    for (std::uint64_t seed = 5; seed <= 7; ++seed) {
        double_ended_allocator a{std::size_t{128} * 1024};
        either_side mixed{a};
        auto o = none_options(seed);
        o.max_align = 128;
        const auto r = rtmem::testing::run_conformance(mixed, o);
        EXPECT_GT(r.rewinds, 0u);
    }
}

TEST(DoubleEndedAllocator, SidesNeverCross) {
    double_ended_allocator a{4096};
    std::size_t n = 0;
    std::byte* last_bottom = nullptr;
    std::byte* last_top = nullptr;
    for (;; ++n) {
        auto* b = static_cast<std::byte*>(a.allocate(24, 8, side::bottom));
        auto* t = static_cast<std::byte*>(a.allocate(40, 32, side::top));
        if (b != nullptr) last_bottom = b;
        if (t != nullptr) last_top = t;
        if (b == nullptr && t == nullptr) break;
        if (last_bottom != nullptr && last_top != nullptr) {
            ASSERT_LE(last_bottom + 24, last_top);
        }
    }
    EXPECT_GT(n, 40u);
    EXPECT_LT(a.free_bytes(), 64u);
    a.reset(side::bottom);
    EXPECT_NE(a.allocate(24, 8, side::bottom), nullptr);
    EXPECT_NE(a.allocate(64, 8, side::top), nullptr);  // the free space is shared
}

TEST(DoubleEndedAllocator, ExhaustionPerView) {
    double_ended_allocator a{8192};
    auto bottom = a.bottom();
    auto top = a.top();
    EXPECT_GE(rtmem::testing::run_exhaustion(bottom, 64, 64),
              8192u / 64 - 1);  // buffer may be 16-aligned
    ASSERT_NE(a.allocate(4096, 1, side::bottom), nullptr);
    EXPECT_GE(rtmem::testing::run_exhaustion(top, 64, 64), 4096u / 64 - 1);
}

TEST(DoubleEndedAllocator, TopSideAlignsDownward) {
    alignas(64) std::array<std::byte, 256> buffer{};
    double_ended_allocator a{std::span<std::byte>(buffer)};
    auto* p = static_cast<std::byte*>(a.allocate(10, 64, side::top));
    EXPECT_EQ(p, buffer.data() + 192);
    EXPECT_EQ(a.used(side::top), 64u);
    auto* q = static_cast<std::byte*>(a.allocate(3, 1, side::top));
    EXPECT_EQ(q, buffer.data() + 189);
}

TEST(DoubleEndedAllocator, ViewIsUsableWhereALinearAllocatorIs) {
    double_ended_allocator a{4096};
    auto fill = [](auto& alloc) {
        const auto m = alloc.marker();
        // Alignment 8: every malloc (8 on wasm32, 16 elsewhere) gives a buffer that needs no padding.
        for (int i = 0; i < 10; ++i) (void)alloc.allocate(16, 8);
        const std::size_t used = alloc.stats().used;
        alloc.rewind(m);
        return used;
    };
    auto top = a.top();
    auto bottom = a.bottom();
    rtmem::linear_allocator linear{4096};
    EXPECT_EQ(fill(top), 160u);
    EXPECT_EQ(fill(bottom), 160u);
    EXPECT_EQ(fill(linear), 160u);
    EXPECT_EQ(a.stats().used, 0u);
    EXPECT_EQ(a.stats().peak, 160u);
}

TEST(DoubleEndedAllocator, MarkerOfTheOtherSideIsStale) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    double_ended_allocator a{4096};
    (void)a.allocate(100, 1, side::top);
    const auto top_marker = a.marker(side::top);
    (void)a.allocate(100, 1, side::bottom);
    a.rewind(top_marker, side::bottom);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(a.used(side::bottom), 100u);
    const auto bottom_marker = a.marker(side::bottom);
    a.reset(side::bottom);
    a.bottom().rewind(bottom_marker);  // already rewound past
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
    EXPECT_EQ(a.used(side::bottom), 0u);
}

TEST(DoubleEndedAllocator, StaleMarkerBelowTheTopIsReported) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    double_ended_allocator a{4096};
    for (side s : {side::bottom, side::top}) {
        const auto m1 = a.marker(s);
        ASSERT_NE(a.allocate(64, 1, s), nullptr);
        const auto m2 = a.marker(s);
        ASSERT_NE(a.allocate(64, 1, s), nullptr);
        a.rewind(m1, s);
        ASSERT_NE(a.allocate(100, 1, s), nullptr);  // spans m2's position
        a.rewind(m2, s);
        EXPECT_EQ(a.used(s), 100u);
        a.rewind(m1, s);  // still valid
        EXPECT_EQ(a.used(s), 0u);
    }
    EXPECT_EQ(rec.count(violation_kind::stale_marker), 2u);
}

TEST(DoubleEndedAllocator, BadAlignmentAndForeignPointer) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    double_ended_allocator a{1024};
    EXPECT_EQ(a.allocate(8, 12, side::top), nullptr);
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    int local = 0;
    a.deallocate(&local, sizeof local, alignof(int));
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 1u);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(DoubleEndedAllocatorDeathTest, DefaultHandlerAbortsOnStaleMarker) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            double_ended_allocator a{1024};
            (void)a.allocate(8, 8, side::top);
            a.rewind(a.marker(side::top), side::bottom);
        },
        "stale_marker");
}
#endif
}  // namespace
