// A whole-number option's check with a short message. CLI11's Range and PositiveNumber print
// their bounds as doubles ("Value 0 not in range 0.000000 to 17976931…", 309 digits), and an
// unsigned option takes "-1" as a huge number without a word.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <string>

namespace rtmem::cli {

inline CLI::Validator at_least(long long min) {
    return CLI::Validator(
        [min](std::string& text) -> std::string {
            long long value = 0;
            const char* end = text.data() + text.size();
            auto [stop, error] = std::from_chars(text.data(), end, value);
            if (error != std::errc{} || stop != end) return "'" + text + "' is not a whole number";
            if (value < min) return "must be at least " + std::to_string(min) + ", got " + text;
            return {};
        },
        "INT>=" + std::to_string(min));
}

}  // namespace rtmem::cli
