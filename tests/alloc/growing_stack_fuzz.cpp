// libFuzzer entry: growing_stack_allocator with small chunks (so LIFO frees, markers and rewinds
// cross chunks and large requests get chunks of their own), spare count chosen by the first byte.
#include <cstdint>

#include "rtmem/alloc/growing_stack.hpp"
#include "stack_ordered_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtmem::testing;
    const std::uint8_t mode = size == 0 ? 0 : data[0];
    rtmem::growing_stack_allocator a{
        rtmem::growing_stack_options{.chunk_size = 1024, .spare_chunks = mode % 3u}};
    auto o = stack_ordered_fuzz_options(size, free_order::lifo);
    o.max_size = 1024;  // a chunk's worth; 1 request in 64 up to large_size gets its own chunk
    o.large_size = 40000;
    o.expect_no_exhaustion = true;
    o.exact_empty_used = rtmem::check_level >= 1;  // without headers, padding stays in use
    run_fuzzed(a, o, data, size);
    a.shrink_to_fit();
    return 0;
}
