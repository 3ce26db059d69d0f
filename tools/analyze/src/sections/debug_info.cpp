// Last of the sections, once every other has named its sites: how many of the frames named had
// no debug info, in which modules (with build ids), and how to get names.
#include <ostream>

#include "rtmem/analyze/report_sections.hpp"

namespace rtmem::analyze {

namespace {

void debug_info_text(std::ostream& out, const section_input& in) {
    if (const symbolizer* sym = in.names.symbols()) out << debug_info_note(sym->debug_info());
}

void debug_info_json(nlohmann::json& j, const section_input& in) {
    const symbolizer* sym = in.names.symbols();
    if (sym == nullptr) return;
    const debug_info_summary s = sym->debug_info();
    nlohmann::json modules = nlohmann::json::array();
    for (const auto& m : s.modules) {
        modules.push_back({{"path", m.path},
                           {"build_id", m.build_id},
                           {"frames", m.frames},
                           {"readable", m.readable}});
    }
    j["debug_info"] = {{"frames", s.frames},
                       {"frames_without_debug_info", s.without_debug_info},
                       {"modules_without_debug_info", modules}};
}

std::string debug_info_html(const section_input& in) {
    const symbolizer* sym = in.names.symbols();
    const std::string note = sym != nullptr ? debug_info_note(sym->debug_info()) : "";
    return note.empty() ? "" : "<pre class=\"note\">" + escape_html(note) + "</pre>\n";
}

}  // namespace

extern const report_section debug_info_section;
const report_section debug_info_section{"debug info", debug_info_text, debug_info_json,
                                        debug_info_html, false};

}  // namespace rtmem::analyze
