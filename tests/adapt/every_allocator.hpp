// The list of rtmem allocators the adapter tests run on: one factory per allocator, each owning
// the allocator (and whatever it needs) for one test. Traits say how the allocator may be used:
//   elements   how many elements the container tests use (a pool's blocks bound the largest
//              request)
//   frees      deallocate gives memory back (false: linear-style, memory returns on
//              reset/rewind)
//   lifo_only  blocks must be freed in reverse order (stack allocators)
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/double_ended.hpp"
#include "rtmem/alloc/frame.hpp"
#include "rtmem/alloc/growing_stack.hpp"
#include "rtmem/alloc/free_list.hpp"
#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/rt_heap.hpp"
#include "rtmem/alloc/stack.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "rtmem/diag/guarded.hpp"
#include "rtmem/diag/tracked.hpp"
#include "rtmem/sync/locked.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace rtmem::testing {

inline constexpr std::size_t every_allocator_capacity = std::size_t{8} << 20;

template <class A>
struct factory_base {
    using type = A;
    static constexpr std::size_t elements = 10000;
    static constexpr bool frees = true;
    static constexpr bool lifo_only = false;
};

struct malloc_factory : factory_base<malloc_allocator> {
    malloc_allocator a;
    type& get() { return a; }
};

struct page_factory : factory_base<page_allocator> {
    page_allocator a;
    type& get() { return a; }
};

struct linear_factory : factory_base<linear_allocator> {
    static constexpr bool frees = false;
    linear_allocator a{every_allocator_capacity};
    type& get() { return a; }
};

struct stack_factory : factory_base<stack_allocator> {
    static constexpr bool lifo_only = true;
    stack_allocator a{every_allocator_capacity};
    type& get() { return a; }
};

struct growing_stack_factory : factory_base<growing_stack_allocator> {
    static constexpr bool lifo_only = true;
    growing_stack_allocator a{growing_stack_options{.chunk_size = 4096}};  // containers cross chunks
    type& get() { return a; }
};

struct double_ended_factory : factory_base<double_ended_allocator> {
    static constexpr bool frees = false;
    double_ended_allocator a{every_allocator_capacity};
    type& get() { return a; }
};

struct frame_factory : factory_base<frame_allocator<2>> {
    static constexpr bool frees = false;
    frame_allocator<2> a{every_allocator_capacity};
    type& get() { return a; }
};

struct arena_factory : factory_base<arena> {
    static constexpr bool frees = false;
    arena a{64 * 1024};
    type& get() { return a; }
};

struct pool_factory : factory_base<pool_allocator<>> {
    static constexpr std::size_t elements = 500;  // the largest request must fit one block
    pool_allocator<> a{4096, 64, 64};
    type& get() { return a; }
};

struct free_list_first_fit_factory : factory_base<free_list_allocator<first_fit>> {
    free_list_allocator<first_fit> a{every_allocator_capacity};
    type& get() { return a; }
};

struct free_list_best_fit_factory : factory_base<free_list_allocator<best_fit>> {
    free_list_allocator<best_fit> a{every_allocator_capacity};
    type& get() { return a; }
};

struct tlsf_factory : factory_base<tlsf_allocator> {
    std::unique_ptr<std::byte[]> memory{new std::byte[every_allocator_capacity]};
    tlsf_allocator a{std::span<std::byte>(memory.get(), every_allocator_capacity)};
    type& get() { return a; }
};

struct rt_heap_factory : factory_base<rt_heap> {
    rt_heap a{[] {
        rt_heap_options o;
        o.reserve_bytes = every_allocator_capacity;
        o.segment_bytes = 64u << 10;
        return o;
    }()};
    type& get() { return a; }
};

struct locked_malloc_factory : factory_base<locked<malloc_allocator, spin_mutex>> {
    type a;
    type& get() { return a; }
};

struct locked_tlsf_factory : factory_base<locked<tlsf_allocator>> {
    std::unique_ptr<std::byte[]> memory{new std::byte[every_allocator_capacity]};
    type a{std::span<std::byte>(memory.get(), every_allocator_capacity)};
    type& get() { return a; }
};

struct tracked_factory : factory_base<tracked<tlsf_allocator>> {
    tlsf_factory up;
    type a{up.get()};
    type& get() { return a; }
};

struct guarded_factory : factory_base<guarded<free_list_allocator<best_fit>>> {
    free_list_best_fit_factory up;
    type a{up.get()};
    type& get() { return a; }
};

using every_allocator =
    ::testing::Types<malloc_factory, page_factory, linear_factory, stack_factory,
                     growing_stack_factory, double_ended_factory, frame_factory, arena_factory, pool_factory,
                     free_list_first_fit_factory, free_list_best_fit_factory, tlsf_factory,
                     rt_heap_factory, locked_malloc_factory, locked_tlsf_factory, tracked_factory, guarded_factory>;

}  // namespace rtmem::testing
