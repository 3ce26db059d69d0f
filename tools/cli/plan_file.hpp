// Writing a plan file from the CLI (`rtmem advise --plan`, `rtmem tune -o`): checked before the
// long work starts, written whole afterwards.
#pragma once
#include <string>

#include "rtmem/analyze/plan.hpp"

namespace rtmem::cli {

/// Throws usage_error naming `option` when `path` cannot be written (a directory, a missing
/// directory, no permission).
void check_plan_writable(const std::string& option, const std::string& path);

/// Writes `p` as JSON to `path`; usage_error naming `option` when that fails.
void write_plan_file(const analyze::plan& p, const std::string& option, const std::string& path);

}  // namespace rtmem::cli
