// rtmem tune's verdict on paired timing rounds: significance by the sign test, the margin by
// the median ratio, and when no further round can change the answer.
#include <gtest/gtest.h>

#include <vector>

#include "rtmem/analyze/paired_rounds.hpp"

namespace rtmem::analyze {
namespace {

TEST(PairedRounds, SignTestMatchesTheBinomialTail) {
    EXPECT_DOUBLE_EQ(sign_test_p(0, 9), 1.0);
    EXPECT_NEAR(sign_test_p(5, 5), 1.0 / 32, 1e-12);
    EXPECT_NEAR(sign_test_p(8, 9), 10.0 / 512, 1e-12);  // C(9,8) + C(9,9)
    EXPECT_NEAR(sign_test_p(12, 15), 576.0 / 32768, 1e-12);
    EXPECT_NEAR(sign_test_p(11, 15), 1941.0 / 32768, 1e-12);
}

TEST(PairedRounds, NoVerdictBeforeTheMinimumRounds) {
    const std::vector<double> base{1, 1, 1, 1}, fast{0.5, 0.5, 0.5, 0.5};
    const auto v = judge_rounds(base, fast, {});
    EXPECT_EQ(v.rounds, 4u);
    EXPECT_EQ(v.wins, 4u);
    EXPECT_FALSE(v.faster);
    EXPECT_FALSE(v.settled);
}

TEST(PairedRounds, FasterInEveryRoundIsSettledAtTheMinimum) {
    const std::vector<double> base{1.0, 1.2, 0.9, 1.1, 1.0}, fast{0.8, 1.0, 0.7, 0.9, 0.8};
    const auto v = judge_rounds(base, fast, {});
    EXPECT_TRUE(v.faster);
    EXPECT_TRUE(v.settled);
    EXPECT_NEAR(v.median_ratio, 0.8, 0.03);
}

TEST(PairedRounds, WinningByLessThanTheMarginIsNotFaster) {
    std::vector<double> base(15, 1.0), close(15, 0.97);
    const auto v = judge_rounds(base, close, {});
    EXPECT_EQ(v.wins, 15u);
    EXPECT_LT(v.p_value, 0.001);
    EXPECT_FALSE(v.faster);  // 0.97 > 1 - 0.05
    EXPECT_TRUE(v.settled);  // the maximum
    paired_rule loose;
    loose.margin = 0.02;
    EXPECT_TRUE(judge_rounds(base, close, loose).faster);
}

TEST(PairedRounds, ASlowSpellInOneRoundDoesNotDecide) {
    // One round whose base run was hit by load gives the candidate one win, not the verdict.
    const std::vector<double> base{1, 1, 3, 1, 1, 1, 1};
    const std::vector<double> same{1.05, 1.04, 1.0, 1.06, 1.03, 1.05, 1.02};
    const auto v = judge_rounds(base, same, {});
    EXPECT_EQ(v.wins, 1u);
    EXPECT_FALSE(v.faster);
    EXPECT_GT(v.median_ratio, 1.0);
}

TEST(PairedRounds, SettlesAsSoonAsSignificanceIsOutOfReach) {
    // With at most 15 rounds, 12 wins are needed (11 of 15: p = 0.059): four losses settle it.
    paired_rule rule;
    std::vector<double> base, cand;
    for (int i = 0; i < 7; ++i) {
        base.push_back(1);
        cand.push_back(i < 3 ? 0.9 : 1.1);  // three wins, then losses
        const auto v = judge_rounds(base, cand, rule);
        EXPECT_EQ(v.settled, base.size() >= 7) << base.size() << " rounds";
        EXPECT_FALSE(v.faster);
    }
}

TEST(PairedRounds, UndecidedAtTheMaximumIsNotFaster) {
    paired_rule rule;
    rule.max_rounds = 6;
    const std::vector<double> base{1, 1, 1, 1, 1, 1}, cand{0.9, 0.9, 0.9, 0.9, 0.9, 1.1};
    const auto v = judge_rounds(base, cand, rule);
    EXPECT_EQ(v.wins, 5u);
    EXPECT_GT(v.p_value, 0.05);  // 7/64
    EXPECT_FALSE(v.faster);
    EXPECT_TRUE(v.settled);
}

}  // namespace
}  // namespace rtmem::analyze
