// locked<tlsf_allocator, spin_mutex> through the threaded conformance harness: several threads,
// cross-thread frees, one shared shadow model (label `threads`: run under TSan in CI).
#include <gtest/gtest.h>

#include <memory>

#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/sync/locked.hpp"
#include "rtmem/sync/spin_mutex.hpp"
#include "threaded_conformance.hpp"

namespace {

TEST(LockedThreadedConformance, TlsfWithSpinMutex) {
    auto buffer = std::make_unique<std::byte[]>(std::size_t{32} << 20);
    rtmem::locked<rtmem::tlsf_allocator, rtmem::spin_mutex> heap{
        std::span<std::byte>(buffer.get(), std::size_t{32} << 20), 8u};
    rtmem::testing::threaded_conformance_options o;
    o.threads = 3;
    o.operations = 4000;
    o.large_size = 20000;
    const auto r = rtmem::testing::run_threaded_conformance(heap, o);
    EXPECT_GT(r.cross_frees, 400u);
    EXPECT_EQ(heap.stats().live_count, 0u);
    EXPECT_EQ(heap.stats().total_count, r.allocations);
    EXPECT_TRUE(heap.check());
}

}  // namespace
