// Per-site comparison of two traces.
#include "rtmem/analyze/diff.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <tuple>

#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/sample_weight.hpp"

namespace rtmem::analyze {

namespace {

std::uint64_t absdiff(std::uint64_t x, std::uint64_t y) {
    return x > y ? x - y : y - x;
}

std::string signed_str(std::uint64_t a, std::uint64_t b, bool bytes) {
    bool neg = b < a;
    std::uint64_t d = absdiff(a, b);
    // Sign inserted in front (not "+" followed by +=): GCC 12 -O3 reports a false -Wrestrict there.
    std::string out = bytes ? human_bytes(d) : std::to_string(d);
    out.insert(out.begin(), neg ? '-' : '+');
    return out;
}

// Allocation calls: a sampled trace's exact counts (malloc, calloc, realloc, aligned_alloc, new,
// new[]) when it has them, not the estimate from its recorded blocks.
std::uint64_t allocation_total(const report_data& r) {
    if (r.sample_interval == 0 || !r.exact_calls) return r.allocations;
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < op_count; ++k) {
        if (is_allocation(static_cast<op>(k)) || static_cast<op>(k) == op::realloc) n += r.calls[k];
    }
    return n;
}

// "A is sampled (...)": which sides are estimates, so a delta is not read as exact.
std::string sampled_note(const trace_diff& d) {
    std::string out;
    auto side = [&out](const char* name, const report_data& r) {
        if (r.sample_interval == 0) return;
        out += std::string("note: ") + name + " is a sampled trace (1 per " +
               human_bytes(r.sample_interval) + " on average): its bytes, peaks and per-site " +
               "figures are estimates (its bytes ~" + human_bytes(r.bytes_allocated) + ", 95%: " +
               interval_text(r.bytes_allocated, r.bytes_allocated_variance, true) + "); its allocation total is " + (r.exact_calls ? "exact" : "an estimate") + "\n";
    };
    side("A", d.a);
    side("B", d.b);
    return out;
}

nlohmann::json side_json(const report_data& r) {
    nlohmann::json j = {{"allocations", allocation_total(r)},
                        {"bytes_allocated", r.bytes_allocated},
                        {"peak_live_bytes", r.peak_live_bytes},
                        {"sample_interval", r.sample_interval},
                        {"estimated", r.sample_interval != 0}};
    if (r.sample_interval != 0) {
        for (auto [name, v, var] : {std::tuple{"bytes_allocated_interval", r.bytes_allocated,
                                               r.bytes_allocated_variance},
                                    std::tuple{"peak_live_interval", r.peak_live_bytes,
                                               r.peak_live_variance}}) {
            const interval95 ci = confidence95(static_cast<double>(v), var);
            j[name] = nlohmann::json::array({ci.low, ci.high});
        }
    }
    return j;
}

}  // namespace

trace_diff diff_traces(trace_reader& a, trace_reader& b, bool symbolize) {
    trace_diff d;
    d.a = analyze_events(a);
    d.b = analyze_events(b);
    std::unique_ptr<symbolizer> sa, sb;
    if (symbolize) {
        sa = std::make_unique<symbolizer>(a);
        sb = std::make_unique<symbolizer>(b);
    }
    // Keys need the module map even without symbols.
    symbolizer ka(a), kb(b);
    site_names na(a, symbolize ? sa.get() : &ka), nb(b, symbolize ? sb.get() : &kb);
    std::map<std::string, site_delta> by_key;
    // Adds one trace's sites to its side (a or b) of the deltas.
    auto add = [&](const report_data& r, site_names& names, std::uint64_t site_delta::*calls,
                   std::uint64_t site_delta::*bytes, std::uint64_t site_delta::*peak) {
        for (const auto& s : r.sites) {
            site_delta& x = by_key[names.key(s.stack)];
            if (x.name.empty()) x.name = symbolize ? names.name(s.stack) : names.key(s.stack);
            x.*calls += s.calls;
            x.*bytes += s.bytes;
            x.*peak += s.peak_bytes;
        }
    };
    add(d.a, na, &site_delta::calls_a, &site_delta::bytes_a, &site_delta::peak_a);
    add(d.b, nb, &site_delta::calls_b, &site_delta::bytes_b, &site_delta::peak_b);
    for (auto& [k, v] : by_key) {
        v.key = k;
        if (v.calls_a != v.calls_b || v.bytes_a != v.bytes_b || v.peak_a != v.peak_b) {
            d.sites.push_back(v);
        }
    }
    std::sort(d.sites.begin(), d.sites.end(), [](const site_delta& x, const site_delta& y) {
        std::uint64_t bx = absdiff(x.bytes_a, x.bytes_b), by = absdiff(y.bytes_a, y.bytes_b);
        if (bx != by) return bx > by;
        std::uint64_t cx = absdiff(x.calls_a, x.calls_b), cy = absdiff(y.calls_a, y.calls_b);
        if (cx != cy) return cx > cy;
        return x.key < y.key;
    });
    return d;
}

void print_diff(std::ostream& out, const trace_diff& d, std::size_t top) {
    char line[256];
    std::snprintf(
        line, sizeof line,
        "allocations %" PRIu64 " -> %" PRIu64
        " (%s); bytes %s -> %s (%s); peak %s -> "
        "%s (%s)\n",
        allocation_total(d.a), allocation_total(d.b),
        signed_str(allocation_total(d.a), allocation_total(d.b), false).c_str(),
        human_bytes(d.a.bytes_allocated).c_str(), human_bytes(d.b.bytes_allocated).c_str(),
        signed_str(d.a.bytes_allocated, d.b.bytes_allocated, true).c_str(),
        human_bytes(d.a.peak_live_bytes).c_str(), human_bytes(d.b.peak_live_bytes).c_str(),
        signed_str(d.a.peak_live_bytes, d.b.peak_live_bytes, true).c_str());
    out << line << sampled_note(d) << "\nsites that changed: " << d.sites.size() << "\n";
    out << "   calls A    calls B      delta      bytes delta     peak delta  site\n";
    for (std::size_t i = 0; i < d.sites.size() && i < top; ++i) {
        const auto& s = d.sites[i];
        std::snprintf(line, sizeof line, "%10" PRIu64 " %10" PRIu64 " %10s %16s %14s  ", s.calls_a,
                      s.calls_b, signed_str(s.calls_a, s.calls_b, false).c_str(),
                      signed_str(s.bytes_a, s.bytes_b, true).c_str(),
                      signed_str(s.peak_a, s.peak_b, true).c_str());
        out << line << s.name << "\n";
    }
}

nlohmann::json diff_json(const trace_diff& d, std::size_t top) {
    nlohmann::json j;
    j["a"] = side_json(d.a);
    j["b"] = side_json(d.b);
    nlohmann::json sites = nlohmann::json::array();
    for (std::size_t i = 0; i < d.sites.size() && i < top; ++i) {
        const auto& s = d.sites[i];
        sites.push_back({{"key", s.key},
                         {"site", s.name},
                         {"calls_a", s.calls_a},
                         {"calls_b", s.calls_b},
                         {"bytes_a", s.bytes_a},
                         {"bytes_b", s.bytes_b},
                         {"peak_a", s.peak_a},
                         {"peak_b", s.peak_b}});
    }
    j["sites"] = sites;
    j["sites_changed"] = d.sites.size();
    return j;
}

}  // namespace rtmem::analyze
