// The per-window leak tests and the leak-rate fit on small hand-built floor series.
#include "detection/growth_window.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "detection/leak_rate.h"

namespace vw::detection {
namespace {

constexpr double kMiB = 1048576.0;

GrowthOptions Options() {
  GrowthOptions o;
  o.min_rate_bps = 20 * kMiB / 3600;
  o.min_growth_bytes = 64 * kMiB;
  return o;
}

// One point a minute for `minutes`, floor in MiB from `f`.
template <typename F>
std::vector<FloorPoint> Points(int minutes, F f) {
  std::vector<FloorPoint> p;
  for (int i = 0; i < minutes; ++i) p.push_back({60.0 * i, f(i) * kMiB});
  return p;
}

TEST(GrowthWindow, JumpNetOfTheSlopeIgnoresSteadyGrowthAndKeepsSteps) {
  // 16 ten-minute block means of a 600 MiB/h leak: three blocks apart, the medians differ by
  // 300 MiB of plain growth; net of Sen's slope nothing jumped.
  std::vector<FloorPoint> p;
  for (int i = 0; i < 16; ++i) p.push_back({600.0 * i, (5000 + 100.0 * i) * kMiB});
  GrowthOptions o = Options();
  auto raw = TestGrowthWindow(p, o);
  ASSERT_TRUE(raw);
  EXPECT_NEAR(raw->largest_jump_bytes / kMiB, 300, 1);
  o.jump_net_of_slope = true;
  auto net = TestGrowthWindow(p, o);
  ASSERT_TRUE(net);
  EXPECT_NEAR(net->largest_jump_bytes / kMiB, 0, 1);
  EXPECT_TRUE(net->leak) << net->failed;
  // A real step among the block means is still a jump net of the slope.
  std::vector<FloorPoint> step;
  for (int i = 0; i < 16; ++i) step.push_back({600.0 * i, (5000 + 10.0 * i + (i >= 8 ? 1200 : 0)) * kMiB});
  auto stepped = TestGrowthWindow(step, o);
  ASSERT_TRUE(stepped);
  EXPECT_GT(stepped->largest_jump_bytes / kMiB, 800);  // the step inflates Sen's slope a little
  EXPECT_FALSE(stepped->leak);
}

TEST(GrowthWindow, AFewLargeStepsAreNoLeakWhereManySmallOnesAre) {
  // Three hours a minute apart. Four steps of 100 MiB (an allocator's large blocks) 40 minutes
  // apart: each a quarter of the rise, under the single-jump share of 30 %, but the three largest
  // carry three quarters of it. The same rise in twelve 33 MiB steps, 15 minutes apart, is a leak.
  GrowthOptions o = Options();
  o.max_jump_share = 0.3;
  o.top_jumps = 3;
  o.max_top_jumps_share = 0.6;
  auto steps = [](int every, double mib) {
    return Points(180, [=](int i) { return 5000 + mib * ((i + every / 2) / every) + (i % 2 ? 0.5 : -0.5); });
  };
  auto few = TestGrowthWindow(steps(40, 100), o);
  ASSERT_TRUE(few);
  EXPECT_TRUE(few->no_big_jump);
  EXPECT_TRUE(few->few_steps);
  EXPECT_NEAR(few->top_jumps_bytes / kMiB, 300, 1);  // each step counted once
  EXPECT_FALSE(few->leak);
  EXPECT_EQ(few->failed, "a few steps carry most of the rise");
  auto many = TestGrowthWindow(steps(15, 33), o);
  ASSERT_TRUE(many);
  EXPECT_FALSE(many->few_steps);
  EXPECT_NEAR(many->top_jumps_bytes / kMiB, 99, 1);
  EXPECT_TRUE(many->leak) << many->failed;
  // Without the test the few large steps pass.
  o.top_jumps = 0;
  auto unchecked = TestGrowthWindow(steps(40, 100), o);
  ASSERT_TRUE(unchecked);
  EXPECT_TRUE(unchecked->leak) << unchecked->failed;
  // A straight line has no step above its noise at all.
  o.top_jumps = 3;
  auto line = TestGrowthWindow(Points(180, [](int i) { return 1000 + 2.0 * i + (i % 2 ? 1 : -1); }), o);
  ASSERT_TRUE(line);
  EXPECT_FALSE(line->few_steps);
  EXPECT_TRUE(line->leak) << line->failed;
}

TEST(GrowthWindow, EqualStepsAtARegularPaceAreOneBufferPerPeriod) {
  // Three hours a minute apart. Four 64 MiB steps 42 minutes apart: the few-steps test alone fails
  // them (three carry three quarters of the rise); equal and evenly spaced, they are one buffer
  // leaked per period and pass.
  GrowthOptions o = Options();
  o.top_jumps = 3;
  o.regular_min_step_bytes = 20 * kMiB;
  auto stairs = [](int every, int first, auto mib) {
    return Points(180, [=](int i) {
      double v = 5000 + (i % 2 ? 0.5 : -0.5);
      for (int k = 0, at = first; at < 180; at += every, ++k)
        if (i >= at) v += mib(k);
      return v;
    });
  };
  auto even = TestGrowthWindow(stairs(42, 21, [](int) { return 64.0; }), o);
  ASSERT_TRUE(even);
  ASSERT_TRUE(even->regular);
  EXPECT_EQ(even->regular->steps, 4U);
  EXPECT_NEAR(even->regular->step_bytes / kMiB, 64, 1);
  EXPECT_NEAR(even->regular->period_seconds, 42 * 60, 1);
  EXPECT_FALSE(even->few_steps);
  EXPECT_TRUE(even->leak) << even->failed;
  // Not asked: the same steps fail on how few they are.
  GrowthOptions off = o;
  off.regular_min_step_bytes = 0;
  auto unasked = TestGrowthWindow(stairs(42, 21, [](int) { return 64.0; }), off);
  ASSERT_TRUE(unasked);
  EXPECT_FALSE(unasked->regular);
  EXPECT_FALSE(unasked->leak);
  // The allocator's own 20 MiB blocks, evenly spaced: equal by construction, never regular.
  auto blocks = TestGrowthWindow(stairs(20, 10, [](int) { return 20.0; }), o);
  ASSERT_TRUE(blocks);
  EXPECT_FALSE(blocks->regular);
  // Steps of random sizes (an allocator's large blocks), or equal ones at uneven gaps, or equal
  // ones that stopped an hour and a half ago: not regular.
  auto sizes = TestGrowthWindow(stairs(42, 21, [](int k) { return std::array{64.0, 150.0, 90.0, 300.0}[k]; }), o);
  ASSERT_TRUE(sizes);
  EXPECT_FALSE(sizes->regular);
  auto uneven = TestGrowthWindow(
      Points(
          180,
          [](int i) { return 5000 + 64.0 * ((i >= 10) + (i >= 30) + (i >= 100) + (i >= 170)) + (i % 2 ? 0.5 : -0.5); }),
      o);
  ASSERT_TRUE(uneven);
  EXPECT_FALSE(uneven->regular);
  auto stopped = TestGrowthWindow(stairs(25, 10, [](int k) { return k < 3 ? 64.0 : 0.0; }), o);
  ASSERT_TRUE(stopped);
  EXPECT_FALSE(stopped->regular);
  // Equal steps that began after a flat stretch and go on to the end: a leak that began inside the
  // window.
  auto late = TestGrowthWindow(stairs(25, 80, [](int) { return 64.0; }), o);
  ASSERT_TRUE(late);
  ASSERT_TRUE(late->regular);
  EXPECT_EQ(late->regular->steps, 4U);
  // A straight line has no steps to be regular.
  auto line = TestGrowthWindow(Points(180, [](int i) { return 1000 + 2.0 * i + (i % 2 ? 1 : -1); }), o);
  ASSERT_TRUE(line);
  EXPECT_FALSE(line->regular);
}

TEST(GrowthWindow, EqualStepsAreMeasuredAgainstHowMuchTheLevelsWander) {
  // A spike-removed floor holds each value for minutes (here three), so the point-to-point noise
  // reads zero, while the level it holds wanders by up to 3 MiB: over two hours, four 64 MiB steps
  // 27 minutes apart measure 59 to 68 MiB. They are equal within that wander, and regular.
  GrowthOptions o = Options();
  o.top_jumps = 3;
  o.regular_min_step_bytes = 20 * kMiB;
  o.regular_chance = 0.01;
  constexpr std::array<double, 7> kWander = {0, 3, -2, 2, -3, 1, -1};
  auto stairs = [&](int every, auto mib) {
    return Points(120, [=](int i) {
      double v = 5000 + kWander[static_cast<size_t>(i / 3) % kWander.size()];
      for (int k = 0, at = every - 12; at < 120; at += every, ++k)
        if (i >= at) v += mib(k);
      return v;
    });
  };
  auto wandering = TestGrowthWindow(stairs(27, [](int) { return 64.0; }), o);
  ASSERT_TRUE(wandering);
  EXPECT_EQ(wandering->noise_bytes, 0);
  ASSERT_TRUE(wandering->regular);
  EXPECT_EQ(wandering->regular->steps, 4U);
  EXPECT_TRUE(wandering->leak) << wandering->failed;
  // Blocks of 64 and 128 MiB differ by more than any wander explains: not regular.
  auto mixed = TestGrowthWindow(stairs(27, [](int k) { return k % 2 ? 128.0 : 64.0; }), o);
  ASSERT_TRUE(mixed);
  EXPECT_FALSE(mixed->regular);
  // Three blocks of 70, 64 and 58 MiB, 40 minutes apart, are equal within what the wander explains,
  // but they spread by a tenth of their height, as random blocks do by chance: three are not
  // enough for that spread, unless the chance is not asked.
  auto spread = [](int k) { return std::array{70.0, 64.0, 58.0}[static_cast<size_t>(k)]; };
  auto three = TestGrowthWindow(stairs(40, spread), o);
  ASSERT_TRUE(three);
  EXPECT_FALSE(three->regular);
  GrowthOptions any = o;
  any.regular_chance = 0;
  auto three_any = TestGrowthWindow(stairs(40, spread), any);
  ASSERT_TRUE(three_any);
  ASSERT_TRUE(three_any->regular);
  EXPECT_EQ(three_any->regular->steps, 3U);
  // A steady rise whose spike-removed floor climbs 25 MiB every 10 minutes, as it does under heavy
  // noise, with a bump of 8 MiB on each level: steps within five deviations of their own
  // measurement are not buffers.
  auto climb = TestGrowthWindow(Points(120,
                                       [](int i) {
                                         const int j = (i + 5) % 10;
                                         return 5000 + 25.0 * ((i + 5) / 10) + (j >= 3 && j < 6 ? 8 : 0);
                                       }),
                                any);
  ASSERT_TRUE(climb);
  EXPECT_FALSE(climb->regular);
}

TEST(GrowthWindow, SteadyLineIsALeak) {
  // 2 MiB a minute (120 MiB/h) with a small alternating wobble.
  auto p = Points(180, [](int i) { return 1000 + 2.0 * i + (i % 2 ? 1 : -1); });
  auto w = TestGrowthWindow(p, Options());
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->leak) << w->failed;
  EXPECT_NEAR(w->sen->slope * 3600 / kMiB, 120, 1);
  for (double r : w->third_rise_bytes) EXPECT_GT(r, 80 * kMiB);
}

TEST(GrowthWindow, OneStepFailsKeepsGoing) {
  auto p = Points(180, [](int i) { return i < 90 ? 1000.0 : 1300.0; });
  auto w = TestGrowthWindow(p, Options());
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->leak);
  // The Hamed–Rao correction sees the step's autocorrelation: no significant trend either.
  EXPECT_GT(w->mk->variance_factor, 2);
  EXPECT_FALSE(w->every_third);
}

TEST(GrowthWindow, SlowingCurveFailsNotSlowing) {
  // Settling: 3000·(1 − e^{−t/90 min}) observed over three hours.
  auto p = Points(180, [](int i) { return 1000 + 3000 * (1 - std::exp(-i / 90.0)); });
  auto w = TestGrowthWindow(p, Options());
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->leak);
  EXPECT_FALSE(w->keeps_pace && w->not_slowing) << w->failed;
}

TEST(GrowthWindow, FlatSeriesHasNoTrend) {
  auto p = Points(120, [](int i) { return 5000.0 + (i * 7 % 5); });
  auto w = TestGrowthWindow(p, Options());
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->significant && w->large_enough);
  EXPECT_FALSE(w->leak);
}

TEST(GrowthWindow, AStoppedWindowReadsTheSameTrendWhereItIsRead) {
  // A window that stops after a failing trend test skips the autocorrelation correction where no
  // correction could make it pass at alpha or read_alpha: where the full window is significant, or
  // rises at p ≤ read_alpha, the stopped one gives the same Mann–Kendall numbers.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 6);
  GrowthOptions full = Options();
  full.alpha = 1e-5;
  GrowthOptions stopped = full;
  stopped.stop_when_not_significant = true;
  stopped.read_alpha = 1e-4;
  size_t read = 0, skipped = 0;
  for (int k = 0; k < 300; ++k) {
    const double per_minute = 0.04 * (k % 15) - 0.1;  // MiB a minute: falling to rising
    const auto p =
        Points(90, [&](int i) { return std::round(4000 + per_minute * i + 30 * ((i / 11) % 2) + noise(rng)); });
    const auto a = TestGrowthWindow(p, full), b = TestGrowthWindow(p, stopped);
    ASSERT_TRUE(a && b && a->mk && b->mk);
    EXPECT_EQ(a->significant, b->significant);
    EXPECT_EQ(a->mk->s, b->mk->s);
    if (a->mk->z > 0 && a->mk->p <= stopped.read_alpha) {
      ++read;
      EXPECT_EQ(a->mk->z, b->mk->z);
      EXPECT_EQ(a->mk->p, b->mk->p);
    } else {
      EXPECT_FALSE(b->mk->z > 0 && b->mk->p <= stopped.read_alpha) << k;
    }
    if (!b->mk->corrected) ++skipped;
  }
  EXPECT_GT(read, 20u);
  EXPECT_GT(skipped, 20u);
}

TEST(GrowthWindow, TooFewPointsGiveNothing) {
  auto p = Points(5, [](int i) { return 1000.0 + i; });
  EXPECT_FALSE(TestGrowthWindow(p, Options()));
}

TEST(GrowthWindow, ThinningKeepsEachGroupsLowestFloor) {
  auto p = Points(10, [](int i) { return 100.0 - i; });
  auto thin = ThinPoints(p, 5);
  ASSERT_EQ(thin.size(), 5u);
  EXPECT_DOUBLE_EQ(thin[0].floor, 99 * kMiB);  // min of 100, 99
  EXPECT_DOUBLE_EQ(thin[0].t, 30);             // mean time of 0 and 60
  EXPECT_EQ(ThinPoints(p, 20).size(), 10u);
}

TEST(GrowthWindow, NoiseAndDrawdown) {
  auto saw = Points(100, [](int i) { return 1000.0 + (i % 20) * 10; });  // rises 190, falls back
  EXPECT_DOUBLE_EQ(MaxDrawdown(saw), 190 * kMiB);
  auto line = Points(100, [](int i) { return 1000.0 + i; });
  EXPECT_DOUBLE_EQ(MaxDrawdown(line), 0);
  EXPECT_NEAR(FloorNoise(line), 1.4826 / std::sqrt(2.0) * kMiB, 1e-6);  // every difference is 1 MiB
}

TEST(LeakRate, FindsWhereGrowthBeganAfterAPlateau) {
  // Flat for 100 minutes, then 3 MiB a minute (180 MiB/h) for 140 minutes.
  auto p = Points(240, [](int i) { return 2000.0 + (i > 100 ? 3.0 * (i - 100) : 0) + (i % 3) - 1; });
  auto fit = FitLeakRate(p, 1800, 0.9, 240);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->start_t / 60, 100, 6);
  EXPECT_NEAR(fit->sen.slope * 3600 / kMiB, 180, 3);
  EXPECT_LE(fit->sen.low_slope, fit->sen.slope);
  EXPECT_GE(fit->sen.high_slope, fit->sen.slope);
  EXPECT_GE(fit->variance_factor, 1);
}

TEST(LeakRate, GrowthFromTheStartStartsAtTheFirstPoint) {
  auto p = Points(180, [](int i) { return 500.0 + 2.0 * i; });
  auto fit = FitLeakRate(p, 1800, 0.9, 240);
  ASSERT_TRUE(fit);
  EXPECT_LE(fit->start_t, 5 * 60);
  EXPECT_NEAR(fit->sen.slope * 3600 / kMiB, 120, 0.5);
}

TEST(LeakRate, GrowthStartAloneIsTheFitsStart) {
  // FindGrowthStart is FitLeakRate's candidate search without the rate fit: the same start on a
  // plateau then growth, on growth from the first point, on noise, under thinning, and with a
  // longer minimum span; nullopt where the fit is.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 20);
  const std::vector<std::vector<FloorPoint>> series = {
      Points(240, [](int i) { return 2000.0 + (i > 100 ? 3.0 * (i - 100) : 0) + (i % 3) - 1; }),
      Points(180, [](int i) { return 500.0 + 2.0 * i; }),
      Points(400, [&](int i) { return 8000.0 + noise(rng) + (i > 250 ? 1.5 * (i - 250) : 0); }),
      Points(90, [&](int) { return 3000.0 + noise(rng); }),
  };
  for (const auto& p : series) {
    for (double min_span_s : {1800.0, 3600.0}) {
      for (size_t max_points : {size_t{120}, size_t{240}}) {
        const auto fit = FitLeakRate(p, min_span_s, 0.9, max_points);
        const auto start = FindGrowthStart(p, min_span_s, max_points);
        ASSERT_TRUE(fit);
        ASSERT_TRUE(start);
        EXPECT_EQ(*start, fit->start_t) << p.size() << " points, span " << min_span_s << ", " << max_points;
      }
    }
  }
  const auto five = Points(5, [](int i) { return 100.0 + i; });
  EXPECT_FALSE(FitLeakRate(five, 60, 0.9, 120));
  EXPECT_FALSE(FindGrowthStart(five, 60, 120));
}

TEST(GrowthWindow, RisesThroughoutTellsSteadyGrowthFromSparseSteps) {
  // Four hours of 1-minute floors. 50 MiB/h under ±8 MiB of noise rises in every sixth at one pace:
  // each sixth passes its two tests unless its 99 % interval misses (about 6 % of runs); the same
  // rise in 64 MiB steps every 75 minutes leaves some sixth flat.
  int steady_passed = 0, flat_passed = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 8);
    steady_passed +=
        RisesThroughout(Points(240, [&](int i) { return 9000 + 50.0 * i / 60 + noise(rng); }), 6, 0.90, 0.99, 60);
    flat_passed += RisesThroughout(Points(240, [&](int) { return 9000 + noise(rng); }), 6, 0.90, 0.99, 60);
  }
  EXPECT_GE(steady_passed, 42);
  EXPECT_EQ(flat_passed, 0);
  const auto stairs = Points(240, [](int i) { return 9000 + 64.0 * std::floor((i + 30) / 75.0); });
  EXPECT_FALSE(RisesThroughout(stairs, 6, 0.90, 0.99, 60));
  // Sixths alternating 20 and 80 MiB/h: every one rises, at paces that disagree with the whole.
  const auto uneven = Points(240, [](int i) {
    double v = 9000;
    for (int m = 0; m < i; ++m) v += (m / 40 % 2 == 0 ? 20.0 : 80.0) / 60;
    return v;
  });
  EXPECT_FALSE(RisesThroughout(uneven, 6, 0.90, 0.99, 60));
  EXPECT_TRUE(RisesThroughout(uneven, 6, 0.90, 0, 60));
  // Too few points for six parts of five.
  const auto few = Points(20, [](int i) { return 9000 + 10.0 * i; });
  EXPECT_FALSE(RisesThroughout(few, 6, 0.90, 0.99, 60));
  EXPECT_TRUE(RisesThroughout(few, 2, 0.90, 0.99, 60));
}

}  // namespace
}  // namespace vw::detection
