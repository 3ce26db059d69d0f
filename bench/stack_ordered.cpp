// Stack-ordered allocators against a hand-written bump-pointer floor and glibc, in one run:
//   table6_1/<allocator>/<bytes>   Kaltenbrunn's Table 6.1: 1000 allocations of <bytes>, then
//                                  release all (time per iteration = per 1000 allocations)
//   weaver/<operation>             Weaver's table: per-call latency over 100k calls at 5 KiB
//                                  (counters mean_ns, stddev_ns, p99_ns, max_ns, and the robust
//                                  batch_median_ns: median of 100 batch means, no per-call timer)
//   weaver_unit/<heap>/5KiB        Weaver's method: mempoint + alloc + trash (or malloc + free)
//                                  timed as one unit, runs with outliers discarded (unit_ns)
//   trub/<allocator>/8             Trub's numbers: one 8-byte allocate + release (per_op)
//   trub_clock/<allocator>/8       the same pair timed per call with clock_gettime, as Trub did
//                                  (median_ns, clock_ns: the empty timed region)
// Ratios (floor / allocator, malloc / allocator) are computed from the medians of the same run.
// The malloc cases depend on what ran before them in the process (glibc raises its mmap and
// trim thresholds after large frees), so scripts/bench runs each in a process of its own.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "rtmem.h"
#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/frame.hpp"
#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/stack.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "rtmem/core/virtual_memory.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

constexpr std::size_t table_count = 1000;
constexpr std::array<std::size_t, 4> table_sizes{8, 256, 8192, std::size_t{1} << 20};

/// One big committed-but-untouched region shared by the floor and linear_allocator (1000 x 1 MiB
/// blocks are never written, so no page is ever faulted in).
std::span<std::byte> region() {
    static const std::size_t bytes = table_count * (std::size_t{1} << 20) + (std::size_t{1} << 20);
    static std::byte* p = [] {
        void* r = rtmem::virtual_memory::reserve(bytes);
        if (r == nullptr || !rtmem::virtual_memory::commit(r, bytes)) std::abort();
        return static_cast<std::byte*>(r);
    }();
    return {p, bytes};
}

/// The floor: what a programmer would write by hand. Align to 16, check, bump.
struct bump_floor {
    std::byte* top;
    std::byte* end;
    RTMEM_ALWAYS_INLINE void* allocate(std::size_t size) noexcept {
        auto* p = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(top) + 15) &
                                               ~std::uintptr_t{15});
        if (size > static_cast<std::size_t>(end - p)) return nullptr;
        top = p + size;
        return p;
    }
};

void table_floor(benchmark::State& state, std::size_t size) {
    const auto r = region();
    bump_floor f{r.data(), r.data() + r.size()};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(f.allocate(size));
        f.top = r.data();  // release all
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

void table_linear(benchmark::State& state, std::size_t size) {
    rtmem::linear_allocator a{region()};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(a.allocate(size));
        a.reset();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

/// The frame allocator's current frame (issue 16: its bounds live in the allocator itself, so
/// the loop is linear's). Two frames over the region; reset() empties both.
void table_frame(benchmark::State& state, std::size_t size) {
    rtmem::frame_allocator<2> a{region()};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(a.allocate(size));
        a.reset();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

/// The stack allocator in the same loop (bump with LIFO bookkeeping; released all by reset()).
void table_stack(benchmark::State& state, std::size_t size) {
    rtmem::stack_allocator a{region()};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(a.allocate(size));
        a.reset();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

/// arena sized for the batch: one warm chunk (reset keeps the oldest chunk), so this is the
/// arena's bump path plus its slow-path check.
void table_arena(benchmark::State& state, std::size_t size) {
    static rtmem::page_allocator pages;
    rtmem::arena a{table_count * size + 65536, pages};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(a.allocate(size));
        a.reset();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

/// arena whose chunks hold a quarter of the batch: every iteration crosses 3 chunk boundaries.
/// cached: reset keeps the chunks (keep_chunks); returned: reset hands 3 chunks back to the
/// page allocator (munmap) and the next iteration maps them again.
void table_arena_chunked(benchmark::State& state, std::size_t size, bool cached) {
    static rtmem::page_allocator pages;
    rtmem::arena a{
        rtmem::arena_options{.chunk_size = table_count * size / 4 + 4096, .keep_chunks = cached},
        pages};
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) benchmark::DoNotOptimize(a.allocate(size));
        a.reset();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

void table_c_arena(benchmark::State& state, std::size_t size) {
    rtmem_arena* a = rtmem_arena_create(table_count * size + 65536);
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i)
            benchmark::DoNotOptimize(rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, size));
        rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
        benchmark::ClobberMemory();
    }
    rtmem_arena_destroy(a);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

void table_malloc(benchmark::State& state, std::size_t size) {
    std::vector<void*> blocks(table_count);
    for (auto _ : state) {
        for (std::size_t i = 0; i < table_count; ++i) {
            blocks[i] = std::malloc(size);
            benchmark::DoNotOptimize(blocks[i]);
        }
        for (void* p : blocks) std::free(p);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(table_count));
}

// ---- Weaver: per-call latency distribution -------------------------------------------------

/// Cycle counter converted to nanoseconds (steady_clock where there is no TSC).
class stopwatch {
  public:
    stopwatch() {
#if defined(__x86_64__)
        const auto t0 = std::chrono::steady_clock::now();
        const auto c0 = __rdtsc();
        while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20)) {
        }
        const auto c1 = __rdtsc();
        const auto t1 = std::chrono::steady_clock::now();
        ns_per_tick_ = std::chrono::duration<double, std::nano>(t1 - t0).count() /
                       static_cast<double>(c1 - c0);
#endif
        // Overhead of an empty timed region, subtracted from every sample.
        std::vector<double> empty(10000);
        for (auto& e : empty) {
            const auto s = now();
            e = elapsed(s, now());
        }
        std::sort(empty.begin(), empty.end());
        overhead_ = empty[5000];
        for (double e : empty)
            if (e > 0) {
                resolution_ = e;  // smallest nonzero step the counter shows
                break;
            }
    }
    [[nodiscard]] RTMEM_ALWAYS_INLINE std::uint64_t now() const noexcept {
#if defined(__x86_64__)
        _mm_lfence();
        const auto t = __rdtsc();
        _mm_lfence();
        return t;
#else
        return static_cast<std::uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    }
    [[nodiscard]] double elapsed(std::uint64_t start, std::uint64_t end) const noexcept {
        return static_cast<double>(end - start) * ns_per_tick_;
    }
    [[nodiscard]] double sample(std::uint64_t start, std::uint64_t end) const noexcept {
        return std::max(0.0, elapsed(start, end) - overhead_);
    }
    [[nodiscard]] double overhead() const noexcept {
        return overhead_;
    }
    [[nodiscard]] double resolution() const noexcept {
        return resolution_;
    }

  private:
    double ns_per_tick_ = 1.0;
    double overhead_ = 0.0;
    double resolution_ = 0.0;
};

const stopwatch& watch() {
    static const stopwatch w;
    return w;
}

constexpr std::size_t weaver_calls = 100000;
constexpr std::size_t weaver_size = 5 * 1024;
constexpr std::size_t weaver_batch = 1000;  // blocks live at once (5 MiB)

/// Per-call means of whole batches timed without per-call timers (the per-call samples are
/// quantised to the counter's resolution; these are not). Their median is robust: one batch
/// that a page fault, an mmap or a preemption slowed moves it by nothing.
struct batch_timer {
    std::vector<double> batch_means;
    void add(double ns, std::size_t calls) {
        batch_means.push_back(ns / static_cast<double>(calls));
    }
    [[nodiscard]] double quantile(double q) {
        if (batch_means.empty()) return 0.0;
        std::sort(batch_means.begin(), batch_means.end());
        return batch_means[static_cast<std::size_t>(q *
                                                    static_cast<double>(batch_means.size() - 1))];
    }
};

void report(benchmark::State& state, std::vector<double>& ns, batch_timer batch = {}) {
    double sum = 0;
    for (double v : ns) sum += v;
    const double mean = sum / static_cast<double>(ns.size());
    double sq = 0;
    for (double v : ns) sq += (v - mean) * (v - mean);
    std::sort(ns.begin(), ns.end());
    state.counters["mean_ns"] = mean;
    state.counters["stddev_ns"] = std::sqrt(sq / static_cast<double>(ns.size()));
    state.counters["p50_ns"] = ns[ns.size() / 2];
    state.counters["p99_ns"] = ns[ns.size() * 99 / 100];
    state.counters["max_ns"] = ns.back();
    state.counters["calls"] = static_cast<double>(ns.size());
    state.counters["timer_overhead_ns"] = watch().overhead();
    state.counters["timer_resolution_ns"] = watch().resolution();
    if (!batch.batch_means.empty()) {
        state.counters["batch_median_ns"] = batch.quantile(0.5);
        state.counters["batch_p10_ns"] = batch.quantile(0.1);
        state.counters["batch_p90_ns"] = batch.quantile(0.9);
    }
}

enum class weaver_op { alloc, mark, rewind };

void weaver_c_arena(benchmark::State& state, weaver_op op) {
    const stopwatch& w = watch();
    rtmem_arena* a = rtmem_arena_create(weaver_batch * (weaver_size + 64) + 65536);
    std::vector<double> ns;
    ns.reserve(weaver_calls);
    for (auto _ : state) {
        ns.clear();
        while (ns.size() < weaver_calls) {
            if (op == weaver_op::alloc) {
                for (std::size_t i = 0; i < weaver_batch; ++i) {
                    const auto s = w.now();
                    void* p = rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, weaver_size);
                    const auto e = w.now();
                    benchmark::DoNotOptimize(p);
                    ns.push_back(w.sample(s, e));
                }
                rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
            } else if (op == weaver_op::mark) {
                for (std::size_t i = 0; i < weaver_batch; ++i) {
                    const auto s = w.now();
                    const bool ok = rtmem_arena_mark(a, RTMEM_SIDE_LEFT);
                    const auto e = w.now();
                    benchmark::DoNotOptimize(ok);
                    ns.push_back(w.sample(s, e));
                }
                // Pop every point (each rewind pops one), then empty the side.
                for (std::size_t i = 0; i <= weaver_batch; ++i)
                    rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
            } else {
                // A memory point, one 5 KiB block after it, then the timed rewind.
                for (std::size_t i = 0; i < weaver_batch; ++i) {
                    (void)rtmem_arena_mark(a, RTMEM_SIDE_LEFT);
                    benchmark::DoNotOptimize(rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, weaver_size));
                    const auto s = w.now();
                    rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
                    const auto e = w.now();
                    ns.push_back(w.sample(s, e));
                }
            }
        }
    }
    batch_timer batch;
    if (op != weaver_op::rewind) {
        for (std::size_t round = 0; round < weaver_calls / weaver_batch; ++round) {
            const auto s = w.now();
            for (std::size_t i = 0; i < weaver_batch; ++i) {
                if (op == weaver_op::alloc)
                    benchmark::DoNotOptimize(rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, weaver_size));
                else
                    benchmark::DoNotOptimize(rtmem_arena_mark(a, RTMEM_SIDE_LEFT));
            }
            const auto e = w.now();
            batch.add(w.elapsed(s, e), weaver_batch);
            for (std::size_t i = 0; i <= weaver_batch; ++i) rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
        }
    }
    rtmem_arena_destroy(a);
    report(state, ns, batch);
}

void weaver_linear_alloc(benchmark::State& state) {
    const stopwatch& w = watch();
    rtmem::linear_allocator a{weaver_batch * weaver_size + 65536};
    std::vector<double> ns;
    ns.reserve(weaver_calls);
    for (auto _ : state) {
        ns.clear();
        while (ns.size() < weaver_calls) {
            for (std::size_t i = 0; i < weaver_batch; ++i) {
                const auto s = w.now();
                void* p = a.allocate(weaver_size);
                const auto e = w.now();
                benchmark::DoNotOptimize(p);
                ns.push_back(w.sample(s, e));
            }
            a.reset();
        }
    }
    batch_timer batch;
    for (std::size_t round = 0; round < weaver_calls / weaver_batch; ++round) {
        const auto s = w.now();
        for (std::size_t i = 0; i < weaver_batch; ++i)
            benchmark::DoNotOptimize(a.allocate(weaver_size));
        const auto e = w.now();
        batch.add(w.elapsed(s, e), weaver_batch);
        a.reset();
    }
    report(state, ns, batch);
}

void weaver_malloc(benchmark::State& state, bool time_free) {
    const stopwatch& w = watch();
    std::vector<void*> blocks(weaver_batch);
    std::vector<double> ns;
    ns.reserve(weaver_calls);
    for (auto _ : state) {
        ns.clear();
        while (ns.size() < weaver_calls) {
            for (auto& b : blocks) {
                const auto s = w.now();
                b = std::malloc(weaver_size);
                const auto e = w.now();
                benchmark::DoNotOptimize(b);
                if (!time_free) ns.push_back(w.sample(s, e));
            }
            for (void* b : blocks) {
                const auto s = w.now();
                std::free(b);
                const auto e = w.now();
                if (time_free) ns.push_back(w.sample(s, e));
            }
        }
    }
    batch_timer batch;
    for (std::size_t round = 0; round < weaver_calls / weaver_batch; ++round) {
        const auto s0 = w.now();
        for (auto& b : blocks) {
            b = std::malloc(weaver_size);
            benchmark::DoNotOptimize(b);
        }
        const auto s1 = w.now();
        for (void* b : blocks) std::free(b);
        const auto s2 = w.now();
        batch.add(time_free ? w.elapsed(s1, s2) : w.elapsed(s0, s1), weaver_batch);
    }
    report(state, ns, batch);
}

// ---- Weaver's method: one unit = mempoint + alloc + trash, against malloc + free -------------

constexpr std::size_t unit_runs = 1000;
constexpr std::size_t units_per_run = 100;
constexpr double outlier_factor = 2.0;  // a run slower than this x the median run is discarded

/// Times `unit` in unit_runs runs of units_per_run, each run by one pair of timer reads (no
/// per-unit timer in the loop). As Weaver discarded high-variance runs, runs slower than
/// outlier_factor x the median run (interrupted: a page fault, a preemption) are dropped and the
/// mean of the rest is the figure (unit_ns); the median run and the drop count are reported too.
template <class Unit>
void time_units(benchmark::State& state, Unit unit) {
    const stopwatch& w = watch();
    std::vector<double> runs;
    runs.reserve(unit_runs);
    for (auto _ : state) {
        runs.clear();
        for (std::size_t r = 0; r < unit_runs; ++r) {
            const auto s = w.now();
            for (std::size_t i = 0; i < units_per_run; ++i) unit();
            const auto e = w.now();
            runs.push_back(w.elapsed(s, e) / static_cast<double>(units_per_run));
        }
    }
    std::vector<double> sorted = runs;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    double kept_sum = 0;
    std::size_t kept = 0;
    for (double v : runs)
        if (v <= outlier_factor * median) {
            kept_sum += v;
            ++kept;
        }
    state.counters["unit_ns"] = kept_sum / static_cast<double>(kept);
    state.counters["median_run_ns"] = median;
    state.counters["runs"] = static_cast<double>(runs.size());
    state.counters["discarded_runs"] = static_cast<double>(runs.size() - kept);
    state.counters["max_run_ns"] = sorted.back();
}

void weaver_unit_c_arena(benchmark::State& state) {
    rtmem_arena* a = rtmem_arena_create(4 * (weaver_size + 64) + 65536);
    time_units(state, [a] {
        (void)rtmem_arena_mark(a, RTMEM_SIDE_LEFT);  // _Wmempoint
        benchmark::DoNotOptimize(rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, weaver_size));
        rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);  // _Wtrash: back to the point, point popped
    });
    rtmem_arena_destroy(a);
}

void weaver_unit_malloc(benchmark::State& state) {
    time_units(state, [] {
        void* p = std::malloc(weaver_size);
        benchmark::DoNotOptimize(p);
        std::free(p);
    });
}

// ---- Trub: one 8-byte allocate + release -----------------------------------------------------

constexpr std::size_t trub_batch = 1000;

void per_op(benchmark::State& state) {
    state.counters["per_op"] = benchmark::Counter(
        static_cast<double>(trub_batch),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(trub_batch));
}

void trub_stack(benchmark::State& state) {
    rtmem::stack_allocator a{std::size_t{1} << 16};
    for (auto _ : state) {
        for (std::size_t i = 0; i < trub_batch; ++i) {
            void* p = a.allocate(8, 8);
            benchmark::DoNotOptimize(p);
            a.deallocate(p, 8, 8);
        }
    }
    per_op(state);
}

void trub_linear(benchmark::State& state) {
    rtmem::linear_allocator a{trub_batch * 8 + 64};
    for (auto _ : state) {
        for (std::size_t i = 0; i < trub_batch; ++i) {
            void* p = a.allocate(8, 8);
            benchmark::DoNotOptimize(p);
            a.deallocate(p, 8, 8);  // a no-op: linear memory comes back in bulk
        }
        a.reset();
    }
    per_op(state);
}

void trub_malloc(benchmark::State& state) {
    for (auto _ : state) {
        for (std::size_t i = 0; i < trub_batch; ++i) {
            void* p = std::malloc(8);
            benchmark::DoNotOptimize(p);
            std::free(p);
        }
    }
    per_op(state);
}

// Trub timed each call with clock_gettime: the clock's own cost (tens of ns) is inside every
// sample, which compresses every ratio towards 1. The same here, per pair, median of 100k pairs.
constexpr std::size_t trub_clock_calls = 100000;

std::int64_t clock_ns() noexcept {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

template <class Pair>
void trub_clocked(benchmark::State& state, Pair pair) {
    std::vector<double> ns(trub_clock_calls), empty(trub_clock_calls);
    for (auto _ : state) {
        for (auto& v : ns) {
            const auto s = clock_ns();
            pair();
            v = static_cast<double>(clock_ns() - s);
        }
        for (auto& v : empty) {
            const auto s = clock_ns();
            v = static_cast<double>(clock_ns() - s);
        }
    }
    std::sort(ns.begin(), ns.end());
    std::sort(empty.begin(), empty.end());
    state.counters["median_ns"] = ns[ns.size() / 2];
    state.counters["p99_ns"] = ns[ns.size() * 99 / 100];
    state.counters["clock_ns"] = empty[empty.size() / 2];
}

void trub_clock_stack(benchmark::State& state) {
    rtmem::stack_allocator a{std::size_t{1} << 16};
    trub_clocked(state, [&a] {
        void* p = a.allocate(8, 8);
        benchmark::DoNotOptimize(p);
        a.deallocate(p, 8, 8);
    });
}

void trub_clock_linear(benchmark::State& state) {
    rtmem::linear_allocator a{trub_clock_calls * 8 + 64};
    trub_clocked(state, [&a] {
        void* p = a.allocate(8, 8);
        benchmark::DoNotOptimize(p);
        a.deallocate(p, 8, 8);
    });
}

void trub_clock_malloc(benchmark::State& state) {
    trub_clocked(state, [] {
        void* p = std::malloc(8);
        benchmark::DoNotOptimize(p);
        std::free(p);
    });
}

void register_all() {
    for (const std::size_t size : table_sizes) {
        const std::string s = std::to_string(size);
        benchmark::RegisterBenchmark(("table6_1/floor_bump/" + s).c_str(), table_floor, size);
        benchmark::RegisterBenchmark(("table6_1/linear/" + s).c_str(), table_linear, size);
        if (size <= 8192) {  // two frames of half the region each hold 1000 blocks up to 8 KiB
            benchmark::RegisterBenchmark(("table6_1/frame/" + s).c_str(), table_frame, size);
            benchmark::RegisterBenchmark(("table6_1/stack/" + s).c_str(), table_stack, size);
        }
        benchmark::RegisterBenchmark(("table6_1/arena/" + s).c_str(), table_arena, size);
        benchmark::RegisterBenchmark(("table6_1/arena_4_chunks_cached/" + s).c_str(),
                                     table_arena_chunked, size, true);
        benchmark::RegisterBenchmark(("table6_1/arena_4_chunks_returned/" + s).c_str(),
                                     table_arena_chunked, size, false);
        benchmark::RegisterBenchmark(("table6_1/c_arena/" + s).c_str(), table_c_arena, size);
        benchmark::RegisterBenchmark(("table6_1/malloc/" + s).c_str(), table_malloc, size);
    }
    const auto once = [](benchmark::internal::Benchmark* b) {
        b->Iterations(1)->Unit(benchmark::kMillisecond);
    };
    once(benchmark::RegisterBenchmark("weaver/c_arena_alloc/5KiB", weaver_c_arena,
                                      weaver_op::alloc));
    once(benchmark::RegisterBenchmark("weaver/c_arena_mark", weaver_c_arena, weaver_op::mark));
    once(benchmark::RegisterBenchmark("weaver/c_arena_rewind", weaver_c_arena, weaver_op::rewind));
    once(benchmark::RegisterBenchmark("weaver/linear_alloc/5KiB", weaver_linear_alloc));
    once(benchmark::RegisterBenchmark("weaver/malloc/5KiB", weaver_malloc, false));
    once(benchmark::RegisterBenchmark("weaver/free/5KiB", weaver_malloc, true));
    once(benchmark::RegisterBenchmark("weaver_unit/c_arena/5KiB", weaver_unit_c_arena));
    once(benchmark::RegisterBenchmark("weaver_unit/malloc/5KiB", weaver_unit_malloc));
    benchmark::RegisterBenchmark("trub/stack/8", trub_stack);
    benchmark::RegisterBenchmark("trub/linear/8", trub_linear);
    benchmark::RegisterBenchmark("trub/malloc/8", trub_malloc);
    once(benchmark::RegisterBenchmark("trub_clock/stack/8", trub_clock_stack));
    once(benchmark::RegisterBenchmark("trub_clock/linear/8", trub_clock_linear));
    once(benchmark::RegisterBenchmark("trub_clock/malloc/8", trub_clock_malloc));
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
