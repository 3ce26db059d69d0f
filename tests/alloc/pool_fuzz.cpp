// libFuzzer entry: the fuzzer's bytes drive a growing pool_allocator through the conformance
// harness (block size and alignment chosen by the first two bytes).
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/alloc/pool.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::size_t block = 1 + std::size_t{data[0]} * 4;  // 1 .. 1021 bytes
    const std::size_t align = std::size_t{1} << (data[1] % 8);
    rtmem::malloc_allocator up;
    rtmem::pool_allocator p{block, align, 1 + std::size_t{data[1]} % 16, up};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.max_size = block;
    o.max_align = align;
    o.max_live = 256;
    o.verify_every = 64;
    o.expect_no_exhaustion = true;
    rtmem::testing::byte_source src({data + 2, size - 2});
    rtmem::testing::run_conformance(p, o, src);
    return 0;
}
