// The sum of products of a series with itself shifted by a lag, the core of an autocovariance:
// the Hamed–Rao correction's rank autocorrelations and the load cycle's autocorrelation.
//
// Pure function, thread-safe. Units: the square of x's.
#pragma once

#include <cstddef>
#include <span>

namespace vw::detection {

// Σ x[i]·x[i + lag] over i + lag < x.size(); 0 when lag >= x.size(). Four running sums, added at
// the end ((s0 + s1) + (s2 + s3)), so the products do not wait on one chain of additions: the
// result may differ from a plain left-to-right sum in the last bits.
inline double LaggedProduct(std::span<const double> x, size_t lag) {
  const size_t n = x.size();
  double part[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 3 + lag < n; i += 4) {
    part[0] += x[i] * x[i + lag];
    part[1] += x[i + 1] * x[i + 1 + lag];
    part[2] += x[i + 2] * x[i + 2 + lag];
    part[3] += x[i + 3] * x[i + 3 + lag];
  }
  for (; i + lag < n; ++i) part[0] += x[i] * x[i + lag];
  return (part[0] + part[1]) + (part[2] + part[3]);
}

}  // namespace vw::detection
