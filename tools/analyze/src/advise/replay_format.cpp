// Text and JSON renderings of a replay report.
#include <algorithm>
#include <cstdio>

#include "json_escape.hpp"
#include "rtmem/analyze/replay.hpp"

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

}  // namespace

std::string format_replay_text(const replay_report& r, const site_namer& name, std::size_t top) {
    std::string out = "rtmem replay: " + with_commas(r.ops) + " operations from " +
                      with_commas(r.events) + " events (" + with_commas(r.unknown_frees) +
                      " frees of unknown blocks skipped), peak live " +
                      human_bytes(r.peak_live_bytes) + ", median of " +
                      std::to_string(r.repetitions) + " repetitions\n\n";
    const backend_result* base = baseline_of(r);
    out += pad("allocator", 34) + pad("time in calls", 15) + pad("vs glibc", 10) +
           pad("replay rate", 16) + pad("peak footprint", 16) + "fragmentation\n";
    for (const auto& b : r.results) {
        if (!b.available) {
            out += pad(b.name, 34) + "unavailable: " + b.note + "\n";
            continue;
        }
        const double ratio =
            base != nullptr && base->total_ns > 0 ? b.total_ns / base->total_ns : 0;
        out += pad(b.name, 34) + pad(human_ns(b.total_ns), 15) + pad(num(ratio, 2) + "x", 10) +
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
           pad("saved", 12) + pad("violations", 12) + "site\n";
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
        out += std::string(idx) + "  " + pad(rec->allocator, 22) +
               pad(human_ns(base->site_ns[rec->site]), 12) +
               pad(human_ns(mixed->site_ns[rec->site]), 12) + pad(human_ns(saved(rec)), 12) +
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
    std::string out =
        "{\n  \"ops\": " + std::to_string(r.ops) + ", \"events\": " + std::to_string(r.events) +
        ", \"unknown_frees\": " + std::to_string(r.unknown_frees) +
        ", \"peak_live_bytes\": " + std::to_string(r.peak_live_bytes) +
        ", \"repetitions\": " + std::to_string(r.repetitions) + ",\n  \"backends\": [";
    bool first = true;
    for (const auto& b : r.results) {
        out += first ? "\n" : ",\n";
        first = false;
        out += "    {\"name\": \"" + json_escape(b.name) +
               "\", \"available\": " + (b.available ? "true" : "false") + ", \"note\": \"" +
               json_escape(b.note) + "\", \"total_ns\": " + num(b.total_ns) +
               ", \"wall_ns\": " + num(b.wall_ns) +
               ", \"ops_per_second\": " + num(b.events_per_second, 0) +
               ", \"peak_footprint\": " + std::to_string(b.peak_footprint) +
               ", \"fragmentation\": " + num(b.fragmentation, 4) +
               ", \"failures\": " + std::to_string(b.failures) + ", \"repetition_ns\": [";
        for (std::size_t i = 0; i < b.repetition_ns.size(); ++i)
            out += (i ? ", " : "") + num(b.repetition_ns[i]);
        out += "], \"sites\": [";
        bool f2 = true;
        for (const auto& rec : r.advised) {
            if (rec.site >= b.site_ns.size()) continue;
            out += std::string(f2 ? "" : ", ") + "{\"site\": " + std::to_string(rec.site) +
                   ", \"name\": \"" + json_escape(name(rec.site)) +
                   "\", \"ns\": " + num(b.site_ns[rec.site]) + "}";
            f2 = false;
        }
        out += "], \"violations\": [";
        f2 = true;
        for (const auto& v : b.violations) {
            out += std::string(f2 ? "" : ", ") + "{\"site\": " + std::to_string(v.site) +
                   ", \"non_lifo\": " + std::to_string(v.non_lifo) +
                   ", \"overflow\": " + std::to_string(v.overflow) +
                   ", \"wrong_size\": " + std::to_string(v.wrong_size) +
                   ", \"expired\": " + std::to_string(v.expired) +
                   ", \"cross_thread\": " + std::to_string(v.cross_thread) +
                   ", \"reported\": " + std::to_string(v.reported) +
                   ", \"fallbacks\": " + std::to_string(v.fallbacks) + "}";
            f2 = false;
        }
        out += "]}";
    }
    out += "\n  ]\n}\n";
    return out;
}

}  // namespace rtmem::analyze
