// libFuzzer entry: the fuzzer fills the top side of a double_ended_allocator, then drives the
// bottom side through the conformance harness; the top's data must survive untouched.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "conformance.hpp"
#include "rtmem/alloc/double_ended.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> buffer(32 * 1024);
    rtmem::double_ended_allocator a{std::span<std::byte>(buffer)};
    const std::size_t permanent = size == 0 ? 0 : (std::size_t{data[0]} * 97) % 16384;
    auto* top = static_cast<std::byte*>(a.allocate(permanent, 64, rtmem::side::top));
    if (top != nullptr) std::fill_n(top, permanent, std::byte{0xA5});
    auto bottom = a.bottom();
    rtmem::testing::conformance_options o;
    o.operations = size;
    o.order = rtmem::testing::free_order::none;
    o.max_size = 2048;
    o.max_align = 256;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    rtmem::testing::byte_source src({data, size});
    rtmem::testing::run_conformance(bottom, o, src);
    if (top != nullptr &&
        std::any_of(top, top + permanent, [](std::byte b) { return b != std::byte{0xA5}; }))
        throw std::runtime_error("double_ended: the bottom side overwrote the top side");
    return 0;
}
