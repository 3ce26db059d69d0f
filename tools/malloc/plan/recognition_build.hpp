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

}  // namespace rtmem::site_plan
