// Subcommands of the `rtmem` executable register themselves; main() builds the CLI11 app
// from the registry. A new command is one tools/cli/<name>.cpp containing:
//   static const bool registered = rtmem::cli::register_command(
//       {"name", "one-line help", [](CLI::App& sub, std::function<int()>& run) { ... }});
// setup() declares options on `sub` and stores in `run` the action (returns the exit status).
// Errors: throw rtmem::cli::usage_error or rtmem::analyze::trace_error (exit status 2).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <vector>

namespace rtmem::cli {

struct command {
    const char* name;
    const char* help;
    void (*setup)(CLI::App& sub, std::function<int()>& run);
};

/// Bad arguments or input detected by a command: printed as "rtmem: error: ...", exit 2.
class usage_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

bool register_command(const command& c);
[[nodiscard]] const std::vector<command>& commands();

}  // namespace rtmem::cli
