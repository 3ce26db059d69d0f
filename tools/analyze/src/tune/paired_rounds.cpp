#include "rtmem/analyze/paired_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "rtmem/analyze/spread.hpp"

namespace rtmem::analyze {

double sign_test_p(std::size_t wins, std::size_t rounds) noexcept {
    if (wins == 0) return 1;
    if (wins > rounds) return 0;
    // Sum of C(rounds, k) / 2^rounds for k >= wins, in logs (rounds may be large).
    double p = 0;
    for (std::size_t k = wins; k <= rounds; ++k)
        p += std::exp(std::lgamma(static_cast<double>(rounds) + 1) -
                      std::lgamma(static_cast<double>(k) + 1) -
                      std::lgamma(static_cast<double>(rounds - k) + 1) -
                      static_cast<double>(rounds) * std::log(2.0));
    return std::min(p, 1.0);
}

paired_verdict judge_rounds(std::span<const double> base, std::span<const double> candidate,
                            const paired_rule& rule) noexcept {
    paired_verdict v;
    v.rounds = std::min(base.size(), candidate.size());
    if (v.rounds == 0) return v;
    std::vector<double> ratios;
    ratios.reserve(v.rounds);
    for (std::size_t i = 0; i < v.rounds; ++i) {
        if (candidate[i] < base[i]) ++v.wins;
        ratios.push_back(base[i] > 0 ? candidate[i] / base[i] : 1.0);
    }
    v.median_ratio = median(std::move(ratios));
    v.p_value = sign_test_p(v.wins, v.rounds);
    const std::size_t last = std::max(rule.max_rounds, rule.min_rounds);
    if (v.rounds < rule.min_rounds) return v;
    v.faster = v.p_value <= rule.alpha && v.median_ratio <= 1 - rule.margin;
    const std::size_t left = v.rounds < last ? last - v.rounds : 0;
    const bool hopeless = sign_test_p(v.wins + left, v.rounds + left) > rule.alpha;
    v.settled = v.faster || hopeless || v.rounds >= last;
    return v;
}

}  // namespace rtmem::analyze
