// The demo compares two memory policies on one workload; the comparison is only fair if both
// run the same simulation. These tests pin that down through the final-state checksum.
#include <gtest/gtest.h>

#include <cstdint>

#include "baseline_memory.hpp"
#include "game.hpp"
#include "rtmem_memory.hpp"

namespace {

using namespace demo;

config small(std::uint64_t seed) {
    config c;
    c.seed = seed;
    c.frames = 150;  // includes one chunk streamed in and one unloaded (stream_period 60)
    c.entities = 1200;
    c.stream_period = 60;
    c.spawn_per_emitter = 12;
    return c;
}

template <class M>
std::uint64_t checksum_of(const config& cfg) {
    M mem(cfg);
    game<M> g(mem, cfg);
    for (std::uint32_t f = 0; f < cfg.frames; ++f) g.run_frame();
    EXPECT_EQ(g.chunks_loaded(), cfg.resident_chunks + (cfg.frames - 1) / cfg.stream_period);
    EXPECT_GT(g.live_particles(), 0u);
    return g.checksum();
}

TEST(DemoEquivalence, BothPoliciesReachTheSameFinalState) {
    for (std::uint64_t seed : {1u, 2u, 77u}) {
        SCOPED_TRACE(seed);
        EXPECT_EQ(checksum_of<baseline_memory>(small(seed)),
                  checksum_of<rtmem_memory>(small(seed)));
    }
}

TEST(DemoEquivalence, RunsAreDeterministic) {
    EXPECT_EQ(checksum_of<baseline_memory>(small(5)), checksum_of<baseline_memory>(small(5)));
    EXPECT_EQ(checksum_of<rtmem_memory>(small(5)), checksum_of<rtmem_memory>(small(5)));
}

TEST(DemoEquivalence, TheChecksumSeesTheSimulation) {
    // A checksum that ignored the state would make the equivalence test above meaningless.
    EXPECT_NE(checksum_of<baseline_memory>(small(1)), checksum_of<baseline_memory>(small(2)));
    config longer = small(1);
    longer.frames += 1;
    EXPECT_NE(checksum_of<baseline_memory>(small(1)), checksum_of<baseline_memory>(longer));
}

}  // namespace
