// Per-site figures of an exact trace and of sampled traces of the same run, as JSON, for
// bench/tracer/sample_accuracy.py (which records the runs and computes the accuracy):
//   rtmem_bench_sample_accuracy [--top N] EXACT.rtt SAMPLED.rtt...
// (a second exact trace of the same run may stand among the sampled ones: the run-to-run
// differences of the program itself, with variance 0)
// Prints {"exact": {...}, "sampled": [{...}, ...]}: each with the trace's totals (allocations,
// bytes allocated, peak live, leaked bytes and blocks; for a sampled trace also each total's
// variance) and its sites: the exact trace's top N sites by bytes (default 200), each sampled
// trace's figures for the same sites. A site is keyed two ways, both independent of the run's
// stack ids and load addresses: "offsets" (its stack as module+offset per frame, as `rtmem
// diff` matches) and "frames" (its symbolized function names, inlined ones included, outermost
// first); several stacks with one key are summed (their variances too). Exit status 0, or 2 on
// a bad argument or trace.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace {

using namespace rtmem::analyze;

struct site_figures {
    double bytes = 0, calls = 0, bytes_variance = 0, calls_variance = 0, leaked_bytes = 0;
    std::string name;
};
using site_table = std::map<std::string, site_figures>;

struct trace_figures {
    report_data rep;
    site_table by_offsets, by_frames;
};

std::string frames_key(site_names& names, std::uint32_t stack) {
    std::string out;
    for (const auto& f : names.path(stack)) {
        if (!out.empty()) out += " > ";
        out += f;
    }
    return out;
}

trace_figures figures(const std::string& file) {
    trace_reader r(file);
    symbolizer sym(r);
    site_names names(r, &sym);
    trace_figures t;
    t.rep = analyze_events(r);
    for (const auto& s : t.rep.sites) {
        for (auto [table, key] : {std::pair{&t.by_offsets, names.key(s.stack)},
                                  std::pair{&t.by_frames, frames_key(names, s.stack)}}) {
            site_figures& f = (*table)[key];
            f.bytes += static_cast<double>(s.bytes);
            f.calls += static_cast<double>(s.calls);
            f.bytes_variance += s.bytes_variance;
            f.calls_variance += s.calls_variance;
            f.leaked_bytes += static_cast<double>(s.live_bytes);
            if (f.name.empty()) f.name = names.name(s.stack);
        }
    }
    return t;
}

nlohmann::json totals(const report_data& r) {
    return {{"sample_interval", r.sample_interval},
            {"allocations", r.allocations},
            {"allocations_variance", r.allocations_variance},
            {"bytes_allocated", r.bytes_allocated},
            {"bytes_allocated_variance", r.bytes_allocated_variance},
            {"peak_live_bytes", r.peak_live_bytes},
            {"peak_live_variance", r.peak_live_variance},
            {"leaked_bytes", r.leaked_bytes},
            {"leaked_bytes_variance", r.leaked_bytes_variance},
            {"leaked_blocks", r.leaked_blocks}};
}

nlohmann::json site_json(const site_figures& f) {
    return {{"bytes", f.bytes},
            {"calls", f.calls},
            {"bytes_variance", f.bytes_variance},
            {"calls_variance", f.calls_variance},
            {"leaked_bytes", f.leaked_bytes}};
}

// The exact trace's top sites by bytes under one key, and each sampled trace's figures for them
// (zeros for a site with no recorded block).
void add_sites(nlohmann::json& out, const char* kind, const site_table& exact,
               const std::vector<const site_table*>& sampled, std::size_t top) {
    std::multimap<double, const std::string*, std::greater<>> order;
    for (const auto& [k, f] : exact) order.emplace(f.bytes, &k);
    nlohmann::json sites = nlohmann::json::array();
    for (const auto& [bytes, key] : order) {
        if (sites.size() == top) break;
        nlohmann::json s = site_json(exact.at(*key));
        s["key"] = *key;
        s["name"] = exact.at(*key).name;
        nlohmann::json est = nlohmann::json::array();
        for (const site_table* t : sampled) {
            auto it = t->find(*key);
            est.push_back(site_json(it == t->end() ? site_figures{} : it->second));
        }
        s["estimates"] = est;
        sites.push_back(s);
    }
    out["sites_by_" + std::string(kind)] = sites;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t top = 200;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--top" && i + 1 < argc) {
            top = static_cast<std::size_t>(std::strtoull(argv[++i], nullptr, 10));
        } else {
            files.push_back(a);
        }
    }
    if (files.size() < 2 || top == 0) {
        std::fprintf(stderr, "usage: %s [--top N] EXACT.rtt SAMPLED.rtt...\n", argv[0]);
        return 2;
    }
    try {
        trace_figures exact = figures(files[0]);
        if (exact.rep.sample_interval != 0) {
            std::fprintf(stderr, "%s is sampled: the first trace must be exact\n", files[0].c_str());
            return 2;
        }
        std::vector<trace_figures> sampled;
        for (std::size_t i = 1; i < files.size(); ++i) {
            sampled.push_back(figures(files[i]));
        }
        nlohmann::json out;
        out["exact"] = totals(exact.rep);
        out["sampled"] = nlohmann::json::array();
        std::vector<const site_table*> offsets, frames;
        for (const auto& s : sampled) {
            out["sampled"].push_back(totals(s.rep));
            offsets.push_back(&s.by_offsets);
            frames.push_back(&s.by_frames);
        }
        add_sites(out, "offsets", exact.by_offsets, offsets, top);
        add_sites(out, "frames", exact.by_frames, frames, top);
        std::cout << out.dump(1) << "\n";
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "error: %s\n", ex.what());
        return 2;
    }
    return 0;
}
