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

/// A module some looked-up frames fell in that has no DWARF (stripped, or its debug file not
/// found): names come only from its ELF symbol tables, and there are no file:line.
struct module_without_debug_info {
    std::string path;
    std::string build_id;     ///< hex, from the ELF's NT_GNU_BUILD_ID note; empty if none
    std::uint64_t frames = 0;  ///< distinct frames looked up in it
    bool readable = true;      ///< false: the file is gone or unreadable (nothing resolves)
};

/// Over the distinct frames looked up so far (frames(), symbolize()).
struct debug_info_summary {
    std::uint64_t frames = 0;
    std::uint64_t without_debug_info = 0;
    std::vector<module_without_debug_info> modules;  ///< most frames first
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
    /// Which of the frames looked up so far had no debug info, and in which modules.
    [[nodiscard]] debug_info_summary debug_info() const;
    /// "module+0xoffset": stable across runs (ASLR), used to match sites between traces.
    [[nodiscard]] std::string location_key(std::uint64_t ip) const;

    /// Debug files are looked for, by build id and by path, in $RTMEM_DEBUG_DIR (if set), next
    /// to the module, in its .debug/ and in /usr/lib/debug (where Debian's -dbgsym packages put
    /// .build-id/xx/yyyy.debug), and through debuginfod when DEBUGINFOD_URLS is set.
  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Told once per report or advice when some frames had no debug info: how many, the modules
/// with their build ids, and how to get names (debug packages, -g, RTMEM_DEBUG_DIR,
/// debuginfod); "" when every frame had debug info.
[[nodiscard]] std::string debug_info_note(const debug_info_summary& s);

}  // namespace rtmem::analyze
