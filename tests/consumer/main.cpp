// Uses the installed headers and library: an allocation from each memory source.
#include <cstdio>
#include <rtmem/core/memory_source.hpp>

int main() {
    rtmem::malloc_allocator heap;
    rtmem::page_allocator pages;
    void* a = heap.allocate(100, 64);
    void* b = pages.allocate(100, 4096);
    const bool ok = a != nullptr && b != nullptr && rtmem::is_aligned(a, 64) &&
                    rtmem::is_aligned(b, 4096) && pages.stats().live_count == 1;
    heap.deallocate(a, 100, 64);
    pages.deallocate(b, 100, 4096);
    std::puts(ok ? "consumer: ok" : "consumer: FAILED");
    return ok ? 0 : 1;
}
