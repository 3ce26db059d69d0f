// libFuzzer entry: frame_allocator<3> driven by the conformance harness within one frame, then
// advanced by a fuzzer-chosen number of frames and driven again.
#include <cstdint>

#include "conformance.hpp"
#include "rtmem/alloc/frame.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    rtmem::frame_allocator<3> f{16 * 1024};
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 1024;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(f, o, src);
    const unsigned frames = size == 0 ? 1 : data[size - 1] % 5 + 1;
    for (unsigned i = 0; i < frames; ++i) {
        f.next_frame();
        if (f.current().used() != 0)
            throw rtmem::testing::conformance_failure("next_frame did not reset");
    }
    return 0;
}
