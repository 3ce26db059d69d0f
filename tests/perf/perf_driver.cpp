// Driver for the instruction budgets: `rtmem_perf_driver <case> <calls>` calls the case's
// function <calls> times. Each case function does exactly one operation (or one allocate+free
// pair) with constant arguments, as a typical call site does; callgrind collects only inside it
// (--toggle-collect), so the count includes the function's own entry and return, never the loop.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "floors.hpp"


// Out of line, unmangled and never cloned or specialised, so callgrind finds it by name.
#if defined(__clang__)
#define RTMEM_PERF_CASE extern "C" __attribute__((noinline, used))
#else
#define RTMEM_PERF_CASE extern "C" __attribute__((noipa, used))
#endif

namespace {
volatile std::uintptr_t sink;  // keeps every result alive
constexpr std::size_t block = 48;
}  // namespace

RTMEM_PERF_CASE void* rtmem_perf_floor_bump_allocate(rtmem::bench::bump_floor* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_floor_bump_allocate_impossible(rtmem::bench::bump_floor* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_floor_free_list_pair(rtmem::bench::free_list_floor* a) {
    void* p = a->allocate();
    a->deallocate(p);
    return p;
}


namespace {

template <class F>
int repeat(long calls, F op) {
    for (long i = 0; i < calls; ++i) {
        void* p = op();
        if (p == nullptr) {
            std::fprintf(stderr, "allocation %ld failed\n", i);
            return 1;
        }
        sink = reinterpret_cast<std::uintptr_t>(p);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <case> <calls>\n", argv[0]);
        return 2;
    }
    const std::string_view which = argv[1];
    const long calls = std::atol(argv[2]);
    const auto capacity = static_cast<std::size_t>(calls) * (block + 16) + 4096;
    if (which == "floor_bump_allocate" || which == "floor_bump_allocate_impossible") {
        rtmem::bench::bump_floor a(capacity);
        return which == "floor_bump_allocate"
                   ? repeat(calls, [&] { return rtmem_perf_floor_bump_allocate(&a); })
                   : repeat(calls, [&] { return rtmem_perf_floor_bump_allocate_impossible(&a); });
    }
    if (which == "floor_free_list_pair") {
        rtmem::bench::free_list_floor a(block, 64);
        return repeat(calls, [&] { return rtmem_perf_floor_free_list_pair(&a); });
    }
    std::fprintf(stderr, "unknown or unavailable case '%s'\n", argv[1]);
    return 2;
}
