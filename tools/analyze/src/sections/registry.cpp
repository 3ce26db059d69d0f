// The report's sections, in output order. A section defines its report_section in its own
// file under src/sections/; listing it here is what puts it into every output.
#include "rtmem/analyze/report_sections.hpp"

#include <vector>

namespace rtmem::analyze {

extern const report_section summary_section;    // summary.cpp
extern const report_section top_sites_section;  // top_sites.cpp
extern const report_section histograms_section; // histograms.cpp
extern const report_section threads_section;    // threads.cpp
extern const report_section advice_section;     // advice.cpp
extern const report_section debug_info_section; // debug_info.cpp

std::span<const report_section> report_sections() {
    static const report_section* const order[] = {&summary_section, &top_sites_section,
                                                  &histograms_section, &threads_section,
                                                  &advice_section, &debug_info_section};
    static const auto sections = [] {
        std::vector<report_section> all;
        for (const report_section* s : order) all.push_back(*s);
        return all;
    }();
    return sections;
}

}  // namespace rtmem::analyze
