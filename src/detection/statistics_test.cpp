// Tests of the small statistics: normal distribution, quantiles, Mann–Kendall, Theil–Sen.
// Hand-computed values on tiny inputs, then scipy / pymannkendall on realistic series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "detection/lagged_product.h"
#include "detection/mann_kendall.h"
#include "detection/normal.h"
#include "detection/quantile.h"
#include "detection/testing_python.h"
#include "detection/theil_sen.h"

namespace vw::detection {
namespace {

TEST(Normal, MatchesTabulatedValues) {
  EXPECT_NEAR(NormalCdf(0), 0.5, 1e-16);
  EXPECT_NEAR(NormalCdf(1.96), 0.9750021048517795, 1e-15);
  EXPECT_NEAR(NormalCdf(-3), 0.0013498980316301035, 1e-17);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(NormalQuantile(0.05), -1.6448536269514729, 1e-13);
  EXPECT_NEAR(NormalQuantile(1e-10), -6.361340902404056, 1e-10);
  EXPECT_NEAR(NormalQuantile(1 - 1e-10), 6.361340902404056, 1e-6);
  EXPECT_TRUE(std::isinf(NormalQuantile(0)));
  EXPECT_TRUE(std::isnan(NormalQuantile(1.5)));
  EXPECT_NEAR(TwoSidedP(1.959963984540054), 0.05, 1e-14);
}

TEST(Normal, QuantileInvertsCdf) {
  for (double p = 0.001; p < 1; p += 0.0371) EXPECT_NEAR(NormalCdf(NormalQuantile(p)), p, 1e-14) << p;
}

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*Quantile(v, 0.1), 1.3);  // h = 0.3 between 1 and 2
  EXPECT_DOUBLE_EQ(*Quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(*Quantile(v, 1.0), 4);
  EXPECT_DOUBLE_EQ(*Median(v), 2.5);
  std::vector<double> odd = {3, 1, 2};
  EXPECT_DOUBLE_EQ(*Median(odd), 2);
  std::vector<double> empty;
  EXPECT_FALSE(Quantile(empty, 0.5).has_value());
  EXPECT_FALSE(Quantile(v, 1.5).has_value());
}

TEST(Quantile, MedianOfSortedValuesIsMediansNumberToTheBit) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1e9, 1e9);
  for (size_t n = 1; n <= 300; ++n) {
    std::vector<double> v(n);
    for (double& x : v) x = u(rng) / 7;  // values whose halves and sums round
    std::sort(v.begin(), v.end());
    std::vector<double> copy = v;
    EXPECT_EQ(MedianOfSorted(v), *Median(copy)) << "n=" << n;
  }
  const std::vector<double> ties = {1, 2, 2, 2, 5, 9};
  EXPECT_EQ(MedianOfSorted(ties), 2);
}

TEST(LaggedProduct, SumsEachValueTimesTheOneLagAfterIt) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(LaggedProduct(x, 0), 140);                   // 1 + 4 + ... + 49
  EXPECT_EQ(LaggedProduct(x, 2), 3 + 8 + 15 + 24 + 35);  // the tail past the groups of four too
  EXPECT_EQ(LaggedProduct(x, 6), 7);                     // one pair
  EXPECT_EQ(LaggedProduct(x, 7), 0);                     // none
  EXPECT_EQ(LaggedProduct(std::vector<double>{}, 0), 0);
  // Against a plain sum on centred noise, to the rounding of the two orders of addition.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> y(719);
  for (double& v : y) v = noise(rng);
  for (size_t lag : {0, 1, 3, 4, 5, 100, 717, 718}) {
    double plain = 0;
    for (size_t i = 0; i + lag < y.size(); ++i) plain += y[i] * y[i + lag];
    EXPECT_NEAR(LaggedProduct(y, lag), plain, 1e-12 * (1 + std::fabs(plain))) << lag;
  }
}

TEST(SelectNth, PutsTheSortedValueAtKWithNoGreaterBeforeAndNoSmallerAfter) {
  // Every k of small inputs and a spread of k in large ones, for noise, ramps, ties, a run of equal
  // minimums (the pivot-is-the-minimum round) and all-equal inputs (the round budget).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> noise(0, 1000);
  for (size_t n : {1, 2, 3, 5, 16, 17, 18, 33, 64, 100, 1000}) {
    for (int shape = 0; shape < 7; ++shape) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i);
        v[i] = shape == 0   ? noise(rng)
               : shape == 1 ? x
               : shape == 2 ? -x
               : shape == 3 ? std::floor(noise(rng) / 250)
               : shape == 4 ? (i < n / 3 ? 0.0 : noise(rng))  // a third of the values equal the minimum
               : shape == 5 ? 5.0
                            : (noise(rng) < 500 ? 1.0 : 2.0);
      }
      std::shuffle(v.begin(), v.end(), rng);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < n; k += n <= 100 ? 1 : 37) {
        std::vector<double> a = v;
        SelectNth(a.data(), n, k);
        ASSERT_EQ(a[k], sorted[k]) << "n " << n << " shape " << shape << " k " << k;
        for (size_t i = 0; i < k; ++i) ASSERT_LE(a[i], a[k]) << "n " << n << " shape " << shape << " k " << k;
        for (size_t i = k + 1; i < n; ++i) ASSERT_GE(a[i], a[k]) << "n " << n << " shape " << shape << " k " << k;
        std::sort(a.begin(), a.end());
        ASSERT_EQ(a, sorted);  // the same values, only moved
      }
    }
  }
}

TEST(SelectRanks, EqualsTheSortedOrderStatisticsExactly) {
  // Inputs of 1024 or more values are narrowed between bounds from a sample first, and the values
  // kept are counted into buckets; the answer must still be the sorted one when the sample misleads
  // (the small or large values only where the sample reads), for a sorted input, ties, all equal,
  // heavy tails (pairwise slopes), values piled into one bucket, and for ranks together (a median,
  // a Theil–Sen interval), apart (quartiles), repeated, at the ends, and more than there are buckets
  // to gather (nine ranks a few apart).
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> noise(0, 1000);
  std::cauchy_distribution<double> tails(0, 1);
  for (size_t n : {1, 2, 17, 1023, 1024, 1025, 4096, 6903}) {
    // Where SelectRanks reads its sample (one value of each of 256 strata).
    std::vector<bool> sampled(n, false);
    if (n >= 1024) {
      const size_t stride = n / 256;
      for (size_t k = 0; k < 256; ++k) sampled[k * stride + SampleOffset(k, stride)] = true;
    }
    for (int shape = 0; shape < 9; ++shape) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i);
        v[i] = shape == 0   ? noise(rng)
               : shape == 1 ? x
               : shape == 2 ? (sampled[i] ? 0.0 : 1e9) + noise(rng)  // the sample sees only the small values
               : shape == 3 ? (sampled[i] ? 1e9 : 0.0) + noise(rng)  // ... only the large ones
               : shape == 4 ? std::floor(noise(rng) / 250)
               : shape == 5 ? 3.0
               : shape == 6 ? (noise(rng) < 30 ? 1.0 : 2.0)
               : shape == 7 ? tails(rng)
                            : (noise(rng) < 900 ? 500.0 : noise(rng));  // nine in ten equal: one bucket holds them
      }
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      const size_t mid = (n - 1) / 2;
      std::vector<size_t> nine;
      for (size_t k = 0; k < 9; ++k) nine.push_back(std::min(n - 1, mid + k * (n / 200 + 1)));
      const std::vector<std::vector<size_t>> rank_sets = {
          {mid},
          {mid, n / 2},
          {mid - mid / 10, mid, n / 2, std::min(n - 1, n / 2 + mid / 10)},
          {n / 4, 3 * n / 4},
          {0, n - 1},
          {0, 0, mid, mid, n - 1},
          nine,
      };
      for (const std::vector<size_t>& ranks : rank_sets) {
        std::vector<double> work = v, out(ranks.size());
        SelectRanks(work, ranks, out);
        for (size_t i = 0; i < ranks.size(); ++i)
          ASSERT_EQ(out[i], sorted[ranks[i]]) << "n " << n << " shape " << shape << " rank " << ranks[i];
        std::sort(work.begin(), work.end());
        ASSERT_EQ(work, sorted);  // the same values, only moved
      }
    }
  }
}

TEST(SelectRanks, SamplesEveryStratumOnceAtOffsetsThatVary) {
  // The sample's offsets stay within their strata and do not repeat one pattern: a fixed stride
  // read the pairwise slopes of a cycle at one lag per row and misled the bounds.
  for (size_t stride : {4, 25, 97}) {
    std::vector<size_t> seen(stride, 0);
    for (size_t k = 0; k < 256; ++k) {
      const size_t o = SampleOffset(k, stride);
      ASSERT_LT(o, stride);
      EXPECT_EQ(o, SampleOffset(k, stride));  // the same on every call
      ++seen[o];
    }
    EXPECT_GT(std::count_if(seen.begin(), seen.end(), [](size_t c) { return c > 0; }), static_cast<long>(stride / 2))
        << stride;
  }
}

TEST(Quantile, LowQuantilesEqualTheSortedOrderStatisticsExactly) {
  // Low quantiles of large inputs select below a bound from a sample (and fall back when the
  // sample misleads); the answer must be the sorted one, bit for bit, for noise, ramps up and down,
  // ties, a sample that sees only the small values, and tiny inputs.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0, 1000);
  for (size_t n : {1, 2, 3, 7, 8, 40, 41, 59, 60, 61, 63, 64, 100, 161, 599, 960, 4096}) {
    for (int shape = 0; shape < 8; ++shape) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i);
        v[i] = shape == 0   ? noise(rng)
               : shape == 1 ? 1e9 + 1e4 * x + noise(rng)
               : shape == 2 ? 1e9 - 1e4 * x
               : shape == 3 ? std::floor(noise(rng) / 250)           // four distinct values
               : shape == 4 ? (i % 8 == 0 ? 0.0 : 1e9) + noise(rng)  // small values only where a stride-8 sample looks
               : shape == 5 ? 7e9                                    // all equal
               : shape == 6 ? (noise(rng) < 30 ? 1.0 : 2.0)          // two values, the smaller rare
                            : std::floor(x / 3);                     // ascending runs of three equal values
      }
      for (double q : {0.0, 0.01, 0.05, 0.1, 0.2, 0.25, 0.5, 0.9}) {
        std::vector<double> sorted = v;
        std::sort(sorted.begin(), sorted.end());
        const double h = q * static_cast<double>(n - 1);
        const auto lo = static_cast<size_t>(std::floor(h));
        const double frac = h - static_cast<double>(lo);
        const double want = frac == 0 || lo + 1 >= n ? sorted[lo] : sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
        std::vector<double> work = v;
        EXPECT_EQ(*Quantile(work, q), want) << "n " << n << " shape " << shape << " q " << q;
      }
    }
  }
}

TEST(KendallTieTerm, SumsEachGroupOfEqualValuesInAnyOrder) {
  // Σ t(t−1)(2t+5): a group of 3 gives 3·2·11 = 66, a group of 2 gives 2·1·9 = 18.
  const std::vector<double> increasing = {1, 2, 3, 5, 8};
  EXPECT_EQ(KendallTieTerm(increasing), 0);
  const std::vector<double> decreasing = {8, 5, 3, 2, 1};
  EXPECT_EQ(KendallTieTerm(decreasing), 0);
  const std::vector<double> ties = {4, 1, 4, 2, 4, 1};  // three 4s, two 1s
  EXPECT_EQ(KendallTieTerm(ties), 66 + 18);
  const std::vector<double> rising_with_a_tie = {1, 2, 2, 3};  // in order, but not strictly
  EXPECT_EQ(KendallTieTerm(rising_with_a_tie), 18);
  EXPECT_EQ(KendallTieTerm(std::vector<double>{}), 0);
}

TEST(MannKendall, HandComputedWithoutAndWithTies) {
  MannKendallOptions plain{.correction = AutocorrelationCorrection::kNone};
  std::vector<double> up = {1, 2, 3};
  auto r = MannKendall(up, plain);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->s, 3);
  EXPECT_DOUBLE_EQ(r->var_s, 66.0 / 18);  // 3·2·11/18
  EXPECT_NEAR(r->z, 2 / std::sqrt(66.0 / 18), 1e-15);
  EXPECT_DOUBLE_EQ(r->tau, 1);

  std::vector<double> tied = {1, 1, 2};  // one pair tied: Var = (66 − 2·1·9)/18
  r = MannKendall(tied, plain);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->s, 2);
  EXPECT_DOUBLE_EQ(r->var_s, 48.0 / 18);
  EXPECT_NEAR(r->z, 1 / std::sqrt(48.0 / 18), 1e-15);

  std::vector<double> down = {5, 4, 3, 2, 1};
  r = MannKendall(down, plain);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->s, -10);
  EXPECT_LT(r->z, 0);

  std::vector<double> flat = {7, 7, 7, 7};
  r = MannKendall(flat);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->s, 0);
  EXPECT_EQ(r->p, 1);

  std::vector<double> too_short = {1, 2};
  EXPECT_FALSE(MannKendall(too_short));
  std::vector<double> with_nan = {1, std::nan(""), 3};
  EXPECT_FALSE(MannKendall(with_nan));
}

TEST(MannKendall, HamedRaoInflatesVarianceOfAStaircase) {
  // A staircase is strongly autocorrelated after detrending: the corrected variance is larger.
  std::vector<double> stairs;
  for (int i = 0; i < 60; ++i) stairs.push_back(100 + 20 * (i / 15));
  auto plain = MannKendall(stairs, {.correction = AutocorrelationCorrection::kNone});
  auto corrected = MannKendall(stairs);
  ASSERT_TRUE(plain && corrected);
  EXPECT_EQ(plain->s, corrected->s);
  EXPECT_GT(corrected->variance_factor, 1.2);
  EXPECT_LT(corrected->z, plain->z);
}

TEST(MannKendall, UpwardAlphaSkipsTheCorrectionOnlyWhereNoCorrectionCouldPass) {
  // With upward_alpha the correction is computed only where the test without it finds an upward
  // trend at that level; everywhere else the corrected test would fail at that level as well.
  std::mt19937_64 rng(20261204);
  std::normal_distribution<double> noise(0, 4);
  const MannKendallOptions full{.never_shrink_variance = true};
  size_t skipped = 0, kept = 0;
  for (int k = 0; k < 400; ++k) {
    const double slope = 0.02 * (k % 20) - 0.1;  // falling, flat and rising series
    std::vector<double> y;
    for (int i = 0; i < 60; ++i) y.push_back(std::round(500 + slope * i + 20 * ((i / 7) % 2) + noise(rng)));
    for (double alpha : {1e-5, 0.01, 0.2}) {
      MannKendallOptions quick = full;
      quick.upward_alpha = alpha;
      const auto a = MannKendall(y, full), b = MannKendall(y, quick), engine = EngineMannKendall(y, alpha);
      ASSERT_TRUE(a && b && engine);
      EXPECT_EQ(engine->z, b->z);  // the engine's test is this one
      EXPECT_EQ(engine->corrected, b->corrected);
      EXPECT_TRUE(a->corrected);
      EXPECT_EQ(a->s, b->s);
      if (b->corrected) {
        ++kept;
        EXPECT_EQ(a->z, b->z);
        EXPECT_EQ(a->p, b->p);
        EXPECT_EQ(a->variance_factor, b->variance_factor);
      } else {
        ++skipped;
        EXPECT_EQ(b->variance_factor, 1);
        EXPECT_FALSE(b->z > 0 && b->p <= alpha);
        EXPECT_FALSE(a->z > 0 && a->p <= alpha) << "k=" << k << " alpha=" << alpha;
        const auto plain = MannKendall(y, {.correction = AutocorrelationCorrection::kNone});
        EXPECT_EQ(plain->z, b->z);
      }
    }
  }
  EXPECT_GT(skipped, 100u);
  EXPECT_GT(kept, 100u);
  // Without never_shrink_variance a correction may shrink Var(S): nothing is skipped.
  std::vector<double> flat(30, 7.0);
  for (size_t i = 0; i < flat.size(); i += 2) flat[i] = 8;
  const auto r = MannKendall(flat, {.upward_alpha = 0.01});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->corrected);
}

TEST(TheilSen, HandComputedSlopeInterceptAndInterval) {
  // Pairwise slopes: 1, 1, 10/3, 1, 4.5, 8 → median (1 + 10/3)/2; σ² = 4·3·13/18, N = 6, z = −1.96:
  // ranks round((6 ± 5.77)/2) → indices 0 and 5.
  std::vector<double> x = {0, 1, 2, 3}, y = {0, 1, 2, 10};
  auto r = TheilSen(x, y, 0.95);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->slope, (1 + 10.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(r->intercept, 1.5 - r->slope * 1.5);
  EXPECT_DOUBLE_EQ(r->low_slope, 1);
  EXPECT_DOUBLE_EQ(r->high_slope, 8);
  EXPECT_EQ(r->pairs, 6u);

  std::vector<double> same_x = {1, 1, 1}, any_y = {1, 2, 3};
  EXPECT_FALSE(TheilSen(same_x, any_y));
  std::vector<double> short_y = {1, 2};
  EXPECT_FALSE(TheilSen(x, short_y));
}

// Series shaped like the engine's bucket floors: MiB-quantised, with ties, steps, noise, trends.
std::vector<std::vector<double>> ReferenceSeries() {
  std::vector<std::vector<double>> all;
  std::mt19937_64 rng(20260611);
  std::normal_distribution<double> noise(0, 3);
  for (size_t n : {12u, 40u, 97u, 180u}) {
    std::vector<double> trend, stairs, flat, ar1;
    double a = 0;
    for (size_t i = 0; i < n; ++i) {
      trend.push_back(std::round(1000 + 0.8 * static_cast<double>(i) + noise(rng)));
      stairs.push_back(2000 + 20 * static_cast<double>(i * i / (n * 4 + 1)));
      flat.push_back(std::round(500 + noise(rng) / 2));
      a = 0.8 * a + noise(rng);
      ar1.push_back(300 + 0.2 * static_cast<double>(i) + a);
    }
    all.insert(all.end(), {trend, stairs, flat, ar1});
  }
  return all;
}

std::vector<double> IrregularClock(size_t n) {
  std::vector<double> x;
  for (size_t i = 0; i < n; ++i) x.push_back(60.0 * static_cast<double>(i) + (i % 3 == 0 ? 0.5 : 0));
  return x;
}

TEST(TheilSen, MatchesScipyTheilslopes) {
  const auto series = ReferenceSeries();
  std::ostringstream in;
  in.precision(17);
  for (const auto& y : series) {
    const auto x = IrregularClock(y.size());
    in << 0.9;
    for (size_t i = 0; i < y.size(); ++i) in << " " << x[i] << " " << y[i];
    in << "\n";
  }
  auto run = testing::RunReferenceScript("theil_sen_reference.py", in.str());
  ASSERT_TRUE(run.ok) << run.error;
  std::istringstream out(run.output);
  for (const auto& y : series) {
    double slope, intercept, lo, hi, tau;
    ASSERT_TRUE(out >> slope >> intercept >> lo >> hi >> tau) << run.output;
    const auto x = IrregularClock(y.size());
    auto r = TheilSen(x, y, 0.9);
    ASSERT_TRUE(r);
    const double scale = std::max(1e-9, std::fabs(slope));
    EXPECT_NEAR(r->slope, slope, 1e-12 * scale) << "n=" << y.size();
    EXPECT_NEAR(r->intercept, intercept, 1e-9 * std::max(1.0, std::fabs(intercept))) << "n=" << y.size();
    EXPECT_NEAR(r->low_slope, lo, 1e-12 * scale) << "n=" << y.size();
    EXPECT_NEAR(r->high_slope, hi, 1e-12 * scale) << "n=" << y.size();
    // Kendall's tau-b between time and value equals S / sqrt(n0 (n0 − tied pairs)) when time has no ties.
    auto mk = MannKendall(y, {.correction = AutocorrelationCorrection::kNone});
    ASSERT_TRUE(mk);
    const double n = static_cast<double>(y.size());
    std::vector<double> sorted = y;
    std::sort(sorted.begin(), sorted.end());
    double tied_pairs = 0;
    for (size_t i = 0; i < sorted.size();) {
      size_t j = i;
      while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
      tied_pairs += static_cast<double>((j - i) * (j - i - 1)) / 2;
      i = j;
    }
    const double n0 = n * (n - 1) / 2;
    EXPECT_NEAR(mk->s / std::sqrt(n0 * (n0 - tied_pairs)), tau, 1e-12) << "n=" << y.size();
  }
}

TEST(MannKendall, MatchesPymannkendallOriginalAndHamedRao) {
  const auto series = ReferenceSeries();
  std::ostringstream in;
  in.precision(17);
  for (const auto& y : series) {
    for (double v : y) in << v << " ";
    in << "\n";
  }
  auto run = testing::RunReferenceScript("mann_kendall_reference.py", in.str());
  ASSERT_TRUE(run.ok) << run.error;
  std::istringstream out(run.output);
  size_t same_over_time = 0;  // series whose numbers detrended over time equal pymannkendall's
  for (const auto& y : series) {
    for (auto correction : {AutocorrelationCorrection::kNone, AutocorrelationCorrection::kHamedRao}) {
      std::string name;
      double s, var_s, z, p, tau;
      ASSERT_TRUE(out >> name >> s >> var_s >> z >> p >> tau) << run.output;
      auto r = MannKendall(y, {.correction = correction});
      ASSERT_TRUE(r);
      EXPECT_EQ(r->s, s) << name << " n=" << y.size();
      EXPECT_NEAR(r->var_s, var_s, 1e-9 * std::fabs(var_s)) << name << " n=" << y.size();
      EXPECT_NEAR(r->z, z, 1e-9 * std::max(1.0, std::fabs(z))) << name << " n=" << y.size();
      EXPECT_NEAR(r->p, p, 1e-9 + 1e-6 * p) << name << " n=" << y.size();
      EXPECT_NEAR(r->tau, tau, 1e-12) << name << " n=" << y.size();
      if (correction != AutocorrelationCorrection::kHamedRao) continue;
      // Detrended over times a minute apart by Sen's slope over those times (as the engine's
      // windows do): the same line, so pymannkendall's numbers again, but where rounding breaks a
      // tie among the detrended values of these whole-MiB series the other way.
      std::vector<double> x;
      for (size_t i = 0; i < y.size(); ++i) x.push_back(60.0 * static_cast<double>(i));
      const auto sen = TheilSen(x, y, 0.9);
      ASSERT_TRUE(sen);
      auto timed = MannKendall(y, {.detrend_x = x, .detrend_slope = sen->slope});
      ASSERT_TRUE(timed);
      EXPECT_NEAR(timed->var_s, var_s, 1e-3 * std::fabs(var_s)) << name << " over time, n=" << y.size();
      EXPECT_NEAR(timed->z, z, 1e-3 * std::max(1.0, std::fabs(z))) << name << " over time, n=" << y.size();
      same_over_time += std::fabs(timed->var_s - var_s) <= 1e-9 * std::fabs(var_s);
    }
  }
  EXPECT_GE(same_over_time, series.size() - 2);
}

TEST(MannKendall, EngineCorrectionOfAPlainResultEqualsTheWholeTest) {
  // What a window computes in two steps (the test without the correction, then the correction
  // once Sen's slope is fitted) gives the numbers of the whole test, to the bit.
  std::mt19937_64 rng(20261205);
  std::normal_distribution<double> noise(0, 4);
  size_t inflated = 0;
  for (int k = 0; k < 60; ++k) {
    std::vector<double> x, y;
    double a = 0;  // AR(1) noise: positively autocorrelated around the line
    for (int i = 0; i < 90; ++i) {
      x.push_back(60.0 * i + (i > 50 ? 1800 : 0));
      a = 0.85 * a + noise(rng);
      y.push_back(std::round(800 + 0.0005 * k * x.back() + 3 * a));
    }
    const auto sen = TheilSen(x, y, 0.9);
    const auto plain = MannKendall(y, {.correction = AutocorrelationCorrection::kNone});
    const auto whole = MannKendall(y, {.never_shrink_variance = true, .detrend_x = x, .detrend_slope = sen->slope});
    ASSERT_TRUE(sen && plain && whole);
    const MannKendallResult two_steps = WithEngineCorrection(*plain, y, x, sen->slope);
    EXPECT_EQ(two_steps.s, whole->s);
    EXPECT_EQ(two_steps.var_s, whole->var_s);
    EXPECT_EQ(two_steps.variance_factor, whole->variance_factor);
    EXPECT_EQ(two_steps.z, whole->z);
    EXPECT_EQ(two_steps.p, whole->p);
    EXPECT_TRUE(two_steps.corrected);
    inflated += two_steps.variance_factor > 1;
  }
  EXPECT_GT(inflated, 10u);  // the correction did something on many of them
}

TEST(MannKendall, HamedRaoDetrendsAcrossAGapInTheTimes) {
  // A steady rise of 1 per second, sampled every 60 s with an hour missing in the middle, and an
  // alternating ±3 on top. Over time the line is exact: the residual alternates, its lag-1
  // autocorrelation is negative and the engine's factor stays 1. Over the index the gap leaves a
  // 3540 step in the residual, which is strongly autocorrelated.
  std::vector<double> x, y;
  for (int i = 0; i < 80; ++i) {
    const double t = 60.0 * i + (i >= 40 ? 3600 : 0);
    x.push_back(t);
    y.push_back(t + (i % 2 == 0 ? 3 : -3));
  }
  const auto sen = TheilSen(x, y, 0.9);
  ASSERT_TRUE(sen);
  EXPECT_DOUBLE_EQ(sen->slope, 1);
  const auto over_time = MannKendall(y, {.never_shrink_variance = true, .detrend_x = x, .detrend_slope = sen->slope});
  const auto over_index = EngineMannKendall(y);
  ASSERT_TRUE(over_time && over_index);
  EXPECT_TRUE(over_time->corrected);
  EXPECT_EQ(over_time->variance_factor, 1);
  EXPECT_GT(over_index->variance_factor, 2);
  EXPECT_EQ(over_time->s, over_index->s);  // S itself does not depend on the detrending
  EXPECT_GT(over_time->z, over_index->z);
}

TEST(ReferenceScripts, ReportFailureOfTheScript) {
  // The runner must report a failing script rather than hand back empty numbers.
  auto run = testing::RunReferenceScript("theil_sen_reference.py", "not a number\n");
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.error.find("reference script failed"), std::string::npos);
}

}  // namespace
}  // namespace vw::detection
