// Replay on an aged heap (`rtmem replay --aged`): before the replay, each backend's heap is
// littered the way "Reconsidering Custom Memory Allocation" (Berger, Zorn, McKinley, OOPSLA
// 2002) does for long-running programs: blocks of the program's own sizes are allocated and a
// random part of them freed, so the replay starts among holes instead of on a fresh heap,
// which flatters allocators that only bump through new memory. See docs/advisor.md.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "rtmem/analyze/replay.hpp"

namespace rtmem::analyze {

struct litter_options {
    std::uint64_t blocks = 0;  ///< blocks to litter with (0: the program's peak live count)
    double keep = 0.5;         ///< fraction of them still allocated when the replay starts
    std::uint64_t seed = 1;
};

/// What a backend's heap is littered with: allocation sizes (drawn from the program's own
/// allocations, uniformly over its calls), then which of them to free, in that order.
struct litter_plan {
    std::vector<std::uint64_t> sizes;
    std::vector<std::uint32_t> free_order;  ///< indices into sizes; the rest stay allocated
};

[[nodiscard]] litter_plan make_litter(const replay_program& program, const litter_options& o);

/// `inner` with its heap littered by `litter` at creation (outside the timed replay), the kept
/// blocks freed when the backend is destroyed. The footprint it reports is the replay's growth
/// over the littered heap. Same name as `inner`; the note says how it was aged.
[[nodiscard]] backend_factory aged_backend(backend_factory inner,
                                           std::shared_ptr<const litter_plan> litter);

}  // namespace rtmem::analyze
