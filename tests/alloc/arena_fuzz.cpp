// libFuzzer entry: arena with small chunks (so rewinds cross chunks and large requests get
// dedicated chunks), growth policy and cache chosen by the first byte.
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/alloc/arena.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::uint8_t mode = size == 0 ? 0 : data[0];
    rtmem::arena a{rtmem::arena_options{
        .chunk_size = 1024,
        .growth = (mode & 1) != 0 ? rtmem::arena_growth::geometric : rtmem::arena_growth::fixed,
        .max_chunk_size = 16 * 1024,
        .keep_chunks = (mode & 2) != 0}};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 1024;
    o.large_size = 40000;
    o.max_align = 256;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    o.expect_no_exhaustion = true;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(a, o, src);
    a.shrink_to_fit();
    return 0;
}
