#include "rtmem/analyze/plan_tune.hpp"

#include <algorithm>

namespace rtmem::analyze {

std::vector<plan_step> tune_steps(const plan& p) {
    plan_step justified{"the sites the trace justifies", {}};
    plan_step every{"every planned site", {}};
    for (std::size_t i = 0; i < p.sites.size(); ++i) {
        if (p.sites[i].strategy == plan_strategy::heap) continue;
        every.sites.push_back(i);
        if (!p.sites[i].placement_only) justified.sites.push_back(i);
    }
    std::vector<plan_step> steps;
    if (!justified.sites.empty() && justified.sites.size() < every.sites.size())
        steps.push_back(std::move(justified));
    if (!every.sites.empty()) steps.push_back(std::move(every));
    return steps;
}

plan plan_keeping(const plan& p, const std::vector<std::size_t>& keep, const std::string& kept_why,
                  const std::string& dropped_why) {
    plan out = p;
    auto extend = [](std::string& reason, const std::string& why) {
        if (why.empty()) return;
        reason += reason.empty() ? why : "; " + why;
    };
    for (std::size_t i = 0; i < out.sites.size(); ++i) {
        plan_site& s = out.sites[i];
        if (s.strategy == plan_strategy::heap) continue;
        if (std::find(keep.begin(), keep.end(), i) != keep.end()) {
            extend(s.reason, kept_why);
        } else {
            s.strategy = plan_strategy::heap;
            extend(s.reason, dropped_why);
        }
    }
    return out;
}

}  // namespace rtmem::analyze
