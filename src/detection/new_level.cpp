#include "detection/new_level.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

namespace vw::detection {

namespace {

// The highest of the lows and their sample standard deviation (bytes); at least two lows.
std::pair<double, double> HighAndDeviation(std::span<const FloorPoint> lows) {
  double high = -std::numeric_limits<double>::infinity(), mean = 0;
  for (const FloorPoint& l : lows) {
    high = std::max(high, l.floor);
    mean += l.floor;
  }
  mean /= static_cast<double>(lows.size());
  double ss = 0;
  for (const FloorPoint& l : lows) ss += (l.floor - mean) * (l.floor - mean);
  return {high, std::sqrt(ss / static_cast<double>(lows.size() - 1))};
}

}  // namespace

std::vector<FloorPoint> BlockLows(std::span<const FloorPoint> points, double block_seconds, size_t min_points) {
  std::vector<FloorPoint> out;
  if (points.empty() || !(block_seconds > 0)) return out;
  const double end = points.back().t;
  // Walk back from the last point; block k covers (end − (k+1)·block, end − k·block].
  size_t i = points.size();
  while (i > 0) {
    const auto k = std::floor((end - points[i - 1].t) / block_seconds);
    const double block_start = end - (k + 1) * block_seconds;
    double low = std::numeric_limits<double>::infinity();
    size_t count = 0;
    while (i > 0 && points[i - 1].t > block_start) {
      low = std::min(low, points[i - 1].floor);
      ++count;
      --i;
    }
    if (count == 0) {  // a point exactly on the boundary belongs to the block before
      low = points[i - 1].floor;
      count = 1;
      --i;
    }
    const bool partial = points.front().t > block_start + 0.5 * block_seconds;
    if (count >= min_points && !partial) out.push_back({block_start, low});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<NewLevel> FindNewLevel(std::span<const FloorPoint> points, const NewLevelOptions& o) {
  const std::vector<FloorPoint> lows = BlockLows(points, o.block_seconds, o.min_block_points);
  const size_t n = lows.size();
  std::optional<NewLevel> best;
  for (size_t g = std::max<size_t>(1, o.min_recent_blocks); g <= o.max_recent_blocks; ++g) {
    if (n < g + std::max<size_t>(2, o.min_earlier_blocks)) break;
    const size_t split = n - g;  // lows[split..] are the recent blocks
    bool rising = true;
    for (size_t k = split + 1; k < n; ++k) rising = rising && lows[k].floor >= lows[k - 1].floor;
    if (!rising) continue;
    const auto [high, sd] = HighAndDeviation(std::span<const FloorPoint>(lows).first(split));
    const double gap = lows[split].floor - high;  // the recent lows never fall: the first is the lowest
    if (gap <= std::max(o.min_gap_bytes, o.margin_sds * sd)) continue;
    const double margin = sd > 0 ? gap / sd : std::numeric_limits<double>::infinity();
    if (best && margin <= best->margin_sds) continue;
    NewLevel v;
    for (size_t k = split; k < n; ++k) v.recent_lows_bytes.push_back(lows[k].floor);
    v.since_t = lows[split].t;
    v.earlier_blocks = split;
    v.earlier_from_t = lows.front().t;
    v.earlier_high_bytes = high;
    v.earlier_sd_bytes = sd;
    v.gap_bytes = gap;
    v.margin_sds = margin;
    best = std::move(v);
  }
  return best;
}

std::optional<Ramp> FindRampToNewLevel(std::span<const FloorPoint> points, const RampOptions& o) {
  const std::vector<FloorPoint> lows = BlockLows(points, o.block_seconds, o.min_block_points);
  const size_t n = lows.size();
  const size_t top = std::max<size_t>(1, o.top_blocks);
  std::optional<Ramp> best;
  for (size_t g = std::max(o.min_ramp_blocks, top + 1); g <= o.max_ramp_blocks; ++g) {
    if (n < g + std::max<size_t>(2, o.min_earlier_blocks)) break;
    const size_t split = n - g;  // lows[split..] are the ramp
    const auto [high, sd] = HighAndDeviation(std::span<const FloorPoint>(lows).first(split));
    bool above = true;
    for (size_t k = split + 1; k < n; ++k) above = above && lows[k].floor > high;
    if (!above) continue;
    double lowest_recent = std::numeric_limits<double>::infinity();
    for (size_t k = n - top; k < n; ++k) lowest_recent = std::min(lowest_recent, lows[k].floor);
    const double gap = lowest_recent - high;
    if (gap <= std::max(o.min_gap_bytes, o.margin_sds * sd)) continue;
    std::vector<double> x, y;
    for (size_t k = split; k < n; ++k) {
      x.push_back(lows[k].t - lows[split].t);
      y.push_back(lows[k].floor);
    }
    const auto sen = TheilSen(x, y, 0.9);
    if (!sen || sen->slope <= 0) continue;
    const double margin = sd > 0 ? gap / sd : std::numeric_limits<double>::infinity();
    Ramp r;  // a longer ramp that passes replaces a shorter one
    r.ramp_blocks = g;
    r.from_t = lows[split].t;
    r.above_t = lows[split + 1].t;
    for (size_t k = n - top; k < n; ++k) r.level.recent_lows_bytes.push_back(lows[k].floor);
    r.level.since_t = lows[n - top].t;
    r.level.earlier_blocks = split;
    r.level.earlier_from_t = lows.front().t;
    r.level.earlier_high_bytes = high;
    r.level.earlier_sd_bytes = sd;
    r.level.gap_bytes = gap;
    r.level.margin_sds = margin;
    best = std::move(r);
  }
  return best;
}

std::optional<RisingLows> FindRisingLows(std::span<const FloorPoint> points, const RisingLowsOptions& o) {
  const std::vector<FloorPoint> lows = BlockLows(points, o.block_seconds, o.min_block_points);
  std::vector<size_t> sizes = o.window_blocks;
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  for (size_t w : sizes) {
    if (w < 6 || lows.size() < w) continue;
    const std::span<const FloorPoint> win(lows.end() - static_cast<std::ptrdiff_t>(w), lows.end());
    std::vector<double> x, y;
    for (const FloorPoint& p : win) {
      x.push_back(p.t - win.front().t);
      y.push_back(p.floor);
    }
    const auto mk = EngineMannKendall(y, o.alpha);
    if (!mk || mk->z <= 0 || mk->p >= o.alpha) continue;
    const auto sen = TheilSen(x, y, o.ci_level, mk->variance_factor);
    if (!sen || sen->slope < o.min_rate_bps || sen->low_slope <= 0) continue;
    return RisingLows{.blocks = w,
                      .from_t = win.front().t,
                      .window_seconds = static_cast<double>(w) * o.block_seconds,
                      .mk = *mk,
                      .sen = *sen};
  }
  return std::nullopt;
}

}  // namespace vw::detection
