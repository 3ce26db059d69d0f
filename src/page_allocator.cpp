// page_allocator: one OS mapping per block, with guard pages, prefault, lock and huge pages.
#include "rtmem/core/page_allocator.hpp"

#include <algorithm>

#include "rtmem/core/virtual_memory.hpp"

namespace rtmem {
namespace vm = virtual_memory;

std::size_t page_allocator::block_bytes(std::size_t size) noexcept {
    return vm::round_to_pages(size == 0 ? 1 : size);
}

void* page_allocator::allocate(std::size_t size, std::size_t align) noexcept {
    if (!is_pow2(align)) [[unlikely]] {
        report_violation(violation_kind::bad_alignment, name, nullptr, size,
                         "alignment %zu is not a power of two", align);
        return nullptr;
    }
#if !RTMEM_HAS_GUARD_PAGES
    if (options_.guard_before || options_.guard_after) [[unlikely]] {
        report_violation(violation_kind::bad_argument, name, nullptr, size,
                         "guard pages need page protection, which this platform lacks");
        return nullptr;
    }
#endif
    const std::size_t page = vm::page_size();
    std::size_t body = 0;
    if (!checked_align_up(size == 0 ? 1 : size, page, body)) return nullptr;
    const std::size_t before = options_.guard_before ? page : 0;
    const std::size_t after = options_.guard_after ? page : 0;
    // Over-reserve when the alignment is above a page, then trim the slack on both sides (on
    // Windows the slack stays reserved, uncommitted: see virtual_memory::trim).
    const std::size_t slack = align > page ? align - page : 0;
    std::size_t total = 0;
    if (!checked_add(body, before + after + slack, total)) return nullptr;

    auto* base = static_cast<std::byte*>(vm::reserve(total));
    if (base == nullptr) return nullptr;
    std::byte* block = align_pointer_up(base + before, std::max(align, page));
    std::byte* start = block - before;
    std::byte* end = block + body + after;
    if (start > base) vm::trim(base, static_cast<std::size_t>(start - base));
    if (base + total > end) vm::trim(end, static_cast<std::size_t>(base + total - end));

    if (!vm::commit(block, body)) {
        vm::release(start, before + body + after);
        return nullptr;
    }
    if (options_.huge_pages) vm::advise_huge_pages(block, body);
    if (options_.lock && !vm::lock(block, body)) {
        vm::release(start, before + body + after);
        return nullptr;
    }
    if (options_.prefault) vm::prefault(block, body);

    stats_.used += body;
    stats_.peak = std::max(stats_.peak, stats_.used);
    ++stats_.live_count;
    ++stats_.total_count;
    return block;
}

void page_allocator::deallocate(void* p, std::size_t size, std::size_t /*align*/) noexcept {
    if (p == nullptr) return;
    const std::size_t page = vm::page_size();
    if (!is_aligned(p, page)) [[unlikely]] {
        report_violation(violation_kind::foreign_pointer, name, p, size,
                         "%p is not page aligned, so page_allocator did not hand it out", p);
        return;
    }
    const std::size_t body = block_bytes(size);
    const std::size_t before = options_.guard_before ? page : 0;
    const std::size_t after = options_.guard_after ? page : 0;
    if (options_.lock) vm::unlock(p, body);
    vm::release(static_cast<std::byte*>(p) - before, before + body + after);
    stats_.used -= std::min(stats_.used, body);
    if (stats_.live_count > 0) --stats_.live_count;
}

}  // namespace rtmem
