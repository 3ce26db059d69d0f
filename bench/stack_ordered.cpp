// Stack-ordered allocators against a hand-written bump-pointer floor and glibc, in one run:
//   table6_1/<allocator>/<bytes>   Kaltenbrunn's Table 6.1: 1000 allocations of <bytes>, then
//                                  release all (time per iteration = per 1000 allocations)
//   weaver/<operation>             Weaver's table: per-call latency over 100k calls at 5 KiB
//                                  (counters mean_ns, stddev_ns, p99_ns, max_ns)
//   trub/<allocator>/8             Trub's numbers: one 8-byte allocate + release (per_op)
// Ratios (floor / allocator, malloc / allocator) are computed from the medians of the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "rtmem.h"
#include "rtmem/alloc/arena.hpp"
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

/// Mean per call from whole batches timed without per-call timers (the per-call samples are
/// quantised to the counter's resolution; this mean is not).
struct batch_timer {
    double total_ns = 0;
    std::size_t calls = 0;
    [[nodiscard]] double mean() const {
        return calls == 0 ? 0.0 : total_ns / static_cast<double>(calls);
    }
};

void report(benchmark::State& state, std::vector<double>& ns, const batch_timer& batch = {}) {
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
    if (batch.calls != 0) state.counters["batch_mean_ns"] = batch.mean();
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
            batch.total_ns += w.elapsed(s, e);
            batch.calls += weaver_batch;
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
        batch.total_ns += w.elapsed(s, e);
        batch.calls += weaver_batch;
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
        batch.total_ns += time_free ? w.elapsed(s1, s2) : w.elapsed(s0, s1);
        batch.calls += weaver_batch;
    }
    report(state, ns, batch);
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

void register_all() {
    for (const std::size_t size : table_sizes) {
        const std::string s = std::to_string(size);
        benchmark::RegisterBenchmark(("table6_1/floor_bump/" + s).c_str(), table_floor, size);
        benchmark::RegisterBenchmark(("table6_1/linear/" + s).c_str(), table_linear, size);
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
    benchmark::RegisterBenchmark("trub/stack/8", trub_stack);
    benchmark::RegisterBenchmark("trub/linear/8", trub_linear);
    benchmark::RegisterBenchmark("trub/malloc/8", trub_malloc);
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
