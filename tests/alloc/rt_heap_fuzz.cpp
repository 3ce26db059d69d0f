// libFuzzer entry: the fuzzer's bytes drive a small real-time rt_heap (64 KiB segments, 1 MiB in
// all, so growth, multi-segment pools and exhaustion all happen) through the conformance harness,
// the front cache depth and drain batch taken from the first byte.
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/alloc/rt_heap.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    rtmem::rt_heap_options opts = rtmem::rt_heap_options::real_time_with(1u << 20);
    opts.segment_bytes = 64u << 10;
    opts.max_threads = 2;
    opts.cache_depth = size > 0 ? data[0] % 9u : 0u;
    opts.drain_batch = size > 0 ? 1u + data[0] / 64u : 16u;
    rtmem::rt_heap h{opts};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.max_size = 2048;
    o.large_size = 96 << 10;
    o.max_align = 4096;
    o.max_live = 256;
    o.verify_every = 64;
    o.check_every = 16;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(h, o, src);
    return 0;
}
