// A cheap clock for timing individual allocator calls: the TSC on x86-64 (constant_tsc on every
// CPU of the last decade), steady_clock elsewhere. calibrate() converts cycles to nanoseconds.
#pragma once
#include <chrono>
#include <cstdint>
#include <thread>
#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#endif

namespace demo {

inline std::uint64_t cycles() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Cycles per nanosecond, measured against steady_clock over ~50 ms.
inline double calibrate_cycles_per_ns() {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const std::uint64_t c0 = cycles();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t c1 = cycles();
    const auto ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    return static_cast<double>(c1 - c0) / ns;
}

/// What timing one call costs by itself (two back-to-back reads, the fastest of many): the
/// demo subtracts it from every timed allocator call.
inline std::uint64_t timer_overhead_cycles() {
    std::uint64_t best = ~std::uint64_t{0};
    for (int i = 0; i < 10000; ++i) {
        const std::uint64_t a = cycles();
        const std::uint64_t b = cycles();
        if (b - a < best) best = b - a;
    }
    return best;
}

}  // namespace demo
