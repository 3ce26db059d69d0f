// Site names, formatting helpers, and the text and JSON outputs of a report (which walk
// report_sections()).
#include "rtmem/analyze/report_output.hpp"

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
    auto it = names_.find(stack);
    if (it != names_.end()) return it->second;
    auto ips = source_.stack(stack);
    std::string out;
    for (std::size_t i = 0; i < ips.size() && i < frames_; ++i) {
        if (!out.empty()) out += "  <  ";
        out += frame(ips[i]);
    }
    if (out.empty()) out = stack == 0 ? "(no stack)" : "(stack " + std::to_string(stack) + ")";
    return names_.emplace(stack, out).first->second;
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
    switch (reader.end()) {
        case trace_end::exit:
            i.end = "exit";
            break;
        case trace_end::quick_exit:
            i.end = "_exit";
            break;
        case trace_end::signal:
            i.end = "signal " + std::to_string(reader.end_signal());
            break;
        case trace_end::exec:
            i.end = "exec";
            break;
        case trace_end::unknown:
            i.end = "no end record (killed?)";
            break;
    }
    return i;
}

std::string human_bytes(std::uint64_t b) {
    char buf[32];
    if (b < 1024) {
        std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    } else if (b < (1u << 20)) {
        std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024.0);
    } else if (b < (1ull << 30)) {
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / 1048576.0);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / 1073741824.0);
    }
    return buf;
}

std::string human_ns(std::uint64_t ns) {
    char buf[32];
    auto d = static_cast<double>(ns);
    if (ns < 10000) {
        std::snprintf(buf, sizeof buf, "%" PRIu64 " ns", ns);
    } else if (ns < 10000000) {
        std::snprintf(buf, sizeof buf, "%.1f us", d / 1e3);
    } else if (ns < 10000000000ull) {
        std::snprintf(buf, sizeof buf, "%.1f ms", d / 1e6);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f s", d / 1e9);
    }
    return buf;
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

std::optional<std::uint64_t> parse_ns(std::string_view text) {
    auto is_space = [](char c) { return c == ' ' || c == '\t'; };
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    std::size_t i = 0;
    std::uint64_t whole = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) {
        if (__builtin_mul_overflow(whole, 10u, &whole) ||
            __builtin_add_overflow(whole, static_cast<unsigned>(text[i] - '0'), &whole)) {
            return std::nullopt;
        }
    }
    bool any_digit = i > 0;
    std::string_view fraction;
    if (i < text.size() && text[i] == '.') {
        std::size_t first = ++i;
        while (i < text.size() && is_digit(text[i])) ++i;
        fraction = text.substr(first, i - first);
        any_digit = any_digit || !fraction.empty();
    }
    if (!any_digit) return std::nullopt;
    while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
    std::string_view unit = text.substr(i);
    while (!unit.empty() && is_space(unit.front())) unit.remove_prefix(1);
    std::size_t exponent = 0;  // the unit is 10^exponent ns
    if (unit.empty() || unit == "ns") {
        exponent = 0;
    } else if (unit == "us") {
        exponent = 3;
    } else if (unit == "ms") {
        exponent = 6;
    } else if (unit == "s") {
        exponent = 9;
    } else {
        return std::nullopt;
    }
    if (fraction.size() > exponent) return std::nullopt;  // finer than 1 ns
    std::uint64_t scale = 1, frac_ns = 0;
    for (std::size_t k = 0; k < exponent; ++k) {
        scale *= 10;
        unsigned digit = k < fraction.size() ? static_cast<unsigned>(fraction[k] - '0') : 0u;
        frac_ns = frac_ns * 10 + digit;
    }
    std::uint64_t ns = 0;
    if (__builtin_mul_overflow(whole, scale, &ns) || __builtin_add_overflow(ns, frac_ns, &ns)) {
        return std::nullopt;
    }
    return ns;
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
