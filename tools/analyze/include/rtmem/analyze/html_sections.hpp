// Extra sections of `rtmem report --html` contributed by other modules (e.g. the advisor).
// A section renders self-contained HTML (no external resources) from the trace; it may
// rewind() the source.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "rtmem/analyze/event.hpp"

namespace rtmem::analyze {

using html_section_fn = std::function<std::string(event_source&)>;
struct html_section {
    std::string name;  ///< heading shown in the page
    html_section_fn render;
};

/// Registers a section; returns true so it can initialise a namespace-scope static:
///   static const bool registered = register_html_section("Advice", render_advice);
bool register_html_section(std::string name, html_section_fn render);
[[nodiscard]] const std::vector<html_section>& html_sections();

/// Escapes <, >, & and " so text (program names, symbols) can be put into a section's HTML.
[[nodiscard]] std::string escape_html(const std::string& s);

}  // namespace rtmem::analyze
