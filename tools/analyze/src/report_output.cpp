// Text and JSON renderings of a report.
#include "rtmem/analyze/report_output.hpp"

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

namespace {

const char* order_title(site_order o) {
    switch (o) {
        case site_order::calls:
            return "calls";
        case site_order::bytes:
            return "bytes";
        case site_order::peak:
            return "peak";
        case site_order::time:
            return "time";
        case site_order::leaked:
            return "leaked";
    }
    return "?";
}

enum class unit { bytes, ns, count };

void print_histogram(std::ostream& out, const char* title, const log2_histogram& h, unit u) {
    std::size_t first = 65, last = 0;
    std::uint64_t max = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] == 0) continue;
        first = std::min(first, i);
        last = i;
        max = std::max(max, h.buckets[i]);
    }
    out << "\n" << title << "\n";
    if (first == 65) {
        out << "  (none)\n";
        return;
    }
    for (std::size_t i = first; i <= last; ++i) {
        std::uint64_t ub = log2_histogram::upper_bound(i);
        std::string label = "<= " + (u == unit::bytes ? human_bytes(ub)
                                     : u == unit::ns  ? human_ns(ub)
                                                      : std::to_string(ub));
        char line[160];
        auto bar =
            static_cast<int>(40.0 * static_cast<double>(h.buckets[i]) / static_cast<double>(max));
        std::snprintf(line, sizeof line, "  %14s %12" PRIu64 " %s\n", label.c_str(), h.buckets[i],
                      std::string(static_cast<std::size_t>(bar), '#').c_str());
        out << line;
    }
}

nlohmann::json histogram_json(const log2_histogram& h) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] != 0) {
            a.push_back({{"max", log2_histogram::upper_bound(i)}, {"count", h.buckets[i]}});
        }
    }
    return a;
}

}  // namespace

void print_text(std::ostream& out, const trace_info& info, const report_data& r, site_names& names,
                std::size_t top) {
    char line[512];
    out << "rtmem report: " << info.file << " (" << human_bytes(info.file_size) << ")\n";
    out << "program: " << info.program << "  pid " << info.pid << "  threads " << info.threads
        << "  ended by " << info.end << "\n";
    if (!info.complete)
        out << "warning: the trace has no end record; it stops at the last complete chunk\n";
    if (info.dropped != 0)
        out << "warning: " << info.dropped
            << " calls were not recorded (made while the process was ending)\n";
    out << "command: " << info.command << "\n";
    if (r.windowed) out << describe_window(r) << "\n";
    out << "\n";
    std::snprintf(line, sizeof line,
                  "events %" PRIu64 " over %s; allocations %" PRIu64 ", deallocations %" PRIu64
                  ", frames %" PRIu64 "\n",
                  r.events, human_ns(r.duration_ns).c_str(), r.allocations, r.deallocations,
                  r.calls[static_cast<std::size_t>(op::frame)]);
    out << line << "calls:";
    for (std::size_t k = 0; k < op_count; ++k) {
        if (r.calls[k] != 0) out << " " << op_name(static_cast<op>(k)) << " " << r.calls[k];
    }
    out << "\n";
    out << "bytes allocated " << human_bytes(r.bytes_allocated) << "; peak live "
        << human_bytes(r.peak_live_bytes) << " (" << r.peak_live_bytes << " B) at "
        << human_ns(r.peak_time_ns) << "\n";
    out << (r.windowed ? "live at window end " : "leaked at exit ") << human_bytes(r.leaked_bytes)
        << " in " << r.leaked_blocks << " blocks; temporaries " << r.temporaries << "; failed "
        << r.failed << "; frees of unknown pointers " << r.unknown_frees << "\n";
    out << "cross-thread frees " << r.cross_thread_frees << " ("
        << human_bytes(r.cross_thread_bytes) << "); "
        << (r.timing_period > 1 ? "estimated " : "measured ") << "time in the allocator "
        << human_ns(r.time_ns);
    if (r.timing_period > 1) out << " (1 call in " << r.timing_period << " timed)";
    out << "\n";
    for (site_order o : {site_order::calls, site_order::bytes, site_order::peak, site_order::time,
                         site_order::leaked}) {
        auto sites = top_sites(r, o, top);
        if (sites.empty()) continue;
        out << "\ntop sites by " << order_title(o) << "\n";
        out << "       calls        bytes         peak         time       leaked  site\n";
        for (const auto& s : sites) {
            std::snprintf(line, sizeof line, "%12" PRIu64 " %12s %12s %12s %12s  ", s.calls,
                          human_bytes(s.bytes).c_str(), human_bytes(s.peak_bytes).c_str(),
                          human_ns(s.time_ns).c_str(), human_bytes(s.live_bytes).c_str());
            out << line << names.name(s.stack) << "\n";
        }
    }
    print_histogram(out, "allocation sizes", r.sizes, unit::bytes);
    print_histogram(out, "lifetimes (ns)", r.lifetimes_ns, unit::ns);
    print_histogram(out, "lifetimes (allocations in between)", r.lifetimes_allocs, unit::count);
    out << "\nthreads\n  thread  allocations  deallocations  bytes allocated  bytes freed\n";
    for (const auto& t : r.threads) {
        std::snprintf(line, sizeof line, "  %6u %12" PRIu64 " %14" PRIu64 " %16s %12s\n", t.thread,
                      t.allocations, t.deallocations, human_bytes(t.bytes_allocated).c_str(),
                      human_bytes(t.bytes_freed).c_str());
        out << line;
    }
}

nlohmann::json to_json(const trace_info& info, const report_data& r, site_names& names,
                       std::size_t top) {
    nlohmann::json j;
    j["trace"] = {
        {"file", info.file},         {"program", info.program}, {"command", info.command},
        {"pid", info.pid},           {"threads", info.threads}, {"file_size", info.file_size},
        {"complete", info.complete}, {"end", info.end},         {"dropped", info.dropped}};
    nlohmann::json calls;
    for (std::size_t k = 0; k < op_count; ++k) calls[op_name(static_cast<op>(k))] = r.calls[k];
    if (r.windowed) {
        j["window"] = {{"from_ns", r.window.from_ns},
                       {"to_ns", r.window.to_ns},
                       {"live_at_start_included", r.live_at_start_included},
                       {"live_at_start_bytes", r.live_at_start_bytes},
                       {"live_at_start_blocks", r.live_at_start_blocks}};
    }
    j["totals"] = {{"events", r.events},
                   {"calls", calls},
                   {"allocations", r.allocations},
                   {"deallocations", r.deallocations},
                   {"bytes_allocated", r.bytes_allocated},
                   {"peak_live_bytes", r.peak_live_bytes},
                   {"peak_time_ns", r.peak_time_ns},
                   {"duration_ns", r.duration_ns},
                   {"leaked_blocks", r.leaked_blocks},
                   {"leaked_bytes", r.leaked_bytes},
                   {"temporaries", r.temporaries},
                   {"cross_thread_frees", r.cross_thread_frees},
                   {"cross_thread_bytes", r.cross_thread_bytes},
                   {"unknown_frees", r.unknown_frees},
                   {"failed", r.failed},
                   {"time_ns", r.time_ns},
                   {"timing_period", r.timing_period}};
    for (site_order o : {site_order::calls, site_order::bytes, site_order::peak, site_order::time,
                         site_order::leaked}) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : top_sites(r, o, top)) {
            list.push_back({{"stack", s.stack},
                            {"site", names.name(s.stack)},
                            {"key", names.key(s.stack)},
                            {"calls", s.calls},
                            {"bytes", s.bytes},
                            {"peak_bytes", s.peak_bytes},
                            {"time_ns", s.time_ns},
                            {"leaked_bytes", s.live_bytes},
                            {"leaked_blocks", s.live_blocks},
                            {"temporaries", s.temporaries},
                            {"cross_thread_frees", s.cross_thread_frees}});
        }
        j["top_sites"][order_title(o)] = list;
    }
    j["histograms"] = {{"size_bytes", histogram_json(r.sizes)},
                       {"lifetime_ns", histogram_json(r.lifetimes_ns)},
                       {"lifetime_allocations", histogram_json(r.lifetimes_allocs)}};
    nlohmann::json threads = nlohmann::json::array();
    for (const auto& t : r.threads) {
        threads.push_back({{"thread", t.thread},
                           {"allocations", t.allocations},
                           {"deallocations", t.deallocations},
                           {"bytes_allocated", t.bytes_allocated},
                           {"bytes_freed", t.bytes_freed},
                           {"time_ns", t.time_ns}});
    }
    j["threads"] = threads;
    return j;
}

}  // namespace rtmem::analyze
