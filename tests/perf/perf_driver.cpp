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

#if __has_include(<rtmem/alloc/linear.hpp>)
#include <rtmem/alloc/linear.hpp>
#define RTMEM_PERF_LINEAR 1
#endif
#if __has_include(<rtmem/alloc/pool.hpp>)
#include <rtmem/alloc/pool.hpp>
#define RTMEM_PERF_POOL 1
#endif
#if __has_include(<rtmem/alloc/tlsf.hpp>)
#include <rtmem/alloc/tlsf.hpp>
#define RTMEM_PERF_TLSF 1
#endif

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

#ifdef RTMEM_PERF_LINEAR
RTMEM_PERF_CASE void* rtmem_perf_linear_allocate(rtmem::linear_allocator<>* a) {
    return a->allocate(block, 16);
}
#endif
#ifdef RTMEM_PERF_POOL
RTMEM_PERF_CASE void* rtmem_perf_pool_pair(rtmem::pool_allocator<>* a) {
    void* p = a->allocate(block, 16);
    a->deallocate(p, block, 16);
    return p;
}
#endif
#ifdef RTMEM_PERF_TLSF
// Allocate splits a small block off the one large free block (bitmap search for a bigger class,
// split, insert the remainder); free merges it back with that remainder (remove, merge, insert).
RTMEM_PERF_CASE void* rtmem_perf_tlsf_worst_pair(rtmem::tlsf_allocator* a) {
    void* p = a->allocate(block, 16);
    a->deallocate(p, block, 16);
    return p;
}
#endif

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
#ifdef RTMEM_PERF_LINEAR
    if (which == "linear_allocate") {
        std::vector<std::byte> buffer(capacity);
        rtmem::linear_allocator<> a{std::span<std::byte>(buffer)};
        return repeat(calls, [&] { return rtmem_perf_linear_allocate(&a); });
    }
#endif
#ifdef RTMEM_PERF_POOL
    if (which == "pool_pair") {
        std::vector<std::byte> buffer(64 * 1024);
        rtmem::pool_allocator<> a{std::span<std::byte>(buffer), block, 16};
        return repeat(calls, [&] { return rtmem_perf_pool_pair(&a); });
    }
#endif
#ifdef RTMEM_PERF_TLSF
    if (which == "tlsf_worst_pair") {
        std::vector<std::byte> buffer(1 << 20);
        rtmem::tlsf_allocator a{std::span<std::byte>(buffer)};
        return repeat(calls, [&] { return rtmem_perf_tlsf_worst_pair(&a); });
    }
#endif
    std::fprintf(stderr, "unknown or unavailable case '%s'\n", argv[1]);
    return 2;
}
