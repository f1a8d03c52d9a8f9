#include "outputs/history_source.h"

#include <algorithm>

namespace vw::outputs {

std::vector<std::pair<double, uint64_t>> ThinMinMax(const std::vector<storage::HistoryPoint>& pts, size_t max_points) {
  std::vector<std::pair<double, uint64_t>> out;
  if (pts.size() <= max_points || max_points < 4) {
    out.reserve(pts.size());
    for (const auto& p : pts) out.emplace_back(p.t, p.used_bytes);
    return out;
  }
  const size_t stretches = (max_points - 2) / 2;
  out.emplace_back(pts.front().t, pts.front().used_bytes);
  const size_t inner = pts.size() - 2;
  for (size_t s = 0; s < stretches; ++s) {
    size_t begin = 1 + s * inner / stretches;
    size_t end = 1 + (s + 1) * inner / stretches;
    if (begin >= end) continue;
    size_t lo = begin, hi = begin;
    for (size_t i = begin; i < end; ++i) {
      if (pts[i].used_bytes < pts[lo].used_bytes) lo = i;
      if (pts[i].used_bytes > pts[hi].used_bytes) hi = i;
    }
    size_t a = std::min(lo, hi), b = std::max(lo, hi);
    out.emplace_back(pts[a].t, pts[a].used_bytes);
    if (b != a) out.emplace_back(pts[b].t, pts[b].used_bytes);
  }
  out.emplace_back(pts.back().t, pts.back().used_bytes);
  return out;
}

Result<std::unique_ptr<StoreHistorySource>> StoreHistorySource::Open(const std::string& db_path, size_t max_points) {
  auto store = storage::HistoryStore::Open(db_path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<StoreHistorySource>(new StoreHistorySource(std::move(*store), max_points));
}

Result<std::optional<HistorySeries>> StoreHistorySource::Query(const std::string& series, double from_s, double to_s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto names = store_->SeriesNames();
  if (!names.ok()) return names.status();
  if (!std::binary_search(names->begin(), names->end(), series)) return std::optional<HistorySeries>();
  auto raw = store_->Raw(series, from_s, to_s);
  if (!raw.ok()) return raw.status();
  auto aggs = store_->Aggregates(series, from_s, to_s);
  if (!aggs.ok()) return aggs.status();
  HistorySeries h;
  h.series = series;
  // Minutes before the first raw sample (raw data past its retention) come from the aggregates:
  // each as its lowest and highest value at its middle, so a spike outlives the raw samples. Only
  // minutes within [from, to], each point inside it too.
  const double raw_start = raw->empty() ? to_s + 60 : raw->front().t;
  auto inside = [&](const storage::MinuteAggregate& a) { return a.t + 60 > from_s && a.t <= to_s; };
  auto middle = [&](const storage::MinuteAggregate& a) { return std::clamp(a.t + 30, from_s, to_s); };
  std::vector<storage::HistoryPoint> points, floor;
  for (const auto& a : *aggs) {
    if (!inside(a)) continue;
    floor.push_back({middle(a), a.floor_bytes});
    if (a.t + 60 > raw_start) continue;
    points.push_back({middle(a), a.min_bytes});
    if (a.max_bytes != a.min_bytes) points.push_back({middle(a), a.max_bytes});
  }
  points.insert(points.end(), raw->begin(), raw->end());
  // Both thinned to max_points, each stretch's extremes kept (30 days of minutes are 43,200).
  h.points = ThinMinMax(points, max_points_);
  h.floor = ThinMinMax(floor, max_points_);
  return std::optional<HistorySeries>(std::move(h));
}

}  // namespace vw::outputs
