#include "detection/mann_kendall.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "detection/lagged_product.h"
#include "detection/normal.h"
#include "detection/pairwise_slopes.h"
#include "detection/quantile.h"

namespace vw::detection {
namespace {

// Ranks 1..n with ties given their average rank (scipy.stats.rankdata's default). The values are
// sorted with their indices beside them (a rank depends only on the value, so the order among
// equal values does not matter).
std::vector<double> AverageRanks(std::span<const double> y) {
  std::vector<std::pair<double, size_t>> order(y.size());
  for (size_t i = 0; i < y.size(); ++i) order[i] = {y[i], i};
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> ranks(y.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && order[j].first == order[i].first) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) ranks[order[k].second] = rank;
    i = j;
  }
  return ranks;
}

// Sen's slope over the index: median of (y_j − y_i)/(j − i), i < j.
double IndexSenSlope(std::span<const double> y) {
  std::vector<double> x(y.size());
  std::iota(x.begin(), x.end(), 0.0);
  return PairwiseSlopes(x, y).Median();
}

double HamedRaoFactor(std::span<const double> y, const MannKendallOptions& o) {
  const double acf_alpha = o.acf_alpha;
  const size_t n = y.size();
  std::vector<double> detrended(n);
  if (o.detrend_x.size() == n && std::isfinite(o.detrend_slope)) {
    for (size_t i = 0; i < n; ++i) detrended[i] = y[i] - o.detrend_slope * o.detrend_x[i];
  } else {
    const double slope = IndexSenSlope(y);
    for (size_t i = 0; i < n; ++i) detrended[i] = y[i] - static_cast<double>(i + 1) * slope;
  }
  std::vector<double> ranks = AverageRanks(detrended);
  const double mean = std::accumulate(ranks.begin(), ranks.end(), 0.0) / static_cast<double>(n);
  for (double& r : ranks) r -= mean;
  double acov0 = 0;
  for (double r : ranks) acov0 += r * r;
  if (acov0 <= 0) return 1;  // every rank equal: no autocorrelation to speak of
  const double dn = static_cast<double>(n);
  const double bound = NormalQuantile(1 - acf_alpha / 2) / std::sqrt(dn);
  double sum = 0;
  for (size_t k = 1; k < n; ++k) {
    const double acov = LaggedProduct(ranks, k);
    const double rho = acov / acov0;
    if (rho <= bound && rho >= -bound) continue;
    const double m = static_cast<double>(n - k);
    sum += m * (m - 1) * (m - 2) * rho;
  }
  return 1 + 2 / (dn * (dn - 1) * (dn - 2)) * sum;
}

// S = Σ_{i<j} sign(y_j − y_i). Each row's signs are summed in four running sums of doubles (exact:
// integers far below 2^53), which the compiler runs on several pairs at once; one integer sum per
// row ran a pair at a time, about 2.4 times slower on 120 values.
long long KendallS(std::span<const double> y) {
  const size_t n = y.size();
  long long s = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double yi = y[i];
    double part[4] = {0, 0, 0, 0};
    size_t j = i + 1;
    for (; j + 4 <= n; j += 4) {
      for (size_t l = 0; l < 4; ++l) part[l] += static_cast<double>(y[j + l] > yi) - static_cast<double>(y[j + l] < yi);
    }
    double row = (part[0] + part[1]) + (part[2] + part[3]);
    for (; j < n; ++j) row += static_cast<double>(y[j] > yi) - static_cast<double>(y[j] < yi);
    s += static_cast<long long>(row);
  }
  return s;
}

}  // namespace

std::optional<MannKendallResult> EngineMannKendall(std::span<const double> y, double upward_alpha) {
  return MannKendall(y, {.correction = AutocorrelationCorrection::kHamedRao,
                         .never_shrink_variance = true,
                         .upward_alpha = upward_alpha});
}

double KendallTieTerm(std::span<const double> values) {
  // Strictly increasing (the times of a series): no two equal, nothing to sort.
  if (std::adjacent_find(values.begin(), values.end(), [](double a, double b) { return !(a < b); }) == values.end()) {
    return 0;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  double term = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const auto t = static_cast<double>(j - i);
    term += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  return term;
}

namespace {

// z with the continuity correction, and its two-sided p, from S and Var(S).
void SetZ(MannKendallResult& r) {
  if (r.var_s <= 0 || r.s == 0) {
    r.z = 0;
    r.p = 1;
    return;
  }
  r.z = (r.s > 0 ? r.s - 1 : r.s + 1) / std::sqrt(r.var_s);
  r.p = TwoSidedP(r.z);
}

// The Hamed–Rao correction of r (S and Var(S) without it, of y): Var(S) times the factor, then z.
void Correct(MannKendallResult& r, std::span<const double> y, const MannKendallOptions& options) {
  r.variance_factor = HamedRaoFactor(y, options);
  if (options.never_shrink_variance) r.variance_factor = std::max(1.0, r.variance_factor);
  r.var_s *= r.variance_factor;
  r.corrected = true;
  SetZ(r);
}

}  // namespace

std::optional<MannKendallResult> MannKendall(std::span<const double> y, const MannKendallOptions& options) {
  const size_t n = y.size();
  if (n < 3) return std::nullopt;
  for (double v : y)
    if (!std::isfinite(v)) return std::nullopt;
  MannKendallResult r;
  r.n = n;
  r.s = static_cast<double>(KendallS(y));
  const double dn = static_cast<double>(n);
  r.var_s = (dn * (dn - 1) * (2 * dn + 5) - KendallTieTerm(y)) / 18;
  r.tau = r.s / (0.5 * dn * (dn - 1));
  if (options.correction != AutocorrelationCorrection::kHamedRao) {
    SetZ(r);
    return r;
  }
  if (options.never_shrink_variance && options.upward_alpha > 0) {
    SetZ(r);
    if (!(r.z > 0 && r.p <= options.upward_alpha)) return r;  // fails with any factor >= 1
  }
  Correct(r, y, options);
  return r;
}

MannKendallResult WithEngineCorrection(const MannKendallResult& plain, std::span<const double> y,
                                       std::span<const double> detrend_x, double detrend_slope) {
  MannKendallResult r = plain;
  Correct(r, y,
          {.correction = AutocorrelationCorrection::kHamedRao,
           .never_shrink_variance = true,
           .detrend_x = detrend_x,
           .detrend_slope = detrend_slope});
  return r;
}

}  // namespace vw::detection
