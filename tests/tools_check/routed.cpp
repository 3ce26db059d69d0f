// A program whose every operator new/delete goes through rtmem (the opt-in header), so
// tools/check-no-default-new must find no reference to the default operators.
#define RTMEM_DEFINE_GLOBAL_NEW
#include <memory>
#include <string>
#include <vector>

#include "rtmem/adapt/global_new.hpp"
#include "rtmem/sync/locked.hpp"

int main() {
    static rtmem::locked<rtmem::malloc_allocator, rtmem::spin_mutex> heap;
    static const rtmem::global_route route = rtmem::route_to(heap);
    rtmem::set_global_route(&route);
    std::vector<std::string> names(100, std::string(64, 'n'));
    auto p = std::make_unique<int[]>(1000);
    return names.size() == 100 && p != nullptr ? 0 : 1;
}
