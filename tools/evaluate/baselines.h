// Baselines: the alert rules people write for GPU memory in Prometheus, computed on a trace the
// way a Prometheus server would, so the leak detector can be compared with them on the same data.
//
// Pipeline: the series is scraped every scrape_s (at each multiple of scrape_s the sample nearest
// in time is taken; a scrape with no sample within scrape_s/2 is missed), rules are evaluated every
// eval_s, and an alert fires once its condition has held at every evaluation for `for_s` (the
// `for:` clause; we use `for: 5m` for all four rules, as the node and kubernetes mixins do for
// their fill-up rules). The four rules, with used and total in bytes:
//   static_90pct        used > 0.9 * total                      (instant value, 5 min lookback)
//   predict_linear_24h  predict_linear(used[1h], 24h) > total
//   deriv_gt_0          deriv(used[1h]) > 0
//   deriv_gt_1pct_h     deriv(used[1h]) > 0.01 * total / 3600    (1 % of the card per hour)
// deriv and predict_linear are the least-squares line over the samples in [τ − 1h, τ], as Prometheus
// computes them (slope per second; predict_linear = the line's value at τ plus slope · 24 h); with
// fewer than two samples in the range there is no value and the condition is false.
//
// Units: seconds and bytes. Threading: free functions, no shared state.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace vw::evaluate {

enum class BaselineRule { kStatic90, kPredictLinear24h, kDerivPositive, kDerivOnePercentPerHour };
inline constexpr size_t kBaselineCount = 4;
inline constexpr std::array<BaselineRule, kBaselineCount> kAllBaselines = {
    BaselineRule::kStatic90, BaselineRule::kPredictLinear24h, BaselineRule::kDerivPositive,
    BaselineRule::kDerivOnePercentPerHour};
std::string_view BaselineName(BaselineRule rule);  // "static_90pct", "predict_linear_24h", ...

struct PromConfig {
  double scrape_s = 15;      // scrape interval
  double eval_s = 60;        // rule evaluation interval
  double range_s = 3600;     // the [1h] range of deriv / predict_linear
  double for_s = 300;        // the for: clause of every rule
  double horizon_s = 86400;  // predict_linear's look-ahead
  double lookback_s = 300;   // instant-vector lookback (staleness)
  // The three trend rules are held false before this time (seconds from the first sample), as if
  // silenced. The evaluation sets it to the end of the job's warm-up plus range_s, so that their
  // [1h] range never holds the job start: otherwise every warm-up ramp trips them. The static rule
  // is not held. vramwatch gets no such grace: it has to recognise warm-up itself.
  double trend_start_s = 0;
};

struct ScrapedSample {
  double t = 0;      // seconds
  double bytes = 0;  // used memory
};

// Scrapes a series sampled every interval_s from t = 0 (values in MiB) at 0, scrape_s, 2·scrape_s...
std::vector<ScrapedSample> ScrapeUniform(std::span<const int32_t> used_mib, double interval_s, double scrape_s);
// The same for an arbitrary series (times non-decreasing, seconds; values bytes).
std::vector<ScrapedSample> Scrape(std::span<const double> t, std::span<const double> bytes, double scrape_s);

// Least squares over a range, with x measured from `at` (Prometheus' linearRegression).
struct LinearFit {
  double slope = 0;      // bytes per second
  double intercept = 0;  // the line's value at `at`
};
std::optional<LinearFit> FitLeastSquares(std::span<const ScrapedSample> samples, double at);

// The state of every rule at each evaluation time 0, eval_s, 2·eval_s, ... up to the last scrape.
struct BaselineTimeline {
  std::vector<double> eval_t;                               // seconds
  std::array<std::vector<bool>, kBaselineCount> condition;  // the expression is true
  std::array<std::vector<bool>, kBaselineCount> firing;     // alert firing (after for:)
};
BaselineTimeline EvaluateBaselines(std::span<const ScrapedSample> scraped, double total_bytes,
                                   const PromConfig& config = {});

}  // namespace vw::evaluate
