// The inline style and script of the HTML report (no external resources). The script is in
// parts, one per view; page_script() joins them.
#pragma once
#include <string>

namespace rtmem::analyze {

[[nodiscard]] const char* page_style();
[[nodiscard]] std::string page_script();

extern const char* const script_common;  // formatting, SVG helpers, the per-site view
extern const char* const script_charts;  // line and bar charts with ticks and axis labels
extern const char* const script_flame;   // flame graph: zoom, search, callers/callees
extern const char* const script_tables;  // bottom-up tree, paged site table, advice links

}  // namespace rtmem::analyze
