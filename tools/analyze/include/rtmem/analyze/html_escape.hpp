// Escaping for text put into the HTML outputs (report page, advice).
#pragma once
#include <string>

namespace rtmem::analyze {

/// Escapes <, >, & and " so text (program names, symbols) can be put into HTML.
[[nodiscard]] std::string escape_html(const std::string& s);

}  // namespace rtmem::analyze
