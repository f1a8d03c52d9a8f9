// The pairwise slopes' order statistics against a sort of all of them: materialised, and through
// the bracketing path that holds only O(n) of them (forced on small inputs, and for real on one
// input past kMaterializedPairs).
#include "detection/pairwise_slopes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace vw::detection {
namespace {

std::vector<double> AllSlopes(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> s;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < x.size(); ++j)
      if (x[j] > x[i]) s.push_back((y[j] - y[i]) / (x[j] - x[i]));
  std::sort(s.begin(), s.end());
  return s;
}

size_t Pairs(std::vector<double> x) {
  const std::vector<double> y(x.size(), 0.0);
  return PairwiseSlopes(x, y).pairs();
}

TEST(PairwiseSlopes, CountsPairsWithDistinctX) {
  EXPECT_EQ(Pairs({}), 0u);
  EXPECT_EQ(Pairs({1}), 0u);
  EXPECT_EQ(Pairs({1, 2, 3, 4}), 6u);
  EXPECT_EQ(Pairs({3, 1, 3, 2, 1}), 8u);  // 10 pairs less (1,1) and (3,3)
  EXPECT_EQ(Pairs({5, 5, 5}), 0u);
}

TEST(PairwiseSlopes, EveryPathGivesTheSortedSlopesExactly) {
  // Noise, a ramp with whole-MiB ties, y all equal (every slope 0), x with ties and out of order,
  // a few outliers, and a slow rise under a cycle of 30 points (a swinging floor: its slopes, row
  // after row, repeat with the cycle, which a sample read at a fixed stride fell in step with);
  // ranks at the ends, the middle and an interval around it, repeated.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t n : {2, 3, 10, 57, 120, 300}) {
    for (int shape = 0; shape < 6; ++shape) {
      std::vector<double> x(n), y(n);
      for (size_t i = 0; i < n; ++i) {
        x[i] = shape == 3 ? std::floor(u(rng) * static_cast<double>(n) / 3) : static_cast<double>(i) * 60;
        y[i] = shape == 0   ? u(rng) * 1000
               : shape == 1 ? std::round(static_cast<double>(i) * 0.7 + u(rng) * 3)
               : shape == 2 ? 7.0
               : shape == 3 ? u(rng) * 50
               : shape == 4 ? (u(rng) < 0.05 ? 1e6 : 0.0) + static_cast<double>(i)
                            : std::round(3000 * std::sin(2 * M_PI * static_cast<double>(i) / 30) +
                                         0.4 * static_cast<double>(i) + 8 * u(rng));
      }
      const std::vector<double> sorted = AllSlopes(x, y);
      const PairwiseSlopes slopes(x, y);
      ASSERT_EQ(slopes.pairs(), sorted.size()) << "n " << n << " shape " << shape;
      if (sorted.empty()) continue;
      const size_t last = sorted.size() - 1, mid = last / 2;
      const std::vector<size_t> ranks = {0,   mid - mid / 5, mid, mid, (last + 1) / 2, std::min(last, mid + mid / 5),
                                         last};
      for (size_t max_held : {size_t{0}, size_t{16}, size_t{100}}) {
        std::vector<double> out(ranks.size());
        slopes.Ranks(ranks, out, max_held);
        for (size_t i = 0; i < ranks.size(); ++i)
          ASSERT_EQ(out[i], sorted[ranks[i]])
              << "n " << n << " shape " << shape << " max_held " << max_held << " rank " << ranks[i];
      }
      const double want = sorted.size() % 2 ? sorted[mid] : sorted[mid] + 0.5 * (sorted[mid + 1] - sorted[mid]);
      EXPECT_EQ(slopes.Median(), want) << "n " << n << " shape " << shape;
    }
  }
}

TEST(PairwiseSlopes, ASlopeBeyondTheRangeOfDoubleIsStillRankedExactly) {
  // x steps of 1e-310 under y steps of 1e10 overflow to infinity: no bracket can hold those, so the
  // input is selected among all its slopes whatever the limit.
  const std::vector<double> x = {0, 1e-310, 1, 2, 3, 4, 5, 6};
  const std::vector<double> y = {0, 1e10, 3, 1, 4, 1, 5, 9};
  const std::vector<double> sorted = AllSlopes(x, y);
  ASSERT_TRUE(std::isinf(sorted.back()));
  const std::vector<size_t> ranks = {0, sorted.size() / 2, sorted.size() - 1};
  std::vector<double> out(ranks.size());
  PairwiseSlopes(x, y).Ranks(ranks, out, 4);
  for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(out[i], sorted[ranks[i]]) << "rank " << ranks[i];
}

TEST(PairwiseSlopes, PastTheMaterialisedLimitTheSameValuesComeFromBrackets) {
  // 600 points: 179,700 slopes, more than kMaterializedPairs, so only brackets are held.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0, 20);
  std::vector<double> x(600), y(600);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(i) * 60;
    y[i] = std::round(1e4 + 0.05 * x[i] + noise(rng));
  }
  const std::vector<double> sorted = AllSlopes(x, y);
  ASSERT_GT(sorted.size(), kMaterializedPairs);
  const size_t mid = (sorted.size() - 1) / 2;
  const std::vector<size_t> ranks = {mid - 5000, mid, mid + 1, mid + 5000};
  std::vector<double> out(ranks.size());
  PairwiseSlopes(x, y).Ranks(ranks, out);
  for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(out[i], sorted[ranks[i]]) << "rank " << ranks[i];
}

}  // namespace
}  // namespace vw::detection
