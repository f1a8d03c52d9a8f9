// Test fixtures: realistic SeriesAnalysis values built by hand, for the chart, report and browser
// tests (header-only; not part of the library). Each one is what the leak engine reports for a
// recognisable training run, with the raw curve, 60 s buckets (floor = 10 % quantile, peak = max),
// and an Assessment whose numbers agree with each other (tto = (capacity - peak) / rate).
//
// Times are wall clock as written (no zone), starting 2026-07-14 08:00:00; sizes in bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "detection/series_analysis.h"

namespace vw::outputs::testing {

inline constexpr double kFixtureStart = 1784016000;  // 2026-07-14T08:00:00 (wall clock)
inline constexpr double kH100TotalBytes = 81559.0 * kMiB;
inline constexpr double kH100ReservedBytes = 479.0 * kMiB;

// Deterministic noise in [-1, 1].
class FixtureNoise {
 public:
  explicit FixtureNoise(uint32_t seed) : state_(seed) {}
  double Next() {
    state_ = state_ * 1664525u + 1013904223u;
    return static_cast<double>(state_ >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }

 private:
  uint32_t state_;
};

inline GpuIdentity FixtureGpu(int index) {
  GpuIdentity g;
  g.key = std::to_string(index);
  g.index = index;
  g.uuid = "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f6" + std::to_string(index);
  g.pci_bus_id = index == 0 ? "00000000:3B:00.0" : "00000000:5E:00.0";
  g.name = "NVIDIA H100 80GB HBM3";
  return g;
}

// Fills raw points from `used(t)` every `step_s` and derives 60 s buckets.
template <typename Fn>
void FillSeries(detection::SeriesAnalysis& s, double start, double hours, double step_s, Fn used) {
  s.raw.clear();
  s.buckets.clear();
  std::vector<double> bucket_values;
  double bucket_start = start;
  detection::Bucket b;
  auto flush = [&]() {
    if (bucket_values.empty()) return;
    std::sort(bucket_values.begin(), bucket_values.end());
    b.t_start = bucket_start;
    b.floor_bytes = bucket_values[static_cast<size_t>(0.10 * static_cast<double>(bucket_values.size() - 1))];
    b.peak_bytes = bucket_values.back();
    b.count = bucket_values.size();
    s.buckets.push_back(b);
    bucket_values.clear();
  };
  for (double t = start; t <= start + hours * 3600 + 1e-9; t += step_s) {
    if (t >= bucket_start + 60) {
      flush();
      bucket_start += 60 * std::floor((t - bucket_start) / 60);
    }
    double v = used(t);
    s.raw.push_back({t, v});
    bucket_values.push_back(v);
    b.t_end = t;
    b.last_bytes = v;
  }
  flush();
  auto& a = s.assessment;
  a.samples = s.raw.size();
  a.start_t = s.raw.front().t;
  a.end_t = s.raw.back().t;
  a.last_used_bytes = s.raw.back().used_bytes;
}

// A training run on GPU `index` that leaks 1.5 GiB/h from 08:40 after a 10-minute ramp to 52 GiB,
// with an 8 GiB evaluation spike for 4 minutes every 45 minutes and one Xid at 11:05. Six hours.
inline detection::SeriesAnalysis LeakWithEvalSpikes(int index = 0) {
  detection::SeriesAnalysis s;
  s.gpu = FixtureGpu(index);
  s.total_bytes = static_cast<uint64_t>(kH100TotalBytes);
  s.reserved_bytes = static_cast<uint64_t>(kH100ReservedBytes);
  const double start = kFixtureStart, leak_start = start + 40 * 60, rate = 1.5 * kGiB / 3600;
  FixtureNoise noise(7u + static_cast<uint32_t>(index));
  FillSeries(s, start, 6, 10, [&](double t) {
    double e = t - start;
    double base = e < 600 ? 0.5 * kGiB + std::floor(e / 120) * 10.3 * kGiB : 52 * kGiB;  // warm-up staircase
    if (t > leak_start) base += rate * (t - leak_start);
    double step_wobble = std::fabs(noise.Next()) * 2.2 * kGiB;  // activations come and go each step
    bool eval = e > 900 && std::fmod(e - 900, 2700) < 50;
    return base + step_wobble + (eval ? 8 * kGiB + noise.Next() * 0.3 * kGiB : 0);
  });
  auto& a = s.assessment;
  a.verdict = detection::Verdict::kLeak;
  a.capacity_bytes = kH100TotalBytes - kH100ReservedBytes;
  a.settled_at = start + 600;
  a.leak_start_t = leak_start;
  detection::TrendFit fit;
  fit.window_seconds = a.end_t - leak_start;
  fit.t0 = leak_start;
  fit.y0_bytes = 52 * kGiB + 0.02 * kGiB;
  fit.slope_bps = rate;
  fit.slope_lo_bps = 1.3 * kGiB / 3600;
  fit.slope_hi_bps = 1.7 * kGiB / 3600;
  fit.mk_z = 9.4;
  fit.mk_p = 1e-12;
  a.trend = fit;
  a.rate_bps = fit.slope_bps;
  a.rate_lo_bps = fit.slope_lo_bps;
  a.rate_hi_bps = fit.slope_hi_bps;
  double floor = 0, peak = 0;
  for (const auto& p : s.raw) {
    if (p.t >= a.end_t - 3600) peak = std::max(peak, p.used_bytes);
  }
  floor = fit.y0_bytes + fit.slope_bps * (a.end_t - fit.t0);
  a.floor_bytes = floor;
  a.peak_bytes = peak;
  const double headroom = *a.capacity_bytes - peak;
  a.tto_s = headroom / *a.rate_bps;
  a.tto_lo_s = headroom / *a.rate_hi_bps;
  a.tto_hi_s = headroom / *a.rate_lo_bps;
  a.evidence = {
      "The floor (10th percentile per minute) rose from 52.0 GiB at 08:40 to 60.0 GiB at 14:00, 1.5 GiB/h.",
      "Mann-Kendall trend test on the floor: z = 9.4, p < 0.0001 over 5h 20m; the rise does not slow down.",
      "Evaluation spikes of about 8 GiB every 45 minutes return to the floor each time: they are not the leak.",
      "At this rate the card's 79.2 GiB run out around 21:00 (between 20:11 and 22:05)."};
  s.events.push_back({start + 3 * 3600 + 5 * 60, "Xid 31"});
  return s;
}

// A healthy run on GPU `index`: a 15-minute ramp to a 70 GiB floor with 6 GiB spikes, flat for
// four hours: a high plateau that is not a leak.
inline detection::SeriesAnalysis Plateau(int index = 1) {
  detection::SeriesAnalysis s;
  s.gpu = FixtureGpu(index);
  s.total_bytes = static_cast<uint64_t>(kH100TotalBytes);
  s.reserved_bytes = static_cast<uint64_t>(kH100ReservedBytes);
  const double start = kFixtureStart + 2 * 3600;
  FixtureNoise noise(99u + static_cast<uint32_t>(index));
  FillSeries(s, start, 4, 10, [&](double t) {
    double e = t - start;
    double base = e < 900 ? 1 * kGiB + 69 * kGiB * (1 - std::exp(-e / 200)) : 70 * kGiB;
    bool spike = e > 900 && std::fmod(e, 1800) < 90;
    return base + std::fabs(noise.Next()) * 1.8 * kGiB + (spike ? 4.5 * kGiB : 0);
  });
  auto& a = s.assessment;
  a.verdict = detection::Verdict::kPlateau;
  a.capacity_bytes = kH100TotalBytes - kH100ReservedBytes;
  a.settled_at = start + 1200;
  detection::TrendFit fit;
  fit.window_seconds = a.end_t - *a.settled_at;
  fit.t0 = *a.settled_at;
  fit.y0_bytes = 70.03 * kGiB;
  fit.slope_bps = 0.4 * kMiB / 3600;
  fit.slope_lo_bps = -3 * kMiB / 3600;
  fit.slope_hi_bps = 3.5 * kMiB / 3600;
  fit.mk_z = 0.3;
  fit.mk_p = 0.76;
  a.trend = fit;
  a.floor_bytes = 70.04 * kGiB;
  double peak = 0;
  for (const auto& p : s.raw) {
    if (p.t >= a.end_t - 3600) peak = std::max(peak, p.used_bytes);
  }
  a.peak_bytes = peak;
  a.evidence = {"The floor has stayed at 70.0 GiB since 10:20 (Mann-Kendall p = 0.76: no trend).",
                "Spikes of about 4.5 GiB every 30 minutes come back down to the floor.",
                "Peak 76.2 GiB leaves 3.0 GiB of headroom: high, and steady."};
  return s;
}

// Two GPUs of one host: GPU 0 leaking, GPU 1 on a plateau, over the same hours.
inline std::vector<detection::SeriesAnalysis> TwoGpus() {
  detection::SeriesAnalysis leak = LeakWithEvalSpikes(0);
  detection::SeriesAnalysis flat = Plateau(1);
  return {leak, flat};
}

}  // namespace vw::outputs::testing
