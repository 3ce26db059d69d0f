// How close a sampled trace's per-site estimates come to the exact figures: give it an exact
// trace and a sampled trace of the same run (same program, same input), e.g.
//   rtmem record -o exact.rtt -- PROGRAM...
//   rtmem record --sample 512K -o sampled.rtt -- PROGRAM...
//   rtmem_bench_sample_accuracy exact.rtt sampled.rtt [N]
// Sites are matched by their stack as module+offset chains (as `rtmem diff` does), so they
// match across runs despite address randomisation. Prints the top N sites (default 20) of the
// exact trace by bytes, each with its estimate, the estimate's 95% error and the difference;
// then how many are within 10%, and the exact and estimated totals. Exit status 0 (reported,
// not asserted).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace {

using namespace rtmem::analyze;

struct site_figures {
    std::uint64_t bytes = 0, calls = 0;
    double variance = 0;  // of the bytes estimate
    std::string name;
};

std::map<std::string, site_figures> by_key(trace_reader& r, report_data& rep) {
    symbolizer sym(r);
    site_names names(r, &sym);
    rep = analyze_events(r);
    std::map<std::string, site_figures> out;
    for (const auto& s : rep.sites) {
        auto& f = out[names.key(s.stack)];
        f.bytes += s.bytes;
        f.calls += s.calls;
        f.variance += (s.bytes_error / 1.96) * (s.bytes_error / 1.96);
        if (f.name.empty()) f.name = names.name(s.stack);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s EXACT.rtt SAMPLED.rtt [N]\n", argv[0]);
        return 2;
    }
    std::size_t n = argc > 3 ? static_cast<std::size_t>(std::atoi(argv[3])) : 20;
    try {
        trace_reader exact(argv[1]), sampled(argv[2]);
        if (exact.sample_interval() != 0 || sampled.sample_interval() == 0) {
            std::fprintf(stderr, "the first trace must be exact, the second sampled\n");
            return 2;
        }
        report_data er, sr;
        auto e = by_key(exact, er), s = by_key(sampled, sr);
        std::multimap<std::uint64_t, std::string, std::greater<>> order;
        for (const auto& [k, f] : e) order.emplace(f.bytes, k);
        std::printf("sampled: one per %s; events %llu of %llu\n",
                    human_bytes(sampled.sample_interval()).c_str(),
                    static_cast<unsigned long long>(sampled.event_count()),
                    static_cast<unsigned long long>(exact.event_count()));
        std::printf("%4s %12s %12s %12s %8s  %s\n", "#", "exact", "estimate", "95% error", "diff",
                    "site");
        std::size_t i = 0, within = 0;
        double worst = 0;
        for (const auto& [bytes, key] : order) {
            if (i == n) break;
            const site_figures& est = s[key];
            double diff = bytes == 0 ? 0
                                     : (static_cast<double>(est.bytes) - static_cast<double>(bytes)) /
                                           static_cast<double>(bytes);
            worst = std::max(worst, std::fabs(diff));
            if (std::fabs(diff) <= 0.1) ++within;
            std::printf("%4zu %12s %12s %12s %+7.1f%%  %s\n", ++i, human_bytes(bytes).c_str(),
                        human_bytes(est.bytes).c_str(),
                        human_bytes(static_cast<std::uint64_t>(1.96 * std::sqrt(est.variance))).c_str(),
                        100 * diff, e[key].name.c_str());
        }
        std::printf("within 10%%: %zu of %zu; largest difference %.1f%%\n", within, i, 100 * worst);
        std::printf("bytes allocated: exact %s, estimate %s ± %s; peak live: exact %s, estimate %s ± %s\n",
                    human_bytes(er.bytes_allocated).c_str(), human_bytes(sr.bytes_allocated).c_str(),
                    human_bytes(static_cast<std::uint64_t>(sr.bytes_allocated_error)).c_str(),
                    human_bytes(er.peak_live_bytes).c_str(), human_bytes(sr.peak_live_bytes).c_str(),
                    human_bytes(static_cast<std::uint64_t>(sr.peak_live_error)).c_str());
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "error: %s\n", ex.what());
        return 2;
    }
    return 0;
}
