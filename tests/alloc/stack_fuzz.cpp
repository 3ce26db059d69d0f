// libFuzzer entry: stack_allocator under LIFO frees, markers and rewinds chosen by the fuzzer.
#include <cstdint>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/stack.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> buffer(32 * 1024);
    rtmem::stack_allocator a{std::span<std::byte>(buffer)};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.order = rtmem::testing::free_order::lifo;
    o.exact_empty_used = rtmem::check_level >= 1;
    o.max_size = 2048;
    o.max_align = 256;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(a, o, src);
    return 0;
}
