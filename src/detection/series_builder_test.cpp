#include "detection/series_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "core/units.h"

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

// Times no source passes (sources stop at the year 10000) still fall in a bin: far beyond the range
// of bin numbers, the outermost one; the curve's points stay in order.
TEST(MinMaxDecimator, TimesBeyondTheBinRangeShareTheOutermostBin) {
  MinMaxDecimator d(100);
  d.Add(0, 5);
  d.Add(1, 7);
  d.Add(1.7e23, 9);
  d.Add(1.8e23, 11);
  const auto pts = d.Points();
  ASSERT_FALSE(pts.empty());
  EXPECT_EQ(pts.front().used_bytes, 5);
  EXPECT_EQ(pts.back().used_bytes, 11);
  EXPECT_EQ(pts.back().t, 1.8e23);
  for (size_t i = 1; i < pts.size(); ++i) EXPECT_LE(pts[i - 1].t, pts[i].t) << i;
}

// The decimator as it was before it cached the range of times of the current bin: a division and
// a floor per sample. The cached one must keep exactly the same points.
class ReferenceDecimator {
 public:
  explicit ReferenceDecimator(size_t max_points) : max_bins_(max_points < 4 ? 4 : max_points) {}
  void Add(double t, double value) {
    if (!started_) {
      origin_ = t;
      started_ = true;
    }
    auto n = static_cast<long long>(std::floor((t - origin_) / width_));
    if (bins_.empty() || bins_.back().first != n) {
      if (!bins_.empty() && n < bins_.back().first) n = bins_.back().first;
      if (bins_.empty() || bins_.back().first != n) {
        bins_.push_back({n, Bin{t, value, t, value}});
        if (bins_.size() > max_bins_) Compact();
        return;
      }
    }
    Bin& b = bins_.back().second;
    if (value < b.v_min) b = Bin{t, value, b.t_max, b.v_max};
    if (value > b.v_max) {
      b.t_max = t;
      b.v_max = value;
    }
  }
  std::vector<SeriesPoint> Points() const {
    std::vector<SeriesPoint> out;
    for (const auto& [n, b] : bins_) {
      if (b.t_min == b.t_max && b.v_min == b.v_max) {
        out.push_back({b.t_min, b.v_min});
      } else if (b.t_min <= b.t_max) {
        out.push_back({b.t_min, b.v_min});
        out.push_back({b.t_max, b.v_max});
      } else {
        out.push_back({b.t_max, b.v_max});
        out.push_back({b.t_min, b.v_min});
      }
    }
    return out;
  }

 private:
  struct Bin {
    double t_min = 0, v_min = 0, t_max = 0, v_max = 0;
  };
  void Compact() {
    width_ *= 2;
    std::vector<std::pair<long long, Bin>> merged;
    for (const auto& [n, bin] : bins_) {
      long long m = n >= 0 ? n / 2 : (n - 1) / 2;
      if (merged.empty() || merged.back().first != m) {
        merged.push_back({m, bin});
        continue;
      }
      Bin& into = merged.back().second;
      if (bin.v_min < into.v_min) {
        into.v_min = bin.v_min;
        into.t_min = bin.t_min;
      }
      if (bin.v_max > into.v_max) {
        into.v_max = bin.v_max;
        into.t_max = bin.t_max;
      }
    }
    bins_ = std::move(merged);
  }
  size_t max_bins_;
  double origin_ = 0;
  double width_ = 1.0;
  bool started_ = false;
  std::vector<std::pair<long long, Bin>> bins_;
};

// Time series that put samples on, next to and across bin boundaries: epoch clocks with
// millisecond jitter, exact multiples of the bin width, steps below the resolution of a large
// clock, steps that do not add up exactly in binary, negative times, times that go back.
TEST(MinMaxDecimator, SameBinsAsDividingForEverySample) {
  struct Case {
    const char* name;
    size_t max_points;
    std::vector<double> times;
  };
  std::mt19937_64 rng(42);
  std::vector<Case> cases;
  auto series = [&](const char* name, size_t max_points, size_t n, auto time_of) {
    Case c{name, max_points, {}};
    for (size_t i = 0; i < n; ++i) c.times.push_back(time_of(i));
    cases.push_back(std::move(c));
  };
  std::uniform_int_distribution<int> ms(0, 999);
  series("epoch seconds with ms jitter", 2000, 200000,
         [&](size_t i) { return 1784016758.0 + static_cast<double>(i) + ms(rng) / 1000.0; });
  series("integers on every boundary", 100, 50000, [](size_t i) { return static_cast<double>(i); });
  series("tenths from zero", 64, 50000, [](size_t i) { return static_cast<double>(i) * 0.1; });
  series("steps of 0.3 from 0.1", 50, 30000, [](size_t i) { return 0.1 + static_cast<double>(i) * 0.3; });
  series("microseconds on a large clock", 30, 20000, [](size_t i) { return 1e9 + static_cast<double>(i) * 1e-6; });
  series("ulp steps on a large clock", 8, 5000,
         [](size_t i) { return 1784016758.0 + static_cast<double>(i) * std::ldexp(1.0, -22); });
  series("negative times", 40, 20000, [](size_t i) { return -5000.0 + static_cast<double>(i) * 0.37; });
  series("repeated and backward times", 20, 20000,
         [](size_t i) { return static_cast<double>(i / 3) - (i % 7 == 0 ? 2.5 : 0.0); });
  series("tiny budget", 4, 10000, [](size_t i) { return 1.7e9 + static_cast<double>(i) * 0.999; });
  std::uniform_real_distribution<double> step(0.0, 3.0);
  double t = 1.7e9;
  series("random steps", 300, 100000, [&](size_t) { return t += step(rng); });
  for (const Case& c : cases) {
    MinMaxDecimator got(c.max_points);
    ReferenceDecimator want(c.max_points);
    std::uniform_real_distribution<double> value(0.0, 1e10);
    for (double time : c.times) {
      const double v = std::floor(value(rng));
      got.Add(time, v);
      want.Add(time, v);
    }
    const auto a = want.Points();
    const auto b = got.Points();
    ASSERT_EQ(a.size(), b.size()) << c.name;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].t, b[i].t) << c.name << " point " << i;
      ASSERT_EQ(a[i].used_bytes, b[i].used_bytes) << c.name << " point " << i;
    }
  }
}

// AddMemory() is Add(sample) without building a MemorySample: same capacity, counts and curve.
TEST(SeriesBuilder, AddMemoryFeedsTheSeriesAsAddSampleDoes) {
  using Opt = std::optional<uint64_t>;
  struct Step {
    double t;
    Opt used, total, reserved;
  };
  const uint64_t kGiB = 1ull << 30;
  const std::vector<Step> steps = {
      {0, 10 * kGiB, std::nullopt, std::nullopt},     // no capacity yet
      {1, std::nullopt, 80 * kGiB, std::nullopt},     // capacity without a value: counted missing
      {2, 11 * kGiB, 80 * kGiB, kGiB / 2},            // reserved arrives
      {3, 12 * kGiB, 80 * kGiB, std::nullopt},        // reserved kept when not given again
      {4, 12 * kGiB, 40 * kGiB, std::nullopt},        // another card size (MIG reconfigured)
      {5, std::nullopt, std::nullopt, std::nullopt},  // nothing at all
      {6, 13 * kGiB, 40 * kGiB, kGiB},                // reserved changes
      {7, 0, 40 * kGiB, kGiB},                        // zero is a value, not missing
  };
  SeriesBuilder by_sample(GpuIdentity{"0"});
  SeriesBuilder by_values(GpuIdentity{"0"});
  for (int round = 0; round < 200; ++round) {
    for (const Step& st : steps) {
      MemorySample s;
      s.t = round * 10.0 + st.t;
      s.used_bytes = st.used;
      s.total_bytes = st.total;
      s.reserved_bytes = st.reserved;
      by_sample.Add(s);
      by_values.AddMemory(s.t, st.used, st.total, st.reserved);
    }
    SCOPED_TRACE(round);
    ASSERT_EQ(by_sample.samples_with_memory(), by_values.samples_with_memory());
    ASSERT_EQ(by_sample.samples_without_memory(), by_values.samples_without_memory());
  }
  EXPECT_EQ(by_values.samples_without_memory(), 400u);
  const SeriesAnalysis a = by_sample.Snapshot();
  const SeriesAnalysis b = by_values.Snapshot();
  EXPECT_EQ(a.total_bytes, b.total_bytes);
  EXPECT_EQ(b.total_bytes, Opt(40 * kGiB));
  EXPECT_EQ(a.reserved_bytes, b.reserved_bytes);
  EXPECT_EQ(b.reserved_bytes, Opt(kGiB));
  ASSERT_EQ(a.raw.size(), b.raw.size());
  for (size_t i = 0; i < a.raw.size(); ++i) {
    EXPECT_EQ(a.raw[i].t, b.raw[i].t) << i;
    EXPECT_EQ(a.raw[i].used_bytes, b.raw[i].used_bytes) << i;
  }
  ASSERT_EQ(a.buckets.size(), b.buckets.size());
  EXPECT_EQ(a.assessment.verdict, b.assessment.verdict);
  EXPECT_EQ(a.assessment.samples, b.assessment.samples);
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

// No card holds more than its size: a sample above the total it came with is counted and left
// out, never fed (it made the peak, and so the runway, "OOM in 0s").
TEST(SeriesBuilder, ASampleAboveItsTotalIsCountedNotFed) {
  SeriesBuilder b(GpuIdentity{"0"});
  constexpr uint64_t kTotal = 80ull << 30;
  for (int i = 0; i < 100; ++i) {
    const uint64_t used = i == 50 ? 90ull << 30 : i == 70 ? 85ull << 30 : 1000ull << 20;
    b.AddMemory(i, used, kTotal, std::nullopt);
  }
  const SeriesAnalysis a = b.Snapshot();
  EXPECT_EQ(a.assessment.samples, 98u);
  EXPECT_EQ(a.above_total, 2u);
  ASSERT_TRUE(a.first_above_total);
  EXPECT_EQ(a.first_above_total->t, 50);
  EXPECT_EQ(a.first_above_total->used_bytes, 90ull << 30);
  EXPECT_EQ(a.first_above_total->total_bytes, kTotal);
  EXPECT_EQ(a.least_above_total_bytes, 85ull << 30);
  for (const SeriesPoint& p : a.raw) EXPECT_LE(p.used_bytes, static_cast<double>(kTotal));
}

// With HoldBackSamples() a sample or a run of up to kHeld samples ahead of both its neighbours (lines
// with a date a year on) is what is left out and counted, wherever it is; samples older than the
// ones before them are left out as without it, so a file written newest first keeps only its first
// sample. A longer run ahead is taken, and the samples after it are the ones left out.
TEST(SeriesBuilder, HeldBackSampleAheadOfBothNeighboursIsTheOneLeftOut) {
  constexpr double kYear = 365 * 86400.0;
  struct Case {
    const char* name;
    std::vector<double> times;
    size_t samples, out_of_order;
    double first_t, first_after_t;  // the first sample left out, and the one it came after
    double last_t;                  // the newest sample taken
  };
  std::vector<double> ahead_mid, ahead_end, ahead_first, reversed, two_ahead, eight_ahead, nine_ahead;
  for (int i = 0; i < 100; ++i) {
    ahead_mid.push_back(i == 40 ? 40 + kYear : i);
    ahead_end.push_back(i == 98 ? 98 + kYear : i);
    ahead_first.push_back(i == 1 ? 1 + kYear : i);
    reversed.push_back(99 - i);
    two_ahead.push_back(i == 40 || i == 41 ? i + kYear : i);
    eight_ahead.push_back(i >= 40 && i < 48 ? i + kYear : i);
    nine_ahead.push_back(i >= 40 && i < 49 ? i + kYear : i);
  }
  const std::vector<Case> cases = {
      {"ahead in the middle", ahead_mid, 99, 1, 40 + kYear, 39, 99},
      {"ahead near the end", ahead_end, 99, 1, 98 + kYear, 97, 99},
      {"ahead, second sample", ahead_first, 99, 1, 1 + kYear, 0, 99},
      {"written newest first", reversed, 1, 99, 98, 99, 99},
      {"a swapped pair", {0, 1, 3, 2, 4, 5}, 5, 1, 3, 1, 5},
      {"two ahead (a clock off for two samples)", two_ahead, 98, 2, 40 + kYear, 39, 99},
      {"eight ahead", eight_ahead, 92, 8, 40 + kYear, 39, 99},
      // More than kHeld: the run is taken, and every later sample is older than it.
      {"nine ahead", nine_ahead, 49, 51, 49, 48 + kYear, 48 + kYear},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SeriesBuilder b(GpuIdentity{"0"});
    b.HoldBackSamples();
    for (double t : c.times) b.AddMemory(t, 1000ull << 20, 80ull << 30, std::nullopt);
    b.Finish();
    const SeriesAnalysis a = b.Snapshot();
    EXPECT_EQ(a.assessment.samples, c.samples);
    EXPECT_EQ(a.out_of_order, c.out_of_order);
    ASSERT_TRUE(a.first_out_of_order_t && a.first_out_of_order_after_t);
    EXPECT_EQ(*a.first_out_of_order_t, c.first_t);
    EXPECT_EQ(*a.first_out_of_order_after_t, c.first_after_t);
    ASSERT_FALSE(a.raw.empty());
    EXPECT_EQ(a.raw.back().t, c.last_t);
  }
  // Without the hold-back the sample ahead is taken and the rest counted (the live daemon's way).
  SeriesBuilder live(GpuIdentity{"0"});
  for (double t : ahead_mid) live.AddMemory(t, 1000ull << 20, 80ull << 30, std::nullopt);
  EXPECT_EQ(live.Snapshot().out_of_order, 59u);
}

// Departures noted while samples are held back reach the engine with the fall that follows them,
// as without the hold-back: two holders leaving a few samples apart are both explained (the second
// overwrote the first while its fall was still held, and the fall read as a restart).
TEST(SeriesBuilder, HeldBackSamplesKeepEachDepartureWithItsFall) {
  constexpr double kMiB = 1 << 20;
  for (int gap : {1, 3, 12}) {
    SCOPED_TRACE(gap);
    SeriesBuilder held(GpuIdentity{"0"}), live(GpuIdentity{"0"});
    held.HoldBackSamples();
    double prev_t = 0;
    for (int i = 0; i < 2160; ++i) {
      const double t = 1'780'000'000.0 + 10 * i;
      double used = 500 + 5000 + i * 300 * 10 / 3600;  // a 300 MiB/h leak
      if (i < 1000) used += 10240;                     // PID 100 leaves at sample 1000
      if (i < 1000 + gap) used += 12288;               // PID 200 `gap` samples later
      for (SeriesBuilder* b : {&held, &live}) {
        b->AddMemory(t, static_cast<uint64_t>(used * kMiB), 81559ull << 20, std::nullopt);
        if (i == 1000) b->NoteDeparture(prev_t, t, 10240 * kMiB, 100);
        if (i == 1000 + gap) b->NoteDeparture(prev_t, t, 12288 * kMiB, 200);
      }
      prev_t = t;
    }
    held.Finish();
    const SeriesAnalysis a = held.Snapshot(), b = live.Snapshot();
    EXPECT_EQ(a.assessment.verdict, b.assessment.verdict);
    EXPECT_EQ(a.assessment.evidence, b.assessment.evidence);
  }
}

// The series' clock (SetTimeFlags) decides how its evidence names moments: UTC clock times for a
// trace that named its zone, the wall clock as written for one that did not, and for one without
// a clock its own times (seconds from the trace's first sample, "t+1h 5m" as analyze's report
// writes them, even when this series starts later). The verdict and the numbers do not change.
TEST(SeriesBuilder, EvidenceNamesMomentsOnTheSeriesClock) {
  constexpr double kStart = 1795996800;  // 2026-11-30T00:00:00Z
  constexpr double kHour = 3600;
  struct Case {
    const char* name;
    bool set_flags;  // false: SetTimeFlags never called (the EngineConfig's default, offsets)
    bool has_zone, synthetic;
    double start;          // time of the first sample
    std::string expected;  // the moment "Growing since" names, from the assessed leak start
  };
  auto feed = [](SeriesBuilder& b, double start) {
    // Flat at 20 GiB for 2 hours, then +200 MiB/h for 4 hours; whole MiB as nvidia-smi writes them.
    for (double t = 0; t <= 6 * kHour; t += 5) {
      const double mib = 20000 + (t > 2 * kHour ? 200 * (t - 2 * kHour) / kHour : 0);
      b.AddMemory(start + t, static_cast<uint64_t>(std::llround(mib)) << 20, 80ull << 30, std::nullopt);
    }
  };
  // The leak start is found on the samples alone: the same offset from the first sample every time.
  SeriesBuilder reference(GpuIdentity{"0"});
  feed(reference, 0);
  const SeriesAnalysis ref = reference.Snapshot();
  ASSERT_EQ(ref.assessment.verdict, Verdict::kLeak);
  ASSERT_TRUE(ref.assessment.leak_start_t);
  const double since = *ref.assessment.leak_start_t;
  const std::string offset = "+" + FormatDuration(since);
  const std::string clock = FormatClock(kStart + since);
  ASSERT_EQ(clock.rfind("2026-11-30 0", 0), 0u) << clock;
  const std::vector<Case> cases = {
      {"no flags", false, false, false, kStart, offset},
      {"utc", true, true, false, kStart, clock + " UTC"},
      {"wall", true, false, false, kStart, clock},
      {"synthetic", true, false, true, 600, "t+" + FormatDuration(600 + since)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SeriesBuilder b(GpuIdentity{"0"});
    feed(b, c.start);
    if (c.set_flags) b.SetTimeFlags(c.has_zone, c.synthetic);
    const SeriesAnalysis a = b.Snapshot();
    ASSERT_EQ(a.assessment.verdict, Verdict::kLeak);
    ASSERT_EQ(a.assessment.evidence.size(), ref.assessment.evidence.size());
    std::string all;
    for (const std::string& e : a.assessment.evidence) all += e + "\n";
    EXPECT_NE(all.find("Growing since " + c.expected + " at "), std::string::npos) << all;
    EXPECT_EQ(all.find("UTC") != std::string::npos, c.set_flags && c.has_zone) << all;
    EXPECT_EQ(all.find("2026-11-30") != std::string::npos, c.set_flags && !c.synthetic) << all;
    EXPECT_EQ(all.find("since +") != std::string::npos, !c.set_flags) << all;
    EXPECT_EQ(all.find("since t+") != std::string::npos, c.set_flags && c.synthetic) << all;
    EXPECT_EQ(a.has_zone, c.set_flags && c.has_zone);
    EXPECT_EQ(a.synthetic_time, c.set_flags && c.synthetic);
  }
}

}  // namespace
}  // namespace vw::detection
