// Charts of series from a real SeriesBuilder: the floor and peak drawn reach the samples the
// printed figures come from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "detection/series_builder.h"
#include "outputs/plot_geometry.h"

namespace vw::outputs {
namespace {

// An hour at 1 s of a job at 20000 MiB (500 MiB more for 5 s of each minute) that frees all but
// 1000 MiB for its last 40 s: the last minute is the open bucket when the trace ends.
detection::SeriesAnalysis ReleaseAtTheEnd() {
  GpuIdentity gpu;
  gpu.key = "0";
  gpu.index = 0;
  detection::SeriesBuilder b(gpu);
  const double t0 = 1'773'478'800;  // 2026-03-14 09:00:00 UTC
  const auto total = static_cast<uint64_t>(40960 * kMiB);
  for (int i = 0; i < 3600; ++i) {
    double mib = 20000 + (i % 60 < 5 ? 500 : 0);
    if (i >= 3560) mib = 1000;
    b.AddMemory(t0 + i, static_cast<uint64_t>(mib * kMiB), total, std::nullopt);
  }
  return b.Snapshot();
}

TEST(LayoutChart, TheFloorDrawnEndsAtThePrintedFloorWhenTheTraceEndsInARelease) {
  const detection::SeriesAnalysis s = ReleaseAtTheEnd();
  const auto& a = s.assessment;
  ASSERT_TRUE(a.floor_bytes.has_value());
  ASSERT_NEAR(*a.floor_bytes, 1000 * kMiB, 1) << "the engine's floor takes in the open bucket";
  const ChartLayout L = LayoutChart(s);
  ASSERT_FALSE(L.floor.empty());
  EXPECT_NEAR(L.floor.back().y, L.y(*a.floor_bytes), 0.5) << "the last floor point is the printed floor";
  // It stands in the last minute, the one the printed floor comes from.
  EXPECT_GT(L.floor.back().x, L.x(a.end_t - 60));
  ASSERT_TRUE(a.peak_bytes.has_value());
  double peak_top = L.plot.bottom();
  for (const Point& p : L.peak) {
    if (p.x >= L.x(a.end_t - 60)) peak_top = std::min(peak_top, p.y);
  }
  EXPECT_NEAR(peak_top, L.y(*a.peak_bytes), 0.5) << "the peak of the last minute is drawn";
}

}  // namespace
}  // namespace vw::outputs
