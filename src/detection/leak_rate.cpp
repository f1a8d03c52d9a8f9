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

// Median pairwise slope only (no interval): the quick fit for each candidate start. x and y are
// scratch buffers, reused from candidate to candidate.
double QuickSlope(std::span<const FloorPoint> p, std::vector<double>& x, std::vector<double>& y) {
  x.clear();
  y.clear();
  for (const FloorPoint& q : p) {
    x.push_back(q.t);
    y.push_back(q.floor);
  }
  return PairwiseSlopes(x, y).Median();
}

// The thinned points and the index among them where the best "level, then line" fit starts.
struct StartFit {
  std::vector<FloorPoint> pts;
  size_t best = 0;
};

std::optional<StartFit> FitStart(std::span<const FloorPoint> all, double min_span_s, size_t max_points) {
  if (all.size() < 6) return std::nullopt;
  std::vector<FloorPoint> pts = ThinPoints(all, max_points);
  const size_t n = pts.size();
  const double t_end = pts.back().t;
  size_t last_start = 0;
  while (last_start + 1 < n && t_end - pts[last_start + 1].t >= min_span_s) ++last_start;
  // Total absolute deviation of "level before s, line after s". The buffers are reused from
  // candidate to candidate (the numbers are those of fresh ones).
  std::vector<double> x, y, resid, scratch;
  auto cost_of = [&](size_t s) {
    const std::span<const FloorPoint> after(pts.begin() + static_cast<std::ptrdiff_t>(s), pts.end());
    const double slope = QuickSlope(ThinPoints(after, kCandidatePoints), x, y);
    resid.clear();
    for (const FloorPoint& q : after) resid.push_back(q.floor - slope * (q.t - pts[s].t));
    scratch.assign(resid.begin(), resid.end());
    const double a = *Median(scratch);
    double cost = 0;
    for (double r : resid) cost += std::fabs(r - a);
    if (s > 0) {
      scratch.clear();
      for (size_t i = 0; i < s; ++i) scratch.push_back(pts[i].floor);
      const double level = *Median(scratch);
      for (size_t i = 0; i < s; ++i) cost += std::fabs(pts[i].floor - level);
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
  return StartFit{std::move(pts), best};
}

}  // namespace

std::optional<double> FindGrowthStart(std::span<const FloorPoint> all, double min_span_s, size_t max_points) {
  const auto fit = FitStart(all, min_span_s, max_points);
  if (!fit) return std::nullopt;
  // Defined exactly where FitLeakRate's Sen fit is: two or more finite points after the start, at
  // different times.
  const std::span<const FloorPoint> after(fit->pts.begin() + static_cast<std::ptrdiff_t>(fit->best), fit->pts.end());
  if (after.size() < 2 || !(after.back().t > after.front().t)) return std::nullopt;
  for (const FloorPoint& q : after)
    if (!std::isfinite(q.t) || !std::isfinite(q.floor)) return std::nullopt;
  return after.front().t;
}

std::optional<LeakRateFit> FitLeakRate(std::span<const FloorPoint> all, double min_span_s, double ci_level,
                                       size_t max_points) {
  const auto start = FitStart(all, min_span_s, max_points);
  if (!start) return std::nullopt;
  const std::vector<FloorPoint>& pts = start->pts;
  const size_t best = start->best;
  const double t_end = pts.back().t;
  const std::span<const FloorPoint> after(pts.begin() + static_cast<std::ptrdiff_t>(best), pts.end());
  std::vector<double> y;
  for (const FloorPoint& q : after) y.push_back(q.floor);
  const auto mk = EngineMannKendall(y);
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
