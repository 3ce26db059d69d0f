// The sampled-trace estimator (sample_weight.hpp) against simulated sampling: each block of
// size s is recorded with probability 1 - exp(-s / interval), as the tracer's Poisson process
// of bytes records it, and the site's estimate and 95% interval are formed as the report forms
// them. Over many simulated runs the estimates must average to the truth (unbiased, bytes and
// counts) and the intervals must cover it in ~95% of the runs that recorded the site — also
// when it drew only a few samples, where y +- 1.96 sqrt(v) covered it in 86-92% (bytes, at 3
// to 8 samples).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "rtmem/analyze/sample_weight.hpp"

namespace {

using namespace rtmem::analyze;

struct xorshift {
    std::uint64_t s = 0x9e3779b97f4a7c15ull;
    double uniform() noexcept {  // [0, 1)
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return static_cast<double>((s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
    }
};

struct trial_result {
    double bytes = 0, bytes_var = 0, count = 0, count_var = 0;
    bool recorded = false;
};

// One sampled run over `sizes`: the report's per-site sums (sample_weight, weighted_bytes,
// weighted_count, w (w - 1) x^2 as the variance).
trial_result sample_site(const std::vector<std::uint64_t>& sizes, std::uint64_t interval,
                         xorshift& rng, std::uint64_t trial) {
    trial_result r;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double w = sample_weight(sizes[i], interval);
        if (rng.uniform() >= 1 / w) continue;
        const double x = static_cast<double>(sizes[i]);
        r.recorded = true;
        r.bytes += static_cast<double>(weighted_bytes(w, sizes[i]));
        r.bytes_var += w * (w - 1) * x * x;
        r.count += static_cast<double>(weighted_count(w, 0x1000 + 16 * i, trial));
        r.count_var += w * (w - 1);
    }
    return r;
}

struct accuracy {
    double mean_bytes = 0, mean_count = 0;  // over all trials (unrecorded ones count 0)
    double bytes_coverage = 0, count_coverage = 0;  // over the trials that recorded the site
};

accuracy simulate(const std::vector<std::uint64_t>& sizes, std::uint64_t interval, int trials) {
    xorshift rng;
    double truth_bytes = 0;
    for (auto s : sizes) truth_bytes += static_cast<double>(s);
    const auto truth_count = static_cast<double>(sizes.size());
    accuracy a;
    int recorded = 0, bytes_in = 0, count_in = 0;
    for (int t = 0; t < trials; ++t) {
        const trial_result r = sample_site(sizes, interval, rng, static_cast<std::uint64_t>(t));
        a.mean_bytes += r.bytes / trials;
        a.mean_count += r.count / trials;
        if (!r.recorded) continue;
        ++recorded;
        const interval95 b = confidence95(r.bytes, r.bytes_var);
        const interval95 c = confidence95(r.count, r.count_var);
        bytes_in += b.low <= truth_bytes && truth_bytes <= b.high;
        count_in += c.low <= truth_count && truth_count <= c.high;
    }
    a.bytes_coverage = static_cast<double>(bytes_in) / recorded;
    a.count_coverage = static_cast<double>(count_in) / recorded;
    return a;
}

// A site of small blocks expecting `samples` recorded ones: sizes 100 and 300 at a 1000-byte
// interval (weights 10.5 and 3.9).
std::vector<std::uint64_t> small_blocks(double samples) {
    std::vector<std::uint64_t> sizes;
    double expected = 0;
    for (std::size_t i = 0; expected < samples; ++i) {
        sizes.push_back(i % 4 == 3 ? 300 : 100);
        expected += 1 / sample_weight(sizes.back(), 1000);
    }
    return sizes;
}

TEST(sample_weight_test, estimates_are_unbiased) {
    const auto sizes = small_blocks(5);
    double bytes = 0;
    for (auto s : sizes) bytes += static_cast<double>(s);
    const accuracy a = simulate(sizes, 1000, 20000);
    // 20000 runs of ~5 samples: the mean's standard error is ~0.3% of the truth.
    EXPECT_NEAR(a.mean_bytes, bytes, 0.015 * bytes);
    EXPECT_NEAR(a.mean_count, static_cast<double>(sizes.size()), 0.015 * static_cast<double>(sizes.size()));
}

TEST(sample_weight_test, intervals_cover_the_truth_95_percent_of_the_time_even_with_few_samples) {
    for (double samples : {3.0, 5.0, 8.0, 30.0}) {
        const accuracy a = simulate(small_blocks(samples), 1000, 8000);
        EXPECT_GE(a.bytes_coverage, 0.925) << samples << " samples expected";
        EXPECT_LE(a.bytes_coverage, 0.985) << samples << " samples expected";
        // Counts mix weights (10.5 and 3.9 here), so a sample is less alike: ~90% at 3 samples.
        EXPECT_GE(a.count_coverage, 0.89) << samples << " samples expected";
        EXPECT_LE(a.count_coverage, 0.985) << samples << " samples expected";
    }
}

TEST(sample_weight_test, a_site_seen_once_or_twice_may_be_far_smaller) {
    // Sites expecting half a sample: the few runs that record one show it at ~1 interval's
    // worth; the interval must reach down to the truth (the score bound alone covered ~77%).
    for (double samples : {0.1, 0.5}) {
        const accuracy a = simulate(small_blocks(samples), 1000, 20000);
        EXPECT_GE(a.bytes_coverage, 0.9) << samples << " samples expected";
        EXPECT_GE(a.count_coverage, 0.9) << samples << " samples expected";
    }
    const interval95 once = confidence95(4096, 4096.0 * 4096);
    EXPECT_EQ(once.low, 0);
    EXPECT_GT(once.high, 4 * 4096);
}

TEST(sample_weight_test, the_interval_is_the_poisson_score_interval) {
    // n samples of c bytes: y = n c, v = n c^2; the interval is c (n + z^2/2 +- z sqrt(n + z^2/4)).
    const double z = 1.959963984540054, c = 4096;
    for (double n : {3.0, 4.0, 100.0}) {
        const interval95 i = confidence95(n * c, n * c * c);
        EXPECT_NEAR(i.low, c * (n + z * z / 2 - z * std::sqrt(n + z * z / 4)), 1e-6 * c);
        EXPECT_NEAR(i.high, c * (n + z * z / 2 + z * std::sqrt(n + z * z / 4)), 1e-6 * c);
        EXPECT_GE(i.low, 0);
        EXPECT_LT(i.low, n * c);
        EXPECT_GT(i.high, n * c);
    }
    // Many samples: close to y +- 1.96 sqrt(v).
    const interval95 big = confidence95(1e4 * c, 1e4 * c * c);
    EXPECT_NEAR(big.high - 1e4 * c, z * 100 * c, 0.02 * z * 100 * c);
    // Nothing random (a full trace, or blocks far above the interval): the estimate itself.
    const interval95 exact = confidence95(12345, 0);
    EXPECT_EQ(exact.low, 12345);
    EXPECT_EQ(exact.high, 12345);
}

}  // namespace
