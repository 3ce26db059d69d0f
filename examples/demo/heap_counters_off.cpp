// The non-counting build (recorded by `rtmem record`): the program's own operator new stays in
// place, so the tracer sees new and malloc as the program makes them. Counts stay 0 except the
// rtmem variant's own allocator calls.
#include <cstdlib>

#include "heap_counters.hpp"

namespace demo::heap {
bool available() noexcept {
    return false;
}
void* counted_malloc(std::size_t n) noexcept {
    return std::malloc(n);
}
void counted_free(void* p) noexcept {
    std::free(p);
}
}  // namespace demo::heap
