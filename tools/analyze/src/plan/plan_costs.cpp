// The plan's costs by name (`--set plan_call_ns=6`), the same way as the thresholds and the
// advice's cost model: one list serves setting and listing.
#include "../advise/named_fields.hpp"
#include "rtmem/analyze/plan.hpp"

namespace rtmem::analyze {

namespace {

template <class F>
void for_each_plan_cost(plan_costs& c, F&& f) {
    f("plan_heap_list_ns", c.heap_list_ns);
    f("plan_heap_miss_ns", c.heap_miss_ns);
    f("plan_heap_large_ns", c.heap_large_ns);
    f("plan_call_ns", c.call_ns);
    f("plan_region_call_ns", c.region_call_ns);
    f("plan_probe_ns", c.probe_ns);
    f("plan_page_ns", c.page_ns);
    f("plan_large_page_ns", c.large_page_ns);
    f("plan_grouped_page_ns", c.grouped_page_ns);
    f("plan_min_saved_ns", c.min_saved_ns);
    f("plan_heap_list_blocks", c.heap_list_blocks);
    f("plan_heap_list_max_request", c.heap_list_max_request);
}

}  // namespace

bool set_plan_cost(plan_costs& c, std::string_view name, double value) noexcept {
    return detail::set_field([&](auto&& f) { for_each_plan_cost(c, f); }, name, value);
}

std::vector<std::string_view> plan_cost_names() {
    plan_costs c;
    return detail::field_names([&](auto&& f) { for_each_plan_cost(c, f); });
}

}  // namespace rtmem::analyze
