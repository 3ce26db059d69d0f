// rt_heap single-threaded, beside plain and cached TLSF and glibc (and mimalloc when built in),
// on the workloads of pool_freelist_tlsf.cpp:
//   flat/<heap>/N             steady state with N live blocks of 16..1024 B: free a random one,
//                             allocate a new one (ns per pair); N = 10^3, 10^5 (10^6 with
//                             RTMEM_BENCH_HUGE=1)
//   fig6_6/random/<heap>/N    thesis Fig 6.6: N blocks allocated, then freed in random order
//                             (ns per operation)
//   RTMEM_BENCH_BULK=N        no timing: N blocks allocated then freed in reverse order, for
//                             callgrind's instruction counts (see measure_bulk)
//   shared/<heap>/threads:T  T threads share one heap; each frees one of its 64 live blocks and
//                             allocates a replacement (16..1024 B) per iteration. Aggregate
//                             throughput (items_per_second over all threads, real time): rt_heap
//                             against locked<tlsf_allocator> with a spin or std mutex and glibc
// rt_heap runs in real-time mode here (its memory committed and prefaulted up front), as the TLSF
// heaps get a prefaulted pool: page faults stay out of every timed region. glibc is looked up in
// libc.so.6 itself, so a peer library linked into this program cannot stand in for it.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include <mutex>
#include "common.hpp"
#include "rtmem/alloc/rt_heap.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/sync/locked.hpp"
#include "rtmem/sync/spin_mutex.hpp"

#if RTMEM_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

constexpr std::size_t kAlign = 16;

struct prefaulted {
    explicit prefaulted(std::size_t n)
        : bytes(static_cast<std::byte*>(std::aligned_alloc(4096, n))), size(n) {
        std::memset(bytes, 0, n);
    }
    ~prefaulted() { std::free(bytes); }
    prefaulted(const prefaulted&) = delete;
    prefaulted& operator=(const prefaulted&) = delete;
    std::byte* bytes;
    std::size_t size;
};

struct tlsf_heap {
    explicit tlsf_heap(std::size_t bytes, unsigned depth = 0)
        : mem(bytes), t(std::span<std::byte>(mem.bytes, mem.size), depth) {}
    prefaulted mem;
    rtmem::tlsf_allocator t;
    RTMEM_ALWAYS_INLINE void* allocate(std::size_t n) { return t.allocate(n, kAlign); }
    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t n) { t.deallocate(p, n, kAlign); }
};
struct tlsf_cached_heap : tlsf_heap {
    explicit tlsf_cached_heap(std::size_t bytes) : tlsf_heap(bytes, 8) {}
};

struct rt_heap_bench {
    explicit rt_heap_bench(std::size_t bytes)
        : h(rtmem::rt_heap_options::real_time_with(rtmem::align_up(bytes, 1u << 20))) {
        if (!h.attach()) std::abort();
    }
    rtmem::rt_heap h;
    RTMEM_ALWAYS_INLINE void* allocate(std::size_t n) { return h.allocate(n, kAlign); }
    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t n) { h.deallocate(p, n, kAlign); }
};

using malloc_fn = void* (*)(std::size_t);
using free_fn = void (*)(void*);
struct glibc_heap {
    explicit glibc_heap(std::size_t) {
        void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (libc == nullptr) std::abort();
        m = reinterpret_cast<malloc_fn>(dlsym(libc, "malloc"));
        f = reinterpret_cast<free_fn>(dlsym(libc, "free"));
    }
    malloc_fn m;
    free_fn f;
    void* allocate(std::size_t n) { return m(n); }
    void deallocate(void* p, std::size_t) { f(p); }
};
#if RTMEM_HAVE_MIMALLOC
struct mimalloc_heap {
    explicit mimalloc_heap(std::size_t) {}
    void* allocate(std::size_t n) { return mi_malloc(n); }
    void deallocate(void* p, std::size_t) { mi_free(p); }
};
#endif

std::vector<std::size_t> random_sizes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> v(n);
    for (auto& s : v) s = 16 + rng() % (1024 - 16 + 1);
    return v;
}

// The steady state of `flat`: n live blocks, each step frees a random one and allocates a new
// one of a random size.
template <class Heap>
struct flat_state {
    static constexpr std::size_t ring = 1 << 16;
    explicit flat_state(std::size_t live)
        : n(live),
          heap(std::max<std::size_t>(n * 1100, 8u << 20)),
          sizes(random_sizes(ring, 5)),
          victims(ring),
          slots(n),
          slot_size(n) {
        std::mt19937_64 rng(6);
        for (auto& v : victims) v = rng() % n;
        for (std::size_t i = 0; i < n; ++i) {
            slot_size[i] = sizes[i % ring];
            slots[i] = heap.allocate(slot_size[i]);
        }
    }
    ~flat_state() {
        for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[i], slot_size[i]);
    }
    flat_state(const flat_state&) = delete;
    flat_state& operator=(const flat_state&) = delete;
    RTMEM_ALWAYS_INLINE void step() {
        const std::size_t v = victims[k % ring];
        heap.deallocate(slots[v], slot_size[v]);
        slot_size[v] = sizes[(k * 7) % ring];
        slots[v] = heap.allocate(slot_size[v]);
        benchmark::DoNotOptimize(std::as_const(slots[v]));
        ++k;
    }
    std::size_t n;
    Heap heap;
    std::vector<std::size_t> sizes, victims;
    std::vector<void*> slots;
    std::vector<std::size_t> slot_size;
    std::size_t k = 0;
};

template <class Heap>
void flat(benchmark::State& state) {
    flat_state<Heap> s(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) s.step();
}

// RTMEM_BENCH_PAIRS=<live>,<pairs>: instead of the benchmarks, `pairs` steps of `flat` per heap in
// flat_pairs<Heap>, one function each, for callgrind (instructions per pair, load-free):
//   valgrind --tool=callgrind --toggle-collect='*flat_pairs*' rtmem_bench_rt_heap
template <class Heap>
[[gnu::noipa]] void flat_pairs(flat_state<Heap>& s, std::size_t pairs) {
    for (std::size_t i = 0; i < pairs; ++i) s.step();
}
template <class Heap>
void measure_flat(std::size_t live, std::size_t pairs) {
    flat_state<Heap> s(live);
    for (std::size_t i = 0; i < pairs / 10; ++i) s.step();  // warm: reach the steady state
    flat_pairs(s, pairs);
}

// RTMEM_BENCH_BULK=<n>: instead of the benchmarks, the bulk phases of a program that builds a
// structure and tears it down, per heap, for callgrind (instructions per call, load-free): n
// blocks of 16..1024 B allocated (bulk_grow), then freed in reverse order (bulk_teardown, as a
// program's destructors run), in one function each, twice (the second round reuses the heap):
//   valgrind --tool=callgrind --toggle-collect='*bulk_*' rtmem_bench_rt_heap
template <class Heap>
[[gnu::noipa]] void bulk_grow(Heap& heap, std::span<void*> slots, std::span<const std::size_t> sizes) {
    for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = heap.allocate(sizes[i]);
    benchmark::DoNotOptimize(slots.data());
}
template <class Heap>
[[gnu::noipa]] void bulk_teardown(Heap& heap, std::span<void*> slots,
                                  std::span<const std::size_t> sizes) {
    for (std::size_t i = slots.size(); i-- > 0;) heap.deallocate(slots[i], sizes[i]);
}
template <class Heap>
void measure_bulk(std::size_t n) {
    Heap heap(std::max<std::size_t>(n * 1100, 8u << 20));
    const auto sizes = random_sizes(n, 7);
    std::vector<void*> slots(n);
    for (int round = 0; round < 2; ++round) {
        bulk_grow(heap, std::span<void*>(slots), std::span<const std::size_t>(sizes));
        bulk_teardown(heap, std::span<void*>(slots), std::span<const std::size_t>(sizes));
    }
}

template <class Heap>
void fig6_6_random(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    Heap heap(64u << 20);
    const auto sizes = random_sizes(n, 3);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(4));
    std::vector<void*> slots(n);
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) slots[i] = heap.allocate(sizes[i]);
        for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[order[i]], sizes[order[i]]);
        benchmark::ClobberMemory();
    }
    state.counters["ns_per_op"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(n),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// A heap shared by every thread of one run: locked<tlsf_allocator> (front cache on) behind a mutex.
template <class Mutex>
struct locked_tlsf_heap {
    explicit locked_tlsf_heap(std::size_t bytes)
        : mem(bytes), t(std::span<std::byte>(mem.bytes, mem.size), 8u) {}
    prefaulted mem;
    rtmem::locked<rtmem::tlsf_allocator, Mutex> t;
    void* allocate(std::size_t n) { return t.allocate(n, kAlign); }
    void deallocate(void* p, std::size_t n) { t.deallocate(p, n, kAlign); }
};

template <class Heap>
void shared(benchmark::State& state) {
    static Heap heap(64u << 20);  // one per heap type, built by the first thread, kept to exit
    constexpr std::size_t live = 64;
    const auto sizes = random_sizes(1 << 12, 10 + static_cast<std::uint64_t>(state.thread_index()));
    std::vector<void*> slots(live);
    std::vector<std::size_t> slot_size(live);
    for (std::size_t i = 0; i < live; ++i) slots[i] = heap.allocate(slot_size[i] = sizes[i]);
    std::size_t k = 0;
    for (auto _ : state) {
        const std::size_t v = (k * 13) % live;
        heap.deallocate(slots[v], slot_size[v]);
        slots[v] = heap.allocate(slot_size[v] = sizes[k % sizes.size()]);
        benchmark::DoNotOptimize(std::as_const(slots[v]));
        ++k;
    }
    for (std::size_t i = 0; i < live; ++i) heap.deallocate(slots[i], slot_size[i]);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

template <class Heap>
void register_shared(const char* name) {
    benchmark::RegisterBenchmark((std::string("shared/") + name).c_str(), shared<Heap>)
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
}

template <class Heap>
void register_heap(const char* name) {
    auto* f = benchmark::RegisterBenchmark((std::string("flat/") + name).c_str(), flat<Heap>);
    f->Arg(1000)->Arg(100000);
    if (const char* huge = std::getenv("RTMEM_BENCH_HUGE"); huge != nullptr && huge[0] == '1')
        f->Arg(1000000);
    benchmark::RegisterBenchmark((std::string("fig6_6/random/") + name).c_str(),
                                 fig6_6_random<Heap>)
        ->Arg(1000)
        ->Arg(4000)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
    if (const char* spec = std::getenv("RTMEM_BENCH_BULK")) {
        const std::size_t n = std::strtoul(spec, nullptr, 10);
        if (n == 0) return 2;
        measure_bulk<rt_heap_bench>(n);
        measure_bulk<tlsf_cached_heap>(n);
        measure_bulk<glibc_heap>(n);
#if RTMEM_HAVE_MIMALLOC
        measure_bulk<mimalloc_heap>(n);
#endif
        return 0;
    }
    if (const char* spec = std::getenv("RTMEM_BENCH_PAIRS")) {
        const std::size_t live = std::strtoul(spec, nullptr, 10);
        const char* comma = std::strchr(spec, ',');
        const std::size_t pairs = comma != nullptr ? std::strtoul(comma + 1, nullptr, 10) : 0;
        if (live == 0 || pairs == 0) return 2;
        measure_flat<rt_heap_bench>(live, pairs);
        measure_flat<tlsf_cached_heap>(live, pairs);
        measure_flat<glibc_heap>(live, pairs);
#if RTMEM_HAVE_MIMALLOC
        measure_flat<mimalloc_heap>(live, pairs);
#endif
        return 0;
    }
    register_heap<rt_heap_bench>("rt_heap");
    register_heap<tlsf_heap>("tlsf");
    register_heap<tlsf_cached_heap>("tlsf_cached");
    register_heap<glibc_heap>("glibc");
#if RTMEM_HAVE_MIMALLOC
    register_heap<mimalloc_heap>("mimalloc");
#endif
    register_shared<rt_heap_bench>("rt_heap");
    register_shared<locked_tlsf_heap<rtmem::spin_mutex>>("locked_tlsf_spin");
    register_shared<locked_tlsf_heap<std::mutex>>("locked_tlsf_std_mutex");
    register_shared<glibc_heap>("glibc");
#if RTMEM_HAVE_MIMALLOC
    register_shared<mimalloc_heap>("mimalloc");
#endif
    return rtmem::bench::run_benchmarks(argc, argv);
}
