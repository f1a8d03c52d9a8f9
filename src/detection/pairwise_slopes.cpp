#include "detection/pairwise_slopes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "detection/quantile.h"

namespace vw::detection {
namespace {

constexpr size_t kSample = 1024;  // slopes kept per reservoir

// Calls f(slope) for every pair with x_j > x_i; with x in ascending order only j > i can be one.
template <class F>
void ForEachSlope(std::span<const double> x, std::span<const double> y, bool ascending, F&& f) {
  const size_t n = y.size();
  for (size_t i = 0; i < n; ++i) {
    const double xi = x[i], yi = y[i];
    for (size_t j = ascending ? i + 1 : 0; j < n; ++j) {
      const double dx = x[j] - xi;
      if (dx > 0) f((y[j] - yi) / dx);
    }
  }
}

// A uniform sample of at most kSample of the values offered to it (Algorithm R).
struct Reservoir {
  std::vector<double> values;
  size_t seen = 0;
  void Offer(double v, std::mt19937_64& rng) {
    ++seen;
    if (values.size() < kSample) {
      values.push_back(v);
    } else if (const size_t j = rng() % seen; j < kSample) {
      values[j] = v;
    }
  }
  void Clear() {
    values.clear();
    seen = 0;
  }
};

// The slope at rank r, found without holding more than max_held slopes. The bracket [low, high)
// always holds it: `below` slopes lie under low and `in` in the bracket, with below <= r <
// below + in. Each pass splits the bracket at three values of the bracket's sample (the one at
// r's expected place and two a few standard errors either side), counts each part and samples
// every part; the part holding r becomes the bracket. The middle value itself is checked for
// ties, so every pass removes at least that value and the loop ends.
double SlopeAtRank(std::span<const double> x, std::span<const double> y, bool ascending, size_t n_pairs, size_t r,
                   const std::vector<double>& all_sample, size_t max_held, std::mt19937_64& rng) {
  double low = -std::numeric_limits<double>::infinity(), high = std::numeric_limits<double>::infinity();
  size_t below = 0, in = n_pairs;
  std::vector<double> sample = all_sample;
  Reservoir parts[4];
  for (;;) {
    if (in <= max_held) {
      std::vector<double> held;
      held.reserve(in);
      ForEachSlope(x, y, ascending, [&](double s) {
        if (s >= low && s < high) held.push_back(s);
      });
      const size_t rank[1] = {r - below};
      double value[1];
      SelectRanks(held, rank, value);
      return value[0];
    }
    std::sort(sample.begin(), sample.end());
    const size_t m = sample.size();
    const auto at = [&](double q) { return static_cast<size_t>(std::clamp(q, 0.0, static_cast<double>(m - 1))); };
    const double place = (static_cast<double>(r - below) + 0.5) / static_cast<double>(in) * static_cast<double>(m);
    const double slack = 2 * std::sqrt(static_cast<double>(m));
    const double p1 = place - slack < 0 ? low : sample[at(place - slack)];
    const double v = sample[at(place)];
    double p3 = place + slack >= static_cast<double>(m) ? high : sample[at(place + slack)];
    // No part may hold v itself (so each pass removes it): the last part starts above it.
    if (p3 <= v) p3 = std::nextafter(v, std::numeric_limits<double>::infinity());
    // Parts: [low, p1), [p1, v), v itself, (v, p3), [p3, high).
    size_t c1 = 0, c2 = 0, eq = 0, c3 = 0;  // below p1, below v, equal to v, below p3 (within the bracket)
    for (Reservoir& p : parts) p.Clear();
    ForEachSlope(x, y, ascending, [&](double s) {
      if (s < low || s >= high) return;
      if (s < p1) {
        ++c1;
        parts[0].Offer(s, rng);
      } else if (s < v) {
        parts[1].Offer(s, rng);
      } else if (s == v) {
        ++eq;
      } else if (s < p3) {
        parts[2].Offer(s, rng);
      } else {
        parts[3].Offer(s, rng);
      }
      c2 += s < v ? 1 : 0;
      c3 += s < p3 ? 1 : 0;
    });
    const size_t k = r - below;
    if (k >= c2 && k < c2 + eq) return v;
    if (k < c1) {
      high = p1;
      in = c1;
      sample = parts[0].values;
    } else if (k < c2) {
      low = p1;
      high = v;
      below += c1;
      in = c2 - c1;
      sample = parts[1].values;
    } else if (k < c3) {
      low = std::nextafter(v, std::numeric_limits<double>::infinity());
      high = p3;
      below += c2 + eq;
      in = c3 - c2 - eq;
      sample = parts[2].values;
    } else {
      low = p3;
      below += c3;
      in -= c3;
      sample = parts[3].values;
    }
  }
}

}  // namespace

PairwiseSlopes::PairwiseSlopes(std::span<const double> x, std::span<const double> y)
    : x_(x), y_(y), ascending_(std::is_sorted(x.begin(), x.end())) {
  std::vector<double> copy;
  std::span<const double> sorted = x;
  if (!ascending_) {
    copy.assign(x.begin(), x.end());
    std::sort(copy.begin(), copy.end());
    sorted = copy;
  }
  const size_t n = sorted.size();
  pairs_ = n < 2 ? 0 : n * (n - 1) / 2;
  for (size_t i = 0; i < n;) {  // less the pairs within each run of equal x
    size_t j = i + 1;
    while (j < n && sorted[j] == sorted[i]) ++j;
    pairs_ -= (j - i) * (j - i - 1) / 2;
    i = j;
  }
}

void PairwiseSlopes::Ranks(std::span<const size_t> ranks, std::span<double> out, size_t max_held) const {
  if (ranks.empty()) return;
  if (max_held == 0) max_held = kMaterializedPairs;
  auto materialise = [&] {
    const std::unique_ptr<double[]> slopes(new double[pairs_]);  // the first m written below
    const size_t n = y_.size();
    size_t m = 0;  // slopes written
    if (ascending_ && pairs_ == (n < 2 ? 0 : n * (n - 1) / 2)) {
      // No two x equal: every j > i is a pair, written in place (a loop the compiler can run on
      // several pairs at once).
      double* at = slopes.get();
      for (size_t i = 0; i + 1 < n; ++i) {
        const double xi = x_[i], yi = y_[i];
        const double* xs = x_.data() + i + 1;
        const double* ys = y_.data() + i + 1;
        const size_t row = n - i - 1;
        for (size_t j = 0; j < row; ++j) at[j] = (ys[j] - yi) / (xs[j] - xi);
        at += row;
      }
      m = pairs_;
    } else {
      ForEachSlope(x_, y_, ascending_, [&](double s) { slopes[m++] = s; });
    }
    SelectRanks(std::span<double>(slopes.get(), m), ranks, out);
  };
  if (pairs_ <= max_held) return materialise();
  std::mt19937_64 rng(0x5eed);
  Reservoir all;
  bool finite = true;
  ForEachSlope(x_, y_, ascending_, [&](double s) {
    finite = finite && std::isfinite(s);
    all.Offer(s, rng);
  });
  // A slope beyond the range of double (a tiny step in x under a large one in y) fits no bracket:
  // such an input is selected among all its slopes.
  if (!finite) return materialise();
  for (size_t i = 0; i < ranks.size(); ++i) {
    out[i] = i > 0 && ranks[i] == ranks[i - 1]
                 ? out[i - 1]
                 : SlopeAtRank(x_, y_, ascending_, pairs_, ranks[i], all.values, max_held, rng);
  }
}

double PairwiseSlopes::Median() const {
  if (pairs_ == 0) return 0;
  const size_t ranks[2] = {(pairs_ - 1) / 2, pairs_ / 2};
  double at[2];
  Ranks(std::span<const size_t>(ranks, ranks[0] == ranks[1] ? 1 : 2), at);
  // As Median() interpolates, to the last bit.
  return ranks[0] == ranks[1] ? at[0] : at[0] + 0.5 * (at[1] - at[0]);
}

}  // namespace vw::detection
