// std::mutex vs rtmem::spin_mutex around a tiny critical section (the Coherent Labs mutex post):
// uncontended (one thread: the cost of lock + unlock) and contended (2..8 threads on one lock).
// The floor is the same work with no lock at all. On a machine with fewer cores than threads a
// spinning waiter can only burn its time slice, which is why spin_mutex yields after a short
// backoff; compare the contended rows against the core count.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "rtmem/sync/spin_mutex.hpp"

namespace {

struct no_lock {
    void lock() noexcept {}
    void unlock() noexcept {}
};

template <class Mutex>
void uncontended(benchmark::State& state) {
    Mutex m;
    std::uint64_t value = 0;
    for (auto _ : state) {
        m.lock();
        ++value;
        benchmark::DoNotOptimize(value);
        m.unlock();
    }
    state.SetItemsProcessed(state.iterations());
}

template <class Mutex>
void contended(benchmark::State& state) {
    static Mutex m;
    static std::uint64_t shared = 0;
    for (auto _ : state) {
        m.lock();
        ++shared;
        benchmark::DoNotOptimize(shared);
        m.unlock();
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK_TEMPLATE(uncontended, no_lock);
BENCHMARK_TEMPLATE(uncontended, std::mutex);
BENCHMARK_TEMPLATE(uncontended, rtmem::spin_mutex);
BENCHMARK_TEMPLATE(contended, std::mutex)->ThreadRange(2, 8)->UseRealTime();
BENCHMARK_TEMPLATE(contended, rtmem::spin_mutex)->ThreadRange(2, 8)->UseRealTime();
}  // namespace

BENCHMARK_MAIN();
