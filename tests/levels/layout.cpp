// Prints the size and alignment of every public rtmem type whose layout a program and the
// compiled library must agree on; tests/levels compares the output across check levels.
#include <cstdio>

#if __has_include(<memory_resource>)  // temp_scope is std::pmr based (absent on emscripten 3.1)
#include "rtmem/adapt/temporary.hpp"
#endif
#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/double_ended.hpp"
#include "rtmem/alloc/frame.hpp"
#include "rtmem/alloc/free_list.hpp"
#include "rtmem/alloc/growing_stack.hpp"
#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/stack.hpp"
#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/diag/guarded.hpp"
#include "rtmem/diag/tracked.hpp"

#define RTMEM_PRINT_LAYOUT(...) \
    std::printf("%s %zu %zu\n", #__VA_ARGS__, sizeof(__VA_ARGS__), alignof(__VA_ARGS__))

int main() {
    using namespace rtmem;
    RTMEM_PRINT_LAYOUT(arena);
    RTMEM_PRINT_LAYOUT(arena::marker_type);
    RTMEM_PRINT_LAYOUT(linear_allocator);
    RTMEM_PRINT_LAYOUT(linear_allocator::marker_type);
    RTMEM_PRINT_LAYOUT(stack_allocator);
    RTMEM_PRINT_LAYOUT(stack_allocator::marker_type);
    RTMEM_PRINT_LAYOUT(double_ended_allocator);
    RTMEM_PRINT_LAYOUT(double_ended_allocator::side_marker);
    RTMEM_PRINT_LAYOUT(frame_allocator<2>);
    RTMEM_PRINT_LAYOUT(free_list_allocator<>);
    RTMEM_PRINT_LAYOUT(growing_stack_allocator);
    RTMEM_PRINT_LAYOUT(growing_stack_allocator::marker_type);
    RTMEM_PRINT_LAYOUT(pool_allocator<>);
    RTMEM_PRINT_LAYOUT(tlsf_allocator);
    RTMEM_PRINT_LAYOUT(tracked<tlsf_allocator>);
    RTMEM_PRINT_LAYOUT(guarded<linear_allocator>);
#if __has_include(<memory_resource>)
    RTMEM_PRINT_LAYOUT(temp_scope);
#endif
    return 0;
}
