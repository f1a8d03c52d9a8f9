#include "detection/framework_split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace vw::detection {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// `n` steps of device 0 whose values (MiB) come from the functions of the step index; a function
// that is null leaves that value out.
using Curve = std::function<double(size_t)>;
std::vector<FrameworkStep> Steps(size_t n, const Curve& allocated, const Curve& reserved, const Curve& driver = {}) {
  std::vector<FrameworkStep> out;
  for (size_t i = 0; i < n; ++i) {
    FrameworkStep s;
    s.line = i + 1;
    if (allocated) s.allocated_bytes = static_cast<uint64_t>(allocated(i) * kMiB);
    if (reserved) s.reserved_bytes = static_cast<uint64_t>(reserved(i) * kMiB);
    if (driver) s.driver_used_bytes = static_cast<uint64_t>(driver(i) * kMiB);
    out.push_back(s);
  }
  return out;
}

const LayerTrend& Layer(const FrameworkSplit& s, const std::string& name) {
  for (const auto& l : s.layers) {
    if (l.name == name) return l;
  }
  static LayerTrend none;
  ADD_FAILURE() << "no layer " << name;
  return none;
}

// Allocated memory rising 2 MiB a step under ±8 MiB of step-to-step noise: the application's
// tensors, at the rate it rises, with the allocator's reserved memory following it in 20 MiB blocks.
TEST(SplitFrameworkView, AllocatedRisingIsTheApplication) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-8, 8);
  std::vector<double> jitter(200);
  for (double& j : jitter) j = noise(rng);
  auto allocated = [&](size_t i) { return 4000 + 2.0 * static_cast<double>(i) + jitter[i]; };
  auto reserved = [&](size_t i) { return 20.0 * std::ceil((allocated(i) + 500) / 20.0); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(200, allocated, reserved));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_EQ(s.layer, FrameworkLayer::kApplication);
  const LayerTrend& a = Layer(s, "allocated");
  ASSERT_TRUE(a.rate_bytes_per_step);
  EXPECT_NEAR(*a.rate_bytes_per_step / kMiB, 2.0, 0.1);
  EXPECT_LT(*a.rate_lo_bytes_per_step / kMiB, 2.0);
  EXPECT_GT(*a.rate_hi_bytes_per_step / kMiB, 2.0);
  EXPECT_TRUE(a.rising);
  EXPECT_FALSE(s.next_step.empty());
  EXPECT_NE(s.evidence.back().find("live tensors"), std::string::npos) << s.evidence.back();
}

// Allocated memory holds; reserved memory creeps up (fragmentation): the allocator's cache.
TEST(SplitFrameworkView, ReservedRisingOverFlatAllocatedIsTheAllocatorCache) {
  auto allocated = [](size_t i) { return 3000.0 + static_cast<double>(i % 5); };
  auto reserved = [](size_t i) { return 6000.0 + 20.0 * static_cast<double>(i / 4); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(120, allocated, reserved));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_EQ(s.layer, FrameworkLayer::kAllocatorCache);
  EXPECT_FALSE(Layer(s, "allocated").rising);
  EXPECT_TRUE(Layer(s, "cache").rising);
}

// PyTorch's view holds to the byte; the driver's climbs 2 MiB a step: memory below PyTorch.
TEST(SplitFrameworkView, DriverRisingUnderAFlatFrameworkIsBelowIt) {
  auto allocated = [](size_t) { return 304.0; };
  auto reserved = [](size_t) { return 724.0; };
  auto driver = [](size_t i) { return 2796.0 + 2.0 * static_cast<double>(i); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(60, allocated, reserved, driver));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_EQ(s.layer, FrameworkLayer::kBelowFramework);
  EXPECT_TRUE(Layer(s, "outside").rising);
  EXPECT_NE(s.next_step.find("native extension"), std::string::npos);
}

TEST(SplitFrameworkView, ReservedRisingWithoutAnAllocatedSeriesIsInsidePytorch) {
  auto reserved = [](size_t i) { return 6000.0 + 8.0 * static_cast<double>(i); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(40, {}, reserved));
  EXPECT_EQ(s.layer, FrameworkLayer::kInsideFramework);
}

// The first steps ramp (the optimizer's state, the allocator's first blocks), then it holds: a
// warm-up, not growth.
TEST(SplitFrameworkView, ARampThenAHoldIsSettledNotGrowing) {
  auto allocated = [](size_t i) { return i < 8 ? 1000.0 + 400.0 * static_cast<double>(i) : 4200.0; };
  auto reserved = [](size_t i) { return i < 8 ? 1500.0 + 500.0 * static_cast<double>(i) : 5600.0; };
  FrameworkSplit s = SplitFrameworkView(0, Steps(100, allocated, reserved));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kSettled);
  EXPECT_EQ(s.layer, FrameworkLayer::kNone);
  EXPECT_TRUE(Layer(s, "allocated").settled);
  EXPECT_TRUE(s.next_step.empty());
}

TEST(SplitFrameworkView, NoiseAroundALevelIsFlat) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0, 30);
  std::vector<double> a(300), r(300);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 5000 + noise(rng);
    r[i] = 8000 + noise(rng);
  }
  FrameworkSplit s = SplitFrameworkView(0, Steps(
                                               300, [&](size_t i) { return a[i]; }, [&](size_t i) { return r[i]; }));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kFlat);
  EXPECT_EQ(s.layer, FrameworkLayer::kNone);
}

// One allocator step up in a long run: significant to Mann–Kendall, but its interval reaches 0,
// so it is no steady rise.
TEST(SplitFrameworkView, OneStepUpIsNotASteadyRise) {
  auto allocated = [](size_t) { return 20.0; };
  auto reserved = [](size_t i) { return i < 30 ? 26.0 : 28.0; };
  FrameworkSplit s = SplitFrameworkView(0, Steps(60, allocated, reserved));
  EXPECT_NE(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_FALSE(Layer(s, "reserved").rising);
}

// A rise too small to matter: 1 KiB a step on 8 GiB is under 1 % of the level over the log.
TEST(SplitFrameworkView, ARiseUnderOnePercentOfTheLevelIsNotGrowth) {
  auto allocated = [](size_t i) { return 8192.0 + static_cast<double>(i) / 1024.0; };
  FrameworkSplit s = SplitFrameworkView(0, Steps(500, allocated, {}));
  EXPECT_FALSE(Layer(s, "allocated").rising);
  EXPECT_NE(s.verdict, FrameworkVerdict::kGrowing);
}

TEST(SplitFrameworkView, TooFewStepsSayWhichLayerMoved) {
  auto allocated = [](size_t) { return 304.2; };
  auto reserved = [](size_t) { return 724.0; };
  auto driver = [](size_t i) { return 2796.0 + 2.0 * static_cast<double>(i); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(3, allocated, reserved, driver));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kTooShort);
  EXPECT_FALSE(Layer(s, "driver").rate_bytes_per_step.has_value());
  EXPECT_NE(s.evidence.back().find("driver rose while allocated and reserved did not"), std::string::npos)
      << s.evidence.back();
}

// A restart halves the memory: only the run after it is judged, and the evidence says where.
TEST(SplitFrameworkView, OnlyTheRunAfterARestartIsJudged) {
  // First run: allocated rises; second run (from step 40): it holds.
  auto allocated = [](size_t i) { return i < 40 ? 1000.0 + 50.0 * static_cast<double>(i) : 900.0; };
  auto reserved = [](size_t i) { return i < 40 ? 2000.0 + 60.0 * static_cast<double>(i) : 1500.0; };
  FrameworkSplit s = SplitFrameworkView(0, Steps(80, allocated, reserved));
  EXPECT_EQ(s.steps, 40u);
  EXPECT_EQ(s.first_line, 41u);
  EXPECT_EQ(s.verdict, FrameworkVerdict::kFlat);
  EXPECT_NE(s.evidence.front().find("at line 41"), std::string::npos) << s.evidence.front();
}

// Two ranks printing into one log without naming theirs: reserved memory alternates between their
// levels, every other step a "drop". Not restarts: the evidence says what it is, before anything.
TEST(SplitFrameworkView, AlternatingLevelsAreTwoUnnamedSourcesNotRestarts) {
  auto allocated = [](size_t i) { return i % 2 == 0 ? 2000.0 + static_cast<double>(i) : 2000.0; };
  auto reserved = [](size_t i) { return i % 2 == 0 ? 8000.0 : 3000.0; };
  FrameworkSplit s = SplitFrameworkView(0, Steps(80, allocated, reserved));
  EXPECT_TRUE(s.mixed_sources);
  ASSERT_FALSE(s.evidence.empty());
  EXPECT_NE(s.evidence.front().find("not restarts but two processes or devices"), std::string::npos)
      << s.evidence.front();
  // One restart that climbs back at once is a restart.
  auto once = [](size_t i) { return i == 40 ? 1000.0 : 8000.0; };
  EXPECT_FALSE(SplitFrameworkView(0, Steps(80, allocated, once)).mixed_sources);
}

// A log of a million steps is thinned to floors: the verdict stands, and the peaks of steps in
// progress (every other line a step's peak, as logs that print after forward and after backward
// show) do not count.
TEST(SplitFrameworkView, ALongLogIsThinnedToItsFloors) {
  auto allocated = [](size_t i) {
    const double floor = 2000.0 + 0.0005 * static_cast<double>(i);
    return i % 2 == 1 ? floor + 9000.0 : floor;
  };
  FrameworkSplit s = SplitFrameworkView(0, Steps(1000000, allocated, {}));
  EXPECT_EQ(s.steps, 1000000u);
  EXPECT_EQ(s.layer, FrameworkLayer::kApplication);
  const LayerTrend& a = Layer(s, "allocated");
  EXPECT_EQ(a.n, 1000000u);
  EXPECT_NEAR(*a.rate_bytes_per_step / kMiB, 0.0005, 0.0001);
}

// A ramp over the first 40-50 % of the log, then a hold with a few MiB of noise: settled on every
// seed (the second half's slope is its noise's, not a quarter of the ramp's pace).
TEST(SplitFrameworkView, ARampOverHalfTheLogThenAHoldIsNeverGrowing) {
  for (unsigned seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-5, 5), share(0.4, 0.5);
    const double ramp = 200 * share(rng);
    std::vector<double> a(200);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = 1000 + 3000 * std::min(1.0, static_cast<double>(i) / ramp) + noise(rng);
    FrameworkSplit s = SplitFrameworkView(0, Steps(200, [&](size_t i) { return a[i]; }, {}));
    EXPECT_NE(s.verdict, FrameworkVerdict::kGrowing) << "seed " << seed;
  }
}

// The driver's figure rises but the log has no reserved memory: growing, but not placed.
TEST(SplitFrameworkView, DriverRisingWithoutReservedIsGrowingButNotSplit) {
  auto allocated = [](size_t) { return 3000.0; };
  auto driver = [](size_t i) { return 5000.0 + 4.0 * static_cast<double>(i); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(100, allocated, {}, driver));
  EXPECT_EQ(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_EQ(s.layer, FrameworkLayer::kNotSplit);
  EXPECT_STREQ(FrameworkLayerName(s.layer), "not_split");
}

// Reserved rises; allocated is printed every 20th step only, too seldom to test: inside PyTorch.
TEST(SplitFrameworkView, ReservedRisingWithSparseAllocatedIsInsidePytorch) {
  std::vector<FrameworkStep> steps = Steps(100, {}, [](size_t i) { return 6000.0 + 10.0 * static_cast<double>(i); });
  for (size_t i = 0; i < steps.size(); i += 20) steps[i].allocated_bytes = static_cast<uint64_t>(3000 * kMiB);
  FrameworkSplit s = SplitFrameworkView(0, steps);
  EXPECT_EQ(s.verdict, FrameworkVerdict::kGrowing);
  EXPECT_EQ(s.layer, FrameworkLayer::kInsideFramework);
}

// The cache of a 10 GiB pool growing by 10 MiB in all: 1 % of the pool, not of the cache, is the
// least rise.
TEST(SplitFrameworkView, ATinyCacheRiseInABigPoolIsNotGrowth) {
  auto allocated = [](size_t) { return 10230.0; };
  auto reserved = [](size_t i) { return 10240.0 + 0.05 * static_cast<double>(i); };
  FrameworkSplit s = SplitFrameworkView(0, Steps(200, allocated, reserved));
  EXPECT_NE(s.verdict, FrameworkVerdict::kGrowing);
}

// Reserved printed every 5th step only, and allocated-only logs: restarts are still found.
TEST(SplitFrameworkView, RestartsAreFoundInSparseAndAllocatedOnlyLogs) {
  std::vector<FrameworkStep> sparse = Steps(100, [](size_t i) { return i < 50 ? 3000.0 + 20.0 * i : 2000.0; }, {});
  for (size_t i = 0; i < sparse.size(); i += 5) {
    sparse[i].reserved_bytes = static_cast<uint64_t>((i < 50 ? 9000.0 + 20.0 * static_cast<double>(i) : 2500.0) * kMiB);
  }
  FrameworkSplit s = SplitFrameworkView(0, sparse);
  EXPECT_EQ(s.steps, 50u);
  EXPECT_EQ(s.verdict, FrameworkVerdict::kFlat);
  FrameworkSplit only =
      SplitFrameworkView(0, Steps(100, [](size_t i) { return i < 50 ? 3000.0 + 20.0 * i : 1000.0; }, {}));
  EXPECT_EQ(only.steps, 50u);
  EXPECT_NE(only.evidence.front().find("allocated fell from"), std::string::npos) << only.evidence.front();
  // Allocated memory that halves within a step and comes back is no restart.
  FrameworkSplit within = SplitFrameworkView(0, Steps(100, [](size_t i) { return i % 2 ? 9000.0 : 2000.0 + i; }, {}));
  EXPECT_EQ(within.steps, 100u);
}

TEST(SplitFrameworkLog, OneSplitPerDevice) {
  std::vector<FrameworkStep> steps;
  for (int d : {1, 0, 1}) {
    FrameworkStep s;
    s.device = d;
    s.allocated_bytes = 1;
    steps.push_back(s);
  }
  auto splits = SplitFrameworkLog(steps);
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].device, 0);
  EXPECT_EQ(splits[0].steps, 1u);
  EXPECT_EQ(splits[1].device, 1);
  EXPECT_EQ(splits[1].steps, 2u);
}

TEST(FrameworkNames, AreTheJsonWords) {
  EXPECT_STREQ(FrameworkVerdictName(FrameworkVerdict::kTooShort), "too_short");
  EXPECT_STREQ(FrameworkVerdictName(FrameworkVerdict::kGrowing), "growing");
  EXPECT_STREQ(FrameworkLayerName(FrameworkLayer::kBelowFramework), "below_framework");
  EXPECT_EQ(FrameworkLayerName(FrameworkLayer::kNone), nullptr);
}

}  // namespace
}  // namespace vw::detection
