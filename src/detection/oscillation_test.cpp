// Period estimation, cycle removal and block means on synthetic floor series.
#include "detection/oscillation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "core/units.h"

namespace vw::detection {
namespace {

// 1-minute floors: base + a cycle of `period` seconds and `amp` bytes + slope·t + Gaussian noise.
std::vector<FloorPoint> Cycle(double hours, double period, double amp, double slope_bps, double noise,
                              uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0, 1);
  std::vector<FloorPoint> p;
  for (double t = 30; t < hours * 3600; t += 60)
    p.push_back({t, 20 * kGiB + 0.5 * amp * (1 + std::sin(2 * std::numbers::pi * t / period)) + slope_bps * t +
                        noise * n(rng)});
  return p;
}

TEST(Oscillation, RecoversThePeriodOfACycleOnATrend) {
  for (double period : {420.0, 1500.0, 2700.0}) {
    const auto pts = Cycle(8, period, 4 * kGiB, 300 * kMiB / 3600, 200 * kMiB);
    const auto osc = EstimateOscillation(pts, {});
    ASSERT_TRUE(osc) << period;
    EXPECT_NEAR(osc->period_seconds, period, 0.01 * period);
    EXPECT_NEAR(osc->amplitude_bytes, 4 * kGiB, 0.5 * kGiB);
    EXPECT_GT(osc->autocorrelation, 0.5);
  }
}

TEST(Oscillation, NoCycleInNoiseOrATrend) {
  EXPECT_FALSE(EstimateOscillation(Cycle(8, 1500, 0, 0, 300 * kMiB), {}));
  EXPECT_FALSE(EstimateOscillation(Cycle(8, 1500, 0, 500 * kMiB / 3600, 20 * kMiB), {}));
  // Fewer than min_periods periods in the series.
  EXPECT_FALSE(EstimateOscillation(Cycle(1.5, 2700, 4 * kGiB, 0, 50 * kMiB), {}));
}

// A leak that began halfway: flat, then rising at `slope_bps` from `bend` seconds on.
std::vector<FloorPoint> Bent(std::vector<FloorPoint> pts, double bend, double slope_bps) {
  for (FloorPoint& p : pts) p.floor += p.t > bend ? slope_bps * (p.t - bend) : 0.0;
  return pts;
}

TEST(Oscillation, FindsTheCycleUnderALeakThatBeganInsideTheSeries) {
  // 10 h of a 65-minute cycle of 2.2 GiB; from 4h 40m on a leak of 1.4 GiB/h adds 8 GiB. A
  // straight line through that bend leaves a swing of gigabytes over hours in the residual.
  const auto pts = Bent(Cycle(10, 3900, 2.2 * kGiB, 0, 100 * kMiB), 4.67 * 3600, 1.4 * kGiB / 3600);
  const auto osc = EstimateOscillation(pts, {});
  ASSERT_TRUE(osc);
  EXPECT_NEAR(osc->period_seconds, 3900, 0.02 * 3600);
  // The profile is read against a moving mean one period long; against the 90-minute one that
  // found the period, it came out 2.7 GiB.
  EXPECT_NEAR(osc->amplitude_bytes, 2.2 * kGiB, 0.2 * kGiB) << osc->amplitude_bytes / kGiB;
  // The same bend with no cycle is no cycle.
  EXPECT_FALSE(EstimateOscillation(Bent(Cycle(10, 3900, 0, 0, 100 * kMiB), 4.67 * 3600, 1.4 * kGiB / 3600), {}));
}

TEST(Oscillation, RemovingTheCycleKeepsTheTrendAndFlattensTheRest) {
  const double slope = 400 * kMiB / 3600;
  const auto pts = Cycle(6, 1800, 6 * kGiB, slope, 0);
  const auto osc = EstimateOscillation(pts, {});
  ASSERT_TRUE(osc);
  EXPECT_NEAR(osc->period_seconds, 1800, 2);
  const auto flat = RemoveOscillation(pts, *osc);
  ASSERT_EQ(flat.size(), pts.size());
  double worst = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    EXPECT_EQ(flat[i].t, pts[i].t);
    worst = std::max(worst, std::fabs(flat[i].floor - flat.front().floor - slope * (flat[i].t - flat.front().t)));
  }
  // A 6 GiB cycle leaves under 300 MiB around the straight line.
  EXPECT_LT(worst, 300 * kMiB);
}

TEST(Oscillation, BlockMeansAverageAndDropAShortLastBlock) {
  std::vector<FloorPoint> pts;
  for (int i = 0; i < 25; ++i) pts.push_back({60.0 * i, 100.0 * i});
  const auto b = BlockMeans(pts, 600);  // 10 points per block
  ASSERT_EQ(b.size(), 3u);              // 0..9, 10..19, then 20..24 (5 of 10: kept, exactly half)
  EXPECT_DOUBLE_EQ(b[0].t, 270);
  EXPECT_DOUBLE_EQ(b[0].floor, 450);
  EXPECT_DOUBLE_EQ(b[2].floor, 2200);
  pts.resize(23);  // last block 20..22: 3 of 10, dropped
  EXPECT_EQ(BlockMeans(pts, 600).size(), 2u);
  EXPECT_TRUE(BlockMeans({}, 600).empty());
}

}  // namespace
}  // namespace vw::detection
