#include "replay_plan.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "rtmem/analyze/plan_replay.hpp"

namespace rtmem::cli {

int replay_with_plan(const std::string& plan_path, const analyze::trace_reader& trace,
                     const analyze::site_map& sites, const analyze::replay_program& program,
                     const std::string& general, unsigned repetitions, bool json) {
    analyze::plan p;
    try {
        p = analyze::read_plan_file(plan_path);
    } catch (const analyze::plan_error& e) {
        throw usage_error(std::string("--plan: ") + e.what());
    }
    const analyze::plan_routing routing = analyze::route_plan(p, trace, sites);
    analyze::plan_replay_result r;
    try {
        r = analyze::replay_plan(program, p, routing, general, repetitions);
    } catch (const std::runtime_error& e) {
        throw usage_error(std::string("--plan: ") + e.what());
    }
    if (!json) {
        std::cout << analyze::format_plan_replay(r);
        return 0;
    }
    nlohmann::ordered_json j;
    j["plan_sites"] = r.plan_sites;
    j["plan_sites_matched"] = r.plan_sites_matched;
    j["served"] = r.served;
    j["to_general_heap"] = r.declined;
    for (const auto* b : {&r.general, &r.planned})
        j["results"].push_back({{"name", b->name},
                                {"total_ns", b->total_ns},
                                {"peak_footprint", b->peak_footprint},
                                {"repetition_ns", b->repetition_ns}});
    std::cout << j.dump(2) << '\n';
    return 0;
}

}  // namespace rtmem::cli
