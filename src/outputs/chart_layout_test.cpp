// Charts of series from a real SeriesBuilder: the floor and peak drawn reach the samples the
// printed figures come from; a line's lone point is drawn as a dot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/units.h"
#include "detection/series_builder.h"
#include "outputs/plot_geometry.h"
#include "outputs/svg_markup.h"
#include "outputs/svg_plot.h"

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

// FitText keeps the longest prefix of whole code points that fits with the "…" (the reference below
// tries every prefix, longest first), for ASCII, two-, three- and four-byte characters, at widths
// around each cut; and a megabyte of command line is cut, not measured once per byte.
TEST(FitText, KeepsTheLongestPrefixOfWholeCharactersThatFits) {
  auto reference = [](const std::string& text, double width, double font_px) {
    if (TextWidth(text, font_px) <= width) return text;
    std::vector<size_t> ends;  // where each prefix of whole code points ends
    for (size_t i = 1; i <= text.size(); ++i) {
      if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ends.push_back(i);
    }
    for (size_t k = ends.size(); k-- > 0;) {
      if (TextWidth(text.substr(0, ends[k]) + "…", font_px) <= width) return text.substr(0, ends[k]) + "…";
    }
    return std::string("…");
  };
  const std::vector<std::string> texts = {
      "", "a", "python3 train.py --config llama-7b.yaml", "模型训练 python3 é", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 x", std::string(300, 'w')};
  for (const std::string& t : texts) {
    for (double font : {9.0, 11.0, 12.5}) {
      for (double width = 0; width < 250; width += 0.77) {
        EXPECT_EQ(FitText(t, width, font), reference(t, width, font)) << t << " " << width << " " << font;
      }
    }
  }
  const std::string long_command(1 << 20, 'x');
  const std::string cut = FitText(long_command, 300, 11);
  EXPECT_EQ(cut, reference(std::string(200, 'x'), 300, 11));
  EXPECT_LE(TextWidth(cut, 11), 300);
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

// A trace of one sample: its one point is a dot of the line's colour, not a 2 px dash of a
// 0.8 px stroke that leaves the chart looking empty.
TEST(RenderSvgChart, ALoneSampleIsADot) {
  GpuIdentity gpu;
  gpu.key = "0";
  detection::SeriesBuilder b(gpu);
  b.AddMemory(1'773'478'800, static_cast<uint64_t>(1000 * kMiB), static_cast<uint64_t>(40960 * kMiB), std::nullopt);
  const detection::SeriesAnalysis s = b.Snapshot();
  const ChartLayout L = LayoutChart(s);
  ASSERT_EQ(L.raw.size(), 1u);
  const std::string svg = RenderSvgChart(s);
  const std::string dot = "<circle class=\"vw-dot vw-dot-raw\" data-role=\"raw-dot\" cx=\"" + Num(L.raw[0].x) +
                          "\" cy=\"" + Num(L.raw[0].y) + "\" r=\"2.5\"/>";
  EXPECT_NE(svg.find(dot), std::string::npos) << svg;
  EXPECT_NE(ChartCss().find(".vw-chart .vw-dot-raw{fill:"), std::string::npos) << "filled with the raw line's colour";
}

TEST(LonePointDots, MarksEachStretchOfOnePointOnly) {
  const std::vector<Point> pts = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}};
  auto roles = [&](const std::vector<size_t>& breaks) {
    std::string cx;
    const std::string out = LonePointDots(pts, breaks, "floor");
    for (size_t at = out.find("cx=\""); at != std::string::npos; at = out.find("cx=\"", at + 1)) {
      cx += out.substr(at + 4, out.find('"', at + 4) - at - 4) + " ";
    }
    return cx;
  };
  EXPECT_EQ(roles({}), "");
  EXPECT_EQ(roles({1, 4}), "1.0 ");         // [1] [2 3 4] [5 6]
  EXPECT_EQ(roles({2, 3, 5}), "3.0 6.0 ");  // [1 2] [3] [4 5] [6]
  EXPECT_NE(LonePointDots({{7, 8}}, {}, "raw").find("data-role=\"raw-dot\""), std::string::npos);
}

}  // namespace
}  // namespace vw::outputs
