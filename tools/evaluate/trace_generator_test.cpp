#include "trace_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace vw::evaluate {
namespace {

constexpr double kMiBPerHour = 3600.0 / kMiB;

TEST(TraceGenerator, SameSeedAndIndexGiveTheSameTrace) {
  const TraceGenerator a({.seed = 42});
  const TraceGenerator b({.seed = 42});
  for (int i : {0, 7, 11, 123}) {
    const Trace x = a.Generate(i);
    const Trace y = b.Generate(i);
    EXPECT_EQ(x.used_mib, y.used_mib) << "trace " << i;
    EXPECT_EQ(x.label.interval_s, y.label.interval_s);
    EXPECT_EQ(x.label.leak_rate_bps, y.label.leak_rate_bps);
    EXPECT_EQ(x.label.leak_start_s, y.label.leak_start_s);
    EXPECT_EQ(x.label.total_bytes, y.label.total_bytes);
  }
}

// FNV-1a over the samples: a fingerprint of one trace.
uint64_t Fingerprint(const Trace& t) {
  uint64_t h = 14695981039346656037ULL;
  for (int32_t v : t.used_mib) {
    for (int k = 0; k < 4; ++k) {
      h ^= (static_cast<uint32_t>(v) >> (8 * k)) & 0xffu;
      h *= 1099511628211ULL;
    }
  }
  return h;
}

// One trace of every shape of seed 232, pinned: the figures of docs/detection.md were measured on
// these corpora, so a seed must give the same samples whatever compiler built the generator (a
// draw inside a call's argument list once made the warm-up staircases depend on it).
TEST(TraceGenerator, ASeedGivesTheSameSamplesWhateverBuiltTheGenerator) {
  const TraceGenerator gen({.seed = 232});
  constexpr uint64_t kPinned[12] = {13373564574672879829ULL, 6215992953260826863ULL,  13930257779536253151ULL,
                                    4549776867053791413ULL,  4561698809423052765ULL,  5001025815168066247ULL,
                                    14665188419029647075ULL, 9023112363035258675ULL,  610448140768613242ULL,
                                    1716931695103932166ULL,  17207814292112310412ULL, 10339628316483515141ULL};
  for (int i = 24; i < 36; ++i) {
    const Trace t = gen.Generate(i);
    EXPECT_EQ(Fingerprint(t), kPinned[i - 24]) << "trace " << i << " (" << ShapeName(t.label.shape) << ")";
  }
}

TEST(TraceGenerator, DifferentSeedsGiveDifferentTraces) {
  const Trace x = TraceGenerator({.seed = 1}).Generate(7);
  const Trace y = TraceGenerator({.seed = 2}).Generate(7);
  EXPECT_EQ(x.label.shape, y.label.shape);
  EXPECT_NE(x.used_mib, y.used_mib);
}

TEST(TraceGenerator, CyclesThroughEveryShapeWithMatchingLabels) {
  const TraceGenerator gen({.seed = 3, .max_hours = 1.5, .min_interval_s = 5});
  const auto shapes = AllShapes();
  ASSERT_EQ(shapes.size(), 12u);
  for (int i = 0; i < 24; ++i) {
    const Trace t = gen.Generate(i);
    const Shape want = shapes[static_cast<size_t>(i) % shapes.size()];
    EXPECT_EQ(t.label.shape, want) << i;
    EXPECT_EQ(t.label.leak, IsLeak(want)) << ShapeName(want);
    EXPECT_EQ(t.label.leak, t.label.leak_start_s.has_value()) << ShapeName(want);
    EXPECT_EQ(t.label.leak, t.label.leak_rate_bps > 0) << ShapeName(want);
    EXPECT_EQ(t.label.id, i);
  }
}

TEST(TraceGenerator, ShapeNamesReadBack) {
  for (Shape s : AllShapes()) EXPECT_EQ(ShapeFromName(ShapeName(s)), s) << ShapeName(s);
  EXPECT_EQ(ShapeFromName("Serving"), std::nullopt);
  EXPECT_EQ(ShapeFromName(""), std::nullopt);
}

TEST(TraceGenerator, LabelsStayInTheConfiguredRanges) {
  const TraceGenerator gen({.seed = 5, .max_hours = 3, .min_interval_s = 1});
  for (int i = 0; i < 96; ++i) {
    const Trace t = gen.Generate(i);
    const TraceLabel& l = t.label;
    EXPECT_GE(l.interval_s, 1.0);
    EXPECT_LE(l.interval_s, 10.0);
    EXPECT_NEAR(l.interval_s * 1000, std::round(l.interval_s * 1000), 1e-6) << "interval is whole ms";
    EXPECT_GE(l.total_bytes, 16.0 * kGiB);
    EXPECT_LE(l.total_bytes, 141.0 * kGiB);
    EXPECT_NEAR(l.duration_s, static_cast<double>(t.used_mib.size() - 1) * l.interval_s, 1e-6);
    if (l.capped != "trace") {
      EXPECT_GE(l.duration_s, 3600 - l.interval_s);
      EXPECT_LE(l.duration_s, 3 * 3600.0);
    }
    if (l.leak) {
      EXPECT_GT(*l.leak_start_s, 0);
      EXPECT_LT(*l.leak_start_s, l.duration_s);
      if (l.capped != "rate") {
        EXPECT_GE(l.leak_rate_bps * kMiBPerHour, 20 - 1e-9);
        EXPECT_LE(l.leak_rate_bps * kMiBPerHour, 4096 + 1e-9);
      }
    }
  }
}

TEST(TraceGenerator, EveryTraceStaysBelowTheCard) {
  const TraceGenerator gen({.seed = 9, .min_interval_s = 2});
  for (int i = 0; i < 120; ++i) {
    const Trace t = gen.Generate(i);
    const double total_mib = t.label.total_bytes / kMiB;
    const int32_t peak = *std::max_element(t.used_mib.begin(), t.used_mib.end());
    EXPECT_LT(peak, total_mib) << ShapeName(t.label.shape) << " trace " << i;
    EXPECT_GE(*std::min_element(t.used_mib.begin(), t.used_mib.end()), 0);
  }
}

// Least-squares slope (MiB/s) of per-minute medians from `from` to the end.
double FloorSlopeMiBPerSecond(const Trace& t, double from) {
  std::vector<double> xs, ys;
  const auto per_bucket = static_cast<size_t>(std::max(1.0, std::round(60.0 / t.label.interval_s)));
  const auto first = static_cast<size_t>(std::ceil(from / t.label.interval_s));
  for (size_t i = first; i + per_bucket <= t.used_mib.size(); i += per_bucket) {
    std::vector<int32_t> b(t.used_mib.begin() + static_cast<long>(i),
                           t.used_mib.begin() + static_cast<long>(i + per_bucket));
    std::nth_element(b.begin(), b.begin() + static_cast<long>(b.size() / 2), b.end());
    xs.push_back(t.TimeOf(i + per_bucket / 2));
    ys.push_back(b[b.size() / 2]);
  }
  double mx = 0, my = 0;
  for (size_t k = 0; k < xs.size(); ++k) mx += xs[k], my += ys[k];
  mx /= static_cast<double>(xs.size());
  my /= static_cast<double>(xs.size());
  double sxx = 0, sxy = 0;
  for (size_t k = 0; k < xs.size(); ++k) sxx += (xs[k] - mx) * (xs[k] - mx), sxy += (xs[k] - mx) * (ys[k] - my);
  return sxy / sxx;
}

TEST(TraceGenerator, LinearLeakRateMatchesTheFitOfItsFloor) {
  const TraceGenerator gen({.seed = 11, .max_hours = 6, .min_interval_s = 1, .max_noise_mib = 10});
  int checked = 0;
  for (int i = 0; checked < 12 && i < 400; ++i) {
    const Trace t = gen.Generate(i, Shape::kLeakLinear);
    const double rate_mib_s = t.label.leak_rate_bps / kMiB;
    const double grown = rate_mib_s * (t.label.duration_s - *t.label.leak_start_s);
    if (grown < 300) continue;  // whole-MiB rounding and noise dominate tiny growth
    ++checked;
    const double fit = FloorSlopeMiBPerSecond(t, *t.label.leak_start_s + 120);
    EXPECT_NEAR(fit / rate_mib_s, 1.0, 0.05)
        << "trace " << i << ": label " << rate_mib_s * 3600 << " MiB/h, fit " << fit * 3600 << " MiB/h";
  }
  EXPECT_EQ(checked, 12);
}

TEST(TraceGenerator, HealthyPlateauIsFlatAfterWarmup) {
  const TraceGenerator gen({.seed = 13, .min_interval_s = 1, .max_noise_mib = 10});
  for (int i = 0; i < 8; ++i) {
    const Trace t = gen.Generate(i, Shape::kPlateau);
    const double fit = FloorSlopeMiBPerSecond(t, 1200);
    EXPECT_LT(std::abs(fit) * 3600, 2.0) << "trace " << i << " drifts " << fit * 3600 << " MiB/h";
  }
}

TEST(TraceGenerator, PreallocatedPoolSitsAt90To97PercentOfTheCard) {
  const TraceGenerator gen({.seed = 17, .max_hours = 2, .min_interval_s = 1});
  for (int i = 0; i < 10; ++i) {
    const Trace t = gen.Generate(i, Shape::kPreallocated);
    const double total_mib = t.label.total_bytes / kMiB;
    const double last = t.used_mib.back();
    EXPECT_GT(last, 0.895 * total_mib) << i;
    EXPECT_LT(last, 0.975 * total_mib) << i;
  }
}

TEST(TraceGenerator, AllocatorStaircaseStepsThinOutAndComeInWholePages) {
  const TraceGenerator gen({.seed = 19, .min_interval_s = 1, .max_noise_mib = 0});
  size_t first_quarter = 0, last_quarter = 0;
  for (int i = 0; i < 20; ++i) {
    const Trace t = gen.Generate(i, Shape::kWarmupStaircase);
    const size_t n = t.used_mib.size();
    const auto warm = static_cast<size_t>(1000 / t.label.interval_s);  // past the ramp (<= 900 s + start)
    for (size_t k = warm + 1; k < n; ++k) {
      const int32_t d = t.used_mib[k] - t.used_mib[k - 1];
      if (d == 0) continue;
      EXPECT_GT(d, 0) << "the staircase never goes down";
      EXPECT_EQ(d % 2, 0) << "allocator segments are whole 2 MiB pages, got a step of " << d;
      if (k < warm + (n - warm) / 4) ++first_quarter;
      if (k >= n - (n - warm) / 4) ++last_quarter;
    }
  }
  EXPECT_GT(first_quarter, 2 * last_quarter) << first_quarter << " early steps vs " << last_quarter << " late";
  EXPECT_GT(last_quarter, 0u) << "late steps must still happen (they are what makes this shape hard)";
}

TEST(TraceGenerator, SpikesAreTemporaryExcursionsAboveAFlatFloor) {
  const TraceGenerator gen({.seed = 23, .min_hours = 4, .min_interval_s = 2, .max_noise_mib = 0});
  for (int i = 0; i < 6; ++i) {
    const Trace t = gen.Generate(i, Shape::kSpikes);
    const auto warm = static_cast<size_t>(1100 / t.label.interval_s);
    const auto [lo, hi] = std::minmax_element(t.used_mib.begin() + static_cast<long>(warm), t.used_mib.end());
    EXPECT_GT(*hi - *lo, 0.015 * t.label.total_bytes / kMiB) << "trace " << i << " has no spike";
    // The floor at the end equals the floor after warm-up: spikes raise the peak, not the floor.
    EXPECT_EQ(*std::min_element(t.used_mib.end() - static_cast<long>(3600 / t.label.interval_s), t.used_mib.end()),
              *lo);
  }
}

TEST(TraceGenerator, StaircaseLeakGrowsInWholeChunks) {
  const TraceGenerator gen({.seed = 29, .min_interval_s = 2, .max_noise_mib = 0});
  for (int i = 0; i < 12; ++i) {
    const Trace t = gen.Generate(i, Shape::kLeakStaircase);
    const auto chunk = static_cast<int32_t>(t.label.leak_chunk_mib);
    ASSERT_TRUE(chunk == 2 || chunk == 20 || chunk == 64) << chunk;
    const auto start = static_cast<size_t>(*t.label.leak_start_s / t.label.interval_s) + 1;
    for (size_t k = start + 1; k < t.used_mib.size(); ++k) {
      const int32_t d = t.used_mib[k] - t.used_mib[k - 1];
      ASSERT_EQ(d % chunk, 0) << "trace " << i << " sample " << k;
      ASSERT_GE(d, 0);
    }
  }
}

}  // namespace
}  // namespace vw::evaluate
