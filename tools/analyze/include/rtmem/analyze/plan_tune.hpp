// The plans `rtmem tune` times against rt_heap alone, and the tuned plan it writes. The
// advisor plans some sites only for where their blocks go ([placement]: their own chunks, in
// allocation order), which can make a program read them faster or slower; a trace cannot tell
// which, a timed run can.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "rtmem/analyze/plan.hpp"

namespace rtmem::analyze {

/// One plan to time: the indices (into plan::sites) of the routed sites it keeps.
struct plan_step {
    std::string name;  ///< "the sites the trace justifies", "every planned site"
    std::vector<std::size_t> sites;
};

/// Smallest first: the routed sites planned for their calls and memory (not placement_only),
/// then every routed site. Empty and repeated steps are left out, so a plan without
/// [placement] sites has one step, and a plan routing nothing has none.
[[nodiscard]] std::vector<plan_step> tune_steps(const plan& p);

/// `p` with the routed sites in `keep` as they were (their reason extended by `kept_why`) and
/// every other routed site on the general heap (strategy heap, reason extended by
/// `dropped_why`); heap sites are unchanged. Empty why texts leave reasons as they were.
[[nodiscard]] plan plan_keeping(const plan& p, const std::vector<std::size_t>& keep,
                                const std::string& kept_why, const std::string& dropped_why);

}  // namespace rtmem::analyze
