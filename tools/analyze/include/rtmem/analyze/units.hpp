// The one formatter of sizes and times for every output (report, advise, replay, diff), and
// the parser of times given on the command line.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rtmem::analyze {

/// "17 B", "12.0 KiB", "1.5 MiB", "2.25 GiB" (binary units, switching at 1024).
[[nodiscard]] std::string human_bytes(std::uint64_t b);
/// "350 ns", "9999 ns", "14.0 us", "2.3 ms", "12.31 s": a unit is kept up to 9999 of it (four
/// digits before the next unit takes over). Negative values (savings that are losses) keep
/// their sign.
[[nodiscard]] std::string human_ns(double ns);
[[nodiscard]] std::string human_ns(std::uint64_t ns);
/// A sampled estimate's 95% interval (confidence95 in sample_weight.hpp) from its value and
/// variance: "1.0 MiB–1.5 MiB" (sizes) or "950–1210" (counts).
[[nodiscard]] std::string interval_text(std::uint64_t estimate, double variance, bool bytes);
/// "3,200".
[[nodiscard]] std::string with_commas(std::uint64_t v);
/// A time given by a user: "1500000" (ns), "1.5s", "200ms", "3 us", "20ns". Nothing when
/// malformed, negative, finer than 1 ns or beyond 2^64 - 1 ns.
[[nodiscard]] std::optional<std::uint64_t> parse_ns(std::string_view text);

}  // namespace rtmem::analyze
