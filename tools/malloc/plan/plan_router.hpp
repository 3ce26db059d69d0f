// Routing by plan (`rtmem run --plan`): each allocation's return address is looked up in a
// small open-addressing table of the planned sites' frame-0 addresses; a miss (an unplanned
// site) costs one probe. A hit whose sites need more frames walks a trie of the planned frames
// up the stack: each frame's caller is read at a stack offset learned once per frame
// (recognition_walk.cpp). Frees, reallocs and usable sizes of planned blocks are recognised by
// one range check.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "site_strategies.hpp"

namespace rtmem::site_plan {

inline constexpr std::uint32_t no_site = ~std::uint32_t{0};

struct recognition_slot {
    std::uintptr_t ra;   ///< absolute frame-0 address; 0: empty
    std::uint32_t site;  ///< the site named by this frame alone (no_site: none)
    std::uint32_t node;  ///< 0: no site needs more frames here; else its trie node
};

/// One frame of a planned site's frames, below its parent (the frame it was called from is
/// the child). Node 0 is unused.
struct alignas(16) recognition_node {
    /// Bytes from the stack slot holding this frame's return address to the slot holding its
    /// caller's: the frame size of this function at this call, fixed unless it allocates on
    /// the stack dynamically. 0: not learned yet; negative: not usable (the unwinder decides).
    std::atomic<std::int32_t> delta;
    std::uint32_t site;     ///< the site whose frames end here (no_site: none)
    std::uint16_t depth;    ///< frames from frame 0 to this one (frame 0's node: 1)
    std::uint16_t deepest;  ///< the most frames any site at or below this node names
    bool leaf;              ///< no site names a frame above this one
};

struct recognition_child {
    std::uintptr_t ra;     ///< the caller's frame; 0: empty
    std::uint32_t parent;  ///< node
    std::uint32_t node;
};

struct recognition_table {
    std::uint64_t mask;
    recognition_slot* slots;
    planned_site* sites;
    recognition_node* nodes;
    std::uint64_t child_mask;
    recognition_child* children;
};

/// Published once the plan is loaded (never when there is none).
extern std::atomic<const recognition_table*> g_table;
/// The planned blocks' address range (0, 0 without a plan).
extern std::atomic<std::uintptr_t> g_range_base;
extern std::atomic<std::size_t> g_range_size;

[[gnu::always_inline]] inline std::size_t slot_of(std::uintptr_t ra, std::uint64_t mask) noexcept {
    return static_cast<std::size_t>(((ra * 0x9e3779b97f4a7c15ull) >> 32) & mask);
}

/// Where the edge from `parent` to caller `ra` is looked for first (32-bit arithmetic: its
/// constants fit in instructions, which leaves registers to the walk).
[[gnu::always_inline]] inline std::size_t child_slot(std::uint32_t parent, std::uintptr_t ra,
                                                     std::uint64_t mask) noexcept {
    const std::uint32_t h = (static_cast<std::uint32_t>(ra) ^ (parent << 20)) * 0x9e3779b1u;
    return static_cast<std::size_t>(h >> 8) & mask;
}

/// The trie edge from `parent` to the node of caller `ra` (0: none).
[[gnu::always_inline]] inline std::uint32_t child_of(const recognition_table* t,
                                                     std::uint32_t parent,
                                                     std::uintptr_t ra) noexcept {
    for (std::size_t j = child_slot(parent, ra, t->child_mask);; j = (j + 1) & t->child_mask) {
        const recognition_child& c = t->children[j];
        if (c.ra == ra && c.parent == parent) return c.node;
        if (c.ra == 0) return 0;
    }
}

/// A caller whose probe met a used slot that is not a one-frame site: the probe chain from
/// `slot`, then the site named by frame 0 alone, or the walk above it. Out of line: every
/// entry point's fast path (an empty slot) keeps its few registers. `cfa`: the entry point's canonical frame address (its
/// return address, frame 0, is the word below).
void* allocate_recognised(const recognition_table* t, std::size_t slot, std::uintptr_t ra,
                          const void* cfa, std::size_t size, std::size_t align) noexcept;
/// The site of a call at a frame 0 whose sites need more frames (`root`: its trie node), or
/// no_site.
std::uint32_t find_deep(const recognition_table* t, std::uint32_t root, const void* cfa) noexcept;
/// The walk on from `node` (not a leaf; its frame's return address at `at`).
std::uint32_t find_deeper(const recognition_table* t, std::uint32_t root, std::uint32_t node,
                          std::uintptr_t at, const void* cfa) noexcept;

/// The first frame of the walk inline (most sites behind a wrapper need one); the rest, and
/// the first call through a node (its distance to learn), in find_deep.
[[gnu::always_inline]] inline std::uint32_t walk_first(const recognition_table* t,
                                                       std::uint32_t root,
                                                       const void* cfa) noexcept {
    const recognition_node& n = t->nodes[root];
    const std::int32_t d = n.delta.load(std::memory_order_relaxed);
    if (d <= 0) [[unlikely]]
        return find_deep(t, root, cfa);
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(cfa) - sizeof(std::uintptr_t) +
                              static_cast<std::uintptr_t>(d);
    const std::uint32_t c = child_of(t, root, *reinterpret_cast<const std::uintptr_t*>(at));
    if (c == 0) return n.site;
    if (!t->nodes[c].leaf) return find_deeper(t, root, c, at, cfa);
    return t->nodes[c].site;
}

/// A block from the site that called (ra: __builtin_return_address(0) of the entry point, cfa:
/// its __builtin_dwarf_cfa()), or nullptr: not a planned site, or the site's strategy declined
/// (the general heap serves it).
[[gnu::always_inline]] inline void* try_allocate(std::size_t size, std::size_t align, void* ra,
                                                 const void* cfa) noexcept {
    const recognition_table* t = g_table.load(std::memory_order_acquire);
    if (t == nullptr) return nullptr;
    const auto key = reinterpret_cast<std::uintptr_t>(ra);
    const std::size_t i = slot_of(key, t->mask);
    const recognition_slot& e = t->slots[i];
    if (e.ra == 0) [[likely]] return nullptr;
    if (e.ra == key && e.node == 0) return t->sites[e.site].allocate(size, align);
    return allocate_recognised(t, i, key, cfa, size, align);
}

[[gnu::always_inline]] inline bool owns(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) - g_range_base.load(std::memory_order_relaxed) <
           g_range_size.load(std::memory_order_relaxed);
}

/// Whether a module the plan names is not loaded (yet): a dlopen may bring it.
bool modules_missing() noexcept;
/// Resolves the plan's modules loaded since start-up and routes their sites (after a dlopen).
void resolve_new_modules() noexcept;

/// p: a planned block (owns(p): the table is published).
inline void deallocate(void* p) noexcept {
    g_table.load(std::memory_order_relaxed)->sites[site_of(p)].deallocate(p);
}
inline std::size_t usable_size(const void* p) noexcept {
    return g_table.load(std::memory_order_relaxed)->sites[site_of(p)].usable_size(p);
}

}  // namespace rtmem::site_plan
