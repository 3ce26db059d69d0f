// Trub's stack allocator as he built it: a stack that grows by chunks (8100 bytes, his chunk
// size) from malloc, against the fixed-capacity stack_allocator and malloc, in one run:
//   trub_growing/<allocator>/8        one 8-byte allocate + release (per_op), as in his table
//   trub_growing_deep/<allocator>/8   4096 8-byte blocks pushed then popped last-first: the
//                                     stack crosses chunk boundaries both ways (per_op counts
//                                     each allocate + release pair)
// Ratios (malloc / allocator) come from the medians of the same run (bench/report/report.py).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>

#include "rtmem/alloc/growing_stack.hpp"
#include "rtmem/alloc/stack.hpp"

namespace {

constexpr std::size_t trub_chunk = 8100;
constexpr std::size_t batch = 1000;
constexpr std::size_t deep = 4096;

void per_op(benchmark::State& state, std::size_t ops) {
    state.counters["per_op"] = benchmark::Counter(
        static_cast<double>(ops),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(ops));
}

struct malloc_source {
    void* allocate(std::size_t n, std::size_t) noexcept { return std::malloc(n); }
    void deallocate(void* p, std::size_t, std::size_t) noexcept { std::free(p); }
};

template <class A>
void one_op(benchmark::State& state, A& a) {
    for (auto _ : state) {
        for (std::size_t i = 0; i < batch; ++i) {
            void* p = a.allocate(8, 8);
            benchmark::DoNotOptimize(p);
            a.deallocate(p, 8, 8);
        }
    }
    per_op(state, batch);
}

template <class A>
void push_pop(benchmark::State& state, A& a) {
    static std::array<void*, deep> blocks;
    for (auto _ : state) {
        for (std::size_t i = 0; i < deep; ++i) {
            blocks[i] = a.allocate(8, 8);
            benchmark::DoNotOptimize(blocks[i]);
        }
        for (std::size_t i = deep; i-- > 0;) a.deallocate(blocks[i], 8, 8);
    }
    per_op(state, deep);
}

template <bool Deep>
void run_malloc(benchmark::State& state) {
    malloc_source a;
    Deep ? push_pop(state, a) : one_op(state, a);
}
template <bool Deep>
void run_stack(benchmark::State& state) {
    rtmem::stack_allocator a{std::size_t{1} << 20};
    Deep ? push_pop(state, a) : one_op(state, a);
}
template <bool Deep>
void run_growing(benchmark::State& state) {
    rtmem::growing_stack_allocator a{rtmem::growing_stack_options{.chunk_size = trub_chunk}};
    Deep ? push_pop(state, a) : one_op(state, a);
}

}  // namespace

BENCHMARK(run_malloc<false>)->Name("trub_growing/malloc/8");
BENCHMARK(run_stack<false>)->Name("trub_growing/stack/8");
BENCHMARK(run_growing<false>)->Name("trub_growing/growing_stack/8");
BENCHMARK(run_malloc<true>)->Name("trub_growing_deep/malloc/8");
BENCHMARK(run_stack<true>)->Name("trub_growing_deep/stack/8");
BENCHMARK(run_growing<true>)->Name("trub_growing_deep/growing_stack/8");

BENCHMARK_MAIN();
