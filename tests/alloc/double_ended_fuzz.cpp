// libFuzzer entry: the fuzzer fills the top side of a double_ended_allocator, then drives the
// bottom side through the conformance harness; the top's data must survive untouched.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "rtmem/alloc/double_ended.hpp"
#include "stack_ordered_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtmem::testing;
    std::vector<std::byte> buffer(fuzz_buffer_bytes);
    rtmem::double_ended_allocator a{std::span<std::byte>(buffer)};
    const std::size_t permanent = size == 0 ? 0 : (std::size_t{data[0]} * 97) % 16384;
    auto* top = static_cast<std::byte*>(a.allocate(permanent, 64, rtmem::side::top));
    if (top != nullptr) std::fill_n(top, permanent, std::byte{0xA5});
    auto bottom = a.bottom();
    run_fuzzed(bottom, stack_ordered_fuzz_options(size, free_order::none), data, size);
    if (top != nullptr &&
        std::any_of(top, top + permanent, [](std::byte b) { return b != std::byte{0xA5}; }))
        throw std::runtime_error("double_ended: the bottom side overwrote the top side");
    return 0;
}
