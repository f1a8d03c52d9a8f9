#include "detection/theil_sen.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detection/normal.h"
#include "detection/quantile.h"

namespace vw::detection {
namespace {

double TieTerm(std::span<const double> v) {
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  double term = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const auto t = static_cast<double>(j - i);
    if (t > 1) term += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  return term;
}

double Select(std::vector<double>& v, size_t k) {
  auto it = v.begin() + static_cast<std::ptrdiff_t>(k);
  std::nth_element(v.begin(), it, v.end());
  return *it;
}

}  // namespace

std::optional<TheilSenResult> TheilSen(std::span<const double> x, std::span<const double> y, double confidence,
                                       double variance_factor) {
  const size_t n = y.size();
  if (x.size() != n || n < 2 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
  std::vector<double> slopes;
  slopes.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const double dx = x[j] - x[i];
      if (dx > 0) slopes.push_back((y[j] - y[i]) / dx);
    }
  }
  if (slopes.empty()) return std::nullopt;
  TheilSenResult r;
  r.pairs = slopes.size();
  r.slope = *Median(slopes);
  std::vector<double> xs(x.begin(), x.end()), ys(y.begin(), y.end());
  r.intercept = *Median(ys) - r.slope * *Median(xs);

  const double z = NormalQuantile((1 - confidence) / 2);  // negative
  const double dn = static_cast<double>(n);
  const double sigsq = std::max(1.0, variance_factor) * (dn * (dn - 1) * (2 * dn + 5) - TieTerm(x) - TieTerm(y)) / 18;
  const auto nt = static_cast<double>(slopes.size());
  if (!(sigsq >= 0)) {
    r.low_slope = r.high_slope = std::nan("");
    return r;
  }
  const double sigma = std::sqrt(sigsq);
  // std::nearbyint rounds half to even under the default rounding mode, as numpy.round does.
  const double ru = std::min(std::nearbyint((nt - z * sigma) / 2), nt - 1);
  const double rl = std::max(std::nearbyint((nt + z * sigma) / 2) - 1, 0.0);
  r.low_slope = Select(slopes, static_cast<size_t>(std::max(rl, 0.0)));
  r.high_slope = Select(slopes, static_cast<size_t>(std::max(ru, 0.0)));
  return r;
}

}  // namespace vw::detection
