#include "detection/growth_window.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detection/mann_kendall.h"
#include "detection/pairwise_slopes.h"
#include "detection/quantile.h"

namespace vw::detection {
namespace {

// Median floor of the points with t in [a, b]; nullopt when none.
std::optional<double> MedianFloorIn(std::span<const FloorPoint> p, double a, double b) {
  std::vector<double> v;
  for (const FloorPoint& q : p)
    if (q.t >= a && q.t <= b) v.push_back(q.floor);
  return Median(v);
}

// The floor's level at time c for the evidence: the median over the points with t in [a, b] of
// their floors moved to c along those points' own Sen slope (none for fewer than 3); nullopt when
// no point is there.
std::optional<double> LevelAt(std::span<const FloorPoint> p, double a, double b, double c) {
  std::vector<double> x, y;
  for (const FloorPoint& q : p)
    if (q.t >= a && q.t <= b) {
      x.push_back(q.t);
      y.push_back(q.floor);
    }
  // Sen's slope alone (the median pairwise slope; no interval: these levels are for wording only).
  const double slope = x.size() >= 3 ? PairwiseSlopes(x, y).Median() : 0;
  for (size_t i = 0; i < y.size(); ++i) y[i] += slope * (c - x[i]);
  return Median(y);
}

// The middle one of three values (as Median() gives it, without the general selection).
double MedianOf3(const std::array<double, 3>& v) {
  return std::max(std::min(v[0], v[1]), std::min(std::max(v[0], v[1]), v[2]));
}

// Times relative to the first point: the intercept is then the fitted floor at that point.
std::optional<TheilSenResult> SenOn(std::span<const FloorPoint> p, double ci_level) {
  if (p.empty()) return std::nullopt;
  return SenOfFloor(p, p.front().t, ci_level);
}

struct Step {
  double t = 0;      // seconds, between the two points the step lies between
  double bytes = 0;  // its height
  size_t at = 0;     // index of the first point after it
};

// The floor's deviation about its own level between the steps (bytes, root mean square): each
// stretch between two steps, less the `k` points on either side of a step, against its median.
// Where the spike-removed floor holds flat for minutes, the point-to-point noise reads zero while
// the levels it steps between still wander by this much.
double LevelNoise(std::span<const FloorPoint> pts, std::vector<Step> steps, size_t k) {
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  double sum = 0;
  size_t n = 0;
  size_t from = 0;
  for (size_t i = 0; i <= steps.size(); ++i) {
    const size_t to = i < steps.size() ? (steps[i].at >= k ? steps[i].at - k : 0) : pts.size();
    if (to > from + 2) {
      std::vector<double> level;
      for (size_t j = from; j < to; ++j) level.push_back(pts[j].floor);
      const double m = *Median(level);
      for (double v : level) sum += (v - m) * (v - m);
      n += level.size();
    }
    if (i < steps.size()) from = std::max(from, steps[i].at + k);
  }
  return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0;
}

// Whether the window's steps above the noise (in any order) are one buffer leaked per period, by
// GrowthOptions' regular_* tests. `pts`: the window's points, measured with jumps over `k` points
// on each side; `jump_sd`: the deviation of a jump measured on the noise alone (bytes).
std::optional<RegularStepping> RegularSteps(std::span<const Step> all, std::span<const FloorPoint> pts, size_t k,
                                            double slope_bps, double jump_sd, const GrowthOptions& o) {
  const size_t min_steps = std::max<size_t>(o.regular_min_steps, 2);
  const auto high = [&](const Step& s) { return s.bytes > o.regular_min_step_bytes; };
  if (static_cast<size_t>(std::count_if(all.begin(), all.end(), high)) < min_steps || !(slope_bps > 0))
    return std::nullopt;
  // A step's height is the difference of two levels, each off by up to the level noise. Only steps
  // above five deviations of that measurement count, as only jumps above five deviations of the
  // noise are steps at all: under heavy noise the spike-removed floor of a steady rise climbs in
  // steps of its own, about as far apart as the spikes it removes.
  const double height_sd = std::max(jump_sd, std::sqrt(2.0) * LevelNoise(pts, {all.begin(), all.end()}, k));
  std::vector<Step> steps;
  for (const Step& s : all)
    if (high(s) && s.bytes > 5 * height_sd) steps.push_back(s);
  if (steps.size() < min_steps) return std::nullopt;
  const double t0 = pts.front().t, t1 = pts.back().t;
  const double spacing_s = (t1 - t0) / static_cast<double>(pts.size() - 1);
  std::vector<double> heights;
  double sum = 0;
  for (const Step& s : steps) {
    heights.push_back(s.bytes);
    sum += s.bytes;
  }
  const double height = *Median(heights);
  const double tolerance = o.regular_size_tolerance * height + 3 * height_sd;
  double spread = 0;  // the largest distance of a height from the median
  for (double h : heights) spread = std::max(spread, std::abs(h - height));
  if (spread > tolerance) return std::nullopt;
  if (o.regular_chance > 0 && spread > 0) {
    if (spread >= height) return std::nullopt;
    const double needed = 1 + std::ceil(std::log(o.regular_chance) / std::log(spread / height) - 1e-9);
    if (static_cast<double>(steps.size()) < needed) return std::nullopt;
  }
  const double rise = slope_bps * (t1 - t0);
  if (sum < o.regular_carry * rise || sum * o.regular_carry > rise) return std::nullopt;
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.t < b.t; });
  double shortest = INFINITY, longest = 0;
  for (size_t i = 1; i < steps.size(); ++i) {
    const double gap = steps[i].t - steps[i - 1].t;
    shortest = std::min(shortest, gap);
    longest = std::max(longest, gap);
  }
  if (!(shortest > 0) || longest - shortest > (o.regular_gap_ratio - 1) * shortest + 2 * spacing_s) return std::nullopt;
  // Still stepping at the window's end (before the first step the floor may have held flat: a leak
  // that began inside the window).
  if (t1 - steps.back().t > longest) return std::nullopt;
  return RegularStepping{.steps = steps.size(),
                         .step_bytes = height,
                         .period_seconds = (steps.back().t - steps.front().t) / static_cast<double>(steps.size() - 1)};
}

}  // namespace

std::optional<TheilSenResult> SenOfFloor(std::span<const FloorPoint> points, double origin, double ci_level,
                                         double variance_factor) {
  std::vector<double> x, y;
  x.reserve(points.size());
  y.reserve(points.size());
  for (const FloorPoint& q : points) {
    x.push_back(q.t - origin);
    y.push_back(q.floor);
  }
  return TheilSen(x, y, ci_level, variance_factor);
}

double FloorNoise(std::span<const FloorPoint> points) {
  if (points.size() < 3) return 0;
  std::vector<double> d;
  d.reserve(points.size());
  for (size_t i = 1; i < points.size(); ++i) d.push_back(std::fabs(points[i].floor - points[i - 1].floor));
  return *Median(d) * 1.4826 / std::sqrt(2.0);
}

double MaxDrawdown(std::span<const FloorPoint> points) {
  double high = -INFINITY, dd = 0;
  for (const FloorPoint& p : points) {
    high = std::max(high, p.floor);
    dd = std::max(dd, high - p.floor);
  }
  return dd;
}

bool RisesThroughout(std::span<const FloorPoint> points, int parts, double ci_level, double agree_level,
                     size_t max_points) {
  if (parts < 1 || points.size() < 2) return false;
  const double t0 = points.front().t, span = points.back().t - t0;
  if (span <= 0) return false;
  const auto whole = SenOn(ThinPoints(points, max_points * static_cast<size_t>(parts)), ci_level);
  if (!whole) return false;
  size_t begin = 0;
  for (int k = 1; k <= parts; ++k) {
    const double end_t = k == parts ? INFINITY : t0 + span * k / parts;
    size_t end = begin;
    while (end < points.size() && points[end].t < end_t) ++end;
    const std::span<const FloorPoint> stretch = points.subspan(begin, end - begin);
    begin = end;
    if (stretch.size() < 5) return false;
    const std::vector<FloorPoint> thin = ThinPoints(stretch, max_points);
    const auto sen = SenOn(thin, ci_level);
    if (!sen || !(sen->low_slope > 0)) return false;
    if (agree_level > 0) {
      const auto wide = SenOn(thin, agree_level);
      if (!wide || whole->slope < wide->low_slope || whole->slope > wide->high_slope) return false;
    }
  }
  return true;
}

std::vector<FloorPoint> ThinPoints(std::span<const FloorPoint> points, size_t max_points) {
  if (max_points == 0 || points.size() <= max_points) return {points.begin(), points.end()};
  const size_t group = (points.size() + max_points - 1) / max_points;
  std::vector<FloorPoint> out;
  out.reserve(max_points);
  for (size_t i = 0; i < points.size(); i += group) {
    const size_t end = std::min(points.size(), i + group);
    FloorPoint g{0, points[i].floor};
    for (size_t k = i; k < end; ++k) {
      g.t += points[k].t;
      g.floor = std::min(g.floor, points[k].floor);
    }
    g.t /= static_cast<double>(end - i);
    out.push_back(g);
  }
  return out;
}

std::optional<GrowthWindow> TestGrowthWindow(std::span<const FloorPoint> all_points, const GrowthOptions& o) {
  if (all_points.size() < std::max<size_t>(o.min_points, 6)) return std::nullopt;
  const std::vector<FloorPoint> pts = ThinPoints(all_points, o.max_points);
  GrowthWindow w;
  w.points = pts.size();
  w.t0 = pts.front().t;
  w.t1 = pts.back().t;
  const double span = w.t1 - w.t0;
  if (span <= 0) return std::nullopt;

  std::vector<double> x, y;  // x: seconds from the window's first point, as SenOn fits
  x.reserve(pts.size());
  y.reserve(pts.size());
  for (const FloorPoint& p : pts) {
    x.push_back(p.t - w.t0);
    y.push_back(p.floor);
  }
  // The trend test. Its autocorrelation correction detrends the floors by the window's Sen's slope
  // over time, which the window fits anyway (for evenly spaced floors the same line as the
  // index's slope). Where the test without the correction finds no upward trend at `upward`, the
  // correction, which may only lower z, cannot find one either: neither is computed then;
  // elsewhere the correction is applied to that test's result.
  const double upward = o.stop_when_not_significant ? std::max(o.alpha, o.read_alpha) : 0;
  w.mk = MannKendall(y, {.correction = AutocorrelationCorrection::kNone});
  if (upward > 0 && w.mk && !(w.mk->z > 0 && w.mk->p <= upward)) {
    w.failed = "no significant upward trend";
    return w;
  }
  w.sen = TheilSen(x, y, o.ci_level);
  if (w.mk && w.sen) w.mk = WithEngineCorrection(*w.mk, y, x, w.sen->slope);
  if (o.stop_when_not_significant && w.mk && !(w.mk->z > 0 && w.mk->p < o.alpha)) {
    w.failed = "no significant upward trend";
    w.sen.reset();  // a failed window carries no fit (what reads one fits its own points)
    return w;
  }
  if (!w.mk || !w.sen) return std::nullopt;

  const double sixth = span / 6;
  const auto first = MedianFloorIn(pts, w.t0, w.t0 + sixth);
  const auto last = MedianFloorIn(pts, w.t1 - sixth, w.t1);
  w.rise_bytes = (first && last) ? *last - *first : 0;

  // Levels at the thirds' boundaries: medians over a twelfth of the window on each side (one side at
  // the ends); each third's rate divides its rise by the distance between the levels' centres.
  const double h = span / 12;
  const std::array<double, 4> centre = {w.t0 + h, w.t0 + span / 3, w.t0 + 2 * span / 3, w.t1 - h};
  std::array<std::optional<double>, 4> level = {
      MedianFloorIn(pts, w.t0, w.t0 + 2 * h), MedianFloorIn(pts, centre[1] - h, centre[1] + h),
      MedianFloorIn(pts, centre[2] - h, centre[2] + h), MedianFloorIn(pts, w.t1 - 2 * h, w.t1)};
  bool levels_ok = true;
  for (int k = 0; k < 3; ++k) {
    if (!level[k] || !level[k + 1]) {
      levels_ok = false;
      continue;
    }
    w.third_rise_bytes[k] = *level[k + 1] - *level[k];
    w.third_rate_bps[k] = w.third_rise_bytes[k] / (centre[k + 1] - centre[k]);
  }

  // The evidence's levels at the window's ends and thirds' boundaries (not read by any test below).
  w.boundary_levels = true;
  for (int k = 0; k <= 3; ++k) {
    const double c = k == 3 ? w.t1 : w.t0 + span * k / 3;
    const auto l = LevelAt(pts, k == 0 ? c : c - (k == 3 ? 2 * h : h), k == 3 ? c : c + (k == 0 ? 2 * h : h), c);
    w.boundary_levels = w.boundary_levels && l.has_value();
    if (l) w.boundary_level_bytes[static_cast<size_t>(k)] = *l;
  }

  w.significant = w.mk->z > 0 && w.mk->p < o.alpha;
  if (w.significant) {
    const double mid = w.t0 + span / 2;
    std::vector<FloorPoint> a, b;
    for (const FloorPoint& p : pts) (p.t <= mid ? a : b).push_back(p);
    if (a.size() >= 3) w.first_half = SenOn(a, o.ci_level);
    if (b.size() >= 3) w.second_half = SenOn(b, o.ci_level);
  }

  const double slope = w.sen->slope;
  w.fast_enough = w.sen->low_slope > 0 && slope >= o.min_rate_bps;
  w.large_enough = w.rise_bytes >= o.min_growth_bytes && slope * span >= o.min_growth_bytes;
  w.every_third = levels_ok;
  for (int k = 0; k < 3; ++k) w.every_third = w.every_third && w.third_rise_bytes[k] > 0;
  w.keeps_pace = w.every_third;
  for (int k = 0; k < 3; ++k) w.keeps_pace = w.keeps_pace && w.third_rate_bps[k] >= o.third_fraction * slope;
  w.keeps_pace = w.keeps_pace && w.third_rate_bps[2] >= o.late_fraction * w.third_rate_bps[0];
  // No third may dominate: one big step among small ones is not steady growth.
  const double max_rise = std::max({w.third_rise_bytes[0], w.third_rise_bytes[1], w.third_rise_bytes[2]});
  const double min_rise = std::min({w.third_rise_bytes[0], w.third_rise_bytes[1], w.third_rise_bytes[2]});
  w.keeps_pace = w.keeps_pace && min_rise >= o.third_balance * max_rise;
  // The measured rise and Sen's slope must tell the same story (a step makes them disagree).
  const double rise_rate = w.rise_bytes / (span * 5 / 6);
  w.consistent = slope > 0 && rise_rate <= o.rise_consistency * slope && rise_rate * o.rise_consistency >= slope;
  // Jumps: median of the next k points minus median of the previous k. The largest may not carry
  // a big share of the rise unless it is lost in the noise (a heavy-noise leak has "jumps" too).
  constexpr size_t k = 3;
  w.noise_bytes = FloorNoise(pts);
  std::vector<double> jumps(pts.size(), -INFINITY);  // at index i: the k points from i on less the k before
  for (size_t i = k; i + k <= pts.size(); ++i) {
    std::array<double, k> before{}, after{};
    for (size_t m = 0; m < k; ++m) {
      before[m] = pts[i - k + m].floor;
      after[m] = pts[i + m].floor;
    }
    double jump = MedianOf3(after) - MedianOf3(before);
    if (o.jump_net_of_slope) jump -= w.sen->slope * (pts[i + 1].t - pts[i - 2].t);  // middle to middle
    jumps[i] = jump;
    w.largest_jump_bytes = std::max(w.largest_jump_bytes, jump);
  }
  const double jump_sd = 1.25 * std::sqrt(2.0 / k) * w.noise_bytes;  // of a jump measured on noise alone
  const double jump_noise = 5 * jump_sd;
  w.no_big_jump = !(w.largest_jump_bytes > o.max_jump_share * w.rise_bytes && w.largest_jump_bytes > jump_noise);
  // The largest few steps, each counted once: one step between two points shows at the k indices
  // around it, so after each pick its neighbours within k are dropped. Only steps above the noise
  // count.
  if (o.top_jumps > 0) {
    // Every step above the noise, largest first; only the top_jumps largest unless the
    // regular-steps test is asked.
    const size_t picks = o.regular_min_step_bytes > 0 ? jumps.size() : o.top_jumps;
    std::vector<Step> steps;
    while (steps.size() < picks) {
      const auto it = std::max_element(jumps.begin(), jumps.end());
      if (it == jumps.end() || !(*it > jump_noise)) break;
      const size_t at = static_cast<size_t>(it - jumps.begin());
      steps.push_back({(pts[at - 1].t + pts[at].t) / 2, *it, at});
      if (steps.size() <= o.top_jumps) w.top_jumps_bytes += *it;
      for (size_t j = at >= k ? at - k : 0; j <= std::min(jumps.size() - 1, at + k); ++j) jumps[j] = -INFINITY;
    }
    w.few_steps = w.top_jumps_bytes > o.max_top_jumps_share * w.rise_bytes;
    w.steps_counted = true;
    if (o.regular_min_step_bytes > 0) w.regular = RegularSteps(steps, pts, k, slope, jump_sd, o);
  }
  w.not_slowing = true;
  if (w.first_half && w.second_half && w.first_half->slope > 0) {
    const bool slower = w.second_half->slope < o.slowdown_ratio * w.first_half->slope;
    const bool disjoint = w.second_half->high_slope < w.first_half->low_slope;
    const bool much_slower = w.second_half->slope < o.strong_slowdown_ratio * w.first_half->slope;
    w.not_slowing = !(slower && disjoint) && !much_slower;
  }

  // Equal steps at a regular pace carry the growth: a leak of one buffer per period. The tests of
  // how the rise spreads over the window (thirds, consistency, jumps) are for growth that is not
  // one, and are not asked.
  if (w.regular) {
    w.every_third = w.keeps_pace = w.consistent = w.no_big_jump = true;
    w.few_steps = false;
  }

  if (!w.significant) {
    w.failed = "no significant upward trend";
  } else if (!w.fast_enough) {
    w.failed = "the rate is too small or its interval reaches zero";
  } else if (!w.large_enough) {
    w.failed = "the total rise is no larger than a few allocator steps";
  } else if (!w.every_third) {
    w.failed = "the floor did not rise in every third of the window";
  } else if (!w.keeps_pace) {
    w.failed = "the growth slowed down or came in one part of the window";
  } else if (!w.consistent) {
    w.failed = "the rise came in jumps that a steady slope does not explain";
  } else if (!w.no_big_jump) {
    w.failed = "one jump carries a large share of the rise";
  } else if (w.few_steps) {
    w.failed = "a few steps carry most of the rise";
  } else if (!w.not_slowing) {
    w.failed = "the second half grew clearly slower than the first";
  } else {
    w.leak = true;
  }
  return w;
}

}  // namespace vw::detection
