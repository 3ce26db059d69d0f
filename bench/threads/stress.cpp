// Multi-threaded allocator stress, modelled on mimalloc-bench's workloads (written here):
//   larson         each of T chains keeps 1000 live blocks (16..1000 B) and replaces random ones;
//                  every epoch a new thread takes the chain over, so it frees blocks its exited
//                  predecessor allocated (cross-thread frees and thread churn, as in larson)
//   xmalloc        producer/consumer: threads allocate batches of 64 (16..512 B) into a shared
//                  queue and free batches taken from it, mostly allocated by another thread
//   cache_scratch  each thread frees one 8-byte object the main thread allocated, then allocates,
//                  writes and frees 8-byte objects: slow when a heap puts two threads' objects on
//                  one cache line (false sharing)
//   mstress        rounds of T short-lived threads: each allocates 2000 blocks of 16..4096 B,
//                  frees most, and leaves a third to the next round's threads
//   alloc_test     each thread keeps 10000 live blocks of Pareto-distributed sizes (mostly
//                  small, heavy tail to 64 KiB) and replaces random ones
// One process per (heap, workload, threads): `rtmem_threads_stress <heap> <workload> <threads>`,
// heap = malloc (whatever library serves malloc in this process: glibc, or a peer through
// LD_PRELOAD) | rt_heap | rt_heap_rt (real-time mode: 256 MiB committed and prefaulted up front).
// Prints one line of key=value pairs: wall time, CPU time, peak RSS, the latency distribution of
// the allocating calls (every call timed with rdtsc; the timing costs every heap the same), and
// which library served the calls, malloc and operator new (dladdr). bench/threads/run.py runs
// the grid and prints the table.
#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "rtmem/alloc/rt_heap.hpp"
#include "../xorshift.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

// ---- the heap under test ---------------------------------------------------------------------

rtmem::rt_heap* rt = nullptr;  // null: malloc/free

void* allocate(std::size_t n) noexcept {
    return rt ? rt->allocate(n, 16) : std::malloc(n);
}
void release(void* p, std::size_t n) noexcept {
    if (rt)
        rt->deallocate(p, n, 16);
    else
        std::free(p);
}

// ---- latency of allocating calls --------------------------------------------------------------

std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    unsigned aux = 0;
    return __rdtscp(&aux);
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Log-linear histogram: 16 sub-buckets per power of two of ticks (<= 6 % error), exact max.
struct histogram {
    static constexpr unsigned sub = 16;
    std::uint64_t counts[64 * sub] = {};
    std::uint64_t max = 0, n = 0;
    static unsigned bucket(std::uint64_t t) noexcept {
        if (t < sub) return static_cast<unsigned>(t);
        const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(t));
        return (msb - 3) * sub + static_cast<unsigned>((t >> (msb - 4)) & (sub - 1));
    }
    static double lower(unsigned b) noexcept {
        if (b < sub) return b;
        const unsigned msb = b / sub + 3;
        return std::ldexp(1.0 + (b % sub) / 16.0, static_cast<int>(msb));
    }
    void add(std::uint64_t t) noexcept {
        ++counts[bucket(t)];
        max = std::max(max, t);
        ++n;
    }
    void merge(const histogram& o) noexcept {
        for (unsigned i = 0; i < 64 * sub; ++i) counts[i] += o.counts[i];
        max = std::max(max, o.max);
        n += o.n;
    }
    double quantile(double q) const noexcept {
        const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
        std::uint64_t seen = 0;
        for (unsigned i = 0; i < 64 * sub; ++i) {
            seen += counts[i];
            if (seen >= want && counts[i] != 0) return lower(i);
        }
        return static_cast<double>(max);
    }
};

std::mutex results_lock;
histogram all_latencies;

thread_local histogram* local_latencies = nullptr;

// RTMEM_STRESS_SLOWEST=N: each thread keeps its N slowest allocating calls (latency, the call's
// index in the thread, the size), printed to stderr at the end: where a tail comes from (a
// thread's first calls, or calls anywhere in the run).
struct slow_call {
    std::uint64_t ticks, index;
    std::size_t size;
};
std::size_t slowest_kept = 0;
std::vector<std::vector<slow_call>> slowest_of_threads;
thread_local std::vector<slow_call>* local_slowest = nullptr;
thread_local std::uint64_t local_calls = 0;

void keep_if_slow(std::uint64_t t, std::size_t size) noexcept {
    std::vector<slow_call>& v = *local_slowest;
    const slow_call c{t, local_calls, size};
    if (v.size() < slowest_kept) {
        v.push_back(c);
        return;
    }
    auto least = std::min_element(v.begin(), v.end(), [](const slow_call& a, const slow_call& b) {
        return a.ticks < b.ticks;
    });
    if (least->ticks < t) *least = c;
}

// Each worker thread records into its own histogram, merged when it finishes.
struct recording {
    std::unique_ptr<histogram> h = std::make_unique<histogram>();
    // Every thread starts with a recording. Its histogram is the thread's first malloc, which
    // sets up a malloc peer's thread cache outside the timed calls; rt_heap rows bind the thread
    // here too (rt_heap::attach, what docs/rt-heap.md tells threads to do at start), so no heap's
    // per-thread set-up lands in the latency columns (it still counts in CPU time).
    recording() {
        local_latencies = h.get();
        local_calls = 0;
        if (slowest_kept != 0) {
            slow = std::make_unique<std::vector<slow_call>>();
            slow->reserve(slowest_kept);
            local_slowest = slow.get();
        }
        if (rt != nullptr) rt->attach();
    }
    ~recording() {
        std::lock_guard guard(results_lock);
        all_latencies.merge(*h);
        local_latencies = nullptr;
        if (slow) slowest_of_threads.push_back(*slow);
        local_slowest = nullptr;
    }
    std::unique_ptr<std::vector<slow_call>> slow;
};

void* timed_allocate(std::size_t n) noexcept {
    const std::uint64_t t0 = ticks();
    void* p = allocate(n);
    const std::uint64_t t = ticks() - t0;
    local_latencies->add(t);
    if (local_slowest != nullptr) keep_if_slow(t, n);
    ++local_calls;
    if (p == nullptr) {
        std::fprintf(stderr, "allocation of %zu bytes failed\n", n);
        std::abort();
    }
    return p;
}

using rng = rtmem::bench::xorshift;

struct block {
    void* p;
    std::size_t n;
};

void touch(void* p, std::size_t n) noexcept {
    std::memset(p, 0xA5, std::min<std::size_t>(n, 64));
}

// Allocates n bytes into b (timed) and writes its first bytes, as a program would.
void fresh(block& b, std::size_t n) noexcept {
    b.n = n;
    b.p = timed_allocate(n);
    touch(b.p, n);
}

// ---- workloads --------------------------------------------------------------------------------

void larson(unsigned threads, double scale) {
    constexpr std::size_t live = 1000;
    const int epochs = 20;
    const auto ops = static_cast<std::size_t>(50000 * scale);
    std::vector<std::thread> chains;
    for (unsigned c = 0; c < threads; ++c) {
        chains.emplace_back([=] {
            std::vector<block> slots(live, block{nullptr, 0});
            rng r{0x1234567ull + c};
            for (int e = 0; e < epochs; ++e) {
                std::thread([&] {  // the successor takes the chain over
                    recording rec;
                    for (auto& s : slots)
                        if (s.p == nullptr) fresh(s, r.range(16, 1000));
                    for (std::size_t i = 0; i < ops; ++i) {
                        block& s = slots[r.below(live)];
                        release(s.p, s.n);
                        fresh(s, r.range(16, 1000));
                    }
                })
                    .join();
            }
            for (auto& s : slots) release(s.p, s.n);
        });
    }
    for (auto& t : chains) t.join();
}

void xmalloc(unsigned threads, double scale) {
    std::mutex queue_lock;
    std::deque<std::vector<block>> queue;
    const auto batches = static_cast<std::size_t>(4000 * scale);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            recording rec;
            rng r{0xABCDEFull + t};
            for (std::size_t b = 0; b < batches; ++b) {
                std::vector<block> batch(64);
                for (auto& x : batch) fresh(x, r.range(16, 512));
                std::vector<block> other;
                {
                    std::lock_guard guard(queue_lock);
                    queue.push_back(std::move(batch));
                    if (queue.size() > 4 * threads) {
                        other = std::move(queue.front());
                        queue.pop_front();
                    }
                }
                for (auto& x : other) release(x.p, x.n);
            }
        });
    }
    for (auto& t : pool) t.join();
    for (auto& batch : queue)
        for (auto& x : batch) release(x.p, x.n);
}

void cache_scratch(unsigned threads, double scale) {
    std::vector<block> given(threads);
    {
        recording rec;
        for (auto& g : given) g.p = timed_allocate(g.n = 8);
    }
    const auto rounds = static_cast<std::size_t>(20000 * scale);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            recording rec;
            release(given[t].p, given[t].n);
            for (std::size_t i = 0; i < rounds; ++i) {
                auto* p = static_cast<volatile char*>(timed_allocate(8));
                for (int k = 0; k < 100; ++k)
                    for (int j = 0; j < 8; ++j) p[j] = static_cast<char>(p[j] + 1);
                release(const_cast<char*>(p), 8);
            }
        });
    }
    for (auto& t : pool) t.join();
}

void mstress(unsigned threads, double scale) {
    const int rounds = static_cast<int>(50 * scale) + 1;
    // Thread t of a round frees what thread t + 1 of the previous round left (prev), and leaves
    // a third of its own blocks in next[t].
    std::vector<std::vector<block>> prev(threads), next(threads);
    for (int round = 0; round < rounds; ++round) {
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t) {
            pool.emplace_back([&, t, round] {
                recording rec;
                rng r{0x777ull + static_cast<std::uint64_t>(round) * 131 + t};
                std::vector<block> mine(2000);
                for (auto& x : mine) fresh(x, r.range(16, 4096));
                for (auto& x : prev[(t + 1) % threads]) release(x.p, x.n);
                for (std::size_t i = 0; i < mine.size(); ++i) {
                    if (i % 3 == 0)
                        next[t].push_back(mine[i]);
                    else
                        release(mine[i].p, mine[i].n);
                }
            });
        }
        for (auto& th : pool) th.join();
        prev = std::exchange(next, std::vector<std::vector<block>>(threads));
    }
    for (auto& s : prev)
        for (auto& x : s) release(x.p, x.n);
}

void alloc_test(unsigned threads, double scale) {
    constexpr std::size_t live = 10000;
    const auto ops = static_cast<std::size_t>(400000 * scale);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([=] {
            recording rec;
            rng r{0x5151ull + t};
            auto pareto = [&r] {  // shape 1.2, minimum 16 B, capped at 64 KiB
                const double u = (static_cast<double>(r.next() >> 11) + 1.0) * 0x1.0p-53;
                return static_cast<std::size_t>(std::min(16.0 / std::pow(u, 1.0 / 1.2), 65536.0));
            };
            std::vector<block> slots(live);
            for (auto& s : slots) fresh(s, pareto());
            for (std::size_t i = 0; i < ops; ++i) {
                block& s = slots[r.below(live)];
                release(s.p, s.n);
                fresh(s, pareto());
            }
            for (auto& s : slots) release(s.p, s.n);
        });
    }
    for (auto& t : pool) t.join();
}

// ---- reporting --------------------------------------------------------------------------------

std::string library_of(const void* address) {
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "unknown";
    std::string path = info.dli_fname;
    return path.substr(path.find_last_of('/') + 1);
}

// Peak resident set of this process image (VmHWM): getrusage's ru_maxrss would carry over the
// high-water mark of the process that exec'ed this one (a Python driver, for instance).
long peak_rss_kb() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr) return -1;
    char line[256];
    long kb = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
    return kb;
}

double ns_per_tick() {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = ticks();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100)) {
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    return ns / static_cast<double>(ticks() - c0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: %s malloc|rt_heap|rt_heap_rt larson|xmalloc|cache_scratch|mstress|"
                     "alloc_test THREADS [SCALE]\n",
                     argv[0]);
        return 2;
    }
    const std::string_view heap = argv[1], workload = argv[2];
    if (const char* n = std::getenv("RTMEM_STRESS_SLOWEST"))
        slowest_kept = static_cast<std::size_t>(std::atoi(n));
    const auto threads = static_cast<unsigned>(std::max(1, std::atoi(argv[3])));
    const double scale = argc > 4 ? std::atof(argv[4]) : 1.0;
    std::unique_ptr<rtmem::rt_heap> owned;
    if (heap == "rt_heap" || heap == "rt_heap_rt") {
        rtmem::rt_heap_options o;
        if (heap == "rt_heap_rt")
            o = rtmem::rt_heap_options::real_time_with(std::size_t{256} << 20);
        if (const char* batch = std::getenv("RTMEM_STRESS_DRAIN_BATCH"))  // for experiments
            o.drain_batch = static_cast<unsigned>(std::atoi(batch));
        if (const char* runs = std::getenv("RTMEM_STRESS_RUNS");
            runs && std::string_view(runs) == "always")
            o.refill_runs = rtmem::rt_heap_options::run_start::always;  // runs in every heap
        owned = std::make_unique<rtmem::rt_heap>(o);
        if (!owned->ready()) {
            std::fprintf(stderr, "rt_heap could not reserve its memory\n");
            return 1;
        }
        rt = owned.get();
    } else if (heap != "malloc") {
        std::fprintf(stderr, "unknown heap '%s'\n", argv[1]);
        return 2;
    }
    const double tick_ns = ns_per_tick();
    void (*run)(unsigned, double) = nullptr;
    if (workload == "larson") run = larson;
    if (workload == "xmalloc") run = xmalloc;
    if (workload == "cache_scratch") run = cache_scratch;
    if (workload == "mstress") run = mstress;
    if (workload == "alloc_test") run = alloc_test;
    if (run == nullptr) {
        std::fprintf(stderr, "unknown workload '%s'\n", argv[2]);
        return 2;
    }
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const auto t0 = std::chrono::steady_clock::now();
    run(threads, scale);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    auto seconds = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
    };
    const double cpu = seconds(after.ru_utime) - seconds(before.ru_utime) +
                       seconds(after.ru_stime) - seconds(before.ru_stime);
    if (rt != nullptr) {  // every workload frees all it allocated: the heap must agree
        rt->collect();
        if (rt->stats().live_count != 0 || !rt->check()) {
            std::fprintf(stderr, "rt_heap: %zu blocks still live after the run\n",
                         rt->stats().live_count);
            return 1;
        }
    }
    void* (*malloc_fn)(std::size_t) = &std::malloc;
    void* (*new_fn)(std::size_t) = &::operator new;
    const histogram& h = all_latencies;
    for (std::size_t t = 0; t < slowest_of_threads.size(); ++t) {
        auto& v = slowest_of_threads[t];
        std::sort(v.begin(), v.end(),
                  [](const slow_call& a, const slow_call& b) { return a.ticks > b.ticks; });
        std::fprintf(stderr, "recording %zu, slowest calls (ns @ call index, size):", t);
        for (const slow_call& c : v)
            std::fprintf(stderr, " %.0f@%llu,%zu", static_cast<double>(c.ticks) * tick_ns,
                         static_cast<unsigned long long>(c.index), c.size);
        std::fprintf(stderr, "\n");
    }
    std::printf(
        "workload=%s heap=%s threads=%u calls=%s malloc=%s new=%s wall_s=%.4f cpu_s=%.4f "
        "peak_rss_kb=%ld allocs=%llu p50_ns=%.0f p99_ns=%.0f p999_ns=%.0f p9999_ns=%.0f "
        "max_ns=%.0f\n",
        argv[2], argv[1], threads,
        rt ? "rt_heap" : library_of(reinterpret_cast<void*>(malloc_fn)).c_str(),
        library_of(reinterpret_cast<void*>(malloc_fn)).c_str(),
        library_of(reinterpret_cast<void*>(new_fn)).c_str(), wall, cpu, peak_rss_kb(),
        static_cast<unsigned long long>(h.n), h.quantile(0.5) * tick_ns, h.quantile(0.99) * tick_ns,
        h.quantile(0.999) * tick_ns, h.quantile(0.9999) * tick_ns,
        static_cast<double>(h.max) * tick_ns);
    return 0;
}
