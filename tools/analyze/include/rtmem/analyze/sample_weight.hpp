// How much a recorded block of a sampled trace (`rtmem record --sample BYTES`) stands for.
// The tracer samples allocated bytes as a Poisson process of mean interval BYTES, so a block
// of size s is recorded with probability p = 1 - exp(-s / BYTES), independently of the rest:
// weighting it by 1 / p makes sums over recorded blocks unbiased estimates of the sums over
// all blocks (Horvitz-Thompson), with variance estimated by sum of (1 - p) / p^2 x^2 =
// w (w - 1) x^2.
#pragma once
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

/// Half-width of a 95% interval from a variance (1.96 standard deviations).
[[nodiscard]] inline double error95(double variance) noexcept {
    return 1.96 * std::sqrt(variance > 0 ? variance : 0);
}

}  // namespace rtmem::analyze
