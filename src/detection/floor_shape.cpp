#include "detection/floor_shape.h"

#include <algorithm>
#include <array>
#include <deque>

#include "detection/oscillation.h"
#include "detection/quantile.h"

namespace vw::detection {

std::vector<FloorPoint> Opening(std::span<const FloorPoint> pts, double width_s) {
  if (width_s <= 0 || pts.size() < 3) return {pts.begin(), pts.end()};
  const double h = width_s / 2;
  auto sweep = [&](std::span<const FloorPoint> in, bool take_min) {
    std::vector<FloorPoint> out(in.size());
    std::deque<size_t> q;
    size_t next = 0;
    auto better = [&](double a, double b) { return take_min ? a <= b : a >= b; };
    for (size_t i = 0; i < in.size(); ++i) {
      while (next < in.size() && in[next].t <= in[i].t + h) {
        while (!q.empty() && better(in[next].floor, in[q.back()].floor)) q.pop_back();
        q.push_back(next++);
      }
      while (in[q.front()].t < in[i].t - h) q.pop_front();
      out[i] = {in[i].t, in[q.front()].floor};
    }
    return out;
  };
  const std::vector<FloorPoint> eroded = sweep(pts, true);
  return sweep(eroded, false);
}

std::vector<FloorPoint> LowerEnvelope(std::span<const FloorPoint> pts, double span_s) {
  std::vector<FloorPoint> out;
  out.reserve(pts.size());
  std::deque<size_t> q;  // indices with increasing floors
  for (size_t i = 0; i < pts.size(); ++i) {
    while (!q.empty() && pts[q.back()].floor >= pts[i].floor) q.pop_back();
    q.push_back(i);
    while (pts[q.front()].t <= pts[i].t - span_s) q.pop_front();
    out.push_back({pts[i].t, pts[q.front()].floor});
  }
  return out;
}

std::span<const FloorPoint> Tail(std::span<const FloorPoint> pts, double seconds) {
  const double from = pts.back().t - seconds - 1e-9;
  auto first = std::lower_bound(pts.begin(), pts.end(), from, [](const FloorPoint& p, double t) { return p.t < t; });
  return {first, pts.end()};
}

std::span<const FloorPoint> Until(std::span<const FloorPoint> pts, double t) {
  return {pts.begin(), std::partition_point(pts.begin(), pts.end(), [t](const FloorPoint& p) { return p.t <= t; })};
}

double RecentRise(std::span<const FloorPoint> series, double seconds) {
  if (series.size() < 6 || series.back().t - series.front().t < seconds) return 0;
  auto median_floor = [](std::span<const FloorPoint> three) {
    std::array<double, 3> v{three[0].floor, three[1].floor, three[2].floor};
    return *Median(v);
  };
  const std::span<const FloorPoint> before = Until(series, series.back().t - seconds);
  return median_floor(series.last(3)) - median_floor(series.first(std::max<size_t>(before.size(), 3)).last(3));
}

std::optional<PreRise> PreRiseOf(std::span<const FloorPoint> cycle_free, std::span<const FloorPoint> means,
                                 double window_s, double block_s, double min_before_s) {
  if (cycle_free.empty() || means.size() < 12) return std::nullopt;
  const double start = cycle_free.back().t - window_s;
  std::vector<FloorPoint> before;
  for (const FloorPoint& p : cycle_free)
    if (p.t < start && p.t >= start - window_s) before.push_back(p);
  if (before.empty() || before.back().t - before.front().t < min_before_s) return std::nullopt;
  std::vector<double> before_means;
  for (const FloorPoint& p : BlockMeans(before, block_s)) before_means.push_back(p.floor);
  const size_t k = std::max<size_t>(3, means.size() / 6);
  std::vector<double> first, last;
  for (size_t i = 0; i < k; ++i) first.push_back(means[i].floor);
  for (size_t i = means.size() - k; i < means.size(); ++i) last.push_back(means[i].floor);
  const std::optional<double> level = Median(before_means);
  if (!level) return std::nullopt;
  return PreRise{window_s, before.back().t - before.front().t, *level, *Median(first), *Median(last)};
}

}  // namespace vw::detection
