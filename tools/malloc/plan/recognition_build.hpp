// The recognition table of a plan's resolved sites (plan_router.hpp): frame-0 addresses in an
// open-addressing table, and the frames above them as a trie whose edges are hashed by
// (parent node, caller's return address). Built from mmap'd memory, never through malloc.
#pragma once
#include <cstdint>

#include "plan_router.hpp"

namespace rtmem::site_plan {

struct resolved_site {
    std::uint32_t nframes;
    const std::uintptr_t* frames;  ///< absolute, innermost first
    bool resolved;                 ///< every frame's module is loaded
};

/// nullptr when its memory cannot be mapped. Sites with identical frames: the first one wins.
const recognition_table* build_recognition_table(const resolved_site* sites, std::uint32_t count,
                                                 planned_site* strategies) noexcept;

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

}  // namespace rtmem::site_plan
