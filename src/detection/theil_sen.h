// Theil–Sen regression: Sen's slope (median of pairwise slopes) and its rank-based confidence
// interval (Sen 1968, eq. 2.6; Gilbert 1987 §16.5), computed exactly as scipy.stats.theilslopes
// does: slopes over pairs with x_j > x_i; interval = the sorted slopes at ranks
// round((N ± z·σ)/2) with σ² = [n(n−1)(2n+5) − Σ_x-ties − Σ_y-ties t(t−1)(2t+5)]/18 and
// round-half-to-even; intercept = median(y) − slope·median(x) (scipy's method="separate").
//
// Units: whatever x and y carry (the engine uses seconds and bytes, so slopes are bytes/second).
// Cost: O(n²) time for the n(n−1)/2 slopes, selection instead of a sort; O(n) memory beyond
// kMaterializedPairs slopes (pairwise_slopes.h).
// Pure function, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace vw::detection {

struct TheilSenResult {
  double slope = 0;       // Sen's slope
  double intercept = 0;   // median(y) − slope·median(x)
  double low_slope = 0;   // lower end of the interval
  double high_slope = 0;  // upper end
  size_t pairs = 0;       // number of pairwise slopes (pairs with distinct x)
};

// `confidence` in (0, 1), e.g. 0.90. `variance_factor` (>= 1) multiplies σ² for serially
// correlated data (the engine passes the Hamed–Rao factor n/n* of the same points, so the interval
// widens like the trend test's variance); 1 gives scipy's numbers. nullopt when x and y differ in
// length, have fewer than 2 points, hold a non-finite value, or every x is equal.
std::optional<TheilSenResult> TheilSen(std::span<const double> x, std::span<const double> y, double confidence = 0.95,
                                       double variance_factor = 1);

}  // namespace vw::detection
