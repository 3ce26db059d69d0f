// Text, JSON and HTML renderings of the advice.
#include <algorithm>
#include <cstdio>
#include <map>

#include "json_escape.hpp"
#include "rtmem/analyze/advise.hpp"
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
    out += "Estimated allocator time " + human_ns(a.baseline_ns) +
           "; the advised sites would save " + human_ns(a.saved_ns) + " (" +
           num(a.baseline_ns > 0 ? 100.0 * a.saved_ns / a.baseline_ns : 0.0) +
           "%) by the cost model; `rtmem replay` measures it.\n\n";
    std::size_t config_width = 16, n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n++ == o.top) break;
        config_width = std::max(config_width, r.config.size() + 2);
    }
    out += " #  " + pad("class", 11) + pad("allocator", 20) + pad("configuration", config_width) +
           pad("calls", 12) + pad("saved", 10) + "site\n";
    n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        char idx[8];
        std::snprintf(idx, sizeof idx, "%2zu", n);
        out += std::string(idx) + "  " + pad(std::string(to_string(r.cls)), 11) +
               pad(r.allocator, 20) + pad(r.config, config_width) + pad(with_commas(r.calls), 12) +
               pad(human_ns(r.saved_ns()), 10) + name(r.site) + "\n";
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
        out += "; " + human_ns(r.baseline_ns) + " -> " + human_ns(r.advised_ns) + "\n";
        out += "   sketch:\n" + indent(r.sketch, "     ") + "\n";
    }
    return out;
}

std::string format_json(const advice& a, const site_namer& name) {
    const auto& c = a.result;
    const auto& t = c.limits;
    std::string out = "{\n  \"events\": " + std::to_string(c.events) +
                      ", \"allocations\": " + std::to_string(c.allocations) +
                      ", \"frees\": " + std::to_string(c.frees) +
                      ", \"frames\": " + std::to_string(c.frames) +
                      ", \"duration_ns\": " + std::to_string(c.duration_ns) +
                      ", \"unknown_frees\": " + std::to_string(c.unknown_frees) +
                      ",\n  \"estimated_ns\": " + num(a.baseline_ns) +
                      ", \"estimated_saved_ns\": " + num(a.saved_ns) + ",\n";
    out += "  \"thresholds\": {\"min_allocations\": " + std::to_string(t.min_allocations) +
           ", \"stack_min_lifo\": " + num(t.stack_min_lifo * 100) +
           "e-2, \"bulk_min_run\": " + std::to_string(t.bulk_min_run) +
           ", \"bulk_min_density\": " + num(t.bulk_min_density * 1000) + "e-3" +
           ", \"pool_headroom\": " + num(t.pool_headroom * 100) + "e-2" +
           ", \"frame_min_frames\": " + std::to_string(t.frame_min_frames) +
           ", \"long_lived_min_lifetime\": " + num(t.long_lived_min_lifetime * 100) + "e-2" +
           ", \"bulk_min_fraction\": " + num(t.bulk_min_fraction * 100) +
           "e-2, \"linear_min_efficiency\": " + num(t.linear_min_efficiency * 100) +
           "e-2, \"linear_good_efficiency\": " + num(t.linear_good_efficiency * 100) +
           "e-2, \"pool_max_spread\": " + num(t.pool_max_spread * 100) +
           "e-2, \"pool_max_block\": " + std::to_string(t.pool_max_block) +
           ", \"pool_min_churn\": " + num(t.pool_min_churn) +
           ", \"frame_max_span\": " + std::to_string(t.frame_max_span) +
           ", \"frame_min_fraction\": " + num(t.frame_min_fraction * 100) +
           "e-2, \"period_min_drains\": " + std::to_string(t.period_min_drains) +
           ", \"period_max_cv\": " + num(t.period_max_cv * 100) +
           "e-2, \"long_lived_min_fraction\": " + num(t.long_lived_min_fraction * 100) +
           "e-2},\n  \"sites\": [";
    bool first = true;
    for (const auto& r : a.ranked) {
        const site_profile* p = nullptr;
        for (const auto& q : c.sites) {
            if (q.site == r.site) p = &q;
        }
        out += first ? "\n" : ",\n";
        first = false;
        out += "    {\"site\": " + std::to_string(r.site) + ", \"name\": \"" +
               json_escape(name(r.site)) + "\", \"class\": \"" + std::string(to_string(r.cls)) +
               "\", \"allocator\": \"" + r.allocator + "\", \"config\": \"" +
               json_escape(r.config) +
               "\", \"capacity_bytes\": " + std::to_string(r.capacity_bytes) +
               ", \"capacity_blocks\": " + std::to_string(r.capacity_blocks) +
               ", \"block_size\": " + std::to_string(r.block_size) +
               ", \"frames\": " + std::to_string(r.frames) +
               ", \"calls\": " + std::to_string(r.calls) +
               ", \"calls_saved\": " + std::to_string(r.calls_saved) +
               ", \"frees_removed\": " + std::to_string(r.frees_removed) +
               ", \"baseline_ns\": " + num(r.baseline_ns) +
               ", \"advised_ns\": " + num(r.advised_ns) + ", \"evidence\": \"" +
               json_escape(r.evidence) + "\", \"sketch\": \"" + json_escape(r.sketch) + "\"";
        if (p != nullptr) {
            out += std::string(", \"shared_across_threads\": ") +
                   (p->shared_across_threads() ? "true" : "false");
            out += ", \"profile\": {\"allocations\": " + std::to_string(p->allocations) +
                   ", \"frees\": " + std::to_string(p->frees) +
                   ", \"reallocs\": " + std::to_string(p->reallocs) +
                   ", \"bytes\": " + std::to_string(p->bytes) +
                   ", \"min_size\": " + std::to_string(p->min_size) +
                   ", \"max_size\": " + std::to_string(p->max_size) +
                   ", \"max_live_count\": " + std::to_string(p->max_live_count) +
                   ", \"max_live_bytes\": " + std::to_string(p->max_live_bytes) +
                   ", \"lifo_frees\": " + std::to_string(p->lifo_frees) +
                   ", \"bulk_frees\": " + std::to_string(p->bulk_frees) +
                   ", \"bulk_runs\": " + std::to_string(p->bulk_runs) +
                   ", \"drains\": " + std::to_string(p->drains) +
                   ", \"bump_peak\": " + std::to_string(p->bump_peak) +
                   ", \"linear_bad\": " + (p->linear_bad ? "true" : "false") +
                   ", \"linear_satisfactory\": " + (p->linear_satisfactory ? "true" : "false") +
                   ", \"period_ns\": " + num(p->period_ns) +
                   ", \"frame_fit\": " + std::to_string(p->frame_fit) +
                   ", \"frame_peak_bytes\": " + std::to_string(p->frame_peak_bytes) +
                   ", \"live_at_end\": " + std::to_string(p->live_at_end) +
                   ", \"cross_thread_frees\": " + std::to_string(p->cross_thread_frees) +
                   ", \"multi_thread\": " + (p->multi_thread ? "true" : "false") + "}";
        }
        out += "}";
    }
    out += "\n  ]\n}\n";
    return out;
}

std::string format_html(const advice& a, const site_namer& name, const format_options& o) {
    std::string out =
        std::string(o.wrap ? "<section id=\"advice\"><h2>Allocation advice</h2>\n" : "") + "<p>" +
        with_commas(a.result.allocations) + " allocations in " +
        std::to_string(a.result.sites.size()) + " sites (" + escape_html(summary_line(a)) +
        "). Estimated allocator time " + human_ns(a.baseline_ns) +
        "; the advised sites would save " + human_ns(a.saved_ns) +
        " (cost model; <code>rtmem replay</code> measures it).</p>\n"
        "<table "
        "class=\"advice\"><thead><tr><th>#</th><th>class</th><th>allocator</"
        "th><th>configuration</th>"
        "<th>calls</th><th>saved</th><th>site</th></tr></thead><tbody>\n";
    std::size_t n = 0;
    for (const auto& r : a.ranked) {
        if (!listed(r, o)) continue;
        if (o.top != 0 && n == o.top) break;
        ++n;
        out += "<tr><td>" + std::to_string(n) + "</td><td>" + std::string(to_string(r.cls)) +
               "</td><td><code>" + escape_html(r.allocator) + "</code></td><td>" +
               escape_html(r.config) + "</td><td>" + with_commas(r.calls) + "</td><td data-ns=\"" +
               num(r.saved_ns()) + "\">" + human_ns(r.saved_ns()) + "</td><td>" +
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
