#include "outputs/plot_geometry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/units.h"
#include "outputs/svg_plot.h"
#include "outputs/testing/series_fixtures.h"

namespace vw::outputs {
namespace {

using testing::kFixtureStart;
using testing::LeakWithEvalSpikes;
using testing::Plateau;

std::vector<std::string> Labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> out;
  for (const auto& t : ticks) out.push_back(t.label);
  return out;
}

TEST(NiceStep, PicksOneTwoTwoAndAHalfOrFiveTimesAPowerOfTen) {
  struct Case {
    double span;
    int max_intervals;
    double want;
  };
  for (const Case& c : std::vector<Case>{{83.2, 6, 20},
                                         {10, 5, 2},
                                         {7, 7, 1},
                                         {0.9, 4, 0.25},
                                         {45, 4, 20},
                                         {25, 10, 2.5},
                                         {4000, 8, 500},
                                         {1, 1, 1}}) {
    EXPECT_DOUBLE_EQ(NiceStep(c.span, c.max_intervals), c.want) << c.span << " / " << c.max_intervals;
  }
}

TEST(BytesTicks, LabelsGiBWithTheDecimalsTheStepNeeds) {
  EXPECT_EQ(Labels(BytesTicks(0, 84.4 * kGiB, 6)),
            (std::vector<std::string>{"0 GiB", "20 GiB", "40 GiB", "60 GiB", "80 GiB"}));
  EXPECT_EQ(Labels(BytesTicks(0, 2.2 * kGiB, 5)),
            (std::vector<std::string>{"0.0 GiB", "0.5 GiB", "1.0 GiB", "1.5 GiB", "2.0 GiB"}));
  EXPECT_EQ(Labels(BytesTicks(0, 1.1 * kGiB, 5)),
            (std::vector<std::string>{"0.00 GiB", "0.25 GiB", "0.50 GiB", "0.75 GiB", "1.00 GiB"}));
  EXPECT_EQ(Labels(BytesTicks(0, 600 * kMiB, 6)),
            (std::vector<std::string>{"0 MiB", "100 MiB", "200 MiB", "300 MiB", "400 MiB", "500 MiB", "600 MiB"}));
}

TEST(BytesTicks, ValuesAreExactMultiplesInsideTheRange) {
  auto ticks = BytesTicks(3 * kGiB, 84.4 * kGiB, 6);
  ASSERT_FALSE(ticks.empty());
  EXPECT_DOUBLE_EQ(ticks.front().value, 20 * kGiB);
  EXPECT_DOUBLE_EQ(ticks.back().value, 80 * kGiB);
  for (const auto& t : ticks) EXPECT_EQ(t.label.find('-'), std::string::npos) << "no negative zero: " << t.label;
}

TEST(TimeTicks, FallOnRoundClockTimes) {
  const double lo = kFixtureStart + 7 * 60, hi = kFixtureStart + 6 * 3600;  // 08:07 .. 14:00
  auto ticks = TimeTicks(lo, hi, 8, TimeLabels::kClock);
  EXPECT_EQ(Labels(ticks), (std::vector<std::string>{"09:00", "10:00", "11:00", "12:00", "13:00", "14:00"}));
  EXPECT_DOUBLE_EQ(ticks.front().value, kFixtureStart + 3600);
  EXPECT_EQ(Labels(TimeTicks(lo, kFixtureStart + 3600, 4, TimeLabels::kClock)),
            (std::vector<std::string>{"08:15", "08:30", "08:45", "09:00"}));
}

TEST(TimeTicks, ShowTheDateAtMidnight) {
  const double lo = kFixtureStart + 12 * 3600, hi = kFixtureStart + 20 * 3600;  // 20:00 .. 04:00 next day
  EXPECT_EQ(Labels(TimeTicks(lo, hi, 4, TimeLabels::kClock)),
            (std::vector<std::string>{"20:00", "22:00", "Jul 15", "02:00", "04:00"}));
  EXPECT_EQ(Labels(TimeTicks(kFixtureStart, kFixtureStart + 4 * 86400, 4, TimeLabels::kClock)),
            (std::vector<std::string>{"Jul 15", "Jul 16", "Jul 17", "Jul 18"}));
}

TEST(TimeTicks, ShowSecondsForSubMinuteSteps) {
  EXPECT_EQ(Labels(TimeTicks(kFixtureStart, kFixtureStart + 40, 4, TimeLabels::kClock)),
            (std::vector<std::string>{"08:00:00", "08:00:10", "08:00:20", "08:00:30", "08:00:40"}));
}

TEST(TimeTicks, CountElapsedTimeForTracesWithoutAClock) {
  EXPECT_EQ(Labels(TimeTicks(0, 5400, 4, TimeLabels::kElapsed)),
            (std::vector<std::string>{"0", "30m", "1h", "1h 30m"}));
  EXPECT_EQ(Labels(TimeTicks(0, 3 * 86400, 3, TimeLabels::kElapsed)),
            (std::vector<std::string>{"0", "1d", "2d", "3d"}));
}

TEST(TimeTicks, ApplyTheLabelOffsetToZonedTimes) {
  // 08:00Z shown in UTC+02:00 reads 10:00, and the tick stays at the 08:00Z instant.
  auto ticks = TimeTicks(kFixtureStart, kFixtureStart + 3 * 3600, 3, TimeLabels::kClock, 7200);
  EXPECT_EQ(Labels(ticks), (std::vector<std::string>{"10:00", "11:00", "12:00", "13:00"}));
  EXPECT_DOUBLE_EQ(ticks.front().value, kFixtureStart);
}

TEST(LayoutChart, AxesIncludeTheDataTheCapacityAndTheOomTime) {
  auto s = LeakWithEvalSpikes();
  ChartLayout L = LayoutChart(s);
  const auto& a = s.assessment;
  EXPECT_LE(L.x.domain_lo(), s.raw.front().t);
  EXPECT_GE(L.x.domain_hi(), a.end_t + *a.tto_hi_s) << "the whole OOM range is on the chart";
  EXPECT_EQ(L.y.domain_lo(), 0);
  EXPECT_GE(L.y.domain_hi(), *a.capacity_bytes);
  for (const auto& p : L.raw) {
    EXPECT_GE(p.x, L.plot.x - 1e-6);
    EXPECT_LE(p.x, L.plot.right() + 1e-6);
    EXPECT_GE(p.y, L.plot.y - 1e-6);
    EXPECT_LE(p.y, L.plot.bottom() + 1e-6);
  }
  for (const auto& t : L.y_ticks) EXPECT_LE(t.value, L.y.domain_hi());
  for (const auto& t : L.x_ticks) {
    EXPECT_GE(t.value, L.x.domain_lo());
    EXPECT_LE(t.value, L.x.domain_hi());
  }
  EXPECT_EQ(L.x_title.text, "local time (as recorded) · 2026-07-14");
}

TEST(LayoutChart, ProjectionMeetsTheCapacityLineAtTheReportedOomTime) {
  auto s = LeakWithEvalSpikes();
  const auto& a = s.assessment;
  ChartLayout L = LayoutChart(s);
  ASSERT_EQ(L.projection.size(), 2u);
  ASSERT_TRUE(L.capacity_y && L.oom);
  const double want_x = L.x(a.end_t + *a.tto_s), cap_y = *L.capacity_y;
  // Where the drawn segment crosses the capacity line.
  const Point p0 = L.projection[0], p1 = L.projection[1];
  ASSERT_NE(p1.y, p0.y);
  const double cross_x = p0.x + (cap_y - p0.y) * (p1.x - p0.x) / (p1.y - p0.y);
  EXPECT_NEAR(cross_x, want_x, 1.0);
  EXPECT_NEAR(p1.x, want_x, 1.0);
  EXPECT_NEAR(p1.y, cap_y, 1.0);
  EXPECT_NEAR(L.oom->x, want_x, 1.0);
  EXPECT_NEAR(L.oom->y, cap_y, 1e-9);
  // It starts at the recent peak at the end of the data, and its slope is the reported rate.
  EXPECT_NEAR(p0.x, L.x(a.end_t), 1e-6);
  EXPECT_NEAR(p0.y, L.y(*a.peak_bytes), 1e-6);
  auto proj = ProjectToCapacity(a);
  ASSERT_TRUE(proj);
  EXPECT_NEAR(proj->rate_bps, *a.rate_bps, *a.rate_bps * 1e-9);
  // The OOM range on the capacity line spans the early and late ends.
  ASSERT_TRUE(L.oom_range_x);
  EXPECT_NEAR(L.oom_range_x->first, L.x(a.end_t + *a.tto_lo_s), 1.0);
  EXPECT_NEAR(L.oom_range_x->second, L.x(a.end_t + *a.tto_hi_s), 1.0);
  EXPECT_LT(L.oom_range_x->first, L.oom->x);
  EXPECT_GT(L.oom_range_x->second, L.oom->x);
}

TEST(LayoutChart, FarAwayOomIsClippedAtTheRightEdgeAndNoted) {
  auto s = LeakWithEvalSpikes();
  auto& a = s.assessment;
  a.rate_bps = *a.rate_bps / 20;  // 75 MiB/h: the card lasts days, not hours
  const double headroom = *a.capacity_bytes - *a.peak_bytes;
  a.tto_s = headroom / *a.rate_bps;
  a.tto_lo_s = *a.tto_s * 0.8;
  a.tto_hi_s = *a.tto_s * 1.3;
  ChartLayout L = LayoutChart(s);
  EXPECT_FALSE(L.oom.has_value());
  ASSERT_EQ(L.projection.size(), 2u);
  EXPECT_NEAR(L.projection[1].x, L.plot.right(), 1e-6);
  EXPECT_GT(L.projection[1].y, *L.capacity_y) << "still below the capacity at the edge";
  EXPECT_LT(L.x.domain_hi() - a.end_t, a.end_t - a.start_t) << "the data keeps most of the width";
  bool noted = false;
  for (const auto& l : L.labels) noted = noted || (l.role == "beyond" && l.text.rfind("OOM in 5d 20h", 0) == 0);
  EXPECT_TRUE(noted);
}

TEST(LayoutChart, PlateauHasNoProjectionNorTrend) {
  auto s = Plateau();
  EXPECT_FALSE(ProjectToCapacity(s.assessment).has_value());
  ChartLayout L = LayoutChart(s);
  EXPECT_TRUE(L.projection.empty());
  EXPECT_TRUE(L.band.empty());
  EXPECT_TRUE(L.trend.empty());
  EXPECT_FALSE(L.oom.has_value());
  EXPECT_TRUE(L.capacity_y.has_value());
  ASSERT_TRUE(L.warmup.has_value());
  EXPECT_NEAR(L.warmup->right(), L.x(*s.assessment.settled_at), 1e-6);
  EXPECT_EQ(L.title, "GPU 1 · NVIDIA H100 80GB HBM3 — plateau");
}

// Every text box of a chart: title, subtitle lines, legend, ticks, axis title, in-plot labels.
std::vector<std::pair<std::string, Rect>> AllTextBoxes(const ChartLayout& L, const ChartOptions& o) {
  std::vector<std::pair<std::string, Rect>> boxes;
  boxes.push_back({L.title, LabelBox(L.title, o.title_px, Anchor::kStart, L.title_at)});
  for (size_t i = 0; i < L.subtitle_lines.size(); ++i) {
    Point at{L.subtitle_at.x, L.subtitle_at.y + static_cast<double>(i) * (o.font_px + 4)};
    boxes.push_back({L.subtitle_lines[i], LabelBox(L.subtitle_lines[i], o.font_px + 1, Anchor::kStart, at)});
  }
  for (const auto& item : L.legend) boxes.push_back({"legend " + item.text, item.label.box});
  for (const auto& l : L.x_tick_labels) boxes.push_back({"x " + l.text, l.box});
  for (const auto& l : L.y_tick_labels) boxes.push_back({"y " + l.text, l.box});
  boxes.push_back({L.x_title.text, L.x_title.box});
  for (const auto& l : L.labels) boxes.push_back({l.role + " " + l.text, l.box});
  return boxes;
}

TEST(LayoutChart, NoTwoLabelsOverlapAndAllStayInside) {
  struct Size {
    double w, h;
  };
  for (Size size : {Size{880, 380}, Size{540, 360}, Size{420, 300}}) {
    auto zoned = LeakWithEvalSpikes();  // its clock times carry " UTC+02:00": longer labels
    zoned.has_zone = true;
    for (const auto& s : {LeakWithEvalSpikes(), Plateau(), zoned}) {
      ChartOptions o;
      if (s.has_zone) o.label_offset_s = 2 * 3600;
      o.width = size.w;
      o.height = size.h;
      ChartLayout L = LayoutChart(s, o);
      auto boxes = AllTextBoxes(L, o);
      for (size_t i = 0; i < boxes.size(); ++i) {
        EXPECT_TRUE((Rect{0, 0, o.width, o.height}.Contains(boxes[i].second)))
            << boxes[i].first << " leaves the " << size.w << "x" << size.h << " chart";
        for (size_t j = i + 1; j < boxes.size(); ++j) {
          EXPECT_FALSE(boxes[i].second.Intersects(boxes[j].second))
              << "'" << boxes[i].first << "' overlaps '" << boxes[j].first << "' at " << size.w << "x" << size.h;
        }
      }
      for (const auto& l : L.labels) EXPECT_TRUE(L.plot.Contains(l.box)) << l.text;
      EXPECT_GE(L.x_ticks.size(), 3u);
      EXPECT_GE(L.y_ticks.size(), 3u);
    }
  }
}

TEST(LayoutChart, KeepsTheOomAndCapacityLabels) {
  ChartLayout L = LayoutChart(LeakWithEvalSpikes());
  std::vector<std::string> roles;
  for (const auto& l : L.labels) roles.push_back(l.role);
  EXPECT_NE(std::find(roles.begin(), roles.end(), "oom"), roles.end());
  EXPECT_NE(std::find(roles.begin(), roles.end(), "capacity"), roles.end());
  EXPECT_NE(std::find(roles.begin(), roles.end(), "event"), roles.end());
}

// Clock times of a trace that named its zone are marked as the text and HTML reports mark them
// (ZoneMark): "UTC", or "UTC+02:00" when shown at an offset; a trace's own wall clock has no mark.
TEST(LayoutChart, ClockTimesOfAZonedTraceSayUtcInTheAxisTitleAndLabels) {
  struct Case {
    bool has_zone;
    double offset_s;
    std::string x_title, subtitle, oom_label;
  };
  for (const Case& c : std::vector<Case>{
           {false, 0, "local time (as recorded) · 2026-07-14",
            "leak 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) · since 2026-07-14 08:40 · OOM in 7h 0m (at "
            "2026-07-14 21:00) · range 6h 11m … 8h 5m",
            "OOM 21:00 (in 7h 0m)"},
           {false, 2 * 3600, "local time (as recorded) · 2026-07-14",
            "leak 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) · since 2026-07-14 08:40 · OOM in 7h 0m (at "
            "2026-07-14 21:00) · range 6h 11m … 8h 5m",
            "OOM 21:00 (in 7h 0m)"},
           {true, 0, "time (UTC) · 2026-07-14",
            "leak 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) · since 2026-07-14 08:40 UTC · OOM in 7h 0m (at "
            "2026-07-14 21:00 UTC) · range 6h 11m … 8h 5m",
            "OOM 21:00 UTC (in 7h 0m)"},
           {true, 2 * 3600, "time (UTC+02:00) · 2026-07-14",
            "leak 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) · since 2026-07-14 10:40 UTC+02:00 · OOM in 7h 0m "
            "(at 2026-07-14 23:00 UTC+02:00) · range 6h 11m … 8h 5m",
            "OOM 23:00 UTC+02:00 (in 7h 0m)"},
       }) {
    auto s = LeakWithEvalSpikes();
    s.has_zone = c.has_zone;
    ChartOptions o;
    o.label_offset_s = c.offset_s;
    ChartLayout L = LayoutChart(s, o);
    EXPECT_EQ(L.x_title.text, c.x_title) << c.has_zone << " " << c.offset_s;
    EXPECT_EQ(L.subtitle, c.subtitle) << c.has_zone << " " << c.offset_s;
    std::string oom;
    for (const auto& l : L.labels) {
      if (l.role == "oom") oom = l.text;
    }
    EXPECT_EQ(oom, c.oom_label) << c.has_zone << " " << c.offset_s;
    if (!c.has_zone) {
      for (const auto& l : L.labels) EXPECT_EQ(l.text.find("UTC"), std::string::npos) << l.text;
    }
  }
}

TEST(PlaceLabels, TakesTheNextFreeSpotAndDropsWhatCannotFit) {
  Rect bounds{0, 0, 200, 100};
  LabelRequest a{"first", "a", 10, {{{10, 20}, Anchor::kStart}}};
  LabelRequest b{"second", "b", 10, {{{10, 20}, Anchor::kStart}, {{10, 40}, Anchor::kStart}}};
  LabelRequest c{"third", "c", 10, {{{12, 22}, Anchor::kStart}, {{190, 50}, Anchor::kStart}}};  // clash, then outside
  auto placed = PlaceLabels({a, b, c}, bounds);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].text, "first");
  EXPECT_EQ(placed[1].text, "second");
  EXPECT_DOUBLE_EQ(placed[1].at.y, 40);
  EXPECT_FALSE(placed[0].box.Intersects(placed[1].box));
  // An occupied area is avoided too.
  auto around = PlaceLabels({b}, bounds, {Rect{0, 5, 200, 20}});
  ASSERT_EQ(around.size(), 1u);
  EXPECT_DOUBLE_EQ(around[0].at.y, 40);
}

TEST(LabelBox, AnchorsStartMiddleAndEnd) {
  Rect s = LabelBox("abcd", 10, Anchor::kStart, {100, 50});
  Rect m = LabelBox("abcd", 10, Anchor::kMiddle, {100, 50});
  Rect e = LabelBox("abcd", 10, Anchor::kEnd, {100, 50});
  EXPECT_DOUBLE_EQ(s.x, 100);
  EXPECT_DOUBLE_EQ(m.x + m.w / 2, 100);
  EXPECT_DOUBLE_EQ(e.right(), 100);
  EXPECT_LT(s.y, 50);
  EXPECT_GT(s.bottom(), 50) << "descenders go below the baseline";
  EXPECT_DOUBLE_EQ(TextWidth("a–b", 10), TextWidth("abc", 10)) << "counts characters, not UTF-8 bytes";
}

TEST(SmallMultiples, FillRowsWithoutOverlap) {
  auto two = SmallMultiples(2, 1200, 340, 560, 16);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_DOUBLE_EQ(two[0].y, two[1].y) << "side by side";
  EXPECT_DOUBLE_EQ(two[0].w, 592);
  EXPECT_DOUBLE_EQ(two[1].right(), 1200);
  auto three = SmallMultiples(3, 1200, 340, 560, 16);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_DOUBLE_EQ(three[2].x, 0);
  EXPECT_DOUBLE_EQ(three[2].y, 356) << "third wraps to a second row";
  auto narrow = SmallMultiples(2, 500, 300, 560, 16);
  EXPECT_DOUBLE_EQ(narrow[0].w, 500);
  EXPECT_DOUBLE_EQ(narrow[1].y, 316);
  auto eight = SmallMultiples(8, 1800, 300, 400, 10);
  for (size_t i = 0; i < eight.size(); ++i) {
    EXPECT_LE(eight[i].right(), 1800 + 1e-9);
    for (size_t j = i + 1; j < eight.size(); ++j) EXPECT_FALSE(eight[i].Intersects(eight[j]));
  }
  EXPECT_TRUE(SmallMultiples(0, 1200, 300, 400, 10).empty());
}

TEST(LayoutChart, RawLineKeepsSpikesWhileDroppingRedundantPoints) {
  detection::SeriesAnalysis s;
  s.gpu.key = "0";
  for (int i = 0; i < 20000; ++i) s.raw.push_back({kFixtureStart + i, 10 * kGiB + (i % 7) * kMiB});
  s.raw[12345].used_bytes = 30 * kGiB;  // one sample
  s.assessment.samples = s.raw.size();
  s.assessment.start_t = s.raw.front().t;
  s.assessment.end_t = s.raw.back().t;
  ChartLayout L = LayoutChart(s);
  EXPECT_LE(L.raw.size(), static_cast<size_t>(4 * (L.plot.w + 2)));
  double top = L.plot.bottom();
  for (const auto& p : L.raw) top = std::min(top, p.y);
  EXPECT_NEAR(top, L.y(30 * kGiB), 1e-6) << "the one-sample spike survives decimation";
}

TEST(LayoutChart, EmptySeriesStillLaysOutAxes) {
  detection::SeriesAnalysis s;
  s.gpu.key = "3";
  ChartLayout L = LayoutChart(s);
  EXPECT_TRUE(L.raw.empty());
  EXPECT_GT(L.plot.w, 0);
  EXPECT_GT(L.plot.h, 0);
  EXPECT_EQ(L.title, "GPU 3 — insufficient data");
}

TEST(LayoutChart, SyntheticTimeUsesElapsedLabels) {
  auto s = Plateau();
  double shift = s.raw.front().t;
  for (auto& p : s.raw) p.t -= shift;
  for (auto& b : s.buckets) {
    b.t_start -= shift;
    b.t_end -= shift;
  }
  s.assessment.start_t -= shift;
  s.assessment.end_t -= shift;
  *s.assessment.settled_at -= shift;
  s.synthetic_time = true;
  ChartLayout L = LayoutChart(s);
  EXPECT_EQ(L.x_title.text, "time since the start of the trace");
  ASSERT_FALSE(L.x_tick_labels.empty());
  EXPECT_EQ(L.x_tick_labels.front().text, "0");
  EXPECT_EQ(L.x_tick_labels.back().text, "4h");
}

TEST(GapStarts, ABreakWhereTheDataStopsForMuchLongerThanItsStep) {
  std::vector<double> t;
  for (int i = 0; i < 100; ++i) t.push_back(i * 10.0);
  for (int i = 0; i < 100; ++i) t.push_back(5000 + i * 10.0);  // 4000 s without a sample
  EXPECT_EQ(GapStarts(t), std::vector<size_t>{100});
  t.resize(100);
  EXPECT_TRUE(GapStarts(t).empty());
  EXPECT_TRUE(GapStarts({}).empty());
  EXPECT_TRUE(GapStarts({5, 5, 5}).empty());
  // Sparse sampling is no gap: a minute at least, and five times the usual step.
  EXPECT_TRUE(GapStarts({0, 30, 60, 120, 150}).empty());
}

// Hours with no sample ([N/A], a stopped recorder) are a gap in the chart, not a line drawn across
// them that looks like memory held or released slowly.
TEST(LayoutChart, AnHourWithoutSamplesIsAGapInEveryLine) {
  auto s = Plateau();
  const double from = s.assessment.start_t + 3600, to = from + 3600;
  std::erase_if(s.raw, [&](const detection::SeriesPoint& p) { return p.t > from && p.t < to; });
  std::erase_if(s.buckets, [&](const detection::Bucket& b) { return b.t_end > from && b.t_start < to; });
  const ChartLayout L = LayoutChart(s);
  ASSERT_EQ(L.raw_breaks.size(), 1u);
  ASSERT_EQ(L.envelope_breaks.size(), 1u);
  EXPECT_GT(L.raw[L.raw_breaks[0]].x - L.raw[L.raw_breaks[0] - 1].x, L.plot.w / 10);
  const std::string svg = RenderSvgChart(s);
  const size_t raw = svg.find("data-role=\"raw\" d=\"");
  ASSERT_NE(raw, std::string::npos) << svg.substr(0, 400);
  const std::string d = svg.substr(raw, svg.find('"', raw + 20) - raw);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << "one stretch before the gap, one after";
  EXPECT_TRUE(LayoutChart(Plateau()).raw_breaks.empty()) << "no gap, no break";

  // One sample alone in the middle of the hole is drawn (a short dash), not a pen-down that draws
  // nothing.
  auto lone = Plateau();
  const double mid = (from + to) / 2;
  const auto keep = std::find_if(lone.raw.begin(), lone.raw.end(), [&](const auto& p) { return p.t >= mid; });
  ASSERT_NE(keep, lone.raw.end());
  const detection::SeriesPoint kept = *keep;
  std::erase_if(lone.raw, [&](const detection::SeriesPoint& p) { return p.t > from && p.t < to && p.t != kept.t; });
  const std::string lone_svg = RenderSvgChart(lone);
  const size_t at = lone_svg.find("data-role=\"raw\" d=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string lone_d = lone_svg.substr(at, lone_svg.find('"', at + 20) - at);
  EXPECT_EQ(std::count(lone_d.begin(), lone_d.end(), 'M'), 3) << "before, the lone sample, after";
  EXPECT_NE(lone_d.find(" h2"), std::string::npos) << lone_d.substr(0, 200);
}

}  // namespace
}  // namespace vw::outputs
