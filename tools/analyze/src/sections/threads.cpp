// Per-thread allocations, frees and bytes.
#include <cinttypes>
#include <cstdio>
#include <ostream>

#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

void threads_text(std::ostream& out, const section_input& in) {
    char line[512];
    out << "\nthreads\n  thread  allocations  deallocations  bytes allocated  bytes freed\n";
    for (const auto& t : in.r.threads) {
        std::snprintf(line, sizeof line, "  %6u %12" PRIu64 " %14" PRIu64 " %16s %12s\n", t.thread,
                      t.allocations, t.deallocations, human_bytes(t.bytes_allocated).c_str(),
                      human_bytes(t.bytes_freed).c_str());
        out << line;
    }
}

void threads_json(nlohmann::json& j, const section_input& in) {
    nlohmann::json threads = nlohmann::json::array();
    for (const auto& t : in.r.threads) {
        threads.push_back({{"thread", t.thread},
                           {"allocations", t.allocations},
                           {"deallocations", t.deallocations},
                           {"bytes_allocated", t.bytes_allocated},
                           {"bytes_freed", t.bytes_freed},
                           {"time_ns", t.time_ns}});
    }
    j["threads"] = threads;
}

}  // namespace

extern const report_section threads_section;
const report_section threads_section{"threads", threads_text, threads_json, nullptr, false};

}  // namespace rtmem::analyze
