#include "detection/settled_floor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "detection/floor_shape.h"
#include "detection/verdict_evidence.h"

namespace vw::detection {
namespace {

// The settling gate's step (bytes): a floor that rises by less than this per settle window is
// quiet.
double SettleStep(const Assessment& a, std::span<const FloorPoint> pts, const EngineConfig& c) {
  const double level = a.capacity_bytes.value_or(pts.back().floor);
  return std::max(c.settle_min_bytes, c.settle_fraction * level);
}

}  // namespace

RiseSoFar RiseSinceSettled(const Assessment& a, std::span<const FloorPoint> pts, std::span<const FloorPoint> analysed,
                           const EngineConfig& c) {
  RiseSoFar r;
  r.since = analysed.back().floor - analysed.front().floor;
  if (pts.back().t - pts.front().t >= c.settle_window_seconds) {
    size_t j = pts.size() - 1;
    while (j > 0 && pts[j - 1].t >= pts.back().t - c.settle_window_seconds) --j;
    r.recent = pts.back().floor - pts[j].floor;
  }
  r.risen = r.since > c.min_growth_bytes;
  r.rising = !r.risen && r.recent >= SettleStep(a, pts, c);
  return r;
}

std::string RiseClause(const RiseSoFar& r, const EngineConfig& c) {
  if (r.risen) {
    return fmt::format(", and it has risen by {} since, more than {}: still warming up", Signed(r.since),
                       FormatBytes(c.min_growth_bytes));
  }
  if (r.rising) {
    return fmt::format(", and it rose by {} in the last {}: still rising", Signed(r.recent),
                       FormatDuration(c.settle_window_seconds));
  }
  return "";
}

std::optional<size_t> SettleGate(Assessment& a, std::span<const FloorPoint> pts, const EngineConfig& c) {
  // Settling gate: the floor's rise over the last settle window must be small, or no longer
  // falling (steady growth is not a warm-up ramp).
  const double fast = SettleStep(a, pts, c);
  const double ws = c.settle_window_seconds;
  std::optional<size_t> settled;
  double last_rise = 0;
  {
    size_t j = 0;
    std::optional<double> prev_rise;  // rise one settle window earlier
    std::vector<double> rises(pts.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < pts.size(); ++i) {
      if (pts[i].t - pts.front().t < ws) continue;
      while (j + 1 < i && pts[j + 1].t <= pts[i].t - ws) ++j;
      rises[i] = pts[i].floor - pts[j].floor;
      last_rise = rises[i];
      prev_rise.reset();
      if (!std::isnan(rises[j])) prev_rise = rises[j];
      const bool quiet = rises[i] < fast;
      const bool steady = prev_rise && rises[i] > 0 && rises[i] >= 0.5 * *prev_rise;
      if (quiet || steady) {
        settled = i;
        break;
      }
    }
  }
  if (!settled) {
    a.verdict = Verdict::kWarmup;
    a.evidence.push_back(fmt::format(
        "Still warming up: the floor rose by {} in the last {}; the leak tests start once it rises by less than {} "
        "per {}.",
        Signed(last_rise), FormatDuration(ws), FormatBytes(fast), FormatDuration(ws)));
    return std::nullopt;
  }
  a.settled_at = pts[*settled].t;
  return settled;
}

std::optional<SettledFloor> SettledWindows(Assessment& a, std::span<const FloorPoint> pts, size_t settled,
                                           const EngineConfig& c, double first_t, double last_t, double bucket_s) {
  const std::span<const FloorPoint> analysed(pts.begin() + static_cast<std::ptrdiff_t>(settled), pts.end());
  const double span_a = analysed.back().t - analysed.front().t;

  // Windows: each configured one the data covers, plus all the settled data when it falls between.
  std::vector<double> sizes;
  std::vector<double> configured = c.windows_seconds;
  std::sort(configured.begin(), configured.end());
  for (double w : configured)
    if (w > 0 && span_a >= 0.98 * w) sizes.push_back(w);
  const double longest = configured.empty() ? span_a : configured.back();
  if (span_a >= c.min_window_seconds && span_a < longest &&
      (sizes.empty() || span_a > sizes.back() + c.min_window_seconds / 2))
    sizes.push_back(span_a);
  if (sizes.empty()) {
    // Too short for a trend test: still rising is warm-up, else a plateau so far.
    const RiseSoFar rise = RiseSinceSettled(a, pts, analysed, c);
    a.verdict = rise.Rising() ? Verdict::kWarmup : Verdict::kPlateau;
    a.evidence.push_back(
        fmt::format("The floor settled at {} ({}); {} of settled data is too short for a trend test "
                    "(at least {}){}.",
                    At(*a.settled_at, first_t, c.evidence_times), FormatBytes(analysed.front().floor),
                    FormatDuration(span_a), FormatDuration(c.min_window_seconds), RiseClause(rise, c)));
    return std::nullopt;
  }
  const GrowthOptions go{.alpha = c.alpha,
                         .ci_level = c.ci_level,
                         .min_rate_bps = c.min_rate_bps,
                         .min_growth_bytes = c.min_growth_bytes,
                         .third_fraction = c.third_fraction,
                         .late_fraction = c.late_fraction,
                         .slowdown_ratio = c.slowdown_ratio,
                         .strong_slowdown_ratio = c.strong_slowdown_ratio,
                         .third_balance = c.third_balance,
                         .rise_consistency = c.rise_consistency,
                         .max_jump_share = c.max_jump_share,
                         .max_points = c.max_trend_points};
  const bool young = span_a < c.min_history_seconds;
  const SettledAge age{.young = young,
                       .slow_young = span_a < c.slow_history_seconds,
                       .smooth_young = span_a < std::max(c.min_history_seconds, c.smooth_history_seconds),
                       .first_window = configured.empty() ? c.min_window_seconds : configured.front()};
  return SettledFloor{.c = c,
                      .first_t = first_t,
                      .last_t = last_t,
                      .bucket_s = bucket_s,
                      .pts = pts,
                      .analysed = analysed,
                      .span_s = span_a,
                      .sizes = std::move(sizes),
                      .go = go,
                      .age = age};
}

FloorTests TestFloor(const SettledFloor& settled) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const std::vector<double>& sizes = settled.sizes;
  const GrowthOptions& go = settled.go;
  const SettledAge& age = settled.age;
  SettledAge floor_age = age;
  floor_age.floor = analysed;
  // The tests run on the floor with short spikes removed; the rate is fitted on the floor itself.
  const std::vector<FloorPoint> opened = Opening(analysed, c.spike_seconds);
  // Whether the floor swings with a load: it fell below an earlier high by much more than its noise.
  bool oscillating = false;
  {
    const std::span<const FloorPoint> longest_span = Tail(opened, sizes.back());
    oscillating = MaxDrawdown(longest_span) > std::max(c.oscillation_min_bytes, 8 * FloorNoise(longest_span));
  }
  GrowthOptions floor_go = go;
  if (oscillating) {
    floor_go.alpha = std::min(go.alpha, c.oscillating_floor_alpha);
  } else {  // a steady floor's growth must come in more than a few steps (a swinging one's always does)
    floor_go.top_jumps = c.top_jumps;
    floor_go.max_top_jumps_share = c.max_top_jumps_share;
    floor_go.regular_min_step_bytes = c.regular_min_step_bytes;
    floor_go.regular_min_steps = c.regular_min_steps;
    floor_go.regular_size_tolerance = c.regular_size_tolerance;
    floor_go.regular_chance = c.regular_chance;
    floor_go.regular_gap_ratio = c.regular_gap_ratio;
    floor_go.regular_carry = c.regular_carry;
  }
  TestedWindows floor_v = TestSeries(opened, sizes, floor_go, c, floor_age);
  // Growth that began after the settled floor held flat is no settling curve (asked only when a
  // window grew: the history rules hold back nothing else).
  const bool late_onset = age.slow_young && !oscillating && AnyWindowGrew(floor_v) && BeganAfterFlat(opened, c);
  if (late_onset) {
    floor_age.young = floor_age.smooth_young = false;
    floor_v.leak_at.reset();
    floor_v.vetoed_by.reset();
    floor_v.smooth = false;
    ChooseWindow(floor_v, c, floor_age);
  }
  // A window from where the growth began, unless the floor swings (a load's rising half-cycle would
  // pass from its trough).
  if (!oscillating) AddOnsetWindow(floor_v, opened, floor_go, c, floor_age);
  return FloorTests{
      .oscillating = oscillating, .go = floor_go, .age = floor_age, .v = std::move(floor_v), .late_onset = late_onset};
}

}  // namespace vw::detection
