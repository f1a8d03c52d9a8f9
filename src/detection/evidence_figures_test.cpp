// The figures in the leak evidence must agree with the rate the same evidence states: readers
// multiply the rate by the span a sentence names and compare. "The floor rose by +X over the last
// S" and "... every third of the window: +a, +b, +c" are checked on exactly linear growth (X = rate ×
// S, a = b = c) and on an allocator staircase (the rise and the thirds stay within what the floor
// really did).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/units.h"
#include "detection/growth_window.h"
#include "detection/leak_engine.h"

namespace vw::detection {
namespace {

constexpr double kHour = 3600;

std::string AllEvidence(const Assessment& a) {
  std::string s;
  for (const std::string& e : a.evidence) s += e + "\n";
  return s;
}

// "+1.4 GiB" / "-12 MiB" -> bytes.
double ParseSigned(const std::string& text) {
  static const std::regex kRe(R"(([+-])([0-9.]+) (GiB|MiB|KiB|B))");
  std::smatch m;
  EXPECT_TRUE(std::regex_match(text, m, kRe)) << text;
  if (m.empty()) return NAN;
  const double unit = m[3] == "GiB" ? kGiB : m[3] == "MiB" ? kMiB : m[3] == "KiB" ? 1024.0 : 1.0;
  return (m[1] == "-" ? -1 : 1) * std::stod(m[2]) * unit;
}

// "2h 49m" / "45m 0s" / "1d 2h" -> seconds.
double ParseDurationText(const std::string& text) {
  static const std::regex kPart(R"((\d+)([dhms]))");
  double s = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPart); it != std::sregex_iterator(); ++it) {
    const double v = std::stod((*it)[1]);
    const char u = (*it)[2].str()[0];
    s += v * (u == 'd' ? 86400 : u == 'h' ? 3600 : u == 'm' ? 60 : 1);
  }
  return s;
}

struct Figures {
  double rise = NAN;     // bytes, from "rose by +X over the last S"
  double seconds = NAN;  // S
  std::vector<double> thirds;
};

// The rise sentence and the thirds, wherever the evidence states them.
Figures FiguresIn(const std::string& ev) {
  Figures f;
  static const std::regex kRise(R"(rose by ([+-][0-9.]+ [KMG]?i?B) over the last ([0-9dhms ]+?) \()");
  static const std::regex kThirds(
      R"((?:every third of the window:|rises per third) ([+-][0-9.]+ [KMG]?i?B), ([+-][0-9.]+ [KMG]?i?B), )"
      R"(([+-][0-9.]+ [KMG]?i?B))");
  std::smatch m;
  if (std::regex_search(ev, m, kRise)) {
    f.rise = ParseSigned(m[1]);
    f.seconds = ParseDurationText(m[2]);
  }
  if (std::regex_search(ev, m, kThirds))
    for (int k = 1; k <= 3; ++k) f.thirds.push_back(ParseSigned(m[k]));
  return f;
}

// A plateau at 20000 MiB, then exactly linear growth at `rate_mib_h` from `start`, in MiB.
double Linear(double rate_mib_h, double start, double t) {
  return 20000 + (t > start ? rate_mib_h * (t - start) / kHour : 0);
}

// Linear(), sampled every 10 s in whole MiB until `duration`.
Assessment LinearLeak(double rate_mib_h, double start, double duration) {
  LeakEngine e;
  e.SetCapacity(80 * kGiB, 0);
  for (double t = 0; t <= duration; t += 10) e.Add(t, std::round(Linear(rate_mib_h, start, t)) * kMiB);
  return e.Assess();
}

TEST(EvidenceFigures, LinearGrowthReadsRateTimesSpanAndEqualThirds) {
  struct Case {
    double rate_mib_h, start, duration;
  };
  // 200 MiB/h (figures in MiB) and 1500 MiB/h (in GiB), each over a window that lies inside the
  // growth and over one that begins on the plateau before it (a restarted job's trace).
  for (const Case& c : {Case{200, 1 * kHour, 14 * kHour}, Case{1500, 1 * kHour, 14 * kHour},
                        Case{200, 2 * kHour, 6 * kHour}, Case{1500, 1 * kHour, 4 * kHour}}) {
    SCOPED_TRACE(fmt::format("{} MiB/h from {} to {}", c.rate_mib_h, c.start, c.duration));
    const Assessment a = LinearLeak(c.rate_mib_h, c.start, c.duration);
    const std::string ev = AllEvidence(a);
    ASSERT_EQ(a.verdict, Verdict::kLeak) << ev;
    ASSERT_TRUE(a.rate_bps);
    EXPECT_NEAR(*a.rate_bps * kHour / kMiB, c.rate_mib_h, 0.01 * c.rate_mib_h);
    const Figures f = FiguresIn(ev);
    ASSERT_FALSE(std::isnan(f.rise)) << ev;
    ASSERT_EQ(f.thirds.size(), 3u) << ev;
    // Each figure is what the floor did over the stretch it names (rounding: 0.05 GiB once shown
    // in GiB).
    const double from = c.duration - f.seconds;
    auto did = [&](double lo, double hi) {
      return (Linear(c.rate_mib_h, c.start, hi) - Linear(c.rate_mib_h, c.start, lo)) * kMiB;
    };
    auto slack = [](double bytes) { return 0.05 * bytes + (bytes >= kGiB ? 0.05 * kGiB : kMiB); };
    const double total = did(from, c.duration);
    EXPECT_NEAR(f.rise, total, slack(total)) << ev;
    for (int k = 0; k < 3; ++k) {
      const double third = did(from + k * f.seconds / 3, from + (k + 1) * f.seconds / 3);
      EXPECT_NEAR(f.thirds[static_cast<size_t>(k)], third, slack(third)) << "third " << k << "\n" << ev;
    }
    if (from >= c.start) {
      // Inside the growth: the rise is the stated rate times the stated span, the thirds equal.
      const double expected = *a.rate_bps * f.seconds;
      EXPECT_NEAR(f.rise, expected, 0.05 * expected) << ev;
      for (double third : f.thirds) EXPECT_NEAR(third, f.thirds[0], 0.05 * f.thirds[0]) << "equal thirds\n" << ev;
    }
  }
}

TEST(EvidenceFigures, StaircaseFiguresStayWithinWhatTheFloorDid) {
  // An allocator staircase that thins out: 256 MiB steps at 10 min·2^k (20 min, 40 min, 1h 20m,
  // 2h 40m, 5h 20m), on a 12000 MiB floor, 10 h at 5 s.
  auto shape = [](double t) {
    double v = 12000;
    for (int k = 1; 600.0 * std::pow(2, k) <= t; ++k) v += 256;
    return v;
  };
  LeakEngine e;
  e.SetCapacity(80 * kGiB, 0);
  const double duration = 10 * kHour;
  for (double t = 0; t <= duration; t += 5) e.Add(t, shape(t) * kMiB);
  const Assessment a = e.Assess();
  const std::string ev = AllEvidence(a);
  ASSERT_NE(a.verdict, Verdict::kLeak) << ev;
  const Figures f = FiguresIn(ev);
  ASSERT_FALSE(std::isnan(f.rise)) << ev;
  ASSERT_EQ(f.thirds.size(), 3u) << ev;
  // What the floor really did over the named window, and in each of its thirds.
  const double from = duration - f.seconds;
  const double actual = (shape(duration) - shape(from)) * kMiB;
  // Why it is not a leak is told with the figures the keeps-going test read (each third's rate
  // between the levels' centres, over a third of the window), and the rise is their sum, so the
  // sentence adds up. Those levels sit at the centres of the first and last sixths: the two steps
  // in the window's first 50 minutes are not seen (945 MiB of 1.25 GiB here).
  EXPECT_NEAR(f.rise, actual, 0.3 * actual) << ev;
  EXPECT_NEAR(f.thirds[0] + f.thirds[1] + f.thirds[2], f.rise, f.rise >= kGiB ? 0.05 * kGiB : 2 * kMiB)
      << "the thirds add up to the rise\n"
      << ev;
  for (int k = 0; k < 3; ++k) {
    const double lo = from + k * f.seconds / 3, hi = from + (k + 1) * f.seconds / 3;
    const double did = (shape(hi) - shape(lo)) * kMiB;
    EXPECT_NEAR(f.thirds[static_cast<size_t>(k)], did, 0.35 * actual) << "third " << k << "\n" << ev;
  }
  EXPECT_LT(f.thirds[2], 0.1 * f.rise) << ev;
  EXPECT_NE(ev.find("the growth did not keep going: rises per third"), std::string::npos) << ev;
  EXPECT_NE(ev.find(": settling, not a leak."), std::string::npos) << ev;
  // The steps thin out: the first third rose the most.
  EXPECT_GT(f.thirds[0], f.thirds[2]) << ev;
}

// The window's own levels: at the ends and the thirds' boundaries, on the line for a line, and a
// single step reads as its height in the third that holds it.
TEST(EvidenceFigures, BoundaryLevelsFollowALineAndAStep) {
  std::vector<FloorPoint> line, step;
  for (int i = 0; i < 180; ++i) {
    line.push_back({60.0 * i, (1000 + 2.0 * i) * kMiB});
    step.push_back({60.0 * i, (i < 30 ? 1000.0 : 1300.0) * kMiB});
  }
  GrowthOptions o;
  const auto w = TestGrowthWindow(line, o);
  ASSERT_TRUE(w && w->boundary_levels);
  const double span = w->t1 - w->t0;
  // (Thinned to 120 points, each the lowest of two: the levels sit one MiB under the line's.)
  for (size_t k = 1; k < 4; ++k)
    EXPECT_NEAR((w->boundary_level_bytes[k] - w->boundary_level_bytes[0]) / kMiB, 2.0 * (span / 3) * k / 60, 0.5) << k;
  const auto s = TestGrowthWindow(step, o);
  ASSERT_TRUE(s && s->boundary_levels);
  EXPECT_NEAR((s->boundary_level_bytes[1] - s->boundary_level_bytes[0]) / kMiB, 300, 60);
  EXPECT_NEAR((s->boundary_level_bytes[3] - s->boundary_level_bytes[1]) / kMiB, 0, 30);
}

}  // namespace
}  // namespace vw::detection
