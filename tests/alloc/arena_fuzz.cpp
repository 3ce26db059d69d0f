// libFuzzer entry: arena with small chunks (so rewinds cross chunks and large requests get
// dedicated chunks), growth policy and cache chosen by the first byte.
#include <cstdint>

#include "rtmem/alloc/arena.hpp"
#include "stack_ordered_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtmem::testing;
    const std::uint8_t mode = size == 0 ? 0 : data[0];
    rtmem::arena a{rtmem::arena_options{
        .chunk_size = 1024,
        .growth = (mode & 1) != 0 ? rtmem::arena_growth::geometric : rtmem::arena_growth::fixed,
        .max_chunk_size = 16 * 1024,
        .keep_chunks = (mode & 2) != 0}};
    auto o = stack_ordered_fuzz_options(size, free_order::none);
    o.max_size = 1024;  // a chunk's worth; 1 request in 64 up to large_size gets its own chunk
    o.large_size = 40000;
    o.expect_no_exhaustion = true;
    run_fuzzed(a, o, data, size);
    a.shrink_to_fit();
    return 0;
}
