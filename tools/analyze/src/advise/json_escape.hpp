// JSON string escaping for the advisor's hand-formatted JSON (advise and replay output),
// done by nlohmann::json so control characters and invalid UTF-8 are handled one way.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace rtmem::analyze {

/// `s` as the inside of a JSON string literal (no surrounding quotes); invalid UTF-8 becomes
/// U+FFFD instead of an exception.
inline std::string json_escape(const std::string& s) {
    std::string quoted =
        nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return quoted.substr(1, quoted.size() - 2);
}

}  // namespace rtmem::analyze
