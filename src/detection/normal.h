// Standard normal distribution: CDF and quantile (inverse CDF), for the trend test's p-values and
// the slope interval's ranks.
//
// Pure functions, thread-safe. Accuracy: NormalCdf to double precision (via erfc); NormalQuantile
// to about 1e-15 relative (rational approximation refined by one Halley step).
#pragma once

namespace vw::detection {

// P(Z <= x) for Z ~ N(0, 1).
double NormalCdf(double x);

// x such that NormalCdf(x) == p, for 0 < p < 1; -inf at p == 0, +inf at p == 1, NaN outside [0, 1].
double NormalQuantile(double p);

// Two-sided p-value of a standard normal statistic: 2 * P(Z > |z|).
double TwoSidedP(double z);

}  // namespace vw::detection
