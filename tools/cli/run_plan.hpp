// `rtmem run --plan`: plan.json compiled into the environment text librtmem-malloc.so reads
// at start-up (rtmem/malloc/plan_contract.hpp).
#pragma once
#include <string>

#include "rtmem/analyze/plan.hpp"

namespace rtmem::cli {

struct compiled_plan {
    std::string text;          ///< the RTMEM_MALLOC_PLAN value
    std::size_t sites = 0;     ///< sites the library will try to match
    std::size_t skipped = 0;   ///< heap sites (nothing to route) and sites cut for size
    std::string warning;       ///< non-empty: say it before running
};

/// Sites in plan order (largest saving first); heap sites are left out, frames beyond the
/// library's limit are cut (a shorter prefix: less specific, still correct), and sites past
/// what one environment string holds are dropped with a warning.
[[nodiscard]] compiled_plan compile_plan(const analyze::plan& p);

/// Reads and validates `path` (usage_error naming the file and field when it cannot be used),
/// compiles it and sets RTMEM_MALLOC_PLAN (and RTMEM_PLAN_STATS when `stats`).
void apply_plan(const std::string& path, bool stats);

}  // namespace rtmem::cli
