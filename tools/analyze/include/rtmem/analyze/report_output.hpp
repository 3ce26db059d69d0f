// Rendering of report_data: site names (symbolised or module+offset), text, JSON and HTML.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/symbolizer.hpp"
#include "rtmem/analyze/units.hpp"

namespace rtmem::analyze {

/// Names a site from its stack: the innermost frames, symbolised when a symbolizer is given;
/// stacks that share those get the frame that tells them apart (distinct_labels.hpp).
/// key() is stable across runs of the same binaries (module+offset), for `rtmem diff`.
class site_names {
  public:
    site_names(const event_source& source, symbolizer* sym, std::size_t frames = 2)
        : source_(source), sym_(sym), frames_(frames) {}
    std::string name(std::uint32_t stack);
    std::string key(std::uint32_t stack);
    /// Frames outermost first (for flame graphs).
    std::vector<std::string> path(std::uint32_t stack);
    /// The symbolizer names come from (nullptr: addresses).
    [[nodiscard]] symbolizer* symbols() const noexcept { return sym_; }

  private:
    std::string frame(std::uint64_t ip);
    const event_source& source_;
    symbolizer* sym_;
    std::size_t frames_;
    std::vector<std::string> labels_;  // by stack id
};

/// What the report says about the trace itself.
struct trace_info {
    std::string file, program, command;
    std::uint32_t pid = 0, threads = 0;
    std::uint64_t file_size = 0;
    bool complete = true;
    std::string end;            ///< "exit", "signal 6", ...
    std::uint64_t dropped = 0;  ///< calls not recorded (see trace_reader::dropped_events)
};
[[nodiscard]] trace_info describe(const trace_reader& reader);

void print_text(std::ostream& out, const trace_info& info, const report_data& r, site_names& names,
                std::size_t top);
[[nodiscard]] nlohmann::json to_json(const trace_info& info, const report_data& r,
                                     site_names& names, std::size_t top);
/// The outputs walk the sections of report_sections.hpp in order.
/// One self-contained page (inline CSS and JS, no network).
[[nodiscard]] std::string to_html(const trace_info& info, const report_data& r, site_names& names,
                                  event_source& source, std::size_t top);

/// For a windowed report: the window and what it counts ("" for a whole trace).
[[nodiscard]] std::string describe_window(const report_data& r);


}  // namespace rtmem::analyze
