// Offline symbolisation of recorded return addresses through the trace's module map
// (elfutils libdw): function names demangled, file:line, and inlined frames.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze {

/// One source-level frame; an address inside inlined code yields several, innermost first.
struct frame_info {
    std::string function;  ///< demangled; "??" when unknown
    std::string file;      ///< empty when no debug info
    int line = 0;
    bool inlined = false;
};

class symbolizer {
  public:
    explicit symbolizer(std::vector<module> modules);
    explicit symbolizer(const trace_reader& trace) : symbolizer(trace.modules()) {}
    ~symbolizer();
    symbolizer(const symbolizer&) = delete;
    symbolizer& operator=(const symbolizer&) = delete;

    /// Frames for a return address (looked up at ip - 1), cached; empty when neither a symbol
    /// nor a line is known (symbolize() then gives "module+0xoffset").
    const std::vector<frame_info>& frames(std::uint64_t ip);
    /// One line: "outer (file:line) <- inlined ..." or "module+0xoffset" without symbols.
    std::string symbolize(std::uint64_t ip);
    /// "module+0xoffset": stable across runs (ASLR), used to match sites between traces.
    [[nodiscard]] std::string location_key(std::uint64_t ip) const;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace rtmem::analyze
