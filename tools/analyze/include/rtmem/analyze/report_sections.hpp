// The sections of `rtmem report`, one registry for every output: each section renders its own
// text, JSON and HTML parts (any of them may be absent), and print_text, to_json and to_html
// only walk the list. A new section is one file in src/sections/ plus its line in
// src/sections/registry.cpp (docs/hacking.md).
#pragma once
#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "rtmem/analyze/html_escape.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/sample_weight.hpp"

namespace rtmem::analyze {

/// What a section renders from. `source` is there for sections that make their own pass over
/// the events (the advice; only the HTML page passes it); the report's numbers are in `r`.
struct section_input {
    const trace_info& info;
    const report_data& r;
    site_names& names;
    std::size_t top;
    event_source* source = nullptr;
    /// HTML only: the advice section appends the stack of each row of its table, in order, so
    /// the page can link the rows to the per-site view.
    std::vector<std::uint32_t>* advised_stacks = nullptr;
};

struct report_section {
    const char* name;  ///< identifies the section (and heads its HTML part when `titled`)
    void (*text)(std::ostream& out, const section_input& in);
    void (*json)(nlohmann::json& doc, const section_input& in);  ///< adds its keys to `doc`
    std::string (*html)(const section_input& in);  ///< an HTML fragment, no external resources
    bool titled;  ///< the page wraps the HTML part in <section> with `name` as heading
};

/// A sampled estimate's 95% interval as JSON: [low, high] (confidence95).
[[nodiscard]] inline nlohmann::json interval_json(std::uint64_t estimate, double variance) {
    const interval95 ci = confidence95(static_cast<double>(estimate), variance);
    return nlohmann::json::array({ci.low, ci.high});
}

/// Every section, in the order all outputs show them.
[[nodiscard]] std::span<const report_section> report_sections();

}  // namespace rtmem::analyze
