// The footprint pass reads the footprint a bounded number of times whatever the trace's length,
// and never misses the peak of the live bytes.
#include <gtest/gtest.h>

#include "rtmem/analyze/replay.hpp"
#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;

/// Hands out one static byte; its footprint is the bytes it was asked for and not given back,
/// and it counts how often that was read.
class counting_backend final : public replay_backend {
  public:
    explicit counting_backend(std::size_t& reads) : reads_(reads) {}
    void* allocate(replay_call, std::size_t size, std::size_t, std::uint32_t& tag) noexcept override {
        tag = 0;
        live_ += size;
        return &byte_;
    }
    void deallocate(replay_call, void*, std::size_t size, std::size_t,
                    std::uint32_t) noexcept override {
        live_ -= size;
    }
    void* reallocate(replay_call, replay_call, void*, std::size_t old_size, std::size_t size,
                     std::size_t, std::uint32_t&) noexcept override {
        live_ += size - old_size;
        return &byte_;
    }
    std::size_t footprint() noexcept override {
        ++reads_;
        return live_;
    }
    std::size_t footprint_base() noexcept override { return 0; }

  private:
    std::size_t& reads_;
    std::size_t live_ = 0;
    unsigned char byte_ = 0;
};

TEST(ReplayFootprint, BoundedReadsThatCatchThePeak) {
    // Live bytes climb in small steps (far below 1/16 of the peak) to one peak, then churn.
    rtmem::testing::synthetic_trace t;
    const auto s = t.add_stack({0x10});
    std::vector<std::uint64_t> held;
    for (int i = 0; i < 3000; ++i) held.push_back(t.alloc(s, 100));
    const auto extra = t.alloc(s, 7);  // the peak: 300,007 bytes, only for this one operation
    t.free(extra);
    for (int round = 0; round < 20'000; ++round) {  // churn below the peak
        t.free(held.back());
        held.pop_back();
        held.push_back(t.alloc(s, 100));
    }
    for (auto p : held) t.free(p);
    site_map sites(t);
    const auto prog = compile_replay(t, sites);
    ASSERT_EQ(prog.peak_live_bytes, 300'007u);

    std::size_t reads = 0;
    backend_factory f;
    f.name = "counting";
    f.make = [&reads] { return std::make_unique<counting_backend>(reads); };
    const auto r = replay_through(prog, f, 2);
    EXPECT_EQ(r.peak_footprint, prog.peak_live_bytes);  // read right after the peak operation
    // One footprint pass: 16 live-high steps, 16 periodic reads, the peak, the end, the base
    // read of the constructor-free backend... at most ~40, though the trace has 46,000 ops.
    EXPECT_GT(prog.ops.size(), 40'000u);
    EXPECT_LE(reads, 40u) << reads;
    EXPECT_GE(reads, 3u);
}

}  // namespace
