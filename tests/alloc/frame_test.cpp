#include "rtmem/alloc/frame.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "conformance.hpp"
#include "stack_ordered_support.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::frame_allocator;
using rtmem::violation_kind;
using rtmem::testing::violation_recorder;

static_assert(rtmem::marker_allocator<frame_allocator<2>>);
static_assert(rtmem::resettable_allocator<frame_allocator<3>>);
static_assert(!std::is_copy_constructible_v<frame_allocator<2>>);

TEST(FrameAllocator, ConformanceWithinAFrame) {
    rtmem::testing::conformance_options o;
    o.order = rtmem::testing::free_order::none;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        frame_allocator<2> f{std::size_t{256} * 1024};
        o.seed = seed;
        const auto r = rtmem::testing::run_conformance(f, o);
        EXPECT_GT(r.rewinds, 0u);
    }
}

TEST(FrameAllocator, ConformanceOverACallerBuffer) {
    // 16-aligned on every target (a vector's bytes are only 8-aligned on wasm32), so each frame
    // 16 KiB frame holds exactly 128 blocks of 128 bytes at alignment 16.
    struct alignas(16) chunk {
        std::byte bytes[16];
    };
    std::vector<chunk> storage(3 * 1024);
    std::span<std::byte> buffer(reinterpret_cast<std::byte*>(storage.data()),
                                storage.size() * sizeof(chunk));
    frame_allocator<3> f{buffer};
    EXPECT_EQ(f.stats().capacity, buffer.size());
    rtmem::testing::conformance_options o;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 1024;
    o.seed = 9;
    const auto r = rtmem::testing::run_conformance(f, o);
    EXPECT_GT(r.exhausted, 0u);
    EXPECT_EQ(rtmem::testing::run_exhaustion(f, 128, 16), 16u * 1024 / 128);
}

TEST(FrameAllocator, DataOfThePreviousFramesStaysValid) {
    frame_allocator<3> f{4096};
    std::vector<char*> strings;
    for (int frame = 0; frame < 10; ++frame) {
        auto* s = static_cast<char*>(f.allocate(24, 1));
        ASSERT_NE(s, nullptr);
        std::snprintf(s, 24, "frame %d", frame);
        strings.push_back(s);
        // The two frames before this one are still intact.
        for (int back = 1; back <= 2 && back <= frame; ++back) {
            char expect[24];
            std::snprintf(expect, sizeof expect, "frame %d", frame - back);
            EXPECT_STREQ(strings[static_cast<std::size_t>(frame - back)], expect);
            EXPECT_TRUE(f.previous(static_cast<std::size_t>(back))
                            .owns(strings[static_cast<std::size_t>(frame - back)]));
        }
        EXPECT_TRUE(f.current().owns(s));
        f.next_frame();
        // The buffer that became current was reset: what it held 3 frames ago is gone.
        EXPECT_EQ(f.current().used(), 0u);
    }
    EXPECT_EQ(f.frame_number(), 10u);
}

TEST(FrameAllocator, DoubleBufferedSwap) {
    frame_allocator<2> f{1024};
    void* a = f.allocate(100, 8);
    f.next_frame();
    EXPECT_TRUE(f.previous().owns(a));
    void* b = f.allocate(100, 8);
    EXPECT_TRUE(f.current().owns(b));
    f.next_frame();  // back to the first buffer, reset
    EXPECT_EQ(f.allocate(100, 8), a);
    EXPECT_EQ(f.stats().peak, 200u);
}

TEST(FrameAllocator, MarkerFromAnotherFrameIsStale) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    violation_recorder rec;
    frame_allocator<2> f{1024};
    (void)f.allocate(64, 8);
    const auto m = f.marker();
    f.next_frame();
    (void)f.allocate(128, 8);
    f.rewind(m);
    ASSERT_EQ(rec.count(violation_kind::stale_marker), 1u);
    EXPECT_EQ(f.current().used(), 128u);
}

TEST(FrameAllocator, PreviousBeyondKeptFramesIsBadArgument) {
    violation_recorder rec;
    frame_allocator<2> f{256};
    auto& oldest = f.previous(2);
    EXPECT_EQ(rec.count(violation_kind::bad_argument), 1u);
    EXPECT_EQ(&oldest, &f.previous(1));  // clamped to the oldest kept frame
}

TEST(FrameAllocator, BuffersComeFromTheUpstream) {
    rtmem::testing::counting_upstream up;
    {
        frame_allocator<3> f{512, up};
        EXPECT_EQ(up.allocations, 3u);
        frame_allocator<3> g{std::move(f)};
        EXPECT_NE(g.allocate(8, 8), nullptr);
    }
    EXPECT_EQ(up.deallocations, 3u);
    EXPECT_EQ(up.bad_frees, 0u);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(FrameAllocatorDeathTest, DefaultHandlerAbortsOnStaleMarker) {
    if (rtmem::check_level == 0) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    EXPECT_DEATH(
        {
            frame_allocator<2> f{256};
            const auto m = f.marker();
            f.next_frame();
            f.rewind(m);
        },
        "stale_marker");
}
#endif
}  // namespace
