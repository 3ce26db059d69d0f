// How much a recorded block of a sampled trace (`rtmem record --sample BYTES`) stands for.
// The tracer samples allocated bytes as a Poisson process of mean interval BYTES, so a block
// of size s is recorded with probability p = 1 - exp(-s / BYTES), independently of the rest:
// weighting it by 1 / p makes sums over recorded blocks unbiased estimates of the sums over
// all blocks (Horvitz-Thompson), with variance estimated by sum of (1 - p) / p^2 x^2 =
// w (w - 1) x^2, and a 95% interval from both (confidence95).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace rtmem::analyze {

/// 1 / p for a block of `size` bytes; 1 when the trace is not sampled (interval 0).
[[nodiscard]] inline double sample_weight(std::uint64_t size, std::uint64_t interval) noexcept {
    if (interval == 0 || size == 0) return 1;
    return 1.0 / -std::expm1(-static_cast<double>(size) / static_cast<double>(interval));
}

/// The block's weight as a whole count: floor(w), plus 1 with probability frac(w), decided by
/// a hash of the block (address and time) so that its free subtracts what its allocation
/// added. Unbiased; adds less than 0.25 to each block's variance.
[[nodiscard]] inline std::uint64_t weighted_count(double w, std::uint64_t ptr,
                                                  std::uint64_t time) noexcept {
    if (w == 1) return 1;
    double whole = std::floor(w);
    std::uint64_t h = (ptr ^ (time * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    double u = static_cast<double>(h >> 11) * 0x1p-53;
    return static_cast<std::uint64_t>(whole) + (u < w - whole ? 1 : 0);
}

/// The block's bytes times its weight, to the nearest byte.
[[nodiscard]] inline std::uint64_t weighted_bytes(double w, std::uint64_t size) noexcept {
    return w == 1 ? size : static_cast<std::uint64_t>(std::llround(w * static_cast<double>(size)));
}

/// A 95% interval for a sampled estimate: [low, high], around it but not symmetric.
struct interval95 {
    double low = 0, high = 0;
};

/// The 95% interval of an estimate y with Horvitz-Thompson variance estimate v. Not y ± 1.96
/// sqrt(v): that (Wald) interval shrinks with the estimate (a site that drew few samples also
/// gets a small variance estimate) and covers the true figure for only 63-90% of sites drawing
/// 1 to 8 samples. Instead the score (Wilson) interval of a Poisson count: a site of small
/// blocks is n = y^2 / v samples of c = v / y bytes each (c ~ the interval), and the true mean
/// count m is in n + z^2/2 +- z sqrt(n + z^2/4) (from |n - m| <= z sqrt(m)), which holds for
/// ~95% at any n (docs/tracer.md, "Sampled accuracy"). In bytes: y + c z^2/2 +- z sqrt(v +
/// (c z / 2)^2); never below 0, and from 0 when n < 2.5; tends to y +- z sqrt(v) as samples
/// grow; [y, y] when v = 0.
[[nodiscard]] inline interval95 confidence95(double estimate, double variance) noexcept {
    constexpr double z = 1.959963984540054;
    if (!(variance > 0) || !(estimate > 0)) return {estimate, estimate};
    const double c = variance / estimate, n = estimate / c;
    const double centre = estimate + c * z * z / 2;
    const double half = z * std::sqrt(variance + c * c * z * z / 4);
    // A site the report shows was recorded at least once: seen once or twice, it may be far
    // smaller than one interval (most sites that small are never seen, the few seen drew a
    // lucky sample), so nothing above 0 is excluded. Keeps the coverage of the sites shown
    // >= ~87% down to 0.05 expected samples (the score bound alone: 0-77% below 1).
    if (n < 2.5) return {0, centre + half};
    return {std::max(0.0, centre - half), centre + half};
}

}  // namespace rtmem::analyze
