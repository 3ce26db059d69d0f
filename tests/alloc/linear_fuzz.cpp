// libFuzzer entry: the fuzzer's bytes drive linear_allocator through the conformance harness
// (allocations, markers, rewinds, resets, exhaustion of a small buffer).
#include <cstdint>
#include <vector>

#include "rtmem/alloc/linear.hpp"
#include "stack_ordered_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtmem::testing;
    std::vector<std::byte> buffer(fuzz_buffer_bytes);
    rtmem::linear_allocator a{std::span<std::byte>(buffer)};
    run_fuzzed(a, stack_ordered_fuzz_options(size, free_order::none), data, size);
    return 0;
}
