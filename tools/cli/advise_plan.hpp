// `rtmem advise --plan FILE`: writes the advice as a plan for `rtmem run --plan` and
// `rtmem replay --plan` (docs/advisor.md "Plans"). Kept apart from advise.cpp: one hook there.
#pragma once
#include <string>

#include "command.hpp"
#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::cli {

struct plan_output {
    std::string path;
    std::size_t max_sites = 0;
    bool keep_heap_sites = false;
    double unwind_ns = analyze::plan_options{}.unwind_ns;

    void add_to(CLI::App& sub);
    [[nodiscard]] bool wanted() const noexcept { return !path.empty(); }
    /// Throws usage_error when the file cannot be written: called before the analysis runs.
    void check_writable() const;
    /// Makes the plan, writes it and prints where it went and what it holds (to `out`).
    void write(const analyze::advice& adv, const analyze::site_map& sites, std::size_t site_depth,
               const analyze::plan_costs& costs, const analyze::trace_reader& reader,
               const analyze::site_namer& name, std::ostream& out) const;
};

}  // namespace rtmem::cli
