#include "baselines.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "core/units.h"

namespace vw::evaluate {
namespace {

constexpr double kTotal = 80 * kGiB;

// A series scraped every 15 s from 0 to `end_s`, value from `bytes(t)`.
std::vector<ScrapedSample> Series(double end_s, const std::function<double(double)>& bytes) {
  std::vector<ScrapedSample> out;
  for (double t = 0; t <= end_s; t += 15) out.push_back({t, bytes(t)});
  return out;
}

size_t Rule(BaselineRule r) {
  return static_cast<size_t>(r);
}

// Time of the first evaluation at which `rule` fires, if any.
std::optional<double> FirstFiring(const BaselineTimeline& tl, BaselineRule rule) {
  for (size_t k = 0; k < tl.eval_t.size(); ++k) {
    if (tl.firing[Rule(rule)][k]) return tl.eval_t[k];
  }
  return std::nullopt;
}

TEST(Baselines, StaticRuleFiresAt91PercentAfterItsForClause) {
  const auto tl = EvaluateBaselines(Series(1200, [](double) { return 0.91 * kTotal; }), kTotal);
  ASSERT_FALSE(tl.eval_t.empty());
  EXPECT_EQ(tl.eval_t.front(), 0);
  EXPECT_TRUE(tl.condition[Rule(BaselineRule::kStatic90)].front());
  // Pending from 0 s, firing once the condition has held for 5 minutes.
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kStatic90), 300);
  EXPECT_TRUE(tl.firing[Rule(BaselineRule::kStatic90)].back());
}

TEST(Baselines, StaticRuleStaysQuietAt89Percent) {
  const auto tl = EvaluateBaselines(Series(7200, [](double) { return 0.89 * kTotal; }), kTotal);
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kStatic90), std::nullopt);
  // A constant series has slope 0: neither deriv rule holds.
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kDerivPositive), std::nullopt);
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kPredictLinear24h), std::nullopt);
}

TEST(Baselines, ForClauseIgnoresAConditionShorterThanFiveMinutes) {
  auto burst = [](double len) {
    return [len](double t) { return (t >= 600 && t < 600 + len) ? 0.95 * kTotal : 0.5 * kTotal; };
  };
  EXPECT_EQ(FirstFiring(EvaluateBaselines(Series(3600, burst(240)), kTotal), BaselineRule::kStatic90), std::nullopt);
  EXPECT_EQ(FirstFiring(EvaluateBaselines(Series(3600, burst(420)), kTotal), BaselineRule::kStatic90), 900);
}

TEST(Baselines, TrendRulesWaitForTrendStartButTheStaticRuleDoesNot) {
  PromConfig late;
  late.trend_start_s = 4000;
  const auto tl =
      EvaluateBaselines(Series(7200, [](double t) { return 0.95 * kTotal + 0.1 * kMiB * t; }), kTotal, late);
  ASSERT_FALSE(tl.eval_t.empty());
  EXPECT_EQ(tl.eval_t.front(), 0);
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kStatic90), 300);
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kDerivPositive), 4320);  // first true at 4020, for: 5m
}

TEST(Baselines, LeastSquaresRecoversAKnownLine) {
  const double slope = 0.25 * kMiB;  // bytes per second
  const auto s = Series(3600, [&](double t) { return 10 * kGiB + slope * t; });
  const auto fit = FitLeastSquares(s, 3600);
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->slope / slope, 1.0, 1e-9);
  EXPECT_NEAR(fit->intercept, 10 * kGiB + slope * 3600, 1.0);  // the line's value at `at`
  EXPECT_FALSE(FitLeastSquares(std::vector<ScrapedSample>{{0, 1}}, 0).has_value()) << "needs two samples";
}

TEST(Baselines, PredictLinearFiresWhenTheLineWouldReachTheCardWithin24Hours) {
  // 40 GiB + 0.4 MiB/s: at τ the forecast is 40960 + 0.4·(τ + 86400) MiB, above 81920 MiB once
  // τ > 16000 s: first true at the 16020 s evaluation, firing 5 minutes later.
  const auto s = Series(20000, [](double t) { return 40 * kGiB + 0.4 * kMiB * t; });
  const auto tl = EvaluateBaselines(s, kTotal);
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kPredictLinear24h), 16320);
  // The deriv > 0 rule fires as soon as two samples exist and for: has passed.
  EXPECT_EQ(FirstFiring(tl, BaselineRule::kDerivPositive), 360);
}

TEST(Baselines, DerivThresholdIsOnePercentOfTheCardPerHour) {
  // 1 % of 80 GiB per hour is 819.2 MiB/h.
  const auto slow = EvaluateBaselines(Series(7200, [](double t) { return 20 * kGiB + 400 * kMiB * t / 3600; }), kTotal);
  EXPECT_TRUE(FirstFiring(slow, BaselineRule::kDerivPositive).has_value());
  EXPECT_EQ(FirstFiring(slow, BaselineRule::kDerivOnePercentPerHour), std::nullopt);
  const auto fast =
      EvaluateBaselines(Series(7200, [](double t) { return 20 * kGiB + 1000 * kMiB * t / 3600; }), kTotal);
  EXPECT_EQ(FirstFiring(fast, BaselineRule::kDerivOnePercentPerHour), 360);
}

TEST(Baselines, DerivForgetsAStepOnceItLeavesTheOneHourRange) {
  const auto s = Series(9000, [](double t) { return t < 1000 ? 10 * kGiB : 30 * kGiB; });
  const auto tl = EvaluateBaselines(s, kTotal);
  const auto at = [&](double tau) {
    for (size_t k = 0; k < tl.eval_t.size(); ++k) {
      if (tl.eval_t[k] == tau) return static_cast<bool>(tl.condition[Rule(BaselineRule::kDerivPositive)][k]);
    }
    ADD_FAILURE() << "no evaluation at " << tau;
    return false;
  };
  EXPECT_TRUE(at(1980));   // the step is inside [τ − 1h, τ]
  EXPECT_TRUE(at(4560));   // the range [960, 4560] still holds three samples from before the step
  EXPECT_FALSE(at(4620));  // [1020, 4620] is flat: the step is forgotten
}

TEST(Baselines, ScrapeTakesTheSampleNearestEachScrapeTime) {
  std::vector<int32_t> mib(20);
  for (size_t i = 0; i < mib.size(); ++i) mib[i] = static_cast<int32_t>(100 + i);
  const auto s = ScrapeUniform(mib, 4.0, 15.0);  // samples at 0, 4, ..., 76 s
  ASSERT_EQ(s.size(), 6u);                       // scrapes at 0, 15, ..., 75
  EXPECT_EQ(s[0].bytes, 100 * kMiB);
  EXPECT_EQ(s[1].t, 15);
  EXPECT_EQ(s[1].bytes, 104 * kMiB);  // 16 s is nearest to 15 s
  EXPECT_EQ(s[2].bytes, 108 * kMiB);  // 30 s: 28 and 32 tie; the later sample wins
  EXPECT_EQ(s[5].bytes, 119 * kMiB);  // 75 s -> 76 s

  const std::vector<double> t = {0, 7, 16, 29, 31, 100};
  const std::vector<double> v = {1, 2, 3, 4, 5, 6};
  const auto g = Scrape(t, v, 15.0);
  ASSERT_EQ(g.size(), 3u) << "scrapes at 45..90 s find no sample within 7.5 s and are missed";
  EXPECT_EQ(g[0].bytes, 1);
  EXPECT_EQ(g[1].bytes, 3);
  EXPECT_EQ(g[2].bytes, 5);
}

}  // namespace
}  // namespace vw::evaluate
