// Block lows, the new-level test and the rising-lows test on synthetic cycle-free floors: upward-only batch swings over
// a flat floor, with and without a leak that lifts it.
#include "detection/new_level.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

#include "core/units.h"

namespace vw::detection {
namespace {

// 1-minute points over `hours`: a floor of 20 GiB plus a batch level uniform in [0, swing] held for
// exponentially distributed times (mean `hold` s), plus `rate` bytes/s from `leak_start` on.
std::vector<FloorPoint> Swings(double hours, double swing, double hold, double rate, double leak_start, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> next(1.0 / hold);
  std::uniform_real_distribution<double> level(0, swing);
  std::vector<FloorPoint> p;
  double change = 0, current = 0;
  for (double t = 30; t < hours * 3600; t += 60) {
    while (change <= t) {
      current = level(rng);
      change += next(rng);
    }
    p.push_back({t, 20 * kGiB + current + (t > leak_start ? rate * (t - leak_start) : 0)});
  }
  return p;
}

TEST(NewLevel, BlockLowsCountBackFromTheLastPointAndDropAPartialFirstBlock) {
  std::vector<FloorPoint> p;
  for (int i = 0; i < 50; ++i) p.push_back({60.0 * i, 1000.0 + (i % 10 == 3 ? -500.0 : 0.0) + i});
  // Last point at 2940 s: blocks (2340, 2940], (1740, 2340], (1140, 1740], (540, 1140]; the points
  // from 0 to 540 cover 540 s of a 600 s block (kept), nothing is left before.
  const auto lows = BlockLows(p, 600, 3);
  ASSERT_EQ(lows.size(), 5u);
  EXPECT_DOUBLE_EQ(lows.back().t, 2340);
  EXPECT_DOUBLE_EQ(lows.back().floor, 1000 - 500 + 43);  // the dip at i = 43 (t = 2580)
  EXPECT_DOUBLE_EQ(lows[3].floor, 1000 - 500 + 33);
  EXPECT_DOUBLE_EQ(lows.front().t, -60);
  EXPECT_DOUBLE_EQ(lows.front().floor, 1000 - 500 + 3);
  // A first block holding under half a block of data is left out.
  std::vector<FloorPoint> q(p.begin() + 6, p.end());  // from 360 s: (−60, 540] holds 180 s
  EXPECT_EQ(BlockLows(q, 600, 3).size(), 4u);
  // So are blocks with too few points.
  EXPECT_EQ(BlockLows(p, 600, 11).size(), 0u);
}

TEST(NewLevel, FindsAFloorLiftedAboveEveryEarlierLow) {
  // 2 GiB swings held about half a minute, 4 GiB/h from 5 h 15 m on: 45 minutes later the recent
  // lows stand above all the earlier ones.
  for (uint64_t seed : {1, 2, 3}) {
    const auto p = Swings(6, 2 * kGiB, 30, 4 * kGiB / 3600, 5.25 * 3600, seed);
    const auto level = FindNewLevel(p, {.min_gap_bytes = 64 * kMiB});
    ASSERT_TRUE(level) << seed;
    EXPECT_GE(level->recent_lows_bytes.size(), 2u);
    EXPECT_GE(level->earlier_blocks, 8u);
    EXPECT_GT(level->gap_bytes, 3 * level->earlier_sd_bytes);
    EXPECT_GE(level->since_t, 5 * 3600.0);
    for (size_t i = 1; i < level->recent_lows_bytes.size(); ++i)
      EXPECT_GE(level->recent_lows_bytes[i], level->recent_lows_bytes[i - 1]);
  }
}

// Neither the new-level test nor the ramp test (RampToNewLevel below) passes on them.
TEST(NewLevel, HealthySwingsComeBackToTheirFloor) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto all = Swings(8, 4 * kGiB, 60.0 + 12.0 * static_cast<double>(seed), 0, 0, seed);
    // Every 10 minutes from 3 h on, as the engine would ask.
    for (double end = 3 * 3600; end <= 8 * 3600; end += 600) {
      std::vector<FloorPoint> p;
      for (const FloorPoint& q : all)
        if (q.t <= end) p.push_back(q);
      EXPECT_FALSE(FindNewLevel(p, {.min_gap_bytes = 64 * kMiB})) << "seed " << seed << " at " << end;
      EXPECT_FALSE(FindRampToNewLevel(p, {.min_gap_bytes = 64 * kMiB})) << "seed " << seed << " at " << end;
    }
  }
}

TEST(NewLevel, NeedsEnoughEarlierBlocksRisingRecentLowsAndTheMargin) {
  const auto p = Swings(6, 2 * kGiB, 30, 4 * kGiB / 3600, 5.25 * 3600, 1);
  ASSERT_TRUE(FindNewLevel(p, {.min_gap_bytes = 64 * kMiB}));
  // Too few earlier blocks for the 6 h series.
  EXPECT_FALSE(FindNewLevel(p, {.min_earlier_blocks = 30}));
  // A margin no gap reaches.
  EXPECT_FALSE(FindNewLevel(p, {.margin_sds = 1000}));
  // A gap above the absolute minimum only.
  EXPECT_FALSE(FindNewLevel(p, {.min_gap_bytes = 100 * kGiB}));
  // Two recent blocks far above ten earlier ones: found when their lows rise, not when they fall.
  auto blocks = [](double second_last, double last) {
    std::vector<FloorPoint> q;
    for (int b = 0; b < 12; ++b) {
      const double low = b == 10 ? second_last : b == 11 ? last : (b % 2) * 100 * kMiB;
      for (int i = 0; i < 15; ++i) q.push_back({900.0 * b + 60.0 * i + 30, low + (i == 7 ? 0 : 500 * kMiB)});
    }
    return q;
  };
  const auto rising = FindNewLevel(blocks(1.5 * kGiB, 2 * kGiB), {});
  ASSERT_TRUE(rising);
  EXPECT_EQ(rising->recent_lows_bytes.size(), 2u);
  EXPECT_EQ(rising->earlier_blocks, 10u);
  EXPECT_DOUBLE_EQ(rising->earlier_high_bytes, 100 * kMiB);
  EXPECT_DOUBLE_EQ(rising->gap_bytes, 1.5 * kGiB - 100 * kMiB);
  EXPECT_FALSE(FindNewLevel(blocks(2 * kGiB, 1.5 * kGiB), {}));
}

TEST(RisingLows, FindsASlowLeakUnderSwingsAndItsRate) {
  // 300 MiB/h from 3 h on under 2 GiB swings held about half a minute, 9 h in all: the lows of the
  // last 6 h rise block after block.
  for (uint64_t seed : {1, 2, 3}) {
    const auto p = Swings(9, 2 * kGiB, 30, 300 * kMiB / 3600, 3 * 3600, seed);
    const auto r = FindRisingLows(p, {.min_rate_bps = 38 * kMiB / 3600});
    ASSERT_TRUE(r) << seed;
    EXPECT_GT(r->mk.z, 4.4);
    EXPECT_LT(r->mk.p, 1e-5);
    EXPECT_GE(r->blocks, 12u);
    EXPECT_NEAR(r->sen.slope * 3600 / kMiB, 300, 120) << seed;
    EXPECT_GT(r->sen.low_slope, 0);
  }
}

TEST(RisingLows, HealthySwingsAndSlowGrowthAreNot) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto p = Swings(12, 4 * kGiB, 60.0 + 12.0 * static_cast<double>(seed), 0, 0, seed);
    EXPECT_FALSE(FindRisingLows(p, {.min_rate_bps = 38 * kMiB / 3600})) << seed;
  }
  // Rising lows, but slower than the rate floor asked for.
  const auto slow = Swings(9, 2 * kGiB, 30, 300 * kMiB / 3600, 3 * 3600, 1);
  EXPECT_FALSE(FindRisingLows(slow, {.min_rate_bps = 1000 * kMiB / 3600}));
}

TEST(RisingLows, AOneOffStepIsNotALeak) {
  // Lows flat, then 1 GiB higher from some point on (a model loaded once more): Mann–Kendall alone
  // would call that a trend, the Hamed–Rao factor of the stepped lows does not.
  for (double at : {0.45, 0.5, 0.55}) {
    for (uint64_t seed : {1, 2, 3}) {
      std::vector<FloorPoint> p;
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(0, 600 * kMiB);
      for (double t = 30; t < 12 * 3600; t += 60)
        p.push_back({t, 20 * kGiB + (t > at * 12 * 3600 ? kGiB : 0) + u(rng)});
      EXPECT_FALSE(FindRisingLows(p, {})) << at << " " << seed;
      const auto lows = BlockLows(p, 900, 3);
      std::vector<double> y;
      ASSERT_EQ(lows.size(), 48u);
      for (const FloorPoint& l : lows) y.push_back(l.floor);
      const auto plain = MannKendall(y, {.correction = AutocorrelationCorrection::kNone});
      ASSERT_TRUE(plain);
      EXPECT_LT(plain->p, 1e-5) << at << " " << seed;  // without the correction it would pass
    }
  }
}

TEST(RampToNewLevel, FindsARampNoRecentLowStandsClearOf) {
  // 1.5 GiB/h from 4 h 30 m on under 2 GiB swings held about half a minute: 75 minutes later each
  // recent low is only a block's rise above the one before, so the new-level test finds nothing,
  // but the last two stand far above every low before the ramp.
  for (uint64_t seed : {1, 2, 3}) {
    const auto p = Swings(5.75, 2 * kGiB, 30, 1.5 * kGiB / 3600, 4.5 * 3600, seed);
    EXPECT_FALSE(FindNewLevel(p, {.margin_sds = 6, .min_gap_bytes = 64 * kMiB})) << seed;
    const auto ramp = FindRampToNewLevel(p, {.min_gap_bytes = 64 * kMiB});
    ASSERT_TRUE(ramp) << seed;
    EXPECT_GE(ramp->ramp_blocks, 3u);
    EXPECT_NEAR(ramp->from_t, 4.5 * 3600, 1800) << seed;
    EXPECT_EQ(ramp->level.recent_lows_bytes.size(), 2u);
    EXPECT_GE(ramp->level.earlier_blocks, 8u);
    EXPECT_GT(ramp->level.margin_sds, 6);
    for (double low : ramp->level.recent_lows_bytes)
      EXPECT_GT(low, ramp->level.earlier_high_bytes + 6 * ramp->level.earlier_sd_bytes);
  }
}

TEST(RampToNewLevel, EveryLowAfterTheRampsFirstStaysAboveTheEarlierHigh) {
  // Ten earlier blocks whose lows alternate 0 and 100 MiB, then a ramp of four: its first block at
  // the earlier level, then 1, 2 and 3 GiB. With the second ramp block back at 50 MiB (inside the
  // earlier range) there is no ramp of four or more: every low after a ramp's first must stay above
  // the earlier high. The ramp of three that starts on the dip passes.
  auto blocks = [](double second) {
    const std::array<double, 4> ramp = {0, second, 2 * kGiB, 3 * kGiB};
    std::vector<FloorPoint> q;
    for (int b = 0; b < 14; ++b) {
      const double low = b < 10 ? (b % 2) * 100 * kMiB : ramp[static_cast<size_t>(b - 10)];
      for (int i = 0; i < 15; ++i) q.push_back({900.0 * b + 60.0 * i + 30, low + (i == 7 ? 0 : 500 * kMiB)});
    }
    return q;
  };
  const auto found = FindRampToNewLevel(blocks(1 * kGiB), {});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->ramp_blocks, 4u);
  EXPECT_DOUBLE_EQ(found->from_t, 12570 - 4 * 900.0);  // blocks count back from the last point
  EXPECT_DOUBLE_EQ(found->above_t, 12570 - 3 * 900.0);
  EXPECT_DOUBLE_EQ(found->level.since_t, 12570 - 2 * 900.0);  // the last two
  EXPECT_EQ(found->level.earlier_blocks, 10u);
  EXPECT_DOUBLE_EQ(found->level.earlier_high_bytes, 100 * kMiB);
  EXPECT_DOUBLE_EQ(found->level.gap_bytes, 2 * kGiB - 100 * kMiB);
  EXPECT_EQ(found->level.recent_lows_bytes, (std::vector<double>{2 * kGiB, 3 * kGiB}));
  // The ramp of three, from the 1 GiB block, passes as well; the longer one is kept.
  EXPECT_TRUE(FindRampToNewLevel(blocks(1 * kGiB), {.min_ramp_blocks = 3, .max_ramp_blocks = 3}));
  EXPECT_FALSE(FindRampToNewLevel(blocks(50 * kMiB), {.min_ramp_blocks = 4}));
  EXPECT_TRUE(FindRampToNewLevel(blocks(50 * kMiB), {.max_ramp_blocks = 3}));  // from the dip on
  // A margin no gap reaches, and too few earlier blocks.
  EXPECT_FALSE(FindRampToNewLevel(blocks(1 * kGiB), {.margin_sds = 1000}));
  EXPECT_FALSE(FindRampToNewLevel(blocks(1 * kGiB), {.min_earlier_blocks = 12}));
}

}  // namespace
}  // namespace vw::detection
