// The loops that calibrate `rtmem advise --plan`'s per-call costs (plan_costs,
// docs/advisor.md "What a site saves against rt_heap"), run under `rtmem run` with and without
// a one-frame plan of this program's own sites (plan_costs.py drives it). Each loop makes
// malloc + free pairs at one site:
//   pool       a pool of 10 live 64-byte blocks, the oldest replaced in turn   (planned: pool)
//   burst16    bursts of 16 blocks allocated, then freed together             (planned: region)
//   burst256   bursts of 256 blocks, likewise                                  (planned: region)
//   one40      one 40-byte block allocated and freed                     (planned: thread_stack)
//   large      4,080-byte blocks in bursts of 16                               (planned: region)
//   unplanned  one 72-byte block allocated and freed at a site the plan does not name
// A burst's blocks have one size, 16..112 B in turn from burst to burst: each burst is one of
// rt_heap's size classes, so with its lists' 32 blocks a burst of 256 misses on 7 of 8 calls.
// `plan_costs make-plan OUT` writes the plan (the sites' return addresses, found by calling
// each once with a capturing function in place of malloc); `plan_costs KIND|all PAIRS` prints
// "KIND NS" per kind, the median ns per pair of PASSES passes (default 5) after a warm-up pass.
// Counted: `valgrind --tool=callgrind --toggle-collect=measure_KIND ... plan_costs KIND PAIRS 1`.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "rtmem/analyze/plan.hpp"

namespace {

#define KEEP(p) asm volatile("" : : "r"(p) : "memory")

using alloc_fn = void* (*)(std::size_t);
// Every site calls through this pointer: the same call instruction, so the same return
// address, whether it holds malloc or the capturing function.
alloc_fn volatile g_alloc = std::malloc;

#define RTMEM_SITE(name)                                  \
    __attribute__((noinline)) void* name(std::size_t n) { \
        void* p = g_alloc(n);                             \
        KEEP(p);                                          \
        return p;                                         \
    }
RTMEM_SITE(site_pool)
RTMEM_SITE(site_burst16)
RTMEM_SITE(site_burst256)
RTMEM_SITE(site_one40)
RTMEM_SITE(site_large)
RTMEM_SITE(site_unplanned)
#undef RTMEM_SITE

using site_fn = void* (*)(std::size_t);

// ---- the loops: `pairs` malloc + free pairs each ---------------------------------------------

__attribute__((noinline)) void loop_pool(long pairs) {
    void* live[10];
    for (auto& p : live) p = site_pool(64);
    for (long i = 0; i < pairs; ++i) {
        std::free(live[i % 10]);
        live[i % 10] = site_pool(64);
    }
    for (auto* p : live) std::free(p);
}

template <int Burst>
__attribute__((noinline)) void loop_burst(site_fn site, long pairs, bool rotate_size) {
    static void* blocks[Burst];
    for (long b = 0; b < pairs / Burst; ++b) {
        const std::size_t size = rotate_size ? 16 + 16 * static_cast<std::size_t>(b % 7) : 4080;
        for (auto& p : blocks) p = site(size);
        for (auto* p : blocks) std::free(p);
    }
}

__attribute__((noinline)) void loop_single(site_fn site, std::size_t size, long pairs) {
    for (long i = 0; i < pairs; ++i) std::free(site(size));
}

void run_pool(long n) {
    loop_pool(n);
}
void run_burst16(long n) {
    loop_burst<16>(site_burst16, n, true);
}
void run_burst256(long n) {
    loop_burst<256>(site_burst256, n, true);
}
void run_one40(long n) {
    loop_single(site_one40, 40, n);
}
void run_large(long n) {
    loop_burst<16>(site_large, n, false);
}
void run_unplanned(long n) {
    loop_single(site_unplanned, 72, n);
}

// What callgrind's --toggle-collect names: the timed passes (the warm-up pass calls the loops
// directly, so it is not counted).
extern "C" __attribute__((noinline)) void measure_pool(long n) {
    run_pool(n);
}
extern "C" __attribute__((noinline)) void measure_burst16(long n) {
    run_burst16(n);
}
extern "C" __attribute__((noinline)) void measure_burst256(long n) {
    run_burst256(n);
}
extern "C" __attribute__((noinline)) void measure_one40(long n) {
    run_one40(n);
}
extern "C" __attribute__((noinline)) void measure_large(long n) {
    run_large(n);
}
extern "C" __attribute__((noinline)) void measure_unplanned(long n) {
    run_unplanned(n);
}

struct kind {
    const char* name;
    void (*warm)(long);
    void (*measure)(long);
};
constexpr kind kinds[] = {{"pool", run_pool, measure_pool},
                          {"burst16", run_burst16, measure_burst16},
                          {"burst256", run_burst256, measure_burst256},
                          {"one40", run_one40, measure_one40},
                          {"large", run_large, measure_large},
                          {"unplanned", run_unplanned, measure_unplanned}};

double ns_per_pair(const kind& k, long pairs, int count) {
    k.warm(pairs);  // first calls, refills, chunks
    std::vector<double> passes;
    for (int r = 0; r < count; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        k.measure(pairs);
        const auto t1 = std::chrono::steady_clock::now();
        passes.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                         static_cast<double>(pairs));
    }
    std::sort(passes.begin(), passes.end());
    return passes[passes.size() / 2];
}

// ---- the plan --------------------------------------------------------------------------------

std::uintptr_t g_return = 0;
__attribute__((noinline)) void* capture(std::size_t) {
    g_return = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    return nullptr;
}

std::uintptr_t g_bias = 0;
int first_module(dl_phdr_info* info, std::size_t, void*) {
    g_bias = info->dlpi_addr;  // the main program comes first
    return 1;
}

int make_plan(const char* out) {
    using namespace rtmem::analyze;
    char exe[4096];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return 1;
    exe[len] = 0;
    dl_iterate_phdr(first_module, nullptr);
    plan p;
    p.program = exe;
    p.depth = 1;
    auto add = [&](std::uint32_t id, site_fn site, plan_strategy strategy, std::uint64_t block,
                   std::uint64_t chunk, std::uint64_t max_request) {
        g_alloc = capture;
        site(block);
        g_alloc = std::malloc;
        plan_site s;
        s.id = id;
        s.strategy = strategy;
        s.frames.push_back(plan_frame{exe, g_return - g_bias});
        if (strategy == plan_strategy::pool) {
            s.block_size = block;
            s.block_align = 16;
        } else {
            s.chunk_bytes = chunk;
        }
        s.max_request = max_request;
        p.sites.push_back(s);
    };
    add(1, site_pool, plan_strategy::pool, 64, 0, 64);
    add(2, site_burst16, plan_strategy::region, 112, 64 << 10, 8 << 10);
    add(3, site_burst256, plan_strategy::region, 112, 64 << 10, 8 << 10);
    add(4, site_one40, plan_strategy::thread_stack, 40, 4 << 10, 512);
    add(5, site_large, plan_strategy::region, 4080, 128 << 10, 16 << 10);
    std::ofstream(out) << plan_to_json(p);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "make-plan") == 0) return make_plan(argv[2]);
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: %s make-plan OUT | %s KIND|all PAIRS [PASSES]\n", argv[0],
                     argv[0]);
        return 2;
    }
    const long pairs = std::atol(argv[2]);
    const int passes = argc == 4 ? std::atoi(argv[3]) : 5;
    if (pairs < 256 || passes < 1) {
        std::fprintf(stderr, "PAIRS must be at least 256 and PASSES at least 1\n");
        return 2;
    }
    bool any = false;
    for (const auto& k : kinds)
        if (std::strcmp(argv[1], "all") == 0 || std::strcmp(argv[1], k.name) == 0) {
            std::printf("%s %.3f\n", k.name, ns_per_pair(k, pairs, passes));
            any = true;
        }
    if (!any) std::fprintf(stderr, "unknown kind %s\n", argv[1]);
    return any ? 0 : 2;
}
