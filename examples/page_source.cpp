// A real-time memory source: pages prefaulted up front (no page fault mid-frame), with guard
// pages that turn a buffer overrun into an immediate crash instead of silent corruption.
#include <cstdio>
#include <cstring>

#include "rtmem/core/memory_source.hpp"

int main() {
    // Guard pages where the platform has page protection (not WebAssembly: see docs/platforms.md).
    constexpr bool guards = RTMEM_HAS_GUARD_PAGES != 0;
    rtmem::page_allocator pages{{.prefault = true, .guard_before = guards, .guard_after = guards}};
    constexpr std::size_t frame_budget = 4u << 20;  // 4 MiB per frame
    void* frame_memory = pages.allocate(frame_budget, 64);
    if (frame_memory == nullptr) {
        std::fprintf(stderr, "page_source: could not map %zu bytes\n", frame_budget);
        return 1;
    }
    std::memset(frame_memory, 0, frame_budget);  // already faulted in: this touches RAM only
    const rtmem::stats s = pages.stats();
    std::printf("page_source: %zu KiB prefaulted, page size %zu, %s\n", s.used / 1024,
                rtmem::virtual_memory::page_size(),
                guards ? "guard pages on both sides" : "no guard pages (no page protection)");
    pages.deallocate(frame_memory, frame_budget, 64);
    return pages.stats().live_count == 0 ? 0 : 1;
}
