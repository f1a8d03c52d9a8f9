#include "baselines.h"

#include <cmath>

#include "core/units.h"

namespace vw::evaluate {

std::string_view BaselineName(BaselineRule rule) {
  switch (rule) {
    case BaselineRule::kStatic90: return "static_90pct";
    case BaselineRule::kPredictLinear24h: return "predict_linear_24h";
    case BaselineRule::kDerivPositive: return "deriv_gt_0";
    case BaselineRule::kDerivOnePercentPerHour: return "deriv_gt_1pct_h";
  }
  return "unknown";
}

std::vector<ScrapedSample> ScrapeUniform(std::span<const int32_t> used_mib, double interval_s, double scrape_s) {
  std::vector<ScrapedSample> out;
  if (used_mib.empty() || interval_s <= 0 || scrape_s <= 0) return out;
  const double last_t = static_cast<double>(used_mib.size() - 1) * interval_s;
  out.reserve(static_cast<size_t>(last_t / scrape_s) + 1);
  for (size_t k = 0;; ++k) {
    const double t = static_cast<double>(k) * scrape_s;
    if (t > last_t) break;
    const auto i = static_cast<size_t>(std::llround(t / interval_s));
    if (i >= used_mib.size()) break;
    if (std::abs(static_cast<double>(i) * interval_s - t) > scrape_s / 2) continue;  // missed scrape
    out.push_back({t, used_mib[i] * kMiB});
  }
  return out;
}

std::vector<ScrapedSample> Scrape(std::span<const double> t, std::span<const double> bytes, double scrape_s) {
  std::vector<ScrapedSample> out;
  if (t.empty() || t.size() != bytes.size() || scrape_s <= 0) return out;
  size_t j = 0;
  for (double k = std::ceil(t.front() / scrape_s);; k += 1) {
    const double s = k * scrape_s;
    if (s > t.back()) break;
    while (j + 1 < t.size() && std::abs(t[j + 1] - s) <= std::abs(t[j] - s)) ++j;
    if (std::abs(t[j] - s) > scrape_s / 2) continue;  // missed scrape
    out.push_back({s, bytes[j]});
  }
  return out;
}

std::optional<LinearFit> FitLeastSquares(std::span<const ScrapedSample> samples, double at) {
  const size_t n = samples.size();
  if (n < 2) return std::nullopt;
  double mx = 0, my = 0;
  for (const ScrapedSample& s : samples) {
    mx += s.t - at;
    my += s.bytes;
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (const ScrapedSample& s : samples) {
    const double dx = s.t - at - mx;
    sxx += dx * dx;
    sxy += dx * (s.bytes - my);
  }
  if (sxx <= 0) return std::nullopt;
  LinearFit fit;
  fit.slope = sxy / sxx;
  fit.intercept = my - fit.slope * mx;
  return fit;
}

BaselineTimeline EvaluateBaselines(std::span<const ScrapedSample> scraped, double total_bytes,
                                   const PromConfig& config) {
  BaselineTimeline out;
  if (scraped.empty()) return out;
  const double last_t = scraped.back().t;
  size_t lo = 0;  // first sample inside [τ − range, τ]
  size_t hi = 0;  // one past the last sample with t <= τ
  std::array<std::optional<double>, kBaselineCount> active_since;
  for (size_t k = 0;; ++k) {
    const double tau = static_cast<double>(k) * config.eval_s;
    if (tau > last_t + 1e-9) break;
    while (hi < scraped.size() && scraped[hi].t <= tau + 1e-9) ++hi;
    while (lo < hi && scraped[lo].t < tau - config.range_s - 1e-9) ++lo;
    std::array<bool, kBaselineCount> cond{};
    if (hi > 0 && scraped[hi - 1].t > tau - config.lookback_s) {
      cond[0] = scraped[hi - 1].bytes > 0.9 * total_bytes;
    }
    const bool trend_on = tau >= config.trend_start_s - 1e-9;
    if (auto fit = trend_on ? FitLeastSquares(scraped.subspan(lo, hi - lo), tau) : std::nullopt) {
      cond[1] = fit->intercept + fit->slope * config.horizon_s > total_bytes;
      cond[2] = fit->slope > 0;
      cond[3] = fit->slope > 0.01 * total_bytes / 3600.0;
    }
    out.eval_t.push_back(tau);
    for (size_t r = 0; r < kBaselineCount; ++r) {
      if (!cond[r]) {
        active_since[r].reset();
      } else if (!active_since[r]) {
        active_since[r] = tau;
      }
      out.condition[r].push_back(cond[r]);
      out.firing[r].push_back(cond[r] && tau - *active_since[r] >= config.for_s - 1e-9);
    }
  }
  return out;
}

}  // namespace vw::evaluate
