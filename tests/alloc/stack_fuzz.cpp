// libFuzzer entry: stack_allocator under LIFO frees, markers and rewinds chosen by the fuzzer.
#include <cstdint>
#include <vector>

#include "rtmem/alloc/stack.hpp"
#include "stack_ordered_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtmem::testing;
    std::vector<std::byte> buffer(fuzz_buffer_bytes);
    rtmem::stack_allocator a{std::span<std::byte>(buffer)};
    auto o = stack_ordered_fuzz_options(size, free_order::lifo);
    o.exact_empty_used = rtmem::check_level >= 1;  // without headers, padding stays in use
    run_fuzzed(a, o, data, size);
    return 0;
}
