// Histograms of sizes and lifetimes (in HTML they are charts of the summary's overview).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>

#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

enum class unit { bytes, ns, count };

void print_histogram(std::ostream& out, const char* title, const log2_histogram& h, unit u) {
    std::size_t first = 65, last = 0;
    std::uint64_t max = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] == 0) continue;
        first = std::min(first, i);
        last = i;
        max = std::max(max, h.buckets[i]);
    }
    out << "\n" << title << "\n";
    if (first == 65) {
        out << "  (none)\n";
        return;
    }
    for (std::size_t i = first; i <= last; ++i) {
        std::uint64_t ub = log2_histogram::upper_bound(i);
        std::string label = "<= " + (u == unit::bytes ? human_bytes(ub)
                                     : u == unit::ns  ? human_ns(ub)
                                                      : std::to_string(ub));
        char line[160];
        auto bar =
            static_cast<int>(40.0 * static_cast<double>(h.buckets[i]) / static_cast<double>(max));
        std::snprintf(line, sizeof line, "  %14s %12" PRIu64 " %s\n", label.c_str(), h.buckets[i],
                      std::string(static_cast<std::size_t>(bar), '#').c_str());
        out << line;
    }
}

nlohmann::json histogram_json(const log2_histogram& h) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] != 0) {
            a.push_back({{"max", log2_histogram::upper_bound(i)}, {"count", h.buckets[i]}});
        }
    }
    return a;
}

void histograms_text(std::ostream& out, const section_input& in) {
    print_histogram(out, "allocation sizes", in.r.sizes, unit::bytes);
    print_histogram(out, "lifetimes (ns)", in.r.lifetimes_ns, unit::ns);
    print_histogram(out, "lifetimes (allocations in between)", in.r.lifetimes_allocs, unit::count);
}

void histograms_json(nlohmann::json& j, const section_input& in) {
    j["histograms"] = {{"size_bytes", histogram_json(in.r.sizes)},
                       {"lifetime_ns", histogram_json(in.r.lifetimes_ns)},
                       {"lifetime_allocations", histogram_json(in.r.lifetimes_allocs)}};
}

}  // namespace

extern const report_section histograms_section;
const report_section histograms_section{"histograms", histograms_text, histograms_json, nullptr,
                                        false};

}  // namespace rtmem::analyze
