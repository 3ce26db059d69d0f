#include "advise_plan.hpp"

#include <map>
#include <ostream>

#include "count_option.hpp"
#include "plan_file.hpp"
#include "rtmem/analyze/plan.hpp"

namespace rtmem::cli {

void plan_output::add_to(CLI::App& sub) {
    sub.add_option("--plan", path,
                   "Write a plan for `rtmem run --plan` / `rtmem replay --plan`: each advised site "
                   "whose safe strategy saves against rt_heap (calls, pages, stack walk; "
                   "--set plan_*), its strategy and its frames (module + offset)");
    sub.add_option("--plan-sites", max_sites, "Plan only the N best sites (0 = all that save)")
        ->check(at_least(0));
    sub.add_option("--plan-unwind-ns", unwind_ns,
                   "Cost of telling sites apart above their first frame, per allocation made at "
                   "that frame and per frame walked (default 5: run --plan's stack walk, "
                   "measured in docs/advisor.md; 0 = free)")
        ->check(CLI::NonNegativeNumber);
    sub.add_flag("--plan-heap", keep_heap_sites,
                 "Also list the sites left on the general heap, with the reason (what each "
                 "would save against rt_heap, and its memory cost)");
}

void plan_output::check_writable() const { check_plan_writable("--plan", path); }

void plan_output::write(const analyze::advice& adv, const analyze::site_map& sites,
                        std::size_t site_depth, const analyze::plan_costs& costs,
                        const analyze::trace_reader& reader, const analyze::site_namer& name,
                        std::ostream& out) const {
    analyze::plan_options o;
    o.max_sites = max_sites;
    o.keep_heap_sites = keep_heap_sites;
    o.unwind_ns = unwind_ns;
    o.costs = costs;
    o.recorded_depth = reader.stack_depth();
    o.site_depth = site_depth;
    o.program = reader.program();
    o.trace = reader.path();
    const analyze::plan p = analyze::make_plan(adv, sites, reader.modules(), o, name);
    write_plan_file(p, "--plan", path);
    std::map<std::string, std::size_t> by_strategy;
    std::size_t routed = 0;
    for (const auto& s : p.sites) {
        ++by_strategy[std::string(analyze::plan_strategy_name(s.strategy))];
        if (s.strategy != analyze::plan_strategy::heap) ++routed;
    }
    out << "rtmem: wrote plan " << path << ": " << routed << " site" << (routed == 1 ? "" : "s")
        << " planned";
    std::string sep = " (";
    for (const auto& [strategy, n] : by_strategy) {
        out << sep << n << " " << strategy;
        sep = ", ";
    }
    out << (by_strategy.empty() ? "" : ")") << ", recognised by up to " << p.depth
        << " frames; frame markers: " << (p.frame_markers ? "yes" : "no") << "\n";
    std::size_t placement = 0;
    for (const auto& s : p.sites)
        placement += s.strategy != analyze::plan_strategy::heap && s.placement_only ? 1 : 0;
    if (placement != 0)
        out << "rtmem: " << placement << " of them planned only for where their blocks go "
            << "(marked [placement]: their own chunks, in the order they were made), which a "
               "trace cannot confirm: the program may read them faster or slower for it (docs/"
               "advisor.md); `rtmem tune` times them in the program and keeps those that pay\n";
    for (const auto& s : p.sites) {
        out << "  " << analyze::plan_strategy_name(s.strategy) << "  " << s.frames.size()
            << (s.whole_stack ? " frames (whole stack)" : " frames")
            << (s.placement_only && s.strategy != analyze::plan_strategy::heap ? "  [placement]"
                                                                               : "")
            << "  " << s.label;
        if (s.strategy == analyze::plan_strategy::heap ||
            s.reason.find("fallback") != std::string::npos)
            out << "\n      " << s.reason;
        out << "\n";
    }
}

}  // namespace rtmem::cli
