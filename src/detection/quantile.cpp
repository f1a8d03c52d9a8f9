#include "detection/quantile.h"

#include <algorithm>
#include <cmath>

namespace vw::detection {

std::optional<double> Quantile(std::span<double> values, double q) {
  if (values.empty() || !(q >= 0 && q <= 1)) return std::nullopt;
  const double h = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  auto lo_it = values.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(values.begin(), lo_it, values.end());
  const double lo_value = *lo_it;
  const double frac = h - static_cast<double>(lo);
  if (frac == 0 || lo + 1 >= values.size()) return lo_value;
  // The next order statistic is the smallest value above position lo.
  const double hi_value = *std::min_element(lo_it + 1, values.end());
  return lo_value + frac * (hi_value - lo_value);
}

std::optional<double> Median(std::span<double> values) {
  return Quantile(values, 0.5);
}

}  // namespace vw::detection
