// Virtual memory primitives: reserve address space, commit and decommit pages, release.
// Sizes are rounded up to whole pages. Implemented per OS in src/os/.
#pragma once
#include <cstddef>

namespace rtmem::virtual_memory {

/// The OS page size (4096 on most x86-64 systems).
[[nodiscard]] std::size_t page_size() noexcept;

/// Rounds bytes up to a whole number of pages (0 stays 0).
[[nodiscard]] std::size_t round_to_pages(std::size_t bytes) noexcept;

/// Reserves address space with no access and no backing memory; nullptr on failure.
[[nodiscard]] void* reserve(std::size_t bytes) noexcept;

/// Makes [p, p+bytes) readable and writable. p must be page aligned. False on failure.
[[nodiscard]] bool commit(void* p, std::size_t bytes) noexcept;

/// Gives the pages' memory back to the OS and removes access; the range stays reserved.
bool decommit(void* p, std::size_t bytes) noexcept;

/// Returns a reserved range to the OS. POSIX: exactly [p, p+bytes). Windows, which releases
/// only whole reservations: the whole reservation that p lies in.
void release(void* p, std::size_t bytes) noexcept;

/// Gives back the part [p, p+bytes) of a larger reservation (the slack of an over-reservation
/// made for alignment). POSIX unmaps it; Windows cannot split a reservation, so there the range
/// stays reserved — address space only, never committed — until release() frees the whole.
void trim(void* p, std::size_t bytes) noexcept;

/// Makes [p, p+bytes) inaccessible (guard pages). False on failure.
bool protect_none(void* p, std::size_t bytes) noexcept;

/// Touches every page so no page fault happens later (e.g. in the middle of a frame).
void prefault(void* p, std::size_t bytes) noexcept;

/// Locks the pages in RAM (mlock / VirtualLock). False when the OS refuses (limits).
bool lock(void* p, std::size_t bytes) noexcept;
void unlock(void* p, std::size_t bytes) noexcept;

/// Asks for transparent huge pages on the range (Linux madvise); false when unsupported.
bool advise_huge_pages(void* p, std::size_t bytes) noexcept;

}  // namespace rtmem::virtual_memory
