// `rtmem replay --plan`: the trace replayed with a plan's strategies in front of a general heap,
// using the very pool and region classes librtmem-malloc runs them with
// (tools/malloc/plan/site_strategies.hpp), so replayed and real savings are comparable.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/replay.hpp"
#include "rtmem/analyze/site.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze {

/// Which plan site (index into plan.sites, or -1) each replay site maps to: the plan site
/// whose frames, resolved against the trace's modules, are a prefix of the replay site's
/// (the deepest such plan site wins, as at run time).
struct plan_routing {
    std::vector<int> plan_site_of;  ///< per replay site id
    std::size_t plan_sites_matched = 0;
};
[[nodiscard]] plan_routing route_plan(const plan& p, const trace_reader& trace,
                                      const site_map& sites);

struct plan_replay_result {
    backend_result general;  ///< the general heap alone
    backend_result planned;  ///< the plan's sites on their strategies, the rest on it
    std::size_t plan_sites = 0, plan_sites_matched = 0;
    std::uint64_t served = 0, declined = 0;  ///< allocations the strategies served / passed on
};

/// `general`: a whole-program backend name (rt_heap: what `rtmem run` puts behind the plan).
[[nodiscard]] plan_replay_result replay_plan(const replay_program& program, const plan& p,
                                             const plan_routing& routing,
                                             const std::string& general, unsigned repetitions);

[[nodiscard]] std::string format_plan_replay(const plan_replay_result& r);

}  // namespace rtmem::analyze
