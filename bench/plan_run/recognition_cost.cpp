// The cost of recognising a site under `rtmem run --plan`, per malloc/free pair, by kind of
// caller (run.py drives it; docs/run.md reports it):
//   unplanned    a site the plan does not name: one table probe on malloc, a range check on free
//   planned      a site planned as a 64-byte pool (one frame)
//   deep         a site planned with two frames: frame 0 is shared, so every call unwinds
//   deep_other   the unplanned caller of that shared frame 0 (unwinds too, then falls through)
// `recognition_cost [PAIRS [KIND|all [THREADS]]]` prints the median ns per pair of 7 runs of
// each kind (THREADS threads at once at the same site: their pairs per thread);
// `recognition_cost make-plan TRACE OUT` writes the plan from a trace of this program.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace {

#define KEEP(p) asm volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void* site_unplanned() {
    void* p = std::malloc(72);
    KEEP(p);
    return p;
}
__attribute__((noinline)) void* site_planned() {
    void* p = std::malloc(64);
    KEEP(p);
    return p;
}
__attribute__((noinline)) void* shared(std::size_t n) {
    void* p = std::malloc(n);
    KEEP(p);
    return p;
}
__attribute__((noinline)) void* site_deep() {
    void* p = shared(96);
    KEEP(p);
    return p;
}
__attribute__((noinline)) void* site_deep_other() {
    void* p = shared(88);
    KEEP(p);
    return p;
}

using site_fn = void* (*)();

__attribute__((noinline)) void loop_pairs(site_fn site, long n) {
    for (long i = 0; i < n; ++i) std::free(site());
}

// With `threads` > 1, that many threads make n pairs each at once at the same site (one lock
// per site would make them take turns); the time is the slowest thread's, per pair.
double ns_per_pair(site_fn site, long n, int threads) {
    std::vector<double> runs;
    for (int r = 0; r < 7; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        if (threads <= 1) {
            loop_pairs(site, n);
        } else {
            std::vector<std::thread> others;
            for (int t = 1; t < threads; ++t) others.emplace_back(loop_pairs, site, n);
            loop_pairs(site, n);
            for (auto& t : others) t.join();
        }
        const auto t1 = std::chrono::steady_clock::now();
        runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                       static_cast<double>(n));
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

int make_plan(const std::string& trace, const std::string& out) {
    using namespace rtmem::analyze;
    trace_reader r(trace);
    std::map<std::uint32_t, std::set<std::uint64_t>> sizes;
    event e;
    while (r.next(e))
        if (e.kind == op::malloc) sizes[e.stack].insert(e.size);
    auto frame = [&](std::uint64_t ip) {
        for (const auto& m : r.modules())
            if (ip - 1 >= m.start && ip - 1 < m.end) return plan_frame{m.path, ip - m.bias};
        return plan_frame{};
    };
    plan p;
    p.trace = trace;
    p.program = r.program();
    p.depth = 2;
    for (const auto& [stack, s] : sizes) {
        const auto ips = r.stack(stack);
        if (s.size() != 1 || ips.size() < 2) continue;
        const std::uint64_t size = *s.begin();
        if (size != 64 && size != 96) continue;
        plan_site site;
        site.id = static_cast<std::uint32_t>(size);
        site.strategy = plan_strategy::pool;
        site.block_size = size;
        site.block_align = 16;
        site.frames.push_back(frame(ips[0]));
        if (size == 96) site.frames.push_back(frame(ips[1]));
        p.sites.push_back(site);
    }
    std::ofstream(out) << plan_to_json(p);
    std::printf("%zu sites planned\n", p.sites.size());
    return p.sites.size() == 2 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "make-plan") == 0) return make_plan(argv[2], argv[3]);
    const long n = argc > 1 ? std::atol(argv[1]) : 2000000;
    const struct {
        const char* name;
        site_fn fn;
    } sites[] = {{"unplanned", site_unplanned},
                 {"planned", site_planned},
                 {"deep", site_deep},
                 {"deep_other", site_deep_other}};
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    for (const auto& s : sites)  // argv[2]: one kind only (callgrind: one loop_pairs per run)
        if (argc < 3 || std::strcmp(argv[2], "all") == 0 || std::strcmp(argv[2], s.name) == 0)
            std::printf("%-10s %.2f ns/pair\n", s.name, ns_per_pair(s.fn, n, threads));
    return 0;
}
