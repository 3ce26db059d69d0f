// False sharing (Kaltenbrunn, Figs 7.1/7.2): every thread increments its own counter. With the
// counters adjacent in one array, the cores fight over the same cache line and adding threads
// makes the total *slower*; with each counter on its own line pair (rtmem::cache_aligned) the
// total scales with the cores. A 64-byte padded variant shows why rtmem pads to 128 bytes on
// x86-64 (the adjacent-line prefetcher couples pairs of lines).
//
// Read items_per_second across thread counts: the speedup at N threads is items/s(N) / items/s(1).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "rtmem/sync/cache_aligned.hpp"

namespace {
constexpr int max_threads = 64;
constexpr int increments_per_iteration = 1024;
using counter = std::atomic<std::uint64_t>;

struct adjacent {
    counter c[max_threads];
    counter& of(int t) { return c[t]; }
};
struct padded_64 {
    struct alignas(64) slot {
        counter c;
    };
    slot s[max_threads];
    counter& of(int t) { return s[t].c; }
};
struct padded {
    rtmem::cache_aligned<counter> s[max_threads];
    counter& of(int t) { return *s[t]; }
};

// Plain load + store (no lock prefix): what `++count` on a per-thread int costs, kept from being
// folded into one add by the atomic.
template <class Layout>
void per_thread_counters(benchmark::State& state) {
    static Layout counters{};
    counter& mine = counters.of(state.thread_index());
    for (auto _ : state) {
        for (int i = 0; i < increments_per_iteration; ++i)
            mine.store(mine.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    state.SetItemsProcessed(state.iterations() * increments_per_iteration);
}

const int threads = static_cast<int>(
    std::clamp(std::thread::hardware_concurrency(), 2u, static_cast<unsigned>(max_threads)));

BENCHMARK_TEMPLATE(per_thread_counters, adjacent)->DenseThreadRange(1, threads)->UseRealTime();
BENCHMARK_TEMPLATE(per_thread_counters, padded_64)->DenseThreadRange(1, threads)->UseRealTime();
BENCHMARK_TEMPLATE(per_thread_counters, padded)->DenseThreadRange(1, threads)->UseRealTime();
}  // namespace

BENCHMARK_MAIN();
