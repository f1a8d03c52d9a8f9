#include "detection/leak_rate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detection/pairwise_slopes.h"
#include "detection/quantile.h"

namespace vw::detection {
namespace {

constexpr size_t kCoarse = 16;           // candidate starts in the first pass
constexpr size_t kCandidatePoints = 30;  // points per candidate's quick slope

// Median pairwise slope only (no interval): the quick fit for each candidate start.
double QuickSlope(std::span<const FloorPoint> p) {
  std::vector<double> x, y;
  x.reserve(p.size());
  y.reserve(p.size());
  for (const FloorPoint& q : p) {
    x.push_back(q.t);
    y.push_back(q.floor);
  }
  return PairwiseSlopes(x, y).Median();
}

}  // namespace

std::optional<LeakRateFit> FitLeakRate(std::span<const FloorPoint> all, double min_span_s, double ci_level,
                                       size_t max_points) {
  if (all.size() < 6) return std::nullopt;
  const std::vector<FloorPoint> pts = ThinPoints(all, max_points);
  const size_t n = pts.size();
  const double t_end = pts.back().t;
  size_t last_start = 0;
  while (last_start + 1 < n && t_end - pts[last_start + 1].t >= min_span_s) ++last_start;
  // Total absolute deviation of "level before s, line after s".
  auto cost_of = [&](size_t s) {
    const std::span<const FloorPoint> after(pts.begin() + static_cast<std::ptrdiff_t>(s), pts.end());
    const double slope = QuickSlope(ThinPoints(after, kCandidatePoints));
    std::vector<double> resid;
    resid.reserve(after.size());
    for (const FloorPoint& q : after) resid.push_back(q.floor - slope * (q.t - pts[s].t));
    std::vector<double> centred = resid;
    const double a = *Median(centred);
    double cost = 0;
    for (double r : resid) cost += std::fabs(r - a);
    if (s > 0) {
      std::vector<double> before;
      for (size_t i = 0; i < s; ++i) before.push_back(pts[i].floor);
      std::vector<double> copy = before;
      const double level = *Median(copy);
      for (double v : before) cost += std::fabs(v - level);
    }
    return cost;
  };
  // Coarse pass over the whole range, then every start between the best one's neighbours.
  const size_t stride = std::max<size_t>(1, (last_start + 1) / kCoarse);
  size_t best = 0;
  double best_cost = INFINITY;
  for (size_t s = 0; s <= last_start; s += stride) {
    const double cost = cost_of(s);
    if (cost < best_cost) {
      best_cost = cost;
      best = s;
    }
  }
  const size_t lo = best >= stride ? best - stride + 1 : 0, hi = std::min(last_start, best + stride - 1);
  for (size_t s = lo; s <= hi; s += std::max<size_t>(1, stride / 4)) {
    if (s == best) continue;
    const double cost = cost_of(s);
    if (cost < best_cost) {
      best_cost = cost;
      best = s;
    }
  }
  const std::span<const FloorPoint> after(pts.begin() + static_cast<std::ptrdiff_t>(best), pts.end());
  std::vector<double> y;
  for (const FloorPoint& q : after) y.push_back(q.floor);
  const auto mk = MannKendall(y, {.correction = AutocorrelationCorrection::kHamedRao, .never_shrink_variance = true});
  const double factor = mk ? mk->variance_factor : 1;
  auto sen = SenOfFloor(after, pts[best].t, ci_level, factor);
  if (!sen) return std::nullopt;
  LeakRateFit out;
  out.start_t = pts[best].t;
  out.t_end = t_end;
  out.points = after.size();
  out.sen = *sen;
  out.variance_factor = factor;
  return out;
}

}  // namespace vw::detection
