// Driver for the `rtmem run --plan` budgets (tests/perf/CMakeLists.txt): linked with
// librtmem-malloc.a whole, like rtmem_perf_malloc_driver, and given a plan of its own sites
// before the library's constructor reads it (this file's constructor runs first: it finds the
// sites' return addresses by calling them once with a capturing function in place of malloc,
// and puts the compiled plan in RTMEM_MALLOC_PLAN). `<driver> <case> <calls>`: each case makes
// <calls> allocations at one site, each freed at once by rtmem_perf_plan_free:
//   plan_pool     a 48-byte pool site named by its frame 0 alone (one probe)
//   plan_region   a region site named by its frame 0 alone
//   plan_walk2    a pool site named by 2 frames whose frame 0 is shared: a walk of one level
//   plan_walk3    a pool site named by 3 frames, frames 0 and 1 shared: a walk of two levels
//   plan_miss     an unplanned caller of the shared frame 0: the walk finds no site (rt_heap)
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#define RTMEM_PERF_CASE extern "C" __attribute__((noipa, used))
#define KEEP(p) asm volatile("" : : "r"(p) : "memory")

extern "C" int rtmem_malloc_owns(const void* p);  // rt_heap's block (librtmem-malloc)

namespace {

using alloc_fn = void* (*)(std::size_t);
// Every site calls through this pointer: the same call instruction, so the same return
// address, whether it holds malloc or the capturing function.
alloc_fn volatile g_alloc = std::malloc;
volatile std::uintptr_t sink;

}  // namespace

// The sites. Each keeps its own frame (the KEEP after the call: no tail call).
RTMEM_PERF_CASE void* rtmem_perf_plan_pool() {
    void* p = g_alloc(48);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_region() {
    void* p = g_alloc(40);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_shared(std::size_t n) {  // frame 0 of the walked sites
    void* p = g_alloc(n);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_middle(std::size_t n) {  // frame 1 of the 3-frame sites
    void* p = rtmem_perf_plan_shared(n);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_walk2() {
    void* p = rtmem_perf_plan_shared(48);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_walk3() {
    void* p = rtmem_perf_plan_middle(48);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_walk3_sibling() {  // planned, never called in a case
    void* p = rtmem_perf_plan_middle(48);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void* rtmem_perf_plan_miss() {
    void* p = rtmem_perf_plan_shared(48);
    KEEP(p);
    return p;
}
RTMEM_PERF_CASE void rtmem_perf_plan_free(void* p) {
    std::free(p);
}
RTMEM_PERF_CASE void* rtmem_perf_baseline(void* p) {
    return p;
}

namespace {

// ---- the plan, found at start-up -------------------------------------------------------------

std::uintptr_t g_frames[4];
int g_depth = 0;

__attribute__((noinline)) void* capture(std::size_t) {
    void* raw[8];
    const int n = backtrace(raw, 8);  // raw[0] is in capture, raw[1] is frame 0
    g_depth = 0;
    for (int i = 1; i < n && g_depth < 4; ++i)
        g_frames[g_depth++] = reinterpret_cast<std::uintptr_t>(raw[i]);
    return nullptr;
}

std::uintptr_t g_bias = 0;
int first_module(dl_phdr_info* info, std::size_t, void*) {
    g_bias = info->dlpi_addr;  // the main program comes first
    return 1;
}

// "ID KIND BLOCK MAXREQ NFRAMES (0 OFFSET)..." for `frames` of the frames `site` is called with.
std::string site_line(int id, char kind, int block, void* (*site)(), int frames) {
    site();
    std::string line = std::to_string(id) + " " + kind + " " + std::to_string(block) + " 0 " +
                       std::to_string(frames);
    for (int k = 0; k < frames && k < g_depth; ++k) {
        char offset[32];
        std::snprintf(offset, sizeof offset, " 0 %lx",
                      static_cast<unsigned long>(g_frames[k] - g_bias));
        line += offset;
    }
    return line + "\n";
}

__attribute__((constructor(101))) void plan_own_sites() {
    char exe[4096];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return;
    exe[len] = 0;
    dl_iterate_phdr(first_module, nullptr);
    g_alloc = capture;
    const std::string sites = site_line(1, 'p', 48, rtmem_perf_plan_pool, 1) +
                              site_line(2, 'r', 65536, rtmem_perf_plan_region, 1) +
                              site_line(3, 'p', 48, rtmem_perf_plan_walk2, 2) +
                              site_line(4, 'p', 48, rtmem_perf_plan_walk3, 3) +
                              site_line(5, 'p', 48, rtmem_perf_plan_walk3_sibling, 3);
    g_alloc = std::malloc;
    const std::string plan = "rtmem-plan-run 1\nmodules 1\n" + std::to_string(len) + " " + exe +
                             "\nsites 5 frames 10\n" + sites;
    setenv("RTMEM_MALLOC_PLAN", plan.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s baseline|plan_pool|plan_region|plan_walk2|plan_walk3|"
                             "plan_miss <calls>\n", argv[0]);
        return 2;
    }
    const std::string_view which = argv[1];
    const long calls = std::strtol(argv[2], nullptr, 10);
    void* (*site)() = which == "plan_pool"     ? rtmem_perf_plan_pool
                      : which == "plan_region" ? rtmem_perf_plan_region
                      : which == "plan_walk2"  ? rtmem_perf_plan_walk2
                      : which == "plan_walk3"  ? rtmem_perf_plan_walk3
                      : which == "plan_miss"   ? rtmem_perf_plan_miss
                                               : nullptr;
    if (site == nullptr && which != "baseline") {
        std::fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    if (site == nullptr) {
        for (long i = 0; i < calls; ++i) sink = reinterpret_cast<std::uintptr_t>(rtmem_perf_baseline(argv));
        return 0;
    }
    // The thread's one-time work (attaching to the sites, learning the walk's distances) outside
    // the counted calls; and the routing checked, so that a plan that stopped matching fails
    // rather than passing on rt_heap's cheaper path.
    void* first = site();
    const bool planned = which != "plan_miss";
    if ((rtmem_malloc_owns(first) == 0) != planned) {
        std::fprintf(stderr, "%s: the block %s rt_heap's: the plan did not route as expected\n",
                     argv[1], planned ? "is" : "is not");
        return 3;
    }
    rtmem_perf_plan_free(first);
    for (long i = 0; i < calls; ++i) {
        void* p = site();
        if (p == nullptr) return 1;
        rtmem_perf_plan_free(p);
        sink = reinterpret_cast<std::uintptr_t>(p);
    }
    return 0;
}
