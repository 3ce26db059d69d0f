// tracked<> and guarded<> keep the allocator contract whatever they wrap: the shared conformance
// harness over general-purpose rtmem allocators (pool: requests up to its block size).
#include <gtest/gtest.h>

#include <memory>
#include <span>

#include "conformance.hpp"
#include "rtmem/alloc/free_list.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/diag/guarded.hpp"
#include "rtmem/diag/tracked.hpp"

namespace {
constexpr std::size_t bytes = std::size_t{8} << 20;

rtmem::testing::conformance_options options(std::size_t max_size, std::uint64_t seed) {
    rtmem::testing::conformance_options o;
    o.seed = seed;
    o.max_size = max_size;
    o.max_align = 64;
    o.operations = o.operations / 4;
    o.check_every = 256;
    return o;
}

TEST(DecoratorConformance, GuardedOverTlsf) {
    std::unique_ptr<std::byte[]> memory{new std::byte[bytes]};
    rtmem::tlsf_allocator t{std::span<std::byte>(memory.get(), bytes)};
    {
        rtmem::guarded<rtmem::tlsf_allocator> g{t};
        const auto r = rtmem::testing::run_conformance(g, options(2048, 11));
        EXPECT_GT(r.allocations, 1000u);
        EXPECT_TRUE(g.check());
    }
    EXPECT_EQ(t.stats().live_count, 0u) << "quarantine flushed back to the upstream";
}

TEST(DecoratorConformance, TrackedOverPoolAndGuardedOverPool) {
    rtmem::pool_allocator<> pool{256, 64, 128};
    {
        rtmem::tracked<rtmem::pool_allocator<>> t{pool};
        // tracked adds a header: requests stay within the pool's block with it.
        rtmem::testing::run_conformance(t, options(128, 12));
        EXPECT_EQ(t.stats().live_count, 0u);
    }
    {
        rtmem::guarded<rtmem::pool_allocator<>> g{pool, rtmem::guarded_options{16, 8}};
        rtmem::testing::run_conformance(g, options(96, 13));
    }
    EXPECT_EQ(pool.stats().live_count, 0u);
}

TEST(DecoratorConformance, TrackedOverGuardedOverFreeList) {
    rtmem::free_list_allocator<rtmem::best_fit> fl{bytes};
    rtmem::guarded<rtmem::free_list_allocator<rtmem::best_fit>> g{fl};
    rtmem::tracked<decltype(g)> t{g};
    rtmem::testing::run_conformance(t, options(1024, 14));
    EXPECT_TRUE(g.check());
    EXPECT_EQ(g.stats().live_count, 0u);
}
}  // namespace
