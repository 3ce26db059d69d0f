// `rtmem replay --plan plan.json TRACE`: the general heap alone against the plan in front of
// it, replayed (rtmem/analyze/plan_replay.hpp).
#pragma once
#include <string>

#include "rtmem/analyze/replay.hpp"
#include "rtmem/analyze/site.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::cli {

/// Prints the comparison; usage_error for a plan that cannot be read.
int replay_with_plan(const std::string& plan_path, const analyze::trace_reader& trace,
                     const analyze::site_map& sites, const analyze::replay_program& program,
                     const std::string& general, unsigned repetitions, bool json);

}  // namespace rtmem::cli
