// Compiled at another check level than the library rtmem::rtmem gives this configuration: the
// link must fail and name the level (rtmem/core/config.hpp), never mix layouts or checks.
#undef RTMEM_CHECKS
#define RTMEM_CHECKS 2
#include <rtmem/alloc/linear.hpp>

int main() {
    rtmem::linear_allocator a{256};
    return a.allocate(8) != nullptr ? 0 : 1;
}
