// libFuzzer entry: the fuzzer's bytes drive a two-pool tlsf_allocator through the conformance
// harness (check() after every operation), with large and over-aligned requests mixed in, the
// front cache on or off.
#include <cstdint>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/tlsf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> a(192 << 10), b(64 << 10);
    // The first byte picks the front cache's depth (0: off, the plain TLSF paths).
    rtmem::tlsf_allocator t{a, size > 0 ? data[0] % 9u : 0u};
    t.add_pool(b);
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.max_size = 2048;
    o.large_size = 96 << 10;
    o.max_align = 4096;
    o.max_live = 256;
    o.verify_every = 64;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(t, o, src);
    return 0;
}
