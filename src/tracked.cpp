// Text and JSON formatting for tracked<A> reports (out of line: cold, and shared by every A).
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "rtmem/diag/tracked.hpp"

namespace rtmem::detail {
namespace {

void appendf(std::string& out, const char* fmt, ...) RTMEM_PRINTF_FORMAT(2, 3);

void appendf(std::string& out, const char* fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    if (n > 0) out.append(buf, std::min(static_cast<std::size_t>(n), sizeof buf - 1));
}

// Parents before children, siblings by name: sorting by path does both, since '/' sorts before
// letters and digits.
std::vector<std::pair<tag, tag_stats>> by_path(std::vector<std::pair<tag, tag_stats>> rows) {
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first.path() < b.first.path(); });
    return rows;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (const char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    appendf(out, "\\u%04x", static_cast<unsigned>(c));
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

std::string format_tag_table(const std::vector<std::pair<tag, tag_stats>>& rows) {
    std::string out;
    appendf(out, "%-40s %12s %12s %14s %14s %14s\n", "tag", "allocs", "frees", "live bytes",
            "peak bytes", "budget");
    for (const auto& [t, s] : by_path(rows)) {
        std::string label(2 * (t.depth() > 0 ? t.depth() - 1 : 0), ' ');
        label += t.is_root() ? std::string_view("(all)") : t.leaf();
        char budget[24] = "-";
        if (s.budget != 0) std::snprintf(budget, sizeof budget, "%zu", s.budget);
        appendf(out, "%-40s %12" PRIu64 " %12" PRIu64 " %14zu %14zu %14s\n", label.c_str(),
                s.allocations, s.deallocations, s.live_bytes, s.peak_bytes, budget);
    }
    return out;
}

std::string format_tag_json(const std::vector<std::pair<tag, tag_stats>>& rows,
                            const rtmem::stats& totals) {
    std::string out;
    appendf(out,
            "{\"used\":%zu,\"peak\":%zu,\"live_blocks\":%zu,\"total_allocations\":%zu,\"tags\":[",
            totals.used, totals.peak, totals.live_count, totals.total_count);
    bool first = true;
    for (const auto& [t, s] : by_path(rows)) {
        if (!first) out += ',';
        first = false;
        out += "{\"tag\":";
        append_json_string(out, t.path());
        appendf(out,
                ",\"allocations\":%" PRIu64 ",\"deallocations\":%" PRIu64
                ",\"live_bytes\":%zu,\"peak_bytes\":%zu,\"self_live_bytes\":%zu,\"budget\":%zu}",
                s.allocations, s.deallocations, s.live_bytes, s.peak_bytes, s.self_live_bytes,
                s.budget);
    }
    out += "]}";
    return out;
}

std::string format_leaks(std::string_view allocator, const std::vector<live_block>& blocks) {
    std::size_t bytes = 0;
    for (const auto& b : blocks) bytes += b.size;
    std::string out;
    appendf(out, "rtmem: tracked<%.*s> destroyed with %zu live block%s (%zu bytes):\n",
            static_cast<int>(allocator.size()), allocator.data(), blocks.size(),
            blocks.size() == 1 ? "" : "s", bytes);
    for (const auto& b : blocks) {
        const std::string_view path =
            b.tag.is_root() ? std::string_view("(untagged)") : b.tag.path();
        appendf(out, "  %zu bytes at %p [%.*s] allocated at %s:%u in %s\n", b.size, b.pointer,
                static_cast<int>(path.size()), path.data(), b.where.file_name(),
                static_cast<unsigned>(b.where.line()), b.where.function_name());
    }
    return out;
}

}  // namespace rtmem::detail
