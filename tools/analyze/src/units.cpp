// Sizes and times as every output prints them.
#include "rtmem/analyze/units.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "rtmem/analyze/sample_weight.hpp"

namespace rtmem::analyze {

std::string interval_text(std::uint64_t estimate, double variance, bool bytes) {
    const interval95 ci = confidence95(static_cast<double>(estimate), variance);
    auto text = [bytes](double v) {
        const auto n = static_cast<std::uint64_t>(std::llround(v));
        return bytes ? human_bytes(n) : std::to_string(n);
    };
    return text(ci.low) + "–" + text(ci.high);
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

std::string human_ns(double ns) {
    char buf[32];
    const double a = std::fabs(ns);
    if (a < 1e4)
        std::snprintf(buf, sizeof buf, "%.0f ns", ns);
    else if (a < 1e7)
        std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
    else if (a < 1e10)
        std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
    return buf;
}

std::string human_ns(std::uint64_t ns) {
    if (ns < 10000) return std::to_string(ns) + " ns";  // exact: no rounding through double
    return human_ns(static_cast<double>(ns));
}

std::string with_commas(std::uint64_t v) {
    std::string digits = std::to_string(v);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
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

}  // namespace rtmem::analyze
