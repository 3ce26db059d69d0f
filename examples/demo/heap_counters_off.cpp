// The non-counting build (recorded by `rtmem record`): the program's own operator new stays in
// place, so the tracer sees new and malloc as the program makes them. Counts stay 0 except the
// rtmem variant's own allocator calls.
#include <cstdlib>

#include "heap_counters_slots.hpp"

namespace demo::heap {
bool available() noexcept {
    return false;
}
void set_profiling(bool on) noexcept {
    detail::profiling_on.store(on);
}
bool profiling() noexcept {
    return detail::profiling_on.load(std::memory_order_relaxed);
}
totals read() noexcept {
    return detail::sum();
}
void* counted_malloc(std::size_t n) noexcept {
    return std::malloc(n);
}
void counted_free(void* p) noexcept {
    std::free(p);
}
void add_rtmem_call(std::uint64_t c) noexcept {
    auto& s = detail::mine();
    s.bump(s.rtmem_calls, 1);
    if (c != 0) s.bump(s.rtmem_cycles, c);
}
}  // namespace demo::heap
