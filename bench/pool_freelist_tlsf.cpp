// Pool, free-list and TLSF allocators against a hand-written floor and the peers, in one run:
//   table6_2/<alloc>            thesis Table 6.2: 256 B, 2000 alloc, 1000 random free,
//                               1000 alloc, 2000 random free (time per operation)
//   fig6_6/<pattern>/<alloc>/N  thesis Fig 6.6: N live blocks of 16..1024 B, patterns
//                               alloc_only | fifo | random (time per operation)
//   flat/<alloc>/N              steady state with N live blocks: free a random one, allocate a
//                               new one (time per pair); TLSF should stay flat as N grows
//                               (N = 10^6 too with RTMEM_BENCH_HUGE=1)
//   latency/<alloc>             per-operation latency over 10^6 operations after warm-up:
//                               counters p50/p99/p999/p9999/max in ns (pre-faulted memory)
//   latency_mixed/<alloc>       the same with 1 request in 256 of 64 KiB..1 MiB
//   instructions/<case>         fixed work for `valgrind --tool=callgrind` (see docs)
// At the end a ratio table (vs the floor / glibc) is printed when the console format is used.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <memory_resource>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rtmem/alloc/free_list.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "suite_mode.hpp"

#if RTMEM_HAVE_MIMALLOC
#include <mimalloc.h>
#endif
#if RTMEM_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#if RTMEM_HAVE_TCMALLOC
#include <gperftools/tcmalloc.h>
#endif
#if RTMEM_HAVE_FOONATHAN
#include <foonathan/memory/memory_pool.hpp>
#endif
#if RTMEM_HAVE_BOOST
#include <boost/pool/pool.hpp>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#if defined(__GLIBC__)
#include <dlfcn.h>
#endif

namespace {

// ---------------------------------------------------------------------------------------------
// Heaps under test: allocate(n) / deallocate(p, n), all at 16-byte alignment (malloc's).

constexpr std::size_t kAlign = 16;

/// A pre-faulted buffer for the rtmem heaps (so page faults never land in a timed region).
struct prefaulted {
    explicit prefaulted(std::size_t n)
        : bytes(static_cast<std::byte*>(std::aligned_alloc(4096, n))), size(n) {
        std::memset(bytes, 0, n);
    }
    ~prefaulted() { std::free(bytes); }
    prefaulted(const prefaulted&) = delete;
    prefaulted& operator=(const prefaulted&) = delete;
    std::span<std::byte> span() const { return {bytes, size}; }
    std::byte* bytes;
    std::size_t size;
};

// glibc's allocator, looked up inside libc.so.6 itself: the peers' shared libraries
// (mimalloc, tcmalloc, jemalloc) export malloc/free — and mimalloc and tcmalloc even
// __libc_malloc — and, loaded first, replace them in the whole process. So std::malloc (or
// __libc_malloc) here would measure mimalloc, not glibc.
using malloc_fn = void* (*)(std::size_t);
using free_fn = void (*)(void*);
struct glibc_entry_points {
    malloc_fn malloc_ = &std::malloc;
    free_fn free_ = &std::free;
    bool genuine = false;
    glibc_entry_points() {
#if defined(__GLIBC__)
        if (void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD)) {
            auto* m = reinterpret_cast<malloc_fn>(dlsym(libc, "malloc"));
            auto* f = reinterpret_cast<free_fn>(dlsym(libc, "free"));
            if (m != nullptr && f != nullptr) malloc_ = m, free_ = f, genuine = true;
        }
#endif
    }
};
const glibc_entry_points glibc;
void* glibc_malloc(std::size_t n) {
    return glibc.malloc_(n);
}
void glibc_free(void* p) {
    glibc.free_(p);
}

struct glibc_heap {
    void* allocate(std::size_t n) { return glibc_malloc(n); }
    void deallocate(void* p, std::size_t) { glibc_free(p); }
};
#if RTMEM_HAVE_MIMALLOC
struct mimalloc_heap {
    void* allocate(std::size_t n) { return mi_malloc(n); }
    void deallocate(void* p, std::size_t) { mi_free(p); }
};
#endif
#if RTMEM_HAVE_JEMALLOC
struct jemalloc_heap {
    void* allocate(std::size_t n) { return mallocx(n, 0); }
    void deallocate(void* p, std::size_t n) { sdallocx(p, n, 0); }
};
#endif
#if RTMEM_HAVE_TCMALLOC
struct tcmalloc_heap {
    void* allocate(std::size_t n) { return tc_malloc(n); }
    void deallocate(void* p, std::size_t) { tc_free(p); }
};
#endif
struct pmr_pool_heap {
    std::pmr::unsynchronized_pool_resource r;
    void* allocate(std::size_t n) { return r.allocate(n, kAlign); }
    void deallocate(void* p, std::size_t n) { r.deallocate(p, n, kAlign); }
};
struct tlsf_heap {
    explicit tlsf_heap(std::size_t bytes = 64u << 20) : mem(bytes), t(mem.span()) {}
    prefaulted mem;
    rtmem::tlsf_allocator t;
    // Inlined like a direct call of t.allocate (itself always inline) in user code.
    RTMEM_ALWAYS_INLINE void* allocate(std::size_t n) { return t.allocate(n, kAlign); }
    RTMEM_ALWAYS_INLINE void deallocate(void* p, std::size_t n) { t.deallocate(p, n, kAlign); }
};
// TLSF with its front cache at glibc's tcache depth (7 blocks per size), or
// RTMEM_BENCH_TLSF_CACHE_DEPTH.
struct tlsf_cached_heap : tlsf_heap {
    explicit tlsf_cached_heap(std::size_t bytes = 64u << 20) : tlsf_heap(bytes) {
        const char* depth = std::getenv("RTMEM_BENCH_TLSF_CACHE_DEPTH");
        t.set_cache_depth(depth != nullptr ? static_cast<unsigned>(std::atoi(depth)) : 7u);
    }
};
template <class Policy>
struct free_list_heap {
    explicit free_list_heap(std::size_t bytes = 64u << 20) : mem(bytes), a(mem.span()) {}
    prefaulted mem;
    rtmem::free_list_allocator<Policy> a;
    void* allocate(std::size_t n) { return a.allocate(n, kAlign); }
    void deallocate(void* p, std::size_t n) { a.deallocate(p, n, kAlign); }
};

// Fixed-size heaps (Table 6.2).

/// The floor: the least a pool can do — a singly linked free list threaded through a buffer.
struct floor_pool {
    explicit floor_pool(std::size_t block, std::size_t count) : mem(block * count) {
        for (std::size_t i = count; i-- > 0;) {
            void* b = mem.bytes + i * block;
            *static_cast<void**>(b) = head;
            head = b;
        }
    }
    void* allocate(std::size_t) {
        void* p = head;
        head = *static_cast<void**>(p);
        return p;
    }
    void deallocate(void* p, std::size_t) {
        *static_cast<void**>(p) = head;
        head = p;
    }
    prefaulted mem;
    void* head = nullptr;
};
struct rtmem_pool {
    rtmem_pool(std::size_t block, std::size_t count)
        : mem(block * count + 4096), p(mem.span(), block, kAlign) {}
    void* allocate(std::size_t) { return p.allocate_block(); }
    void deallocate(void* b, std::size_t) { p.deallocate_block(b); }
    prefaulted mem;
    rtmem::pool_allocator<> p;
};
struct glibc_fixed : glibc_heap {
    glibc_fixed(std::size_t, std::size_t) {}
};
#if RTMEM_HAVE_FOONATHAN
struct foonathan_pool {
    foonathan_pool(std::size_t block, std::size_t count) : p(block, block * count + 4096) {}
    void* allocate(std::size_t) { return p.allocate_node(); }
    void deallocate(void* b, std::size_t) { p.deallocate_node(b); }
    foonathan::memory::memory_pool<> p;
};
#endif
#if RTMEM_HAVE_BOOST
struct boost_pool {
    boost_pool(std::size_t block, std::size_t count) : p(block, count) {}
    void* allocate(std::size_t) { return p.malloc(); }
    void deallocate(void* b, std::size_t) { p.free(b); }
    boost::pool<> p;
};
#endif

std::vector<std::size_t> random_permutation(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = i;
    std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
    return v;
}

std::vector<std::size_t> random_sizes(std::size_t n, std::size_t lo, std::size_t hi,
                                      std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> d(lo, hi);
    std::vector<std::size_t> v(n);
    for (auto& s : v) s = d(rng);
    return v;
}

// ---------------------------------------------------------------------------------------------
// Table 6.2: 256 B; 2000 alloc, 1000 random free, 1000 alloc, 2000 random free.

template <class Heap>
void table6_2(benchmark::State& state) {
    constexpr std::size_t size = 256, n = 2000;
    Heap heap(size, n + 16);
    std::vector<void*> slots(n);
    const auto first_free = random_permutation(n, 1);   // frees 1000 of these
    const auto second_free = random_permutation(n, 2);  // frees all 2000
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) slots[i] = heap.allocate(size);
        for (std::size_t i = 0; i < n / 2; ++i) heap.deallocate(slots[first_free[i]], size);
        for (std::size_t i = 0; i < n / 2; ++i) slots[first_free[i]] = heap.allocate(size);
        for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[second_free[i]], size);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 6000);
    state.counters["ns_per_op"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * 6000,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---------------------------------------------------------------------------------------------
// Fig 6.6: N blocks of 16..1024 B allocated, then freed in no / FIFO / random order.

enum class pattern { alloc_only, fifo, random };

template <class Heap, pattern P>
void fig6_6(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    Heap heap;
    const auto sizes = random_sizes(n, 16, 1024, 3);
    const auto order = random_permutation(n, 4);
    std::vector<void*> slots(n);
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) slots[i] = heap.allocate(sizes[i]);
        if constexpr (P == pattern::alloc_only) {
            state.PauseTiming();
            for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[i], sizes[i]);
            state.ResumeTiming();
        } else if constexpr (P == pattern::fifo) {
            for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[i], sizes[i]);
        } else {
            for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[order[i]], sizes[order[i]]);
        }
        benchmark::ClobberMemory();
    }
    const double ops = static_cast<double>(n) * (P == pattern::alloc_only ? 1 : 2);
    state.counters["ns_per_op"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * ops,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---------------------------------------------------------------------------------------------
// Flat: steady state with N live blocks; each iteration frees a random block and allocates a
// new one of a random size in its place.

template <class Heap>
void flat(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    Heap heap(std::max<std::size_t>(n * 1100, 8u << 20));
    constexpr std::size_t ring = 1 << 16;
    const auto sizes = random_sizes(ring, 16, 1024, 5);
    std::mt19937_64 rng(6);
    std::vector<std::size_t> victims(ring);
    for (auto& v : victims) v = rng() % n;
    std::vector<void*> slots(n);
    std::vector<std::size_t> slot_size(n);
    for (std::size_t i = 0; i < n; ++i) {
        slot_size[i] = sizes[i % ring];
        slots[i] = heap.allocate(slot_size[i]);
    }
    std::size_t k = 0;
    for (auto _ : state) {
        const std::size_t v = victims[k % ring];
        heap.deallocate(slots[v], slot_size[v]);
        slot_size[v] = sizes[(k * 7) % ring];
        slots[v] = heap.allocate(slot_size[v]);
        // The const overload: benchmark 1.7's "+m,r" in-out form made GCC 12 -O3 miscompile
        // this loop (garbage in slots[]; clang, -O2 and -fno-ipa-modref were all fine).
        benchmark::DoNotOptimize(std::as_const(slots[v]));
        ++k;
    }
    for (std::size_t i = 0; i < n; ++i) heap.deallocate(slots[i], slot_size[i]);
}

// Heaps with a size argument for flat (the peers ignore it).
struct glibc_sized : glibc_heap {
    explicit glibc_sized(std::size_t) {}
};
#if RTMEM_HAVE_MIMALLOC
struct mimalloc_sized : mimalloc_heap {
    explicit mimalloc_sized(std::size_t) {}
};
#endif

// ---------------------------------------------------------------------------------------------
// Latency: per-operation cycle counts turned into ns.

std::uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence();
    const std::uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

double ns_per_tick() {
    static const double v = [] {
        const auto t0 = std::chrono::steady_clock::now();
        const auto c0 = ticks();
        while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
        }
        const auto c1 = ticks();
        const auto ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0);
        return ns.count() / static_cast<double>(c1 - c0);
    }();
    return v;
}

// With large_every != 0, one request in large_every is 64 KiB..1 MiB (a streaming buffer, a
// decoded texture) instead of lo..hi: the case where malloc goes to the kernel.
template <class Heap>
void latency(benchmark::State& state, std::size_t lo, std::size_t hi, std::size_t large_every) {
    constexpr std::size_t live = 2000, ops = 1000000, warmup = 100000;
    Heap heap(std::size_t{64} << 20);
    auto sizes = random_sizes(1 << 16, lo, hi, 7);
    if (large_every != 0) {
        const auto large = random_sizes(sizes.size() / large_every + 1, 64 << 10, 1 << 20, 9);
        for (std::size_t i = large_every - 1; i < sizes.size(); i += large_every)
            sizes[i] = large[i / large_every];
    }
    std::mt19937_64 rng(8);
    std::vector<void*> slots(live);
    std::vector<std::size_t> slot_size(live);
    std::vector<std::uint32_t> alloc_t(ops / 2), free_t(ops / 2);
    const std::uint64_t overhead = [] {
        std::vector<std::uint64_t> v(1000);
        for (auto& x : v) {
            const auto a = ticks();
            x = ticks() - a;
        }
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }();
    for (auto _ : state) {
        for (std::size_t i = 0; i < live; ++i) {
            slot_size[i] = sizes[i];
            slots[i] = heap.allocate(slot_size[i]);
        }
        for (std::size_t k = 0; k < warmup + ops / 2; ++k) {
            const std::size_t v = rng() % live;
            const std::size_t s = sizes[k & 0xFFFF];
            const auto t0 = ticks();
            heap.deallocate(slots[v], slot_size[v]);
            const auto t1 = ticks();
            slots[v] = heap.allocate(s);
            const auto t2 = ticks();
            slot_size[v] = s;
            if (k >= warmup) {
                free_t[k - warmup] =
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(t1 - t0, UINT32_MAX));
                alloc_t[k - warmup] =
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(t2 - t1, UINT32_MAX));
            }
        }
        for (std::size_t i = 0; i < live; ++i) heap.deallocate(slots[i], slot_size[i]);
    }
    auto report = [&](const char* prefix, std::vector<std::uint32_t>& v) {
        std::sort(v.begin(), v.end());
        auto at = [&](double q) {
            const auto i =
                std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
            const double c = static_cast<double>(v[i] > overhead ? v[i] - overhead : 0);
            return c * ns_per_tick();
        };
        const std::string p = prefix;
        state.counters[p + "p50_ns"] = at(0.50);
        state.counters[p + "p99_ns"] = at(0.99);
        state.counters[p + "p999_ns"] = at(0.999);
        state.counters[p + "p9999_ns"] = at(0.9999);
        state.counters[p + "max_ns"] = at(1.0);
    };
    report("alloc_", alloc_t);
    report("free_", free_t);
}

struct pool_sized {
    explicit pool_sized(std::size_t) : mem(1100 * 2048), p(mem.span(), 1024, kAlign) {}
    void* allocate(std::size_t) { return p.allocate_block(); }
    void deallocate(void* b, std::size_t) { p.deallocate_block(b); }
    prefaulted mem;
    rtmem::pool_allocator<> p;
};

// ---------------------------------------------------------------------------------------------
// Instruction counts: out-of-line entry points (no inlining, no constant propagation) whose
// inclusive cost callgrind reports per call: `valgrind --tool=callgrind` then
// `callgrind_annotate --inclusive=yes` and divide by the call count (call + ret included).
#if defined(__GNUC__) && !defined(__clang__)
#define RTMEM_BENCH_ENTRY __attribute__((noinline, noipa))
#else
#define RTMEM_BENCH_ENTRY RTMEM_NOINLINE
#endif

extern "C" RTMEM_BENCH_ENTRY void* ic_pool_allocate(rtmem::pool_allocator<>* p) {
    return p->allocate_block();
}
extern "C" RTMEM_BENCH_ENTRY void ic_pool_deallocate(rtmem::pool_allocator<>* p, void* b) {
    p->deallocate_block(b);
}
extern "C" RTMEM_BENCH_ENTRY void* ic_floor_allocate(floor_pool* p) {
    return p->allocate(0);
}
extern "C" RTMEM_BENCH_ENTRY void ic_floor_deallocate(floor_pool* p, void* b) {
    p->deallocate(b, 0);
}
extern "C" RTMEM_BENCH_ENTRY void* ic_tlsf_allocate(rtmem::tlsf_allocator* t, std::size_t n) {
    return t->allocate(n, kAlign);
}
extern "C" RTMEM_BENCH_ENTRY void ic_tlsf_deallocate(rtmem::tlsf_allocator* t, void* p,
                                                     std::size_t n) {
    t->deallocate(p, n, kAlign);
}
// The worst paths, each on its own symbol so callgrind reports them apart.
extern "C" RTMEM_BENCH_ENTRY void* ic_tlsf_allocate_worst(rtmem::tlsf_allocator* t, std::size_t n) {
    return t->allocate(n, kAlign);
}
extern "C" RTMEM_BENCH_ENTRY void ic_tlsf_deallocate_worst(rtmem::tlsf_allocator* t, void* p,
                                                           std::size_t n) {
    t->deallocate(p, n, kAlign);
}
// The front cache: a parked block taken back, a freed block parked.
extern "C" RTMEM_BENCH_ENTRY void* ic_tlsf_allocate_cached(rtmem::tlsf_allocator* t,
                                                           std::size_t n) {
    return t->allocate(n, kAlign);
}
extern "C" RTMEM_BENCH_ENTRY void ic_tlsf_deallocate_cached(rtmem::tlsf_allocator* t, void* p,
                                                            std::size_t n) {
    t->deallocate(p, n, kAlign);
}
extern "C" RTMEM_BENCH_ENTRY void* ic_malloc(std::size_t n) {
    return glibc_malloc(n);
}
extern "C" RTMEM_BENCH_ENTRY void ic_free(void* p) {
    glibc_free(p);
}

void instructions_pool(benchmark::State& state) {
    prefaulted mem(1 << 20);
    rtmem::pool_allocator<> p{mem.span(), 256, kAlign};
    floor_pool f(256, 4096);
    for (auto _ : state) {
        for (int i = 0; i < 1000; ++i) {
            void* a = ic_pool_allocate(&p);
            ic_pool_deallocate(&p, a);
            void* b = ic_floor_allocate(&f);
            ic_floor_deallocate(&f, b);
        }
    }
}

void instructions_tlsf(benchmark::State& state) {
    prefaulted mem(8 << 20);
    rtmem::tlsf_allocator t{mem.span()};
    const auto sizes = random_sizes(4096, 16, 1024, 9);
    std::vector<void*> live(512);
    for (std::size_t i = 0; i < live.size(); ++i) live[i] = t.allocate(sizes[i], kAlign);
    for (auto _ : state) {
        // Typical: random frees and allocations among 512 live blocks.
        for (std::size_t k = 0; k < 1000; ++k) {
            const std::size_t v = (k * 131) % live.size();
            ic_tlsf_deallocate(&t, live[v], sizes[v]);
            live[v] = ic_tlsf_allocate(&t, sizes[v]);
        }
        // Worst free: both neighbours free (two unlinks, two merges, one insert).
        // Worst allocate: the exact class is empty, so the first-level bitmap is searched and
        // the big block found there is split (unlink, split, insert remainder).
        for (int k = 0; k < 1000; ++k) {
            void* a = t.allocate(4000, kAlign);
            void* b = t.allocate(4000, kAlign);
            void* c = t.allocate(4000, kAlign);
            void* guard = t.allocate(16, kAlign);
            t.deallocate(a, 4000, kAlign);
            t.deallocate(c, 4000, kAlign);
            ic_tlsf_deallocate_worst(&t, b, 4000);
            void* d = ic_tlsf_allocate_worst(&t, 300);
            t.deallocate(d, 300, kAlign);
            t.deallocate(guard, 16, kAlign);
        }
    }
    for (std::size_t i = 0; i < live.size(); ++i) t.deallocate(live[i], sizes[i], kAlign);
    // The cached paths: free parks, the next request of that size pops.
    t.set_cache_depth(7);
    for (int k = 0; k < 1000; ++k) {
        void* a = t.allocate(300, kAlign);
        ic_tlsf_deallocate_cached(&t, a, 300);
        a = ic_tlsf_allocate_cached(&t, 300);
        t.deallocate(a, 300, kAlign);
    }
}

void instructions_glibc(benchmark::State& state) {
    for (auto _ : state) {
        for (int i = 0; i < 1000; ++i) ic_free(ic_malloc(256));
    }
}

// ---------------------------------------------------------------------------------------------
// Registration.

#define RTMEM_FIXED(name, Heap) \
    benchmark::RegisterBenchmark("table6_2/" name, table6_2<Heap>)->Unit(benchmark::kMicrosecond)

template <pattern P>
constexpr const char* pattern_name() {
    return P == pattern::alloc_only ? "alloc_only" : P == pattern::fifo ? "fifo" : "random";
}

template <class Heap, pattern P>
void register_fig(const char* heap) {
    auto* b = benchmark::RegisterBenchmark(
        (std::string("fig6_6/") + pattern_name<P>() + "/" + heap).c_str(), fig6_6<Heap, P>);
    // QUICK mode (make bench QUICK=1): the two ends of the sweep only.
    for (int live : rtmem::bench::quick_mode() ? std::vector<int>{1000, 4000}
                                               : std::vector<int>{1000, 2000, 3000, 4000})
        b->Arg(live);
    b->Unit(benchmark::kMicrosecond);
}

template <class Heap>
void register_fig_all(const char* heap) {
    register_fig<Heap, pattern::alloc_only>(heap);
    register_fig<Heap, pattern::fifo>(heap);
    register_fig<Heap, pattern::random>(heap);
}

struct glibc_default : glibc_heap {};
template <class Base>
struct default_constructed : Base {};

void register_all() {
    RTMEM_FIXED("floor", floor_pool);
    RTMEM_FIXED("pool", rtmem_pool);
    RTMEM_FIXED("glibc", glibc_fixed);
#if RTMEM_HAVE_FOONATHAN
    RTMEM_FIXED("foonathan_memory_pool", foonathan_pool);
#endif
#if RTMEM_HAVE_BOOST
    RTMEM_FIXED("boost_pool", boost_pool);
#endif

    register_fig_all<free_list_heap<rtmem::first_fit>>("free_list_first_fit");
    register_fig_all<free_list_heap<rtmem::best_fit>>("free_list_best_fit");
    register_fig_all<tlsf_heap>("tlsf");
    register_fig_all<tlsf_cached_heap>("tlsf_cached");
    register_fig_all<glibc_heap>("glibc");
#if RTMEM_HAVE_MIMALLOC
    register_fig_all<mimalloc_heap>("mimalloc");
#endif
#if RTMEM_HAVE_JEMALLOC
    register_fig_all<jemalloc_heap>("jemalloc");
#endif
#if RTMEM_HAVE_TCMALLOC
    register_fig_all<tcmalloc_heap>("tcmalloc");
#endif
    register_fig_all<pmr_pool_heap>("pmr_unsync_pool");

    // 30 live blocks: everything fits in L1, so what remains is work and branch mispredictions.
    for (auto* b : {
             benchmark::RegisterBenchmark("flat/tlsf", flat<tlsf_heap>),
                 benchmark::RegisterBenchmark("flat/tlsf_cached", flat<tlsf_cached_heap>),
                 benchmark::RegisterBenchmark("flat/free_list_first_fit",
                                              flat<free_list_heap<rtmem::first_fit>>),
                 benchmark::RegisterBenchmark("flat/glibc", flat<glibc_sized>),
#if RTMEM_HAVE_MIMALLOC
                 benchmark::RegisterBenchmark("flat/mimalloc", flat<mimalloc_sized>),
#endif
         })
        rtmem::bench::quick_mode() ? b->Arg(1000)->Arg(10000)
                                   : b->Arg(30)->Arg(1000)->Arg(10000)->Arg(100000);

    // 10^6 scattered live blocks (about 520 MB of blocks; TLSF gets a 1.1 GB pre-faulted pool):
    // only with RTMEM_BENCH_HUGE=1, so the default suite stays small.
    if (const char* huge = std::getenv("RTMEM_BENCH_HUGE"); huge != nullptr && huge[0] == '1') {
        benchmark::RegisterBenchmark("flat/tlsf", flat<tlsf_heap>)->Arg(1000000);
        benchmark::RegisterBenchmark("flat/tlsf_cached", flat<tlsf_cached_heap>)->Arg(1000000);
        benchmark::RegisterBenchmark("flat/glibc", flat<glibc_sized>)->Arg(1000000);
#if RTMEM_HAVE_MIMALLOC
        benchmark::RegisterBenchmark("flat/mimalloc", flat<mimalloc_sized>)->Arg(1000000);
#endif
    }

    // latency/: blocks of 16..1024 B (pool: 1024 B); latency_mixed/: 1 request in 256 is
    // 64 KiB..1 MiB.
    for (const std::size_t large_every : {std::size_t{0}, std::size_t{256}}) {
        const std::string family = large_every == 0 ? "latency/" : "latency_mixed/";
        auto reg = [&](const char* heap, auto fn, std::size_t lo, std::size_t hi) {
            benchmark::RegisterBenchmark((family + heap).c_str(), fn, lo, hi, large_every)
                ->Iterations(1)
                ->Unit(benchmark::kMillisecond);
        };
        if (large_every == 0) reg("pool", latency<pool_sized>, 1024, 1024);
        reg("tlsf", latency<tlsf_heap>, 16, 1024);
        reg("tlsf_cached", latency<tlsf_cached_heap>, 16, 1024);
        reg("glibc", latency<glibc_sized>, 16, 1024);
#if RTMEM_HAVE_MIMALLOC
        reg("mimalloc", latency<mimalloc_sized>, 16, 1024);
#endif
    }

    benchmark::RegisterBenchmark("instructions/pool_and_floor", instructions_pool)->Iterations(1);
    benchmark::RegisterBenchmark("instructions/tlsf", instructions_tlsf)->Iterations(1);
    benchmark::RegisterBenchmark("instructions/glibc", instructions_glibc)->Iterations(1);
}

// Console output plus a ratio table: each benchmark's time against the floor (table6_2) or
// glibc (fig6_6, flat) with the same arguments. Uses the median when repetitions are asked for.
class ratio_reporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& r : runs) {
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
            std::string name = r.benchmark_name();
            if (const auto pos = name.find("_median"); pos != std::string::npos) name.erase(pos);
            times_[name] = r.GetAdjustedCPUTime();  // CPU time: the machine may be shared
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\nratios (CPU time / baseline CPU time; < 1 is faster than the baseline)\n");
        for (const auto& [name, t] : times_) {
            const auto base = baseline(name);
            if (base.empty() || base == name) continue;
            const auto it = times_.find(base);
            if (it == times_.end() || it->second <= 0) continue;
            std::printf("  %-48s %7.3f x %s\n", name.c_str(), t / it->second, base.c_str());
        }
    }

  private:
    static std::string baseline(const std::string& name) {
        if (name.rfind("table6_2/", 0) == 0) return "table6_2/floor";
        for (const char* family : {"fig6_6/", "flat/"}) {
            if (name.rfind(family, 0) != 0) continue;
            // fig6_6/<pattern>/<heap>/N -> fig6_6/<pattern>/glibc/N ; flat/<heap>/N -> flat/glibc/N
            const auto last = name.rfind('/');
            const auto heap_start = name.rfind('/', last - 1) + 1;
            return name.substr(0, heap_start) + "glibc" + name.substr(last);
        }
        return {};
    }
    std::map<std::string, double> times_;
};

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::AddCustomContext("glibc_baseline", glibc.genuine ? "libc.so.6 malloc (dlsym)"
                                                                : "process malloc (may be a peer)");
    // Look for a non-console format before Initialize() consumes the flags.
    bool console = true;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--benchmark_format", 18) == 0 &&
            std::strstr(argv[i], "console") == nullptr)
            console = false;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (console) {
        ratio_reporter r;
        benchmark::RunSpecifiedBenchmarks(&r);
    } else {
        benchmark::RunSpecifiedBenchmarks();
    }
    benchmark::Shutdown();
    return 0;
}
