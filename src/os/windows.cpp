// Windows virtual memory (compiled only on Windows).
#include <windows.h>

#include "rtmem/core/alignment.hpp"
#include "rtmem/core/virtual_memory.hpp"

namespace rtmem::virtual_memory {

std::size_t page_size() noexcept {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return static_cast<std::size_t>(info.dwPageSize);
}

std::size_t round_to_pages(std::size_t bytes) noexcept { return align_up(bytes, page_size()); }

void* reserve(std::size_t bytes) noexcept {
    if (bytes == 0) return nullptr;
    return VirtualAlloc(nullptr, round_to_pages(bytes), MEM_RESERVE, PAGE_NOACCESS);
}

bool commit(void* p, std::size_t bytes) noexcept {
    return VirtualAlloc(p, round_to_pages(bytes), MEM_COMMIT, PAGE_READWRITE) != nullptr;
}

bool decommit(void* p, std::size_t bytes) noexcept {
    return VirtualFree(p, round_to_pages(bytes), MEM_DECOMMIT) != 0;
}

// Windows releases whole reservations only, from their base: found with VirtualQuery, since
// page_allocator's blocks (after a guard page, or aligned inside an over-reservation) do not
// start there.
void release(void* p, std::size_t /*bytes*/) noexcept {
    if (p == nullptr) return;
    MEMORY_BASIC_INFORMATION info;
    if (VirtualQuery(p, &info, sizeof info) == 0 || info.AllocationBase == nullptr) return;
    VirtualFree(info.AllocationBase, 0, MEM_RELEASE);
}

void trim(void*, std::size_t) noexcept {}  // see virtual_memory.hpp: the slack stays reserved

bool protect_none(void* p, std::size_t bytes) noexcept {
    DWORD old = 0;
    return VirtualProtect(p, round_to_pages(bytes), PAGE_NOACCESS, &old) != 0;
}

void prefault(void* p, std::size_t bytes) noexcept {
    const std::size_t page = page_size();
    auto* b = static_cast<volatile unsigned char*>(p);
    for (std::size_t off = 0; off < bytes; off += page) b[off] = b[off];
}

bool lock(void* p, std::size_t bytes) noexcept { return VirtualLock(p, round_to_pages(bytes)) != 0; }

void unlock(void* p, std::size_t bytes) noexcept { VirtualUnlock(p, round_to_pages(bytes)); }

bool advise_huge_pages(void*, std::size_t) noexcept { return false; }

}  // namespace rtmem::virtual_memory
