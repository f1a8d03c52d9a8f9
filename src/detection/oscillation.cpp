#include "detection/oscillation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "detection/lagged_product.h"
#include "detection/quantile.h"

namespace vw::detection {
namespace {

// Autocorrelation of x (already centred) at lags 0..max_lag, each lag computed when first asked
// for: the peak search reads the lags up to the first peak and a few around its multiples, so most
// of the max_lag lags are never needed (each costs O(n)).
class Autocorrelation {
 public:
  Autocorrelation(std::span<const double> x, size_t max_lag)
      : x_(x), r_(max_lag + 1, std::numeric_limits<double>::quiet_NaN()) {
    for (double v : x) c0_ += v * v;
  }
  size_t size() const { return r_.size(); }
  double operator[](size_t k) {
    if (std::isnan(r_[k])) r_[k] = c0_ > 0 ? LaggedProduct(x_, k) / c0_ : 0.0;
    return r_[k];
  }

 private:
  std::span<const double> x_;
  std::vector<double> r_;
  double c0_ = 0;
};

// Vertex of the parabola through (k−1, k, k+1): the peak's lag between grid points.
double RefinedPeak(Autocorrelation& r, size_t k) {
  if (k == 0 || k + 1 >= r.size()) return static_cast<double>(k);
  const double a = r[k - 1], b = r[k], c = r[k + 1];
  const double den = a - 2 * b + c;
  if (den >= 0) return static_cast<double>(k);
  const double off = 0.5 * (a - c) / den;
  return static_cast<double>(k) + std::clamp(off, -0.5, 0.5);
}

size_t PhaseBin(double t, const Oscillation& o) {
  double phase = std::fmod(t - o.t_ref, o.period_seconds);
  if (phase < 0) phase += o.period_seconds;
  const auto bin = static_cast<size_t>(phase / o.bin_seconds);
  return std::min(bin, o.profile.size() - 1);
}

// The profile of osc (its period, bin width, t_ref and number of bins set): the median of x at
// each phase bin, and the amplitude; false when a bin holds no point.
bool FillProfile(std::span<const FloorPoint> pts, std::span<const double> x, Oscillation& osc) {
  const size_t bins = osc.profile.size();
  std::vector<std::vector<double>> per_bin(bins);
  for (size_t i = 0; i < pts.size(); ++i) per_bin[PhaseBin(pts[i].t, osc)].push_back(x[i]);
  for (size_t b = 0; b < bins; ++b) {
    const auto med = Median(per_bin[b]);
    if (!med) return false;  // a phase never sampled: too irregular to remove
    osc.profile[b] = *med;
  }
  const auto [lo, hi] = std::minmax_element(osc.profile.begin(), osc.profile.end());
  osc.amplitude_bytes = *hi - *lo;
  return true;
}

// The cycle of pts from x, pts' floors less their trend, as EstimateOscillation describes.
std::optional<Oscillation> CycleOf(std::span<const FloorPoint> pts, std::span<const double> x, double span,
                                   const OscillationOptions& o) {
  const size_t n = pts.size();
  const double dt = span / static_cast<double>(n - 1);
  const double max_period_pts = std::min(o.max_period_seconds, span / o.min_periods) / dt;
  const size_t max_lag = std::min<size_t>({o.max_lag_points, n / 2, static_cast<size_t>(3 * max_period_pts) + 2});
  if (max_lag < 4) return std::nullopt;
  Autocorrelation r(x, max_lag);

  // First peak after the first negative value.
  size_t k = 1;
  while (k < max_lag && r[k] >= 0) ++k;
  std::optional<size_t> peak;
  for (; k + 1 <= max_lag && static_cast<double>(k) <= max_period_pts; ++k) {
    if (r[k] >= r[k - 1] && r[k] >= r[k + 1] && r[k] >= o.min_autocorrelation) {
      peak = k;
      break;
    }
  }
  if (!peak || static_cast<double>(*peak) * dt < o.min_period_seconds) return std::nullopt;
  double period_pts = RefinedPeak(r, *peak);
  // Refine on the highest multiple the lags cover: the peak near m·period.
  for (size_t m = max_lag / *peak; m >= 2; --m) {
    const auto centre = static_cast<size_t>(std::llround(static_cast<double>(m) * period_pts));
    const size_t lo = centre > 2 ? centre - 2 : 1;
    const size_t hi = std::min(max_lag - 1, centre + 2);
    if (lo >= hi) continue;
    size_t best = lo;
    for (size_t j = lo; j <= hi; ++j)
      if (r[j] > r[best]) best = j;
    if (best == lo || best == hi || r[best] < 0.5 * o.min_autocorrelation) continue;
    period_pts = RefinedPeak(r, best) / static_cast<double>(m);
    break;
  }

  Oscillation osc;
  osc.period_seconds = period_pts * dt;
  osc.autocorrelation = r[*peak];
  const auto bins = std::max<size_t>(4, static_cast<size_t>(std::llround(period_pts)));
  osc.bin_seconds = osc.period_seconds / static_cast<double>(bins);
  osc.t_ref = pts.front().t - 0.5 * osc.bin_seconds;  // points near the bins' centres, not edges
  osc.profile.assign(bins, 0.0);
  if (!FillProfile(pts, x, osc)) return std::nullopt;
  return osc;
}

// Each floor less the mean of the floors within `half` points either side (fewer at the ends).
std::vector<double> LessMovingMean(std::span<const FloorPoint> pts, size_t half) {
  const size_t n = pts.size();
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + pts[i].floor;
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t lo = i >= half ? i - half : 0, hi = std::min(n - 1, i + half);
    x[i] = pts[i].floor - (prefix[hi + 1] - prefix[lo]) / static_cast<double>(hi - lo + 1);
  }
  return x;
}

}  // namespace

std::optional<Oscillation> EstimateOscillation(std::span<const FloorPoint> pts, const OscillationOptions& o) {
  const size_t n = pts.size();
  if (n < 16) return std::nullopt;
  const double span = pts.back().t - pts.front().t;
  if (span <= 0) return std::nullopt;
  const double dt = span / static_cast<double>(n - 1);

  // Least-squares detrend.
  double mt = 0, my = 0;
  for (const FloorPoint& p : pts) {
    mt += p.t;
    my += p.floor;
  }
  mt /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (const FloorPoint& p : pts) {
    sxy += (p.t - mt) * (p.floor - my);
    sxx += (p.t - mt) * (p.t - mt);
  }
  const double slope = sxx > 0 ? sxy / sxx : 0;
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = pts[i].floor - my - slope * (pts[i].t - mt);

  if (std::optional<Oscillation> found = CycleOf(pts, x, span, o)) return found;

  // A leak that began inside the series bends its trend, and a straight line leaves that bend in
  // as one slow swing that can hide the cycle's autocorrelation. Again, detrended by a centred
  // moving mean over the longest period looked for (shorter at the ends): a cycle of a shorter
  // period keeps most of its swing (the moving mean holds at most a fifth of it).
  const double window_s = std::min(o.max_period_seconds, span / o.min_periods);
  std::optional<Oscillation> found =
      CycleOf(pts, LessMovingMean(pts, static_cast<size_t>(std::max(1.0, std::round(window_s / dt / 2)))), span, o);
  if (!found) return std::nullopt;
  // That moving mean holds part of the cycle, so the profile read on its residual is off by as
  // much; a moving mean over one period holds none of it.
  const auto one_period =
      LessMovingMean(pts, static_cast<size_t>(std::max(1.0, std::round(found->period_seconds / dt / 2))));
  if (!FillProfile(pts, one_period, *found)) return std::nullopt;
  return found;
}

std::vector<FloorPoint> RemoveOscillation(std::span<const FloorPoint> pts, const Oscillation& osc) {
  std::vector<FloorPoint> out;
  out.reserve(pts.size());
  const size_t bins = osc.profile.size();
  for (const FloorPoint& p : pts) {
    // The profile between bin centres, linearly and around the cycle.
    double phase = std::fmod(p.t - osc.t_ref, osc.period_seconds);
    if (phase < 0) phase += osc.period_seconds;
    const double x = phase / osc.bin_seconds - 0.5;
    const double below = std::floor(x);
    const double w = x - below;
    const auto b0 = static_cast<size_t>((static_cast<long long>(below) + static_cast<long long>(bins)) %
                                        static_cast<long long>(bins));
    const size_t b1 = (b0 + 1) % bins;
    out.push_back({p.t, p.floor - ((1 - w) * osc.profile[b0] + w * osc.profile[b1])});
  }
  return out;
}

std::vector<FloorPoint> BlockMeans(std::span<const FloorPoint> pts, double block_seconds) {
  std::vector<FloorPoint> out;
  if (pts.empty() || block_seconds <= 0) return out;
  std::vector<size_t> counts;
  size_t i = 0;
  while (i < pts.size()) {
    const auto k = std::floor((pts[i].t - pts.front().t) / block_seconds);
    const double end = pts.front().t + (k + 1) * block_seconds;
    double st = 0, sy = 0;
    size_t m = 0;
    do {  // the block's first point always belongs to it (rounding at the boundary)
      st += pts[i].t;
      sy += pts[i].floor;
      ++i;
      ++m;
    } while (i < pts.size() && pts[i].t < end);
    out.push_back({st / static_cast<double>(m), sy / static_cast<double>(m)});
    counts.push_back(m);
  }
  if (counts.size() >= 2 && 2 * counts.back() < *std::max_element(counts.begin(), counts.end() - 1)) out.pop_back();
  return out;
}

}  // namespace vw::detection
