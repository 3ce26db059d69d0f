// Weaver's latency table on this platform: per-call time of malloc, free and the C arena's
// alloc / mark / rewind, 5 KiB requests, 100,000 calls each in batches of 1,000 live blocks (the
// method of Weaver's article, which gives the same table for Linux, OpenBSD, Windows 10 and
// WebAssembly). Every call is timed alone with steady_clock, so the figures include the clock's
// own cost; scripts/weaver-tables runs this natively, under wine and under node.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rtmem.h"

namespace {

constexpr std::size_t calls = 100000;
constexpr std::size_t batch = 1000;
constexpr std::size_t size = 5 * 1024;

using clock_type = std::chrono::steady_clock;

double ns_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
}

void print_row(const char* name, std::vector<double>& ns) {
    double sum = 0;
    for (double v : ns) sum += v;
    const double mean = sum / static_cast<double>(ns.size());
    double var = 0;
    for (double v : ns) var += (v - mean) * (v - mean);
    const double sd = std::sqrt(var / static_cast<double>(ns.size()));
    std::sort(ns.begin(), ns.end());
    const double p99 = ns[ns.size() * 99 / 100];
    std::printf("| %-20s | %10.3f | %10.3f | %10.3f | %10.3f |\n", name, mean / 1000, sd / 1000,
                p99 / 1000, ns.back() / 1000);
}

}  // namespace

int main() {
    std::vector<double> t_malloc, t_free, t_alloc, t_mark, t_rewind;
    for (auto* v : {&t_malloc, &t_free, &t_alloc, &t_mark, &t_rewind}) v->reserve(calls);
    std::vector<void*> blocks(batch);
    for (std::size_t round = 0; round < calls / batch; ++round) {
        for (std::size_t i = 0; i < batch; ++i) {
            const auto t0 = clock_type::now();
            blocks[i] = std::malloc(size);
            t_malloc.push_back(ns_since(t0));
        }
        for (std::size_t i = 0; i < batch; ++i) {
            const auto t0 = clock_type::now();
            std::free(blocks[i]);
            t_free.push_back(ns_since(t0));
        }
    }
    rtmem_arena* a = rtmem_arena_create(batch * (size + 64) + 65536);
    if (a == nullptr) {
        std::fprintf(stderr, "weaver_latency: rtmem_arena_create failed\n");
        return 1;
    }
    for (std::size_t round = 0; round < calls / batch; ++round) {
        for (std::size_t i = 0; i < batch; ++i) {
            auto t0 = clock_type::now();
            const bool marked = rtmem_arena_mark(a, RTMEM_SIDE_LEFT);
            t_mark.push_back(ns_since(t0));
            t0 = clock_type::now();
            void* p = rtmem_arena_alloc(a, 0, RTMEM_SIDE_LEFT, size);
            t_alloc.push_back(ns_since(t0));
            if (!marked || p == nullptr) {
                std::fprintf(stderr, "weaver_latency: the arena ran out\n");
                return 1;
            }
            static_cast<volatile char*>(p)[0] = 1;
        }
        for (std::size_t i = 0; i < batch; ++i) {
            const auto t0 = clock_type::now();
            rtmem_arena_rewind(a, RTMEM_SIDE_LEFT);
            t_rewind.push_back(ns_since(t0));
        }
    }
    rtmem_arena_destroy(a);
    std::printf("| call (5 KiB, 100k) | mean (us) | sd (us) | p99 (us) | max (us) |\n");
    std::printf("|---|---|---|---|---|\n");
    print_row("malloc", t_malloc);
    print_row("free", t_free);
    print_row("rtmem_arena_alloc", t_alloc);
    print_row("rtmem_arena_mark", t_mark);
    print_row("rtmem_arena_rewind", t_rewind);
    return 0;
}
