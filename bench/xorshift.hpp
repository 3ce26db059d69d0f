// The seeded xorshift generator the benchmark programs share (also those built without Google
// Benchmark, such as bench/threads).
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem::bench {

/// Marsaglia's xorshift64: cheap enough not to show in the timings, and the same sequence for
/// every allocator run from the same seed.
struct xorshift {
    std::uint64_t s;
    explicit xorshift(std::uint64_t seed) noexcept : s(seed) {}
    std::uint64_t next() noexcept {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    /// Uniform enough in [0, n) for workload shapes (n > 0).
    std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }
    /// Uniform enough in [lo, hi] (lo <= hi).
    std::size_t range(std::size_t lo, std::size_t hi) noexcept { return lo + below(hi - lo + 1); }
};

}  // namespace rtmem::bench
