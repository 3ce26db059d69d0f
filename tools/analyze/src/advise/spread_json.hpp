// A spread as JSON ({"median", "min", "max"}), one shape for advise --json and replay --json.
#pragma once
#include <nlohmann/json.hpp>

#include "rtmem/analyze/spread.hpp"

namespace rtmem::analyze {

inline nlohmann::ordered_json spread_json(const spread& s) {
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

}  // namespace rtmem::analyze
