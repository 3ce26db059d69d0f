// Page-granular memory straight from the OS, with real-time options.
#pragma once
#include <cstddef>

#include "rtmem/core/allocator.hpp"

namespace rtmem {

/// Options for page_allocator; all off by default.
struct page_options {
    bool prefault = false;    ///< touch every page at allocation, so no fault happens later
    bool lock = false;        ///< mlock the pages (a failure to lock fails the allocation)
    bool huge_pages = false;  ///< ask for transparent huge pages (a hint)
    bool guard_before = false;  ///< an inaccessible page right before each block
    bool guard_after = false;   ///< an inaccessible page right after each block's pages
};

/// Hands out page-rounded regions from the OS (mmap / VirtualAlloc), one mapping per block.
/// The block starts at a page boundary (or at `align` when larger); with guard_after, the block
/// is placed so the guard page follows the last *page* of the block: a write past the
/// page-rounded size faults. Meant as an upstream for arenas, pools and TLSF pools, not for
/// small objects. Single-threaded like every rtmem allocator (wrap it in locked<> to share it).
class page_allocator {
public:
    static constexpr std::string_view name = "page_allocator";

    page_allocator() noexcept = default;
    explicit page_allocator(page_options options) noexcept : options_(options) {}
    page_allocator(page_allocator&&) noexcept = default;
    page_allocator& operator=(page_allocator&&) noexcept = default;
    page_allocator(const page_allocator&) = delete;
    page_allocator& operator=(const page_allocator&) = delete;

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept;
    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept;

    [[nodiscard]] rtmem::stats stats() const noexcept { return stats_; }
    [[nodiscard]] const page_options& options() const noexcept { return options_; }

    /// Bytes a request of `size` actually takes from the OS (pages, without guards).
    [[nodiscard]] static std::size_t block_bytes(std::size_t size) noexcept;

private:
    page_options options_{};
    rtmem::stats stats_{};
};

}  // namespace rtmem
