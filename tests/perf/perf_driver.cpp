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

#include <rtmem/alloc/growing_stack.hpp>
#include <rtmem/alloc/linear.hpp>
#include <rtmem/alloc/pool.hpp>
#include <rtmem/alloc/tlsf.hpp>

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
RTMEM_PERF_CASE void* rtmem_perf_floor_pop(rtmem::bench::free_list_floor* a) {
    return a->allocate();
}
RTMEM_PERF_CASE void rtmem_perf_floor_push(rtmem::bench::free_list_floor* a, void* p) {
    a->deallocate(p);
}

RTMEM_PERF_CASE void* rtmem_perf_linear_allocate(rtmem::linear_allocator* a) {
    return a->allocate(block, 16);
}
// Pool: the allocator-concept calls and the typed block calls, each out of line.
RTMEM_PERF_CASE void* rtmem_perf_pool_allocate(rtmem::pool_allocator<>* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_pool_deallocate(rtmem::pool_allocator<>* a, void* p) {
    a->deallocate(p, block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_pool_allocate_block(rtmem::pool_allocator<>* a) {
    return a->allocate_block();
}
RTMEM_PERF_CASE void rtmem_perf_pool_deallocate_block(rtmem::pool_allocator<>* a, void* p) {
    a->deallocate_block(p);
}
// TLSF's longest common paths, every call: allocate splits a small block off the one large free
// block (bitmap search for a bigger class, split, insert the remainder); free merges it back
// with that remainder (remove, merge, insert). Collected separately (two functions).
RTMEM_PERF_CASE void* rtmem_perf_tlsf_allocate(rtmem::tlsf_allocator* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_tlsf_free(rtmem::tlsf_allocator* a, void* p) {
    a->deallocate(p, block, 16);
}
// Growing stack: allocate then free the top block inside a warm chunk (no chunk change).
RTMEM_PERF_CASE void* rtmem_perf_growing_stack_allocate(rtmem::growing_stack_allocator* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_growing_stack_free(rtmem::growing_stack_allocator* a, void* p) {
    a->deallocate(p, block, 16);
}
// The harness's own cost (entry and return), subtracted from every case.
RTMEM_PERF_CASE void* rtmem_perf_baseline(void* p) {
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

// One allocate call then one free call of the block (two out-of-line functions).
template <class A, class Alloc, class Free>
void* pair(A* a, Alloc alloc, Free release) {
    void* p = alloc(a);
    if (p != nullptr) release(a, p);
    return p;
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
    if (which == "baseline") {
        return repeat(calls, [&] { return rtmem_perf_baseline(argv); });
    }
    if (which == "floor_bump_allocate" || which == "floor_bump_allocate_impossible") {
        rtmem::bench::bump_floor a(capacity);
        return which == "floor_bump_allocate"
                   ? repeat(calls, [&] { return rtmem_perf_floor_bump_allocate(&a); })
                   : repeat(calls, [&] { return rtmem_perf_floor_bump_allocate_impossible(&a); });
    }
    if (which == "floor_free_list_pair") {
        rtmem::bench::free_list_floor a(block, 64);
        return repeat(calls, [&] { return pair(&a, rtmem_perf_floor_pop, rtmem_perf_floor_push); });
    }
    if (which == "linear_allocate") {
        std::vector<std::byte> buffer(capacity);
        rtmem::linear_allocator a{std::span<std::byte>(buffer)};
        return repeat(calls, [&] { return rtmem_perf_linear_allocate(&a); });
    }
    if (which == "pool_pair") {
        std::vector<std::byte> buffer(64 * 1024);
        rtmem::pool_allocator<> a{std::span<std::byte>(buffer), block, 16};
        return repeat(
            calls, [&] { return pair(&a, rtmem_perf_pool_allocate, rtmem_perf_pool_deallocate); });
    }
    if (which == "pool_block_pair") {
        std::vector<std::byte> buffer(64 * 1024);
        rtmem::pool_allocator<> a{std::span<std::byte>(buffer), block, 16};
        return repeat(calls, [&] {
            return pair(&a, rtmem_perf_pool_allocate_block, rtmem_perf_pool_deallocate_block);
        });
    }
    if (which == "tlsf_worst" || which == "tlsf_cached") {
        // tlsf_cached: the front cache on, so free parks and the next allocate pops.
        std::vector<std::byte> buffer(std::size_t{1} << 20);
        rtmem::tlsf_allocator a{std::span<std::byte>(buffer), which == "tlsf_cached" ? 7u : 0u};
        return repeat(calls,
                      [&] { return pair(&a, rtmem_perf_tlsf_allocate, rtmem_perf_tlsf_free); });
    }
    if (which == "growing_stack_pair") {
        rtmem::growing_stack_allocator a{rtmem::growing_stack_options{}};
        (void)a.allocate(8, 8);  // the first chunk, and a block below the measured ones
        return repeat(calls, [&] {
            return pair(&a, rtmem_perf_growing_stack_allocate, rtmem_perf_growing_stack_free);
        });
    }
    std::fprintf(stderr, "unknown or unavailable case '%s'\n", argv[1]);
    return 2;
}
