#include "detection/leak_rate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detection/quantile.h"

namespace vw::detection {
namespace {

constexpr size_t kCandidates = 48;
constexpr size_t kCandidatePoints = 60;  // points per candidate's quick slope

std::optional<TheilSenResult> Sen(std::span<const FloorPoint> p, double origin, double ci, double factor) {
  std::vector<double> x, y;
  x.reserve(p.size());
  y.reserve(p.size());
  for (const FloorPoint& q : p) {
    x.push_back(q.t - origin);
    y.push_back(q.floor);
  }
  return TheilSen(x, y, ci, factor);
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
  const size_t stride = std::max<size_t>(1, (last_start + 1) / kCandidates);

  size_t best = 0;
  double best_cost = INFINITY;
  for (size_t s = 0; s <= last_start; s += stride) {
    const std::span<const FloorPoint> after(pts.begin() + static_cast<std::ptrdiff_t>(s), pts.end());
    const std::vector<FloorPoint> quick = ThinPoints(after, kCandidatePoints);
    const auto fit = Sen(quick, pts[s].t, 0.9, 1);
    if (!fit) continue;
    std::vector<double> resid;
    resid.reserve(n);
    for (const FloorPoint& q : after) resid.push_back(q.floor - fit->slope * (q.t - pts[s].t));
    const double a = *Median(resid);
    double cost = 0;
    for (double r : resid) cost += std::fabs(r - a);
    if (s > 0) {
      std::vector<double> before;
      for (size_t i = 0; i < s; ++i) before.push_back(pts[i].floor);
      const double level = *Median(before);
      for (double v : before) cost += std::fabs(v - level);
    }
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
  auto sen = Sen(after, pts[best].t, ci_level, factor);
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
