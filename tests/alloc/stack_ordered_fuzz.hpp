// What the libFuzzer entries of the stack-ordered allocators share: the buffer size, the
// conformance profile (as many operations as the fuzzer gave bytes, blocks up to 2 KiB at up to
// 256-byte alignment, frequent markers and rewinds) and the run on the fuzzer's bytes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "conformance.hpp"

namespace rtmem::testing {

/// Small, so the fuzzer reaches exhaustion quickly.
inline constexpr std::size_t fuzz_buffer_bytes = 32 * 1024;

inline conformance_options stack_ordered_fuzz_options(std::size_t operations, free_order order) {
    conformance_options o;
    o.operations = operations;
    o.order = order;
    o.max_size = 2048;
    o.max_align = 256;
    o.verify_every = 64;
    o.marker_per_mille = 40;
    o.rewind_per_mille = 30;
    return o;
}

/// Runs the conformance harness on `a`, every choice taken from the fuzzer's bytes.
template <class A>
void run_fuzzed(A& a, const conformance_options& o, const std::uint8_t* data, std::size_t size) {
    byte_source src({data, size});
    run_conformance(a, o, src);
}

}  // namespace rtmem::testing
