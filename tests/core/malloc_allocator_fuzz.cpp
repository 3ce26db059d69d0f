// libFuzzer entry over the conformance harness: the fuzzer's bytes choose every operation.
// The same shape serves every allocator: build one, run_conformance with a byte_source.
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/core/malloc_allocator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    rtmem::malloc_allocator a;
    rtmem::testing::conformance_options o;
    o.operations = size;  // the bytes end the run first
    o.max_size = 2048;
    o.max_align = 256;
    o.verify_every = 64;
    o.expect_no_exhaustion = true;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(a, o, src);
    return 0;
}
