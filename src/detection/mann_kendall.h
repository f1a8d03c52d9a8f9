// Mann–Kendall trend test with tie correction and the Hamed–Rao (1998) autocorrelation correction.
//
// S = sum over i<j of sign(y_j − y_i). Var(S) uses the tie correction
// [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18 over groups of equal values. The Hamed–Rao correction
// multiplies Var(S) by n/n* = 1 + 2/(n(n−1)(n−2)) Σ_k (n−k)(n−k−1)(n−k−2) ρ_k, where ρ_k is the
// lag-k autocorrelation of the ranks of the series detrended by Sen's slope (slope over the index),
// summed over the lags whose ρ_k lies outside ±z_{1−acf_alpha/2}/√n. With the default options the
// numbers equal pymannkendall's hamed_rao_modification_test(y, alpha=acf_alpha) (and original_test
// with kNone); ties are exact equality of doubles. z uses the continuity correction (S ∓ 1).
//
// Cost: O(n²) time, O(n) memory (n ≤ a few hundred points in the engine).
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace vw::detection {

enum class AutocorrelationCorrection { kNone, kHamedRao };

struct MannKendallOptions {
  AutocorrelationCorrection correction = AutocorrelationCorrection::kHamedRao;
  double acf_alpha = 0.05;  // significance level that selects the autocorrelation lags
  // When true the correction may only inflate Var(S) (factor clamped to >= 1): the engine's choice,
  // so that negative autocorrelation never makes a trend look more significant.
  bool never_shrink_variance = false;
  // When in (0, 1) (with never_shrink_variance), the correction is computed only when the test
  // without it finds an upward trend at this level (z > 0, p ≤ upward_alpha). A correction that
  // may only inflate Var(S) only lowers z and raises p, so a result that fails there fails every
  // test of z > 0 and p at or below upward_alpha with the correction too; a caller that reads
  // nothing else of a failing result skips the detrending's O(n²) pairwise slopes. Such a result
  // has `corrected` false and holds the numbers without the correction.
  double upward_alpha = 0;
  // When detrend_x holds one value per y, the Hamed–Rao correction ranks y_i − detrend_slope·x_i
  // instead of the series detrended by Sen's slope over the index (what pymannkendall does). The
  // engine's windows pass their times and the Sen's slope over them that they fit anyway: for
  // evenly spaced times that is the index's slope over the spacing, and the ranks are the same;
  // across a gap in the times it is the right line. Any other length, or a slope that is not
  // finite: the index's slope.
  std::span<const double> detrend_x;
  double detrend_slope = 0;
};

struct MannKendallResult {
  size_t n = 0;
  double s = 0;                // Mann–Kendall S
  double var_s = 0;            // Var(S), tie-corrected and (if chosen) autocorrelation-corrected
  double variance_factor = 1;  // n/n* applied to Var(S) (1 without a correction)
  bool corrected = false;      // whether the autocorrelation correction was applied
  double tau = 0;              // Kendall's tau-a: S / (n(n−1)/2)
  double z = 0;                // standardised statistic
  double p = 1;                // two-sided p-value
};

// nullopt for fewer than 3 points or any non-finite value.
std::optional<MannKendallResult> MannKendall(std::span<const double> y, const MannKendallOptions& options = {});

// The engine's trend test: MannKendall with the Hamed–Rao correction that may only inflate Var(S)
// (never_shrink_variance), and that correction skipped where the test without it finds no upward
// trend at upward_alpha (0: always computed; see MannKendallOptions::upward_alpha).
std::optional<MannKendallResult> EngineMannKendall(std::span<const double> y, double upward_alpha = 0);

// The engine's correction applied to `plain`, a result of MannKendall(y, {.correction = kNone}) on
// the same y: the Hamed–Rao factor, never below 1, with the detrending given. The numbers are
// those of MannKendall(y, {kHamedRao, never_shrink_variance, detrend_x, detrend_slope}), without
// computing S and its tie term again.
MannKendallResult WithEngineCorrection(const MannKendallResult& plain, std::span<const double> y,
                                       std::span<const double> detrend_x, double detrend_slope);

// The tie correction of Kendall's S variance: Σ t(t−1)(2t+5) over groups of t equal values.
// Shared with Sen's slope interval (theil_sen.cpp).
double KendallTieTerm(std::span<const double> values);

}  // namespace vw::detection
