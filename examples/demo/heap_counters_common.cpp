// The part of the heap counters that does not depend on whether operator new is replaced:
// profiling mode, reading the totals and charging rtmem calls. Linked into both demo binaries
// (with heap_counters.cpp or heap_counters_off.cpp).
#include "heap_counters_slots.hpp"

namespace demo::heap {

void set_profiling(bool on) noexcept {
    detail::profiling_on.store(on);
}
bool profiling() noexcept {
    return detail::profiling_on.load(std::memory_order_relaxed);
}
totals read() noexcept {
    return detail::sum();
}
void add_rtmem_call(std::uint64_t c) noexcept {
    auto& s = detail::mine();
    s.bump(s.rtmem_calls, 1);
    if (c != 0) s.bump(s.rtmem_cycles, c);
}

}  // namespace demo::heap
