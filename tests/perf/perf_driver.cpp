// Driver for the instruction budgets: `rtmem_perf_driver <case> <calls>` calls the case's
// function <calls> times. Each case function does exactly one operation (or one allocate+free
// pair) with constant arguments, as a typical call site does; callgrind collects only inside it
// (--toggle-collect), so the count includes the function's own entry and return, never the loop.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory_resource>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "floors.hpp"

#include <rtmem/adapt/temporary.hpp>
#include <rtmem/alloc/fixed_pool.hpp>
#include <rtmem/alloc/frame.hpp>
#include <rtmem/alloc/growing_stack.hpp>
#include <rtmem/alloc/linear.hpp>
#include <rtmem/alloc/pool.hpp>
#include <rtmem/alloc/rt_heap.hpp>
#include <rtmem/alloc/stack.hpp>
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
RTMEM_PERF_CASE void* rtmem_perf_frame_allocate(rtmem::frame_allocator<2>* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_stack_allocate(rtmem::stack_allocator* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_stack_deallocate(rtmem::stack_allocator* a, void* p) {
    a->deallocate(p, block, 16);
}
// temp_scope: the scope's own (non-pmr) allocate, and the pmr resource's allocate (a virtual
// do_allocate) as a std::pmr container calls it.
RTMEM_PERF_CASE void* rtmem_perf_temp_scope_allocate(const rtmem::temp_scope* s) {
    return s->allocate(block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_temp_resource_allocate(std::pmr::memory_resource* r) {
    return r->allocate(block, 16);
}
// Pool: the allocator-concept calls and the typed block calls, each out of line.
RTMEM_PERF_CASE void* rtmem_perf_pool_allocate(rtmem::pool_allocator<>* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_pool_deallocate(rtmem::pool_allocator<>* a, void* p) {
    a->deallocate(p, block, 16);
}
// The same calls on a pool whose block size is a template constant (the size test folds away).
using fixed_pool = rtmem::fixed_pool_allocator<block, 16>;
RTMEM_PERF_CASE void* rtmem_perf_fixed_pool_allocate(fixed_pool* a) {
    return a->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_fixed_pool_deallocate(fixed_pool* a, void* p) {
    a->deallocate(p, block, 16);
}
RTMEM_PERF_CASE void* rtmem_perf_pool_allocate_block(rtmem::pool_allocator<>* a) {
    return a->allocate_block();
}
RTMEM_PERF_CASE void rtmem_perf_pool_deallocate_block(rtmem::pool_allocator<>* a, void* p) {
    a->deallocate_block(p);
}
// A pool object whose address never escapes, as in a benchmark or a function-local pool: its
// slow path must not take the pool's address, or the compiler stores the free-list head on
// every allocate of this loop (issue 16). 64 rounds of 128 allocations then 128 frees.
constexpr int loop_rounds = 64, loop_blocks = 128;
RTMEM_PERF_CASE void* rtmem_perf_pool_loop(std::byte* buffer, std::size_t bytes, void** slots) {
    rtmem::pool_allocator<> pool{std::span<std::byte>(buffer, bytes), block, 16};
    for (int r = 0; r < loop_rounds; ++r) {
        for (int i = 0; i < loop_blocks; ++i) slots[i] = pool.allocate_block();
        for (int i = 0; i < loop_blocks; ++i) pool.deallocate_block(slots[i]);
    }
    return slots[0];
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
// rt_heap, the calling thread's own blocks: the binding test, the remote-queue test, then TLSF.
// A free of a block another thread allocated is the wait-free push onto its owner's queue; an
// allocate that finds the queue full takes drain_batch blocks back first (each a TLSF free).
RTMEM_PERF_CASE void* rtmem_perf_rt_heap_allocate(rtmem::rt_heap* h) {
    return h->allocate(block, 16);
}
RTMEM_PERF_CASE void rtmem_perf_rt_heap_free(rtmem::rt_heap* h, void* p) {
    h->deallocate(p, block, 16);
}
// rt_heap's allocate when its list is empty and the class refills by a full run: one TLSF
// search and split for refill_batch blocks, one handed out and the rest listed.
RTMEM_PERF_CASE void* rtmem_perf_rt_heap_refill(rtmem::rt_heap* h) {
    return h->allocate(block, 16);
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
    if (which == "frame_allocate") {
        rtmem::frame_allocator<2> a{capacity};
        return repeat(calls, [&] { return rtmem_perf_frame_allocate(&a); });
    }
    if (which == "stack_pair") {
        rtmem::stack_allocator a{std::size_t{64} * 1024};
        return repeat(calls, [&] {
            return pair(&a, rtmem_perf_stack_allocate, rtmem_perf_stack_deallocate);
        });
    }
    if (which == "temp_scope_allocate" || which == "temp_resource_allocate") {
        {  // warm: the same allocations once, so the measured run reuses the cached chunks
            rtmem::temp_scope warm;
            for (long i = 0; i < calls; ++i) (void)warm.allocate(block, 16);
        }
        rtmem::temp_scope scope;
        std::pmr::memory_resource* r = scope.resource();
        return which == "temp_scope_allocate"
                   ? repeat(calls, [&] { return rtmem_perf_temp_scope_allocate(&scope); })
                   : repeat(calls, [&] { return rtmem_perf_temp_resource_allocate(r); });
    }
    if (which == "pool_pair") {
        std::vector<std::byte> buffer(64 * 1024);
        rtmem::pool_allocator<> a{std::span<std::byte>(buffer), block, 16};
        return repeat(
            calls, [&] { return pair(&a, rtmem_perf_pool_allocate, rtmem_perf_pool_deallocate); });
    }
    if (which == "fixed_pool_pair") {
        std::vector<std::byte> buffer(64 * 1024);
        fixed_pool a{std::span<std::byte>(buffer)};
        return repeat(calls, [&] {
            return pair(&a, rtmem_perf_fixed_pool_allocate, rtmem_perf_fixed_pool_deallocate);
        });
    }
    if (which == "pool_loop") {
        std::vector<std::byte> buffer(64 * 1024);
        std::vector<void*> slots(loop_blocks);
        return repeat(calls, [&] {
            return rtmem_perf_pool_loop(buffer.data(), buffer.size(), slots.data());
        });
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
    if (which == "rt_heap_cached" || which == "rt_heap_worst") {
        rtmem::rt_heap_options o;
        o.reserve_bytes = 64u << 20;
        if (which == "rt_heap_worst") o.cache_depth = 0;  // every call misses the lists
        rtmem::rt_heap h{o};
        if (!h.attach()) return 1;
        void* warm = h.allocate(block, 16);  // the first segment is granted outside the count
        h.deallocate(warm, block, 16);
        return repeat(calls,
                      [&] { return pair(&h, rtmem_perf_rt_heap_allocate, rtmem_perf_rt_heap_free); });
    }
    if (which == "rt_heap_remote_free") {
        // Another thread allocates every block and exits; this thread frees them all.
        rtmem::rt_heap h{};
        std::vector<void*> blocks(static_cast<std::size_t>(calls));
        std::thread([&] {
            for (auto& p : blocks) p = h.allocate(block, 16);
        }).join();
        long i = 0;
        return repeat(calls, [&] {
            void* p = blocks[static_cast<std::size_t>(i++)];
            rtmem_perf_rt_heap_free(&h, p);
            return p;
        });
    }
    if (which == "rt_heap_drain") {
        // Each measured allocate first takes back a full batch (drain_batch, 4 by default) of
        // this thread's blocks freed while the thread was bound to another heap (so they took
        // the cross-thread path), with the front cache off so each is a coalescing TLSF free.
        rtmem::rt_heap_options o;
        o.reserve_bytes = 64u << 20;
        o.cache_depth = 0;
        rtmem::rt_heap h{o}, other{};
        std::vector<void*> batch(o.drain_batch);
        return repeat(calls, [&] {
            for (auto& p : batch) p = h.allocate(block, 16);
            other.deallocate(other.allocate(16, 16), 16, 16);  // binds this thread to `other`
            for (auto* p : batch) h.deallocate(p, block, 16);   // queued: not bound to h
            if (!h.attach()) return static_cast<void*>(nullptr);
            void* p = rtmem_perf_rt_heap_allocate(&h);
            h.deallocate(p, block, 16);
            return p;
        });
    }
    if (which == "rt_heap_refill") {
        // Every measured allocate finds the list empty: the run it lists is taken by the
        // unmeasured allocates after it (blocks are kept: the heap grows now and then).
        rtmem::rt_heap_options o;
        o.reserve_bytes = 256u << 20;
        o.refill_runs = rtmem::rt_heap_options::run_start::always;
        rtmem::rt_heap h{o};
        if (!h.attach()) return 1;
        for (unsigned i = 0; i < 2 * o.refill_batch; ++i)  // the class's run reaches the batch
            if (h.allocate(block, 16) == nullptr) return 1;
        while (h.cached_blocks() > 1)  // attach() listed one smallest block
            if (h.allocate(block, 16) == nullptr) return 1;
        return repeat(calls, [&] {
            void* p = rtmem_perf_rt_heap_refill(&h);
            for (unsigned i = 1; i < o.refill_batch; ++i)
                if (h.allocate(block, 16) == nullptr) return static_cast<void*>(nullptr);
            return p;
        });
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
