// The real-time view: a simulated game frame doing a realistic mix of allocations, run under each
// allocation strategy; the distribution of per-frame allocation time (p50, p99, p99.9, max) is
// what a frame budget feels. Parameters (docs/benchmarks.md, "Frame budget"):
//   temporaries: 8 scopes per frame, each growing a vector 32 -> 1024 B (6 allocations, the old
//                buffer freed on each growth, the last at scope end)
//   per-frame:   64 scratch blocks of 16..512 B, all freed at frame end
//   pooled:      4096 live 64 B objects; 32 despawned at random and 32 spawned per frame
//   long-lived:  one 1..16 KiB block per frame, freed 120 frames later
// Strategies: each peer heap for everything; "pmr" = monotonic buffers for temporaries and
// scratch, unsynchronized_pool_resource for the rest; "floor" = bump scopes, bump frame,
// free-list pool, malloc for long-lived; "rtmem" = temp_scope (thread-local arena) for
// temporaries, frame_allocator<2> for scratch, pool_allocator for pooled, TLSF for long-lived.
// Every block's first byte is written. The frame is timed with steady_clock; the clock's own
// cost (median of back-to-back reads) is subtracted and reported as clock_overhead_ns.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <vector>

#include <optional>
#include <rtmem/adapt/temporary.hpp>
#include <rtmem/alloc/frame.hpp>
#include <rtmem/alloc/pool.hpp>
#include <rtmem/alloc/tlsf.hpp>
#include <span>

#include "common.hpp"
#include "floors.hpp"
#include "peer_heaps.hpp"
#include "suite_mode.hpp"

namespace {

constexpr int scopes_per_frame = 8;
constexpr std::size_t scratch_per_frame = 64;
constexpr std::size_t pool_live = 4096;
constexpr std::size_t pool_churn = 32;
constexpr std::size_t pooled_size = 64;
constexpr std::size_t lasting_frames = 120;
constexpr int warmup_frames = 240;

inline void touch(void* p) {
    *static_cast<volatile unsigned char*>(p) = 1;
}

// ---- strategies ------------------------------------------------------------------------
template <class Heap>
struct heap_strategy {  // everything from one general-purpose heap
    static std::string name() { return std::string(Heap::name); }
    void begin_scope() {}
    void* temp(std::size_t n) { return Heap::allocate(n); }
    void temp_free(void* p, std::size_t n) { Heap::deallocate(p, n); }
    void end_scope() {}
    void* scratch(std::size_t n) {
        void* p = Heap::allocate(n);
        frame_blocks.push_back({p, n});
        return p;
    }
    void end_frame() {
        for (auto [p, n] : frame_blocks) Heap::deallocate(p, n);
        frame_blocks.clear();
    }
    void* pooled() { return Heap::allocate(pooled_size); }
    void unpool(void* p) { Heap::deallocate(p, pooled_size); }
    void* lasting(std::size_t n) { return Heap::allocate(n); }
    void release(void* p, std::size_t n) { Heap::deallocate(p, n); }

    struct block {
        void* p;
        std::size_t n;
    };
    std::vector<block> frame_blocks = std::vector<block>(0);
};

struct floor_strategy {  // hand-written floors: bump scopes, bump frame, free-list pool
    static std::string name() { return "floor"; }
    rtmem::bench::bump_floor temps{1 << 16};
    rtmem::bench::bump_floor frame{1 << 16};
    rtmem::bench::free_list_floor pool{pooled_size, pool_live * 2};
    std::vector<std::byte*> marks;
    void begin_scope() { marks.push_back(temps.marker()); }
    void* temp(std::size_t n) { return temps.allocate(n); }
    void temp_free(void*, std::size_t) {}
    void end_scope() {
        temps.rewind(marks.back());
        marks.pop_back();
    }
    void* scratch(std::size_t n) { return frame.allocate(n); }
    void end_frame() { frame.reset(); }
    void* pooled() { return pool.allocate(); }
    void unpool(void* p) { pool.deallocate(p); }
    void* lasting(std::size_t n) { return std::malloc(n); }
    void release(void* p, std::size_t) { std::free(p); }
};

struct pmr_strategy {  // the standard library: monotonic buffers and an unsynchronized pool
    static std::string name() { return "pmr"; }
    alignas(std::max_align_t) std::byte temp_buffer[1 << 14];
    alignas(std::max_align_t) std::byte frame_buffer[1 << 16];
    std::pmr::unsynchronized_pool_resource pool;
    std::pmr::monotonic_buffer_resource temps{temp_buffer, sizeof temp_buffer};
    std::pmr::monotonic_buffer_resource frame{frame_buffer, sizeof frame_buffer};
    void begin_scope() {}
    void* temp(std::size_t n) { return temps.allocate(n); }
    void temp_free(void*, std::size_t) {}
    void end_scope() { temps.release(); }
    void* scratch(std::size_t n) { return frame.allocate(n); }
    void end_frame() { frame.release(); }
    void* pooled() { return pool.allocate(pooled_size); }
    void unpool(void* p) { pool.deallocate(p, pooled_size); }
    void* lasting(std::size_t n) { return pool.allocate(n); }
    void release(void* p, std::size_t n) { pool.deallocate(p, n); }
};

struct rtmem_strategy {  // one rtmem allocator per kind of allocation
    static std::string name() { return "rtmem"; }
    std::optional<rtmem::temp_scope> scope;  // the thread's temporary arena, rewound per scope
    rtmem::frame_allocator<2> frame{1 << 16};
    rtmem::pool_allocator<> pool{pooled_size, 16, 1024};
    std::vector<std::byte> lasting_memory = std::vector<std::byte>(std::size_t{8} << 20);
    rtmem::tlsf_allocator lasting_heap{std::span<std::byte>(lasting_memory)};
    void begin_scope() { scope.emplace(); }
    void* temp(std::size_t n) { return rtmem::temporary_allocator().allocate(n); }
    void temp_free(void*, std::size_t) {}
    void end_scope() { scope.reset(); }
    void* scratch(std::size_t n) { return frame.allocate(n); }
    void end_frame() { frame.next_frame(); }
    void* pooled() { return pool.allocate_block(); }
    void unpool(void* p) { pool.deallocate_block(p); }
    void* lasting(std::size_t n) { return lasting_heap.allocate(n); }
    void release(void* p, std::size_t n) { lasting_heap.deallocate(p, n); }
};

// ---- the frame ---------------------------------------------------------------------------
template <class S>
struct world {
    S s;
    rtmem::bench::xorshift rng{0x9E3779B97F4A7C15ull};
    std::vector<void*> pool_objects;
    std::array<std::pair<void*, std::size_t>, lasting_frames> lasting{};
    std::size_t frame_index = 0;
    std::size_t allocations = 0;

    world() {
        for (std::size_t i = 0; i < pool_live; ++i) pool_objects.push_back(s.pooled());
    }
    ~world() {
        for (void* p : pool_objects) s.unpool(p);
        for (auto [p, n] : lasting)
            if (p != nullptr) s.release(p, n);
    }

    void frame() {
        allocations = 0;
        for (int scope = 0; scope < scopes_per_frame; ++scope) {
            s.begin_scope();
            void* buffer = nullptr;
            std::size_t size = 0;
            for (std::size_t n = 32; n <= 1024; n *= 2) {  // a temporary vector growing
                void* grown = s.temp(n);
                touch(grown);
                if (buffer != nullptr) s.temp_free(buffer, size);
                buffer = grown;
                size = n;
                ++allocations;
            }
            s.temp_free(buffer, size);
            s.end_scope();
        }
        for (std::size_t i = 0; i < scratch_per_frame; ++i) {
            touch(s.scratch(16 + rng.below(497)));
            ++allocations;
        }
        for (std::size_t i = 0; i < pool_churn; ++i) {
            std::size_t victim = rng.below(pool_objects.size());
            s.unpool(pool_objects[victim]);
            pool_objects[victim] = s.pooled();
            touch(pool_objects[victim]);
            ++allocations;
        }
        auto& slot = lasting[frame_index % lasting_frames];
        if (slot.first != nullptr) s.release(slot.first, slot.second);
        slot.second = 1024 + rng.below(15 * 1024 + 1);
        slot.first = s.lasting(slot.second);
        touch(slot.first);
        ++allocations;
        s.end_frame();
        ++frame_index;
    }
};

double clock_overhead_ns() {
    using clock = std::chrono::steady_clock;
    std::vector<double> d;
    for (int i = 0; i < 1001; ++i) {
        auto a = clock::now();
        auto b = clock::now();
        d.push_back(std::chrono::duration<double, std::nano>(b - a).count());
    }
    std::nth_element(d.begin(), d.begin() + 500, d.end());
    return d[500];
}

double percentile(std::vector<double>& v, double q) {
    auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

template <class S>
void frame_bench(benchmark::State& state) {
    using clock = std::chrono::steady_clock;
    const double overhead = clock_overhead_ns();
    auto w = std::make_unique<world<S>>();
    for (int i = 0; i < warmup_frames; ++i) w->frame();
    std::vector<double> frame_ns;
    frame_ns.reserve(static_cast<std::size_t>(state.max_iterations));
    for (auto _ : state) {
        auto start = clock::now();
        w->frame();
        auto stop = clock::now();
        frame_ns.push_back(std::max(
            0.0, std::chrono::duration<double, std::nano>(stop - start).count() - overhead));
    }
    state.counters["allocs_per_frame"] = static_cast<double>(w->allocations);
    state.counters["clock_overhead_ns"] = overhead;
    state.counters["max_us"] = *std::max_element(frame_ns.begin(), frame_ns.end()) / 1e3;
    state.counters["p999_us"] = percentile(frame_ns, 0.999) / 1e3;
    state.counters["p99_us"] = percentile(frame_ns, 0.99) / 1e3;
    state.counters["p50_us"] = percentile(frame_ns, 0.5) / 1e3;
}

template <class S>
void add(benchmark::IterationCount frames) {
    benchmark::RegisterBenchmark(("frame/" + S::name()).c_str(), frame_bench<S>)
        ->Iterations(frames)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
    const benchmark::IterationCount frames = rtmem::bench::quick_mode() ? 3000 : 20000;
    rtmem::bench::for_each_heap([&]<class Heap>() { add<heap_strategy<Heap>>(frames); });
    add<pmr_strategy>(frames);
    add<floor_strategy>(frames);
    add<rtmem_strategy>(frames);
    return rtmem::bench::run_benchmarks(argc, argv);
}
