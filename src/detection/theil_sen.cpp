#include "detection/theil_sen.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detection/mann_kendall.h"
#include "detection/normal.h"
#include "detection/pairwise_slopes.h"
#include "detection/quantile.h"

namespace vw::detection {
std::optional<TheilSenResult> TheilSen(std::span<const double> x, std::span<const double> y, double confidence,
                                       double variance_factor) {
  const size_t n = y.size();
  if (x.size() != n || n < 2 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
  const PairwiseSlopes slopes(x, y);
  const size_t nt = slopes.pairs();  // every pair with x_j > x_i
  if (nt == 0) return std::nullopt;
  TheilSenResult r;
  r.pairs = nt;
  // Times in order (the engine's always are): their median is read, not selected.
  const bool x_increasing =
      std::adjacent_find(x.begin(), x.end(), [](double a, double b) { return !(a < b); }) == x.end();
  std::vector<double> ys(y.begin(), y.end());
  double median_x;
  if (x_increasing) {
    median_x = MedianOfSorted(x);
  } else {
    std::vector<double> xs(x.begin(), x.end());
    median_x = *Median(xs);
  }
  const double median_y = *Median(ys);

  const double z = NormalQuantile((1 - confidence) / 2);  // negative
  const double dn = static_cast<double>(n);
  const double sigsq = std::max(1.0, variance_factor) *
                       (dn * (dn - 1) * (2 * dn + 5) - (x_increasing ? 0 : KendallTieTerm(x)) - KendallTieTerm(y)) / 18;
  const auto ntd = static_cast<double>(nt);
  const size_t mid_lo = (nt - 1) / 2, mid_hi = nt / 2;
  if (!(sigsq >= 0)) {
    const size_t ranks[2] = {mid_lo, mid_hi};
    double at[2];
    slopes.Ranks(ranks, at);
    r.slope = (at[0] + at[1]) / 2;
    r.intercept = median_y - r.slope * median_x;
    r.low_slope = r.high_slope = std::nan("");
    return r;
  }
  const double sigma = std::sqrt(sigsq);
  // std::nearbyint rounds half to even under the default rounding mode, as numpy.round does.
  const double ru = std::min(std::nearbyint((ntd - z * sigma) / 2), ntd - 1);
  const double rl = std::max(std::nearbyint((ntd + z * sigma) / 2) - 1, 0.0);
  const auto lo = static_cast<size_t>(rl), hi = static_cast<size_t>(ru);
  // lo <= the middle <= hi (the min and max only keep the ranks in ascending order).
  const size_t ranks[4] = {std::min(lo, mid_lo), mid_lo, mid_hi, std::max(hi, mid_hi)};
  double at[4];
  slopes.Ranks(ranks, at);
  r.slope = (at[1] + at[2]) / 2;
  r.intercept = median_y - r.slope * median_x;
  r.low_slope = at[0];
  r.high_slope = at[3];
  return r;
}

}  // namespace vw::detection
