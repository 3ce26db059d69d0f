// Text and JSON renderings of a replay report.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "rtmem/analyze/replay.hpp"
#include "spread_json.hpp"

namespace rtmem::analyze {
namespace {

std::string pad(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

std::string num(double v, int digits = 1) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

const backend_result* baseline_of(const replay_report& r) {
    for (const auto& b : r.results) {
        if (b.available && b.name == "glibc") return &b;
    }
    for (const auto& b : r.results) {
        if (b.available) return &b;
    }
    return nullptr;
}

/// "±N%": half the min-max range of the repetitions, relative to the median.
std::string plus_minus(const spread& s) {
    if (s.median <= 0) return "±" + human_ns((s.max - s.min) / 2);
    return "±" + num(50 * (s.max - s.min) / s.median, 0) + "%";
}

}  // namespace

std::string format_replay_text(const replay_report& r, const site_namer& name, std::size_t top) {
    std::string out = "rtmem replay: " + with_commas(r.ops) + " operations from " +
                      with_commas(r.events) + " events (" + with_commas(r.unknown_frees) +
                      " frees of unknown blocks skipped), peak live " +
                      human_bytes(r.peak_live_bytes) + "\n";
    out += "Times are medians of " + std::to_string(r.repetitions) +
           " repetitions, ± half their min-max range; the footprint is read in one more, "
           "untimed pass.\n\n";
    const backend_result* base = baseline_of(r);
    out += pad("allocator", 34) + pad("time in calls", 20) + pad("vs glibc", 10) +
           pad("replay rate", 16) + pad("peak footprint", 16) + "fragmentation\n";
    for (const auto& b : r.results) {
        if (!b.available) {
            out += pad(b.name, 34) + "unavailable: " + b.note + "\n";
            continue;
        }
        const double ratio =
            base != nullptr && base->total_ns > 0 ? b.total_ns / base->total_ns : 0;
        out += pad(b.name, 34) + pad(human_ns(b.total_ns) + " " + plus_minus(b.total), 20) +
               pad(num(ratio, 2) + "x", 10) +
               pad(num(b.events_per_second / 1e6, 1) + " M op/s", 16) +
               pad(b.peak_footprint ? human_bytes(b.peak_footprint) : "n/a", 16) +
               (b.peak_footprint ? num(b.fragmentation * 100, 0) + "%" : "n/a") +
               (b.failures ? "  (" + with_commas(b.failures) + " failed allocations)" : "") + "\n";
        if (!b.note.empty()) out += "    note: " + b.note + "\n";
    }
    const backend_result *mixed = nullptr, *layer = nullptr;
    for (const auto& b : r.results) {
        if (b.name.rfind("mixed, no advice", 0) == 0 && b.available)
            layer = &b;
        else if (b.name.rfind("mixed", 0) == 0 && b.available)
            mixed = &b;
    }
    if (mixed == nullptr || base == nullptr) return out;
    out += "\nAdvised sites, measured (baseline " + base->name + " -> advised allocator):\n";
    out += " #  " + pad("allocator", 22) + pad("baseline", 12) + pad("advised", 12) +
           pad("saved (± range)", 22) + pad("violations", 12) + "site\n";
    std::vector<const recommendation*> recs;
    for (const auto& rec : r.advised) recs.push_back(&rec);
    auto saved = [&](const recommendation* rec) {
        return base->site_ns[rec->site] - mixed->site_ns[rec->site];
    };
    std::stable_sort(recs.begin(), recs.end(),
                     [&](auto* a, auto* b) { return saved(a) > saved(b); });
    std::size_t n = 0;
    double total_saved = 0;
    for (const auto* rec : recs) total_saved += saved(rec);
    for (const auto* rec : recs) {
        if (top != 0 && n == top) break;
        ++n;
        std::uint64_t v = 0;
        for (const auto& sv : mixed->violations) {
            if (sv.site == rec->site) v = sv.total();
        }
        char idx[8];
        std::snprintf(idx, sizeof idx, "%2zu", n);
        const spread s = measured_saving(*base, *mixed, rec->site);
        out += std::string(idx) + "  " + pad(rec->allocator, 22) +
               pad(human_ns(base->site_ns[rec->site]), 12) +
               pad(human_ns(mixed->site_ns[rec->site]), 12) +
               pad(human_ns(saved(rec)) + " ±" + human_ns((s.max - s.min) / 2), 22) +
               pad(with_commas(v), 12) + name(rec->site) + "\n";
    }
    double other_base = 0, other_mixed = 0;  // the sites left on the baseline
    {
        std::vector<bool> advised(base->site_ns.size(), false);
        for (const auto* rec : recs) {
            if (rec->site < advised.size()) advised[rec->site] = true;
        }
        for (std::size_t s = 0; s < advised.size() && s < mixed->site_ns.size(); ++s) {
            if (advised[s]) continue;
            other_base += base->site_ns[s];
            other_mixed += mixed->site_ns[s];
        }
    }
    out += "Other sites (left on " + base->name + "): " + human_ns(other_base) + " -> " +
           human_ns(other_mixed) + " in the mixed replay\n";
    out += "Total measured saving on advised sites: " + human_ns(total_saved) + " of " +
           human_ns(base->total_ns) + " (" +
           num(base->total_ns > 0 ? 100 * total_saved / base->total_ns : 0) +
           "%, per-call timing)\n";
    if (layer != nullptr) {
        const double whole_saved = layer->total_ns - mixed->total_ns;
        out += "Whole program: " + human_ns(layer->total_ns) +
               " with the mixed dispatch and no advice -> " + human_ns(mixed->total_ns) +
               " with the advice: " + human_ns(whole_saved) + " saved (" +
               num(layer->total_ns > 0 ? 100 * whole_saved / layer->total_ns : 0) + "%)\n";
    }
    std::vector<const site_violations*> broken;
    for (const auto& sv : mixed->violations) {
        if (sv.total() != 0 || sv.fallbacks != 0) broken.push_back(&sv);
    }
    std::stable_sort(broken.begin(), broken.end(), [](auto* x, auto* y) {
        return x->total() + x->fallbacks > y->total() + y->fallbacks;
    });
    if (!broken.empty()) {
        out += "Advice broken during the replay (" + std::to_string(broken.size()) +
               " sites; each block concerned fell back or was kept, none was lost):\n";
    }
    if (top != 0 && broken.size() > top) broken.resize(top);
    for (const auto* p : broken) {
        const site_violations& sv = *p;
        out += "  site " + name(sv.site) + ": " + with_commas(sv.non_lifo) + " non-LIFO frees, " +
               with_commas(sv.overflow) + " overflows, " + with_commas(sv.wrong_size) +
               " wrong sizes, " + with_commas(sv.expired) +
               " frees after the frame was recycled, " + with_commas(sv.cross_thread) +
               " cross-thread frees, " + with_commas(sv.reported) + " reported by the allocator; " +
               with_commas(sv.fallbacks) + " blocks fell back to the baseline\n";
    }
    return out;
}

std::string format_replay_json(const replay_report& r, const site_namer& name) {
    using json = nlohmann::ordered_json;
    json j;
    j["ops"] = r.ops;
    j["events"] = r.events;
    j["unknown_frees"] = r.unknown_frees;
    j["peak_live_bytes"] = r.peak_live_bytes;
    j["repetitions"] = r.repetitions;
    json backends = json::array();
    for (const auto& b : r.results) {
        json o;
        o["name"] = b.name;
        o["available"] = b.available;
        o["note"] = b.note;
        o["total_ns"] = b.total_ns;
        o["total_min_ns"] = b.total.min;
        o["total_max_ns"] = b.total.max;
        o["wall_ns"] = b.wall_ns;
        o["ops_per_second"] = b.events_per_second;
        o["peak_footprint"] = b.peak_footprint;
        o["fragmentation"] = b.fragmentation;
        o["failures"] = b.failures;
        o["repetition_ns"] = b.repetition_ns;
        json sites = json::array();
        for (const auto& rec : r.advised) {
            if (rec.site >= b.site_ns.size()) continue;
            json s{{"site", rec.site}, {"name", name(rec.site)}, {"ns", b.site_ns[rec.site]}};
            if (rec.site < b.site_spread.size()) {
                s["min_ns"] = b.site_spread[rec.site].min;
                s["max_ns"] = b.site_spread[rec.site].max;
            }
            sites.push_back(std::move(s));
        }
        o["sites"] = std::move(sites);
        json violations = json::array();
        for (const auto& v : b.violations) {
            violations.push_back({{"site", v.site},
                                  {"non_lifo", v.non_lifo},
                                  {"overflow", v.overflow},
                                  {"wrong_size", v.wrong_size},
                                  {"expired", v.expired},
                                  {"cross_thread", v.cross_thread},
                                  {"reported", v.reported},
                                  {"fallbacks", v.fallbacks}});
        }
        o["violations"] = std::move(violations);
        backends.push_back(std::move(o));
    }
    j["backends"] = std::move(backends);
    // The measured saving per advised site (baseline - mixed), as the text's table ranks it.
    const backend_result* base = baseline_of(r);
    const backend_result* mixed = nullptr;
    for (const auto& b : r.results) {
        if (b.available && b.name.rfind("mixed (", 0) == 0) mixed = &b;
    }
    if (base != nullptr && mixed != nullptr) {
        json saved = json::array();
        for (const auto& rec : r.advised) {
            saved.push_back({{"site", rec.site},
                             {"allocator", rec.allocator},
                             {"saved_ns", spread_json(measured_saving(*base, *mixed, rec.site))},
                             {"model_saved_ns", rec.saved_ns()}});
        }
        j["baseline"] = base->name;
        j["advised_saved"] = std::move(saved);
    }
    // Names of unsymbolised frames may hold any bytes: invalid UTF-8 becomes U+FFFD.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace rtmem::analyze
