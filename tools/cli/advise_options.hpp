// Options shared by `rtmem advise` and `rtmem replay`: site depth, thresholds, cost model.
#pragma once
#include <string>
#include <vector>

#include "command.hpp"
#include "count_option.hpp"
#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::cli {

struct advisor_options {
    std::size_t site_depth = 0;
    std::vector<std::string> sets;  ///< NAME=VALUE for thresholds and costs

    void add_to(CLI::App& sub) {
        sub.add_option(
            "--site-depth", site_depth,
            "Merge call stacks sharing their N innermost frames into one site (0 = whole stack)")
            ->check(at_least(0));
        auto join = [](const std::vector<std::string_view>& names) {
            std::string out;
            for (auto n : names) out += std::string(out.empty() ? "" : ", ") + std::string(n);
            return out;
        };
        sub.add_option("--set", sets,
                       "Override a threshold or cost, NAME=VALUE (repeatable). Thresholds: " +
                           join(analyze::threshold_names()) +
                           ". Costs (ns): " + join(analyze::cost_names()) +
                           ". Plan costs against rt_heap (--plan): " +
                           join(analyze::plan_cost_names()) + ". See docs/advisor.md");
    }

    [[nodiscard]] analyze::thresholds limits() const { return applied().t; }
    [[nodiscard]] analyze::cost_model costs() const { return applied().c; }
    [[nodiscard]] analyze::plan_costs plan_costs() const { return applied().pc; }

  private:
    // Every --set lands in one of these (the defaults otherwise).
    struct settings {
        analyze::thresholds t;
        analyze::cost_model c;
        analyze::plan_costs pc;
    };

    [[nodiscard]] settings applied() const {
        settings out;
        auto& [t, c, pc] = out;
        for (const auto& s : sets) {
            const auto eq = s.find('=');
            if (eq == std::string::npos)
                throw usage_error("--set expects NAME=VALUE, got '" + s + "'");
            const std::string name = s.substr(0, eq);
            double value = 0;
            try {
                value = std::stod(s.substr(eq + 1));
            } catch (const std::exception&) {
                throw usage_error("--set " + name + ": '" + s.substr(eq + 1) + "' is not a number");
            }
            if (!analyze::set_threshold(t, name, value) && !analyze::set_cost(c, name, value) &&
                !analyze::set_plan_cost(pc, name, value)) {
                throw usage_error("--set: unknown threshold or cost '" + name + "'");
            }
        }
        return out;
    }
};

}  // namespace rtmem::cli
