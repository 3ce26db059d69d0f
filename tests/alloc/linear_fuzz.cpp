// libFuzzer entry: the fuzzer's bytes drive linear_allocator through the conformance harness
// (allocations, markers, rewinds, resets, exhaustion of a small buffer).
#include <cstdint>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/linear.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> buffer(32 * 1024);
    rtmem::linear_allocator a{std::span<std::byte>(buffer)};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 2048;
    o.max_align = 256;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(a, o, src);
    return 0;
}
