#include "detection/series_builder.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vw::detection {
namespace {

TEST(MinMaxDecimator, KeepsExtremesOfALongCurveWithinBudget) {
  MinMaxDecimator d(100);
  // 100k samples of a sawtooth with one tall spike and one deep dip.
  for (int i = 0; i < 100000; ++i) {
    double v = (i % 100);
    if (i == 54321) v = 1000;
    if (i == 77777) v = -500;
    d.Add(i * 0.1, v);
  }
  auto pts = d.Points();
  EXPECT_LE(pts.size(), 2 * 100u + 2);
  EXPECT_GE(pts.size(), 50u);
  double hi = -1e9, lo = 1e9;
  for (size_t i = 0; i < pts.size(); ++i) {
    hi = std::max(hi, pts[i].used_bytes);
    lo = std::min(lo, pts[i].used_bytes);
    if (i > 0) {
      EXPECT_LE(pts[i - 1].t, pts[i].t) << "points must be in time order";
    }
  }
  EXPECT_EQ(hi, 1000);
  EXPECT_EQ(lo, -500);
}

TEST(MinMaxDecimator, ShortCurveIsKeptExactly) {
  MinMaxDecimator d(100);
  for (int i = 0; i < 10; ++i) d.Add(i, i * i);
  auto pts = d.Points();
  ASSERT_EQ(pts.size(), 10u);
  EXPECT_EQ(pts[3].used_bytes, 9);
}

TEST(SeriesBuilder, MissingValuesAreCountedNotFedAsZero) {
  SeriesBuilder b(GpuIdentity{"0"});
  for (int i = 0; i < 100; ++i) {
    MemorySample s;
    s.t = i;
    if (i % 10 != 0) s.used_bytes = 1000ull << 20;
    s.total_bytes = 16ull << 30;
    b.Add(s);
  }
  EXPECT_EQ(b.samples_with_memory(), 90u);
  EXPECT_EQ(b.samples_without_memory(), 10u);
  SeriesAnalysis a = b.Snapshot();
  ASSERT_TRUE(a.total_bytes.has_value());
  EXPECT_EQ(*a.total_bytes, 16ull << 30);
  for (const SeriesPoint& p : a.raw) EXPECT_EQ(p.used_bytes, static_cast<double>(1000ull << 20));
}

}  // namespace
}  // namespace vw::detection
