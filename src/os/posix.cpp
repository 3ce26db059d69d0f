// POSIX virtual memory (Linux, macOS, BSD).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "rtmem/core/alignment.hpp"
#include "rtmem/core/virtual_memory.hpp"

namespace rtmem::virtual_memory {

std::size_t page_size() noexcept {
    static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

std::size_t round_to_pages(std::size_t bytes) noexcept { return align_up(bytes, page_size()); }

void* reserve(std::size_t bytes) noexcept {
    if (bytes == 0) return nullptr;
    void* p = ::mmap(nullptr, round_to_pages(bytes), PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

bool commit(void* p, std::size_t bytes) noexcept {
    return ::mprotect(p, round_to_pages(bytes), PROT_READ | PROT_WRITE) == 0;
}

bool decommit(void* p, std::size_t bytes) noexcept {
    const std::size_t n = round_to_pages(bytes);
    // MADV_DONTNEED drops the pages at once (they read back as zero); PROT_NONE removes access.
    const bool dropped = ::madvise(p, n, MADV_DONTNEED) == 0;
    return ::mprotect(p, n, PROT_NONE) == 0 && dropped;
}

void release(void* p, std::size_t bytes) noexcept {
    if (p != nullptr && bytes != 0) ::munmap(p, round_to_pages(bytes));
}

void trim(void* p, std::size_t bytes) noexcept { release(p, bytes); }

bool protect_none(void* p, std::size_t bytes) noexcept {
    return ::mprotect(p, round_to_pages(bytes), PROT_NONE) == 0;
}

void prefault(void* p, std::size_t bytes) noexcept {
    const std::size_t page = page_size();
    auto* b = static_cast<volatile unsigned char*>(p);
    for (std::size_t off = 0; off < bytes; off += page) b[off] = b[off];
}

bool lock(void* p, std::size_t bytes) noexcept { return ::mlock(p, round_to_pages(bytes)) == 0; }

void unlock(void* p, std::size_t bytes) noexcept { ::munlock(p, round_to_pages(bytes)); }

bool advise_huge_pages(void* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
    return ::madvise(p, round_to_pages(bytes), MADV_HUGEPAGE) == 0;
#else
    (void)p;
    (void)bytes;
    return false;
#endif
}

}  // namespace rtmem::virtual_memory
