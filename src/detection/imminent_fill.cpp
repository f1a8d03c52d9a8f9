#include "detection/imminent_fill.h"

#include <algorithm>
#include <vector>

#include "detection/theil_sen.h"

namespace vw::detection {
namespace {

bool LowerFloor(const FloorPoint& a, const FloorPoint& b) {
  return a.floor < b.floor;
}

}  // namespace

std::optional<ImminentFill> FindImminentFill(std::span<const FloorPoint> cycle_free, std::optional<double> room_bytes,
                                             const ImminentFillOptions& o) {
  if (cycle_free.size() < 6) return std::nullopt;
  const bool soon_asked = o.max_runway_seconds > 0 && room_bytes.has_value();
  const bool swings_asked = o.swings_range_multiple > 0;
  if (!soon_asked && !swings_asked) return std::nullopt;
  // First what it costs nothing to rule out, when only the runway form is asked: growth at the
  // lower end of its interval that fills the room within max_runway_seconds and has run
  // min_growth_seconds has lifted the floor by room × min_growth / max_runway, so the floor's whole
  // range is at least that (half of it here, for the points' scatter about the line). A healthy
  // load with room to spare ends here, before the fit.
  if (soon_asked && !swings_asked && *room_bytes > 0) {
    const auto [lo, hi] = std::minmax_element(cycle_free.begin(), cycle_free.end(), LowerFloor);
    if (hi->floor - lo->floor < 0.5 * *room_bytes * o.min_growth_seconds / o.max_runway_seconds) return std::nullopt;
  }
  auto rate = FitLeakRate(cycle_free, o.min_growth_seconds, o.ci_level, o.max_points);
  if (!rate || !(rate->sen.low_slope > 0)) return std::nullopt;
  const double grew_s = rate->t_end - rate->start_t;
  const auto first_after = std::lower_bound(cycle_free.begin(), cycle_free.end(), rate->start_t,
                                            [](const FloorPoint& p, double t) { return p.t < t; });
  const std::span<const FloorPoint> before(cycle_free.begin(), first_after);
  const double before_s = before.empty() ? 0 : rate->start_t - before.front().t;
  if (grew_s < o.min_growth_seconds || before.size() < 2 || before_s < o.min_before_seconds) return std::nullopt;

  const auto [lo, hi] = std::minmax_element(before.begin(), before.end(), LowerFloor);
  ImminentFill f;
  f.before_range_bytes = hi->floor - lo->floor;
  f.before_seconds = before_s;
  f.rise_bytes = rate->sen.slope * grew_s;
  f.runs_out_soon = soon_asked && f.rise_bytes >= o.range_multiple * f.before_range_bytes &&
                    (*room_bytes <= 0 || *room_bytes / rate->sen.low_slope < o.max_runway_seconds);
  // The swings' range is a yardstick only over a longer stretch than the growth: a load's slow
  // swings (a batch level that drifts over an hour or two) cover little of their range in a short
  // stretch, and the growth since would be measured against too small a one.
  const bool past_swings = swings_asked && before_s >= o.min_before_per_growth * grew_s &&
                           f.rise_bytes >= o.swings_range_multiple * f.before_range_bytes;
  if (!f.runs_out_soon && !past_swings) return std::nullopt;

  const std::vector<FloorPoint> after =
      ThinPoints(std::span<const FloorPoint>(first_after, cycle_free.end()), o.max_points);
  std::vector<double> y;
  y.reserve(after.size());
  for (const FloorPoint& p : after) y.push_back(p.floor);
  const auto mk = EngineMannKendall(y, o.alpha);
  if (!mk || !(mk->z > 0) || !(mk->p < o.alpha)) return std::nullopt;
  // At one pace: each half of the growth rose (its interval above zero), and neither half is
  // slower than pace_ratio of the other. A warm-up curve slows down; a step (a model loaded under
  // the load) leaves both halves flat; growth that began late in the fitted stretch leaves the
  // first half slow.
  const double mid_t = rate->start_t + grew_s / 2;
  const auto mid =
      std::lower_bound(after.begin(), after.end(), mid_t, [](const FloorPoint& p, double t) { return p.t < t; });
  const std::span<const FloorPoint> first_half(after.begin(), mid), second_half(mid, after.end());
  if (first_half.size() < 3 || second_half.size() < 3) return std::nullopt;
  const auto s1 = SenOfFloor(first_half, first_half.front().t, o.ci_level);
  const auto s2 = SenOfFloor(second_half, second_half.front().t, o.ci_level);
  if (!s1 || !s2 || !(s1->low_slope > 0) || !(s2->low_slope > 0)) return std::nullopt;
  if (!(s2->slope >= o.pace_ratio * s1->slope) || !(s1->slope >= o.pace_ratio * s2->slope)) return std::nullopt;
  f.rate = *rate;
  f.mk = *mk;
  return f;
}

}  // namespace vw::detection
