// Advice ranked by measurement: `rtmem advise --measure` replays the trace through the baseline
// allocator and the mixed configuration, then ranks the sites by the saving each one showed.
#include <algorithm>

#include "rtmem/analyze/replay.hpp"

namespace rtmem::analyze {

namespace {

const backend_result* find_result(const replay_report& r, const std::string& prefix,
                                  bool exact) {
    for (const auto& b : r.results) {
        if (!b.available) continue;
        if (exact ? b.name == prefix : b.name.rfind(prefix, 0) == 0) return &b;
    }
    return nullptr;
}

}  // namespace

bool rank_by_replay(advice& a, const replay_report& r, const std::string& baseline) {
    const backend_result* base = find_result(r, baseline, true);
    const backend_result* layer = find_result(r, "mixed, no advice", false);
    const backend_result* mixed = find_result(r, "mixed (", false);
    if (base == nullptr || mixed == nullptr) return false;
    for (auto& rec : a.ranked) {
        rec.measured = false;
        rec.measured_saved_ns = {};
        for (const auto& applied : r.advised) {
            if (applied.site != rec.site) continue;
            rec.measured = true;
            rec.measured_saved_ns = measured_saving(*base, *mixed, rec.site);
        }
    }
    // Measured sites first, by measured saving; the others (general, or beyond --apply) keep
    // the cost model's order after them.
    std::stable_sort(a.ranked.begin(), a.ranked.end(),
                     [](const recommendation& x, const recommendation& y) {
                         if (x.measured != y.measured) return x.measured;
                         return x.measured && x.measured_saved_ns.median > y.measured_saved_ns.median;
                     });
    a.measured = true;
    a.measurement.baseline = baseline;
    a.measurement.repetitions = r.repetitions;
    a.measurement.applied = r.advised.size();
    a.measurement.baseline_ns = base->total;
    if (layer != nullptr) a.measurement.dispatch_ns = layer->total;
    a.measurement.advised_ns = mixed->total;
    return true;
}

}  // namespace rtmem::analyze
