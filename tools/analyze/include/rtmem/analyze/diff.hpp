// `rtmem diff A B`: per-site differences between two traces of the same program(s). Sites are
// matched by their stack as module+offset chains, which do not move with ASLR.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze {

struct site_delta {
    std::string key, name;
    std::uint64_t calls_a = 0, calls_b = 0;
    std::uint64_t bytes_a = 0, bytes_b = 0;
    std::uint64_t peak_a = 0, peak_b = 0;
};

struct trace_diff {
    report_data a, b;
    std::vector<site_delta> sites;  ///< sorted by |bytes_b - bytes_a|, then |calls|, largest first
};

[[nodiscard]] trace_diff diff_traces(trace_reader& a, trace_reader& b, bool symbolize);
void print_diff(std::ostream& out, const trace_diff& d, std::size_t top);
[[nodiscard]] nlohmann::json diff_json(const trace_diff& d, std::size_t top);

}  // namespace rtmem::analyze
