// WebAssembly virtual memory (emscripten). A module has one linear memory that grows in 64 KiB
// pages and never shrinks, with no page protection: there is no address space to reserve
// apart from memory, no way to give pages back, and no inaccessible page. So reserve takes
// zeroed, page-aligned memory from the C heap (it is usable at once), commit always succeeds,
// and what cannot exist says so: decommit and protect_none return false (page_allocator
// rejects guard pages up front), lock and huge pages are unsupported.
#include <cstdlib>
#include <cstring>

#include "rtmem/core/alignment.hpp"
#include "rtmem/core/virtual_memory.hpp"

namespace rtmem::virtual_memory {

std::size_t page_size() noexcept { return 64 * 1024; }  // the wasm page

std::size_t round_to_pages(std::size_t bytes) noexcept { return align_up(bytes, page_size()); }

void* reserve(std::size_t bytes) noexcept {
    if (bytes == 0) return nullptr;
    const std::size_t n = round_to_pages(bytes);
    if (n < bytes) return nullptr;
    void* p = std::aligned_alloc(page_size(), n);
    if (p != nullptr) std::memset(p, 0, n);  // fresh pages read as zero, as from the OS
    return p;
}

bool commit(void*, std::size_t) noexcept { return true; }

bool decommit(void*, std::size_t) noexcept { return false; }  // linear memory never shrinks

void release(void* p, std::size_t) noexcept { std::free(p); }

void trim(void*, std::size_t) noexcept {}  // part of a heap block: freed with the whole

bool protect_none(void*, std::size_t) noexcept { return false; }  // no page protection

void prefault(void*, std::size_t) noexcept {}  // linear memory is always resident

bool lock(void*, std::size_t) noexcept { return false; }

void unlock(void*, std::size_t) noexcept {}

bool advise_huge_pages(void*, std::size_t) noexcept { return false; }

}  // namespace rtmem::virtual_memory
