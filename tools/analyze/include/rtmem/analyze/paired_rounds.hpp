// Timing two ways of running one program against each other, fairly on a noisy machine: they
// run in rounds, one of each per round (which goes first alternates), and the candidate counts
// as faster only when it beats the base in so many rounds that chance is unlikely (a one-sided
// sign test) and by a margin (the median of the per-round ratios). Drifts in machine speed hit
// both runs of a round alike, so they cancel in the ratio; a spell that hits one run costs one
// round, not the median. Used by `rtmem tune` (docs/advisor.md, "Tuning a plan by timing it").
#pragma once
#include <cstddef>
#include <span>

namespace rtmem::analyze {

struct paired_rule {
    std::size_t min_rounds = 5;   ///< no verdict before this many rounds
    std::size_t max_rounds = 15;  ///< undecided at this many: not faster
    /// The median candidate/base ratio must be <= 1 - margin. 5%: smaller gains on the input
    /// tuned on did not carry over to another (gawk: 0.95-0.97x on input A, 1.04-1.08x on B).
    double margin = 0.05;
    double alpha = 0.05;          ///< the sign test's one-sided significance level
};

struct paired_verdict {
    std::size_t rounds = 0;
    std::size_t wins = 0;     ///< rounds the candidate took less time than the base
    double median_ratio = 1;  ///< of candidate / base per round
    double p_value = 1;       ///< P(at least `wins` of `rounds` | a coin flip each round)
    bool faster = false;      ///< significant, and by the margin
    bool settled = false;     ///< no further round can change the verdict (or max reached)
};

/// P(X >= wins) for X ~ Binomial(rounds, 1/2).
[[nodiscard]] double sign_test_p(std::size_t wins, std::size_t rounds) noexcept;

/// The verdict on the rounds so far: base[i] and candidate[i] are round i's times (> 0; the
/// shorter span bounds the rounds). Settled when faster, when even winning every remaining
/// round up to max_rounds could not make it significant, or at max_rounds.
[[nodiscard]] paired_verdict judge_rounds(std::span<const double> base,
                                          std::span<const double> candidate,
                                          const paired_rule& rule) noexcept;

}  // namespace rtmem::analyze
