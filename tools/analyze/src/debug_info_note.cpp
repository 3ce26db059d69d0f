// The one note a report or an advice prints when frames lacked debug info: which modules (with
// the build id that names their debug file) and how to get names.
#include <cstdio>

#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem::analyze {

std::string debug_info_note(const debug_info_summary& s) {
    if (s.without_debug_info == 0) return "";
    char line[160];
    std::snprintf(line, sizeof line,
                  "\nnote: %.0f%% of the %llu distinct frames looked up had no debug info (function names "
                  "from the ELF symbol table at best, no file:line):\n",
                  100.0 * static_cast<double>(s.without_debug_info) /
                      static_cast<double>(s.frames),
                  static_cast<unsigned long long>(s.frames));
    std::string out = line;
    std::string example;
    constexpr std::size_t listed = 8;
    for (std::size_t i = 0; i < s.modules.size() && i < listed; ++i) {
        const auto& m = s.modules[i];
        out += "  " + m.path + ": " + std::to_string(m.frames) + " frame" +
               (m.frames == 1 ? "" : "s");
        if (!m.readable) {
            out += " (file gone or unreadable: nothing can name them)\n";
            continue;
        }
        out += m.build_id.empty() ? ", no build id" : ", build id " + m.build_id;
        out += "\n";
        if (example.empty() && m.build_id.size() > 2) {
            example = m.build_id.substr(0, 2) + "/" + m.build_id.substr(2) + ".debug";
        }
    }
    if (s.modules.size() > listed) {
        out += "  ... and " + std::to_string(s.modules.size() - listed) + " more modules\n";
    }
    out +=
        "  To name them: install the module's debug symbols (Debian: the -dbgsym package of the\n"
        "  package that ships it, from the debian-debug archive";
    if (!example.empty()) out += ";\n  it installs /usr/lib/debug/.build-id/" + example;
    out +=
        "), build your own code with -g,\n"
        "  or put debug files in a directory as .build-id/xx/yyyy.debug and set RTMEM_DEBUG_DIR\n"
        "  to it (a debuginfod server in DEBUGINFOD_URLS is asked too).\n";
    return out;
}

}  // namespace rtmem::analyze
