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
  // No room at all left is as soon as it gets.
  EXPECT_TRUE(FindImminentFill(p, -1 * kGiB, {}));
}

TEST(ImminentFill, GrowthThatLeavesHoursOfRoomIsNotImminent) {
  const auto p = Floor(100, 500, FastFrom60);
  // At the lower end of the rate (about 2.7 GiB/h) 10 GiB last over three hours.
  EXPECT_FALSE(FindImminentFill(p, 10 * kGiB, {}));
  ImminentFillOptions longer;
  longer.max_runway_seconds = 5 * kHour;
  EXPECT_TRUE(FindImminentFill(p, 10 * kGiB, longer));
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

TEST(ImminentFill, SwingsAloneAreNever) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto p = Floor(
        180, 1000, [](double) { return 0.0; }, seed);
    EXPECT_FALSE(FindImminentFill(p, 0, {})) << "seed " << seed;
  }
}

}  // namespace
}  // namespace vw::detection
