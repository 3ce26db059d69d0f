// libFuzzer entry: the fuzzer's bytes drive both free-list policies through the conformance
// harness over a small heap, so exhaustion, splitting and coalescing all happen.
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/alloc/free_list.hpp"

template <class Policy>
void run(const std::uint8_t* data, std::size_t size) {
    rtmem::free_list_allocator<Policy> a{std::size_t{256} << 10};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.max_size = 4096;
    o.large_size = 64 << 10;
    o.max_align = 1024;
    o.max_live = 128;
    o.verify_every = 64;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(a, o, src);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    run<rtmem::first_fit>(data, size);
    run<rtmem::best_fit>(data, size);
    return 0;
}
