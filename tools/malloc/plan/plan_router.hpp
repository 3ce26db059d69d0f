// Routing by plan (`rtmem run --plan`): each allocation's return address is looked up in a
// small open-addressing table of the planned sites' frame-0 addresses; a miss (an unplanned
// site) costs one probe. A hit whose site needs more frames unwinds to compare them. Frees,
// reallocs and usable sizes of planned blocks are recognised by one range check.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "site_strategies.hpp"

namespace rtmem::site_plan {

struct recognition_slot {
    std::uintptr_t ra;      ///< absolute frame-0 address; 0: empty
    std::uint32_t first;    ///< count 0: the site (its one frame is frame 0); else into the
    std::uint32_t count;    ///< candidate list: the sites whose frame 0 this is, deepest first
};

struct recognition_table {
    std::uint64_t mask;
    recognition_slot* slots;
    planned_site* sites;
};

/// Published once the plan is loaded (never when there is none).
extern std::atomic<const recognition_table*> g_table;
/// The planned blocks' address range (0, 0 without a plan).
extern std::atomic<std::uintptr_t> g_range_base;
extern std::atomic<std::size_t> g_range_size;

[[gnu::always_inline]] inline std::size_t slot_of(std::uintptr_t ra, std::uint64_t mask) noexcept {
    return static_cast<std::size_t>(((ra * 0x9e3779b97f4a7c15ull) >> 32) & mask);
}

/// The probe chain past the first slot, and the sites that need deeper frames.
void* allocate_recognised(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                          std::size_t size, std::size_t align) noexcept;

/// A block from the site that called (ra: __builtin_return_address(0) of the entry point), or
/// nullptr: not a planned site, or the site's strategy declined (the general heap serves it).
[[gnu::always_inline]] inline void* try_allocate(std::size_t size, std::size_t align,
                                                 void* ra) noexcept {
    const recognition_table* t = g_table.load(std::memory_order_acquire);
    if (t == nullptr) return nullptr;
    const auto key = reinterpret_cast<std::uintptr_t>(ra);
    const std::size_t i = slot_of(key, t->mask);
    const recognition_slot& e = t->slots[i];
    if (e.ra == 0) [[likely]] return nullptr;
    if (e.ra == key && e.count == 0) return t->sites[e.first].allocate(size, align);
    return allocate_recognised(t, i, key, size, align);
}

[[gnu::always_inline]] inline bool owns(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) - g_range_base.load(std::memory_order_relaxed) <
           g_range_size.load(std::memory_order_relaxed);
}

/// p: a planned block (owns(p): the table is published).
inline void deallocate(void* p) noexcept {
    g_table.load(std::memory_order_relaxed)->sites[site_of(p)].deallocate(p);
}
inline std::size_t usable_size(const void* p) noexcept {
    return g_table.load(std::memory_order_relaxed)->sites[site_of(p)].usable_size(p);
}

}  // namespace rtmem::site_plan
