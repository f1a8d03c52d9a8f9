// FindImminentFill on cycle-free floors built here: one point a minute, batch swings as a level
// drawn uniform in [0, swing] and held a few minutes, growth from a given minute on.
#include "detection/imminent_fill.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "core/units.h"

namespace vw::detection {
namespace {

constexpr double kHour = 3600;

// `minutes` one-minute points: 20 GiB plus swings up to `swing_mib`, plus growth(t) MiB.
std::vector<FloorPoint> Floor(int minutes, double swing_mib, const std::function<double(double)>& growth,
                              uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> level(0, swing_mib);
  std::vector<FloorPoint> p;
  double swing = level(rng);
  for (int i = 0; i < minutes; ++i) {
    if (i % 3 == 0) swing = level(rng);  // a batch level held three minutes
    const double t = 60.0 * i;
    p.push_back({t, (20480 + swing + growth(t)) * kMiB});
  }
  return p;
}

// 3000 MiB/h from minute 60, seen at minute 100: 2 GiB in 40 minutes over swings of 500 MiB.
auto FastFrom60 = [](double t) { return t > 60 * 60 ? 3000 * (t - 3600) / kHour : 0.0; };

ImminentFillOptions SoonOnly() {
  ImminentFillOptions o;
  o.swings_range_multiple = 0;
  return o;
}

ImminentFillOptions SwingsOnly() {
  ImminentFillOptions o;
  o.max_runway_seconds = 0;
  return o;
}

TEST(ImminentFill, FastGrowthPastTheSwingsThatFillsTheCardSoonIsFound) {
  const auto p = Floor(100, 500, FastFrom60);
  const auto f = FindImminentFill(p, 1.5 * kGiB, {});
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->rate.start_t / 60, 60, 6);
  EXPECT_NEAR(f->rate.sen.slope * kHour / kMiB, 3000, 300);
  EXPECT_GT(f->rate.sen.low_slope, 0);
  EXPECT_GE(f->rise_bytes, 2 * f->before_range_bytes);
  EXPECT_GT(f->before_range_bytes, 300 * kMiB);  // the swings before it
  EXPECT_LE(f->before_range_bytes, 500 * kMiB);
  EXPECT_GE(f->before_seconds, 1800);
  EXPECT_LT(f->mk.p, 1e-5);
  EXPECT_TRUE(f->runs_out_soon);
  EXPECT_TRUE(FindImminentFill(p, 1.5 * kGiB, SoonOnly()));
  // No room at all left is as soon as it gets.
  const auto full = FindImminentFill(p, -1 * kGiB, SoonOnly());
  ASSERT_TRUE(full);
  EXPECT_TRUE(full->runs_out_soon);
}

TEST(ImminentFill, GrowthThatLeavesHoursOfRoomIsPastTheSwingsButNotImminent) {
  const auto p = Floor(95, 500, FastFrom60);
  // At the lower end of the rate (under 3 GiB/h) 10 GiB last over three hours.
  EXPECT_FALSE(FindImminentFill(p, 10 * kGiB, SoonOnly()));
  ImminentFillOptions longer = SoonOnly();
  longer.max_runway_seconds = 5 * kHour;
  EXPECT_TRUE(FindImminentFill(p, 10 * kGiB, longer));
  // 1.7 GiB past swings of 500 MiB, after an hour of them: the other form.
  const auto f = FindImminentFill(p, 10 * kGiB, {});
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->runs_out_soon);
  EXPECT_TRUE(FindImminentFill(p, 10 * kGiB, SwingsOnly()));
}

TEST(ImminentFill, EachFormHasItsOwnMultipleOfTheSwings) {
  // 1700 MiB/h from minute 60 over swings of 500 MiB, seen at minute 95: about 1 GiB, between
  // 1.5 and 2 times their range. Past the swings, but short of what the runway form asks.
  const auto p = Floor(
      95, 500, [](double t) { return t > 3600 ? 1700 * (t - 3600) / kHour : 0.0; }, 2);
  const auto f = FindImminentFill(p, 0.2 * kGiB, {});
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->runs_out_soon);
  EXPECT_GE(f->rise_bytes, 1.5 * f->before_range_bytes);
  EXPECT_LT(f->rise_bytes, 2 * f->before_range_bytes);
  EXPECT_FALSE(FindImminentFill(p, 0.2 * kGiB, SoonOnly()));
  ImminentFillOptions strict;
  strict.swings_range_multiple = 2;
  EXPECT_FALSE(FindImminentFill(p, 0.2 * kGiB, strict));
}

TEST(ImminentFill, GrowthWithinTheSwingsIsNot) {
  // The same growth under swings of 2.5 GiB: 2 GiB is less than twice what they cover.
  const auto p = Floor(100, 2500, FastFrom60);
  EXPECT_FALSE(FindImminentFill(p, 0.5 * kGiB, {}));
}

TEST(ImminentFill, GrowthThatSlowsDownIsNot) {
  // A settling curve from minute 60: 2.5 GiB approached with a 15-minute time constant.
  const auto settling = [](double t) { return t > 3600 ? 2560 * (1 - std::exp(-(t - 3600) / 900)) : 0.0; };
  const auto p = Floor(100, 300, settling);
  EXPECT_FALSE(FindImminentFill(p, 0.5 * kGiB, {}));
}

TEST(ImminentFill, AStepIsNotGrowth) {
  // 2.5 GiB loaded at once at minute 75 (another model under the load), seen at minute 100.
  const auto p = Floor(100, 300, [](double t) { return t > 75 * 60 ? 2560.0 : 0.0; });
  EXPECT_FALSE(FindImminentFill(p, 0.5 * kGiB, {}));
}

TEST(ImminentFill, GrowthWithoutFloorBeforeItIsNot) {
  // Growth from minute 10: the swings' own range is not known yet.
  const auto early = [](double t) { return t > 600 ? 3000 * (t - 600) / kHour : 0.0; };
  EXPECT_FALSE(FindImminentFill(Floor(50, 500, early), 0.5 * kGiB, {}));
  // Nor growth that has run under min_growth_seconds.
  EXPECT_FALSE(FindImminentFill(Floor(80, 500, FastFrom60), 0.5 * kGiB, {}));
  EXPECT_FALSE(FindImminentFill(Floor(5, 500, FastFrom60), 0.5 * kGiB, {}));
}

TEST(ImminentFill, WithoutTheRoomOnlyTheSwingsFormIsAsked) {
  const auto p = Floor(95, 500, FastFrom60);
  const auto f = FindImminentFill(p, std::nullopt, {});
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->runs_out_soon);
  EXPECT_FALSE(FindImminentFill(p, std::nullopt, SoonOnly()));
  ImminentFillOptions neither = SoonOnly();
  neither.max_runway_seconds = 0;
  EXPECT_FALSE(FindImminentFill(p, -1 * kGiB, neither));
}

TEST(ImminentFill, GrowthLongerThanTheFloorBeforeItIsNotMeasuredAgainstThatFloor) {
  // 3000 MiB/h from minute 60, seen at minute 130: 70 minutes of growth after 60 of floor. The
  // swings' range over an hour is no measure for growth over 70 minutes.
  const auto p = Floor(130, 500, FastFrom60);
  EXPECT_FALSE(FindImminentFill(p, 10 * kGiB, {}));
  ImminentFillOptions any_before = SwingsOnly();
  any_before.min_before_per_growth = 0;
  const auto f = FindImminentFill(p, 10 * kGiB, any_before);
  ASSERT_TRUE(f);  // everything else holds
  EXPECT_LT(f->before_seconds, f->rate.t_end - f->rate.start_t);
  // Seen at minute 95, the floor before (an hour) covers 1.5 times the growth (35 minutes).
  EXPECT_TRUE(FindImminentFill(Floor(95, 500, FastFrom60), 10 * kGiB, SwingsOnly()));
  // The runway form does not ask it: with the card full within the hour, twice the swings' range
  // is enough.
  const auto soon = FindImminentFill(p, 0.5 * kGiB, {});
  ASSERT_TRUE(soon);
  EXPECT_TRUE(soon->runs_out_soon);
}

TEST(ImminentFill, SwingsAloneAreNever) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto p = Floor(
        180, 1000, [](double) { return 0.0; }, seed);
    EXPECT_FALSE(FindImminentFill(p, 0, {})) << "seed " << seed;
  }
}

}  // namespace
}  // namespace vw::detection
