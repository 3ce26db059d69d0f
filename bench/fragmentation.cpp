// The fragmentation view: peak footprint / peak live bytes on a workload built to fragment.
// Four rounds of: (A) allocate log-uniform 16..4096 B blocks until `target` bytes are live;
// (B) free every other live block, leaving holes no bigger than 4 KiB; (C) allocate 4..16 KiB
// blocks, which cannot reuse those holes, until `target` bytes are live again; (D) free a random
// 60 %. Each allocator runs in a forked child: footprint = the child's resident-set high-water
// mark (VmHWM, reset through /proc/self/clear_refs) minus its resident set at the start; live =
// the peak sum of requested bytes. target = 32 MiB (16 MiB in QUICK mode).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include <rtmem/alloc/free_list.hpp>
#include <rtmem/alloc/tlsf.hpp>
#include <span>

#include "common.hpp"
#include "floors.hpp"
#include "peer_heaps.hpp"
#include "suite_mode.hpp"

namespace {

long status_kib(const char* field) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr) return -1;
    char line[256];
    long value = -1;
    const std::size_t len = std::strlen(field);
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, field, len) == 0) value = std::atol(line + len + 1);
    std::fclose(f);
    return value;
}

template <class Heap>
struct heap_adapter {
    void* allocate(std::size_t n) { return Heap::allocate(n); }
    void deallocate(void* p, std::size_t n) { Heap::deallocate(p, n); }
};
struct pmr_adapter {
    std::pmr::unsynchronized_pool_resource pool;
    void* allocate(std::size_t n) { return pool.allocate(n); }
    void deallocate(void* p, std::size_t n) { pool.deallocate(p, n); }
};
struct bump_adapter {  // never reuses memory: the footprint of not freeing at all
    std::vector<std::unique_ptr<std::byte[]>> chunks;
    std::byte* cur = nullptr;
    std::byte* end = nullptr;
    void* allocate(std::size_t n) {
        n = (n + 15) & ~std::size_t{15};
        if (cur == nullptr || static_cast<std::size_t>(end - cur) < n) {
            chunks.push_back(std::make_unique_for_overwrite<std::byte[]>(std::size_t{1} << 22));
            cur = chunks.back().get();
            end = cur + (std::size_t{1} << 22);
        }
        void* p = cur;
        cur += n;
        return p;
    }
    void deallocate(void*, std::size_t) {}
};

// rtmem's general-purpose allocators over one untouched 256 MiB buffer: only the pages they
// hand out become resident, so the footprint is what the allocator really spreads over.
template <class A>
struct rtmem_buffer_adapter {
    static constexpr std::size_t bytes = std::size_t{256} << 20;
    std::unique_ptr<std::byte[]> memory = std::make_unique_for_overwrite<std::byte[]>(bytes);
    A a{std::span<std::byte>(memory.get(), bytes)};
    void* allocate(std::size_t n) { return a.allocate(n); }
    void deallocate(void* p, std::size_t n) { a.deallocate(p, n); }
};

struct outcome {
    double peak_live = 0;
    double footprint = 0;
};

template <class A>
outcome run_workload(std::size_t target) {
    std::FILE* clear = std::fopen("/proc/self/clear_refs", "w");
    if (clear != nullptr) {
        std::fputs("5", clear);  // reset VmHWM to the current resident set
        std::fclose(clear);
    }
    const long start_kib = status_kib("VmRSS:");
    auto a = std::make_unique<A>();
    rtmem::bench::xorshift rng{0x853C49E6748FEA9Bull};
    struct block {
        void* p;
        std::size_t n;
    };
    std::vector<block> live;
    std::size_t live_bytes = 0, peak = 0;
    auto add = [&](std::size_t n) {
        void* p = a->allocate(n);
        if (p == nullptr) _exit(3);  // exhausted: reported as an error, not a footprint
        std::memset(p, 1, n);        // a program writes what it allocates
        live.push_back({p, n});
        live_bytes += n;
        peak = std::max(peak, live_bytes);
    };
    auto drop = [&](std::size_t i) {
        a->deallocate(live[i].p, live[i].n);
        live_bytes -= live[i].n;
        live[i] = live.back();
        live.pop_back();
    };
    for (int round = 0; round < 4; ++round) {
        while (live_bytes < target) add(std::size_t{16} << rng.below(9));  // 16 .. 4096
        for (std::size_t i = live.size(); i-- > 0;)
            if (i % 2 == 1) drop(i);
        while (live_bytes < target) add(4096 + rng.below(12 * 1024 + 1));
        for (std::size_t i = live.size(); i-- > 0;)
            if (rng.below(10) < 6) drop(i);
    }
    const long peak_kib = status_kib("VmHWM:");
    while (!live.empty()) drop(live.size() - 1);
    return {static_cast<double>(peak), static_cast<double>(peak_kib - start_kib) * 1024.0};
}

template <class A>
void fragmentation(benchmark::State& state) {
    const std::size_t target = (rtmem::bench::quick_mode() ? 16u : 32u) << 20;
    outcome o;
    for (auto _ : state) {
        int fds[2];
        if (pipe(fds) != 0) {
            state.SkipWithError("pipe failed");
            return;
        }
        const pid_t child = fork();
        if (child == 0) {
            close(fds[0]);
            outcome r = run_workload<A>(target);
            const bool ok = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
            _exit(ok ? 0 : 1);
        }
        close(fds[1]);
        const bool ok = read(fds[0], &o, sizeof o) == static_cast<ssize_t>(sizeof o);
        close(fds[0]);
        int status = 0;
        waitpid(child, &status, 0);
        if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            state.SkipWithError("workload child failed");
            return;
        }
    }
    state.counters["peak_live_MiB"] = o.peak_live / (1 << 20);
    state.counters["footprint_MiB"] = o.footprint / (1 << 20);
    state.counters["footprint_over_live"] = o.footprint / o.peak_live;
}

template <class A>
void add(const std::string& name) {
    benchmark::RegisterBenchmark(("fragmentation/" + name).c_str(), fragmentation<A>)
        ->Iterations(1)
        ->Repetitions(1)  // deterministic (fixed seed): one run is the answer
        ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
    rtmem::bench::for_each_heap(
        [&]<class Heap>() { add<heap_adapter<Heap>>(std::string(Heap::name)); });
    add<pmr_adapter>("pmr_unsync_pool");
    add<bump_adapter>("bump_never_frees");
    add<rtmem_buffer_adapter<rtmem::tlsf_allocator>>("rtmem_tlsf");
    add<rtmem_buffer_adapter<rtmem::free_list_allocator<rtmem::first_fit>>>(
        "rtmem_free_list_first_fit");
    add<rtmem_buffer_adapter<rtmem::free_list_allocator<rtmem::best_fit>>>(
        "rtmem_free_list_best_fit");
    return rtmem::bench::run_benchmarks(argc, argv);
}
