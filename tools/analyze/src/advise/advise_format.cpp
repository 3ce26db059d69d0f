// Text, JSON and HTML renderings of the advice.
#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "rtmem/analyze/advise.hpp"
#include "spread_json.hpp"
#include "rtmem/analyze/html_escape.hpp"

namespace rtmem::analyze {

site_namer address_namer(const site_map& sites) {
    return [&sites](std::uint32_t site) {
        auto frames = sites.frames(site);
        if (frames.empty()) return std::string("(unknown stack)");
        std::string s;
        for (std::size_t i = 0; i < frames.size() && i < 4; ++i) {
            char buf[24];
            std::snprintf(buf, sizeof buf, "%s0x%llx", i ? " <- " : "",
                          static_cast<unsigned long long>(frames[i]));
            s += buf;
        }
        return s;
    };
}

namespace {

std::string pad(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

std::string indent(const std::string& text, const std::string& prefix) {
    std::string out = prefix;
    for (char c : text) {
        out += c;
        if (c == '\n') out += prefix;
    }
    return out;
}

/// General sites are listed on request, except those shared across threads (rt_heap advised).
bool listed(const recommendation& r, const format_options& o) {
    return o.include_general || r.cls != site_class::general || r.allocator == "rt_heap";
}

std::string summary_line(const advice& a) {
    std::map<site_class, int> counts;
    for (const auto& p : a.result.sites) ++counts[p.cls];
    std::string s;
    for (auto [cls, n] : counts)
        s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(cls));
    return s;
}

/// Shared general sites (rt_heap) claim no saving, so they rank last: past --top, one line
/// still says how many there are and names the busiest.
std::string unlisted_shared(const advice& a, const site_namer& name, const format_options& o) {
    std::size_t n = 0, sites = 0;
    std::uint64_t calls = 0;
    const recommendation* busiest = nullptr;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (n++ < o.top || o.top == 0 || r.allocator != "rt_heap") continue;
        ++sites;
        calls += r.calls;
        if (busiest == nullptr || r.calls > busiest->calls) busiest = &r;
    }
    if (busiest == nullptr) return "";
    return "    + " + std::to_string(sites) + " general site" + (sites == 1 ? "" : "s") +
           " shared across threads, rt_heap advised (" + with_commas(calls) +
           " calls; the busiest: " + name(busiest->site) + "); --top 0 lists them\n";
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

/// "12.0 us ±1.5 us": a measured saving and half its range.
std::string measured_cell(const recommendation& r) {
    if (!r.measured) return "not replayed";
    const spread& s = r.measured_saved_ns;
    return human_ns(s.median) + " ±" + human_ns((s.max - s.min) / 2);
}

/// Which allocator time is which: the tracer's (the one `rtmem report` shows), the cost model's,
/// and the replay's when --measure ran one.
std::string time_lines(const advice& a) {
    const auto& c = a.result;
    std::string out;
    if (c.recorded_ns != 0)
        out += "Time in the allocator as recorded: " + human_ns(static_cast<double>(c.recorded_ns)) +
               " (the tracer's timing in the running program, as `rtmem report` shows).\n";
    out += "Model estimate: these calls cost " + human_ns(a.baseline_ns) +
           " at the cost model's prices; the advised sites would save " + human_ns(a.saved_ns) +
           " (" + num(percent(a.saved_ns, a.baseline_ns)) + "%).\n";
    if (!a.measured) {
        out += "Savings below are model estimates; `rtmem advise --measure` ranks them by a "
               "replay's measurement.\n";
        return out;
    }
    const auto& m = a.measurement;
    const double whole = m.dispatch_ns.median - m.advised_ns.median;
    out += "Measured by replay (" + m.baseline + ", median of " + std::to_string(m.repetitions) +
           " repetitions, ± half the range): " + human_ns(m.baseline_ns.median) + " ±" +
           human_ns((m.baseline_ns.max - m.baseline_ns.min) / 2) + " in calls; with the " +
           std::to_string(m.applied) + " replayed advised sites " + human_ns(m.advised_ns.median) +
           " against " + human_ns(m.dispatch_ns.median) + " for the same dispatch without advice: " +
           human_ns(whole) + " saved (" + num(percent(whole, m.dispatch_ns.median)) +
           "%). Sites are ranked by their measured saving.\n";
    return out;
}

}  // namespace

std::string format_text(const advice& a, const site_namer& name, const format_options& o) {
    const auto& c = a.result;
    std::string out = "rtmem advise: " + with_commas(c.events) + " events, " +
                      with_commas(c.allocations) + " allocations, " + with_commas(c.frees) +
                      " frees, " + with_commas(c.frames) + " frame markers, " +
                      std::to_string(c.sites.size()) + " sites (" + summary_line(a) + ")\n";
    if (c.sample_interval != 0) {
        out += "Sampled trace (one sample per " + human_bytes(c.sample_interval) +
               " allocated): allocations, frees and bytes are estimates (each recorded block "
               "counts 1/(1-exp(-size/interval)) times; `rtmem report` gives their 95% error); "
               "classes are judged on the sampled blocks only, so confirm a class on a full "
               "trace before acting on it.\n";
    }
    out += time_lines(a) + "\n";
    std::size_t config_width = 16, n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n++ == o.top) break;
        config_width = std::max(config_width, r.config.size() + 2);
    }
    out += " #  " + pad("class", 11) + pad("allocator", 20) + pad("configuration", config_width) +
           pad("calls", 12) +
           (a.measured ? pad("saved (measured)", 24) + pad("model", 10) : pad("saved (model)", 14)) +
           "site\n";
    n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        char idx[8];
        std::snprintf(idx, sizeof idx, "%2zu", n);
        out += std::string(idx) + "  " + pad(std::string(to_string(r.cls)), 11) +
               pad(r.allocator, 20) + pad(r.config, config_width) + pad(with_commas(r.calls), 12) +
               (a.measured ? pad(measured_cell(r), 24) + pad(human_ns(r.saved_ns()), 10)
                           : pad(human_ns(r.saved_ns()), 14)) +
               name(r.site) + "\n";
    }
    if (n == 0) out += "    (no site fits an rtmem allocator better than malloc)\n";
    out += unlisted_shared(a, name, o);
    n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        out += "\n#" + std::to_string(n) + " " + std::string(to_string(r.cls)) + ": " +
               r.allocator + " " + r.config + "\n   site: " + name(r.site) +
               "\n   evidence: " + r.evidence + "\n";
        out += "   expected: " + with_commas(r.calls_saved) + " calls no longer reach malloc/free";
        if (r.frees_removed) out += " (" + with_commas(r.frees_removed) + " frees become no-ops)";
        out += "; " + human_ns(r.baseline_ns) + " -> " + human_ns(r.advised_ns) + " (model)";
        if (r.measured) out += "; measured saving " + measured_cell(r);
        out += "\n";
        out += "   sketch:\n" + indent(r.sketch, "     ") + "\n";
    }
    return out;
}

namespace {

nlohmann::ordered_json advice_json(const advice& a, const site_namer& name) {
    using json = nlohmann::ordered_json;
    const auto& c = a.result;
    const auto& t = c.limits;
    json j;
    j["events"] = c.events;
    j["allocations"] = c.allocations;
    j["frees"] = c.frees;
    j["frames"] = c.frames;
    j["duration_ns"] = c.duration_ns;
    j["unknown_frees"] = c.unknown_frees;
    j["sample_interval"] = c.sample_interval;  // bytes; 0: every call recorded
    j["recorded_ns"] = c.recorded_ns;
    j["estimated_ns"] = a.baseline_ns;
    j["estimated_saved_ns"] = a.saved_ns;
    j["ranking"] = a.measured ? "replay" : "model estimate";
    if (a.measured) {
        const auto& m = a.measurement;
        j["measurement"] = {{"baseline", m.baseline},
                            {"repetitions", m.repetitions},
                            {"applied", m.applied},
                            {"baseline_ns", spread_json(m.baseline_ns)},
                            {"dispatch_ns", spread_json(m.dispatch_ns)},
                            {"advised_ns", spread_json(m.advised_ns)}};
    }
    json& th = j["thresholds"];
    th["min_allocations"] = t.min_allocations;
    th["stack_min_lifo"] = t.stack_min_lifo;
    th["bulk_min_run"] = t.bulk_min_run;
    th["bulk_min_density"] = t.bulk_min_density;
    th["pool_headroom"] = t.pool_headroom;
    th["frame_min_frames"] = t.frame_min_frames;
    th["long_lived_min_lifetime"] = t.long_lived_min_lifetime;
    th["bulk_min_fraction"] = t.bulk_min_fraction;
    th["linear_min_efficiency"] = t.linear_min_efficiency;
    th["linear_good_efficiency"] = t.linear_good_efficiency;
    th["pool_max_spread"] = t.pool_max_spread;
    th["pool_max_block"] = t.pool_max_block;
    th["pool_min_churn"] = t.pool_min_churn;
    th["frame_max_span"] = t.frame_max_span;
    th["frame_min_fraction"] = t.frame_min_fraction;
    th["period_min_drains"] = t.period_min_drains;
    th["period_max_cv"] = t.period_max_cv;
    th["long_lived_min_fraction"] = t.long_lived_min_fraction;
    json sites = json::array();
    for (const auto& r : a.ranked) {
        const site_profile* p = nullptr;
        for (const auto& q : c.sites) {
            if (q.site == r.site) p = &q;
        }
        json s;
        s["site"] = r.site;
        s["name"] = name(r.site);
        s["class"] = std::string(to_string(r.cls));
        s["allocator"] = r.allocator;
        s["config"] = r.config;
        s["capacity_bytes"] = r.capacity_bytes;
        s["capacity_blocks"] = r.capacity_blocks;
        s["block_size"] = r.block_size;
        s["frames"] = r.frames;
        s["calls"] = r.calls;
        s["calls_saved"] = r.calls_saved;
        s["frees_removed"] = r.frees_removed;
        s["baseline_ns"] = r.baseline_ns;
        s["advised_ns"] = r.advised_ns;
        if (r.measured) s["measured_saved_ns"] = spread_json(r.measured_saved_ns);
        s["evidence"] = r.evidence;
        s["sketch"] = r.sketch;
        if (p != nullptr) {
            s["shared_across_threads"] = p->shared_across_threads();
            s["profile"] = {{"allocations", p->allocations},
                            {"frees", p->frees},
                            {"reallocs", p->reallocs},
                            {"bytes", p->bytes},
                            {"min_size", p->min_size},
                            {"max_size", p->max_size},
                            {"max_live_count", p->max_live_count},
                            {"max_live_bytes", p->max_live_bytes},
                            {"lifo_frees", p->lifo_frees},
                            {"bulk_frees", p->bulk_frees},
                            {"bulk_runs", p->bulk_runs},
                            {"drains", p->drains},
                            {"bump_peak", p->bump_peak},
                            {"linear_bad", p->linear_bad},
                            {"linear_satisfactory", p->linear_satisfactory},
                            {"period_ns", p->period_ns},
                            {"frame_fit", p->frame_fit},
                            {"frame_peak_bytes", p->frame_peak_bytes},
                            {"live_at_end", p->live_at_end},
                            {"cross_thread_frees", p->cross_thread_frees},
                            {"multi_thread", p->multi_thread}};
        }
        sites.push_back(std::move(s));
    }
    j["sites"] = std::move(sites);
    return j;
}

}  // namespace

std::string format_json(const advice& a, const site_namer& name) {
    // Names of unsymbolised frames may hold any bytes: invalid UTF-8 becomes U+FFFD.
    return advice_json(a, name).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
}

std::string format_html(const advice& a, const site_namer& name, const format_options& o) {
    std::string out =
        std::string(o.wrap ? "<section id=\"advice\"><h2>Allocation advice</h2>\n" : "") + "<p>" +
        with_commas(a.result.allocations) + " allocations in " +
        std::to_string(a.result.sites.size()) + " sites (" + escape_html(summary_line(a)) +
        "). " + escape_html(time_lines(a)) + "</p>\n"
        "<table "
        "class=\"advice\"><thead><tr><th>#</th><th>class</th><th>allocator</"
        "th><th>configuration</th>"
        "<th>calls</th><th>" +
        std::string(a.measured ? "saved (measured)" : "saved (model estimate)") +
        "</th><th>site</th></tr></thead><tbody>\n";
    std::size_t n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        out += "<tr><td>" + std::to_string(n) + "</td><td>" + std::string(to_string(r.cls)) +
               "</td><td><code>" + escape_html(r.allocator) + "</code></td><td>" +
               escape_html(r.config) + "</td><td>" + with_commas(r.calls) + "</td><td data-ns=\"" +
               num(a.measured ? r.measured_saved_ns.median : r.saved_ns()) + "\">" +
               escape_html(a.measured ? measured_cell(r) : human_ns(r.saved_ns())) + "</td><td>" +
               escape_html(name(r.site)) + "</td></tr>\n";
    }
    out += "</tbody></table>\n";
    n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        out += "<details><summary>#" + std::to_string(n) + " " +
               escape_html(r.allocator + " " + r.config) + "</summary><p>" +
               escape_html(r.evidence) + "</p><pre>" + escape_html(r.sketch) + "</pre></details>\n";
    }
    if (o.wrap) out += "</section>\n";
    return out;
}

}  // namespace rtmem::analyze
