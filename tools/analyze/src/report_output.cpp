// Site names, formatting helpers, and the text and JSON outputs of a report (which walk
// report_sections()).
#include "rtmem/analyze/report_output.hpp"

#include "rtmem/analyze/distinct_labels.hpp"
#include "rtmem/analyze/report_sections.hpp"

#include <cinttypes>
#include <cstdio>
#include <ostream>

namespace rtmem::analyze {

std::string site_names::frame(std::uint64_t ip) {
    if (sym_ == nullptr) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%" PRIx64, ip);
        return buf;
    }
    return sym_->symbolize(ip);
}

std::string site_names::name(std::uint32_t stack) {
    // Every stack's label at once, on the first call: whether one collides depends on all.
    if (labels_.empty()) {
        std::vector<std::span<const std::uint64_t>> stacks;
        stacks.reserve(source_.stack_count());
        for (std::size_t id = 0; id < source_.stack_count(); ++id)
            stacks.push_back(source_.stack(static_cast<std::uint32_t>(id)));
        label_style style;
        style.frames = frames_;
        style.separator = "  <  ";
        style.text = [this](std::uint64_t ip) { return frame(ip); };
        style.key = [this](std::uint64_t ip) {
            return sym_ != nullptr ? sym_->location_key(ip) : frame(ip);
        };
        labels_ = distinct_labels(stacks, style, "");
    }
    if (stack < labels_.size() && !labels_[stack].empty()) return labels_[stack];
    return stack == 0 ? "(no stack)" : "(stack " + std::to_string(stack) + ")";
}

std::string site_names::key(std::uint32_t stack) {
    std::string out;
    for (std::uint64_t ip : source_.stack(stack)) {
        if (!out.empty()) out += ';';
        out += sym_ != nullptr ? sym_->location_key(ip) : std::to_string(ip);
    }
    return out.empty() ? "stack:" + std::to_string(stack) : out;
}

std::vector<std::string> site_names::path(std::uint32_t stack) {
    std::vector<std::string> out;
    auto ips = source_.stack(stack);
    for (std::size_t i = ips.size(); i-- > 0;) {
        if (sym_ != nullptr) {
            const auto& fr = sym_->frames(ips[i]);
            if (!fr.empty()) {
                for (std::size_t k = fr.size(); k-- > 0;) out.push_back(fr[k].function);
                continue;
            }
        }
        out.push_back(frame(ips[i]));
    }
    if (out.empty()) out.push_back("(no stack)");
    return out;
}

trace_info describe(const trace_reader& reader) {
    trace_info i;
    i.file = reader.path();
    i.program = reader.program();
    i.command = reader.command_line();
    i.pid = reader.pid();
    i.threads = reader.thread_count();
    i.file_size = reader.file_size();
    i.complete = reader.complete();
    i.dropped = reader.dropped_events();
    // By trace_end: unknown, exit, quick_exit, signal, exec, dump.
    static constexpr const char* ends[] = {"no end record (killed?)", "exit", "_exit", "signal",
                                           "exec", "a dump (rtmem_trace_dump)"};
    i.end = ends[static_cast<std::size_t>(reader.end())];
    if (reader.end() == trace_end::signal) {
        i.end += ' ';  // appended piecewise: GCC 12's -Wrestrict misfires on `" " + to_string()` at -O3
        i.end += std::to_string(reader.end_signal());
    }
    return i;
}

std::string describe_window(const report_data& r) {
    if (!r.windowed) return "";
    std::string out = "window " + human_ns(r.window.from_ns) + " to " +
                      (r.window.to_ns == ~std::uint64_t{0} ? "the end" : human_ns(r.window.to_ns));
    if (r.live_at_start_included) {
        out += "; live when it opened: " + human_bytes(r.live_at_start_bytes) + " in " +
               std::to_string(r.live_at_start_blocks) + " blocks (included in the peak)";
    } else {
        out +=
            "; counts only blocks allocated within it (--live-at-start for the memory live "
            "before it)";
    }
    return out;
}


void print_text(std::ostream& out, const trace_info& info, const report_data& r, site_names& names,
                std::size_t top) {
    const section_input in{info, r, names, top};
    for (const auto& section : report_sections()) {
        if (section.text != nullptr) section.text(out, in);
    }
}

nlohmann::json to_json(const trace_info& info, const report_data& r, site_names& names,
                       std::size_t top) {
    const section_input in{info, r, names, top};
    nlohmann::json j;
    for (const auto& section : report_sections()) {
        if (section.json != nullptr) section.json(j, in);
    }
    return j;
}

}  // namespace rtmem::analyze
