// LeakRateFit: where sustained growth began and how fast it goes since, for a window the engine
// has already judged a leak.
//
// The window may start before the leak (a plateau, then growth). We fit "a level, then a straight
// line" by least absolute deviations over candidate start times (the level is the median floor
// before the start, the line Sen's slope after it with its median intercept), keep the start with
// the smallest total deviation, and report Sen's slope on the points after it with the rank
// interval widened by the Hamed–Rao factor of those points (serially correlated floors would
// otherwise give an interval that is too narrow).
//
// Units: seconds, bytes, bytes/second. Cost: O(candidates × n) plus one O(n²) Sen fit; n is capped
// by thinning (FindGrowthStart: the candidates only). Pure function, thread-safe.
#pragma once

#include <optional>
#include <span>

#include "detection/growth_window.h"
#include "detection/mann_kendall.h"
#include "detection/theil_sen.h"

namespace vw::detection {

struct LeakRateFit {
  double start_t = 0;          // where the growth began (seconds)
  double t_end = 0;            // last point (seconds)
  size_t points = 0;           // points after the start
  TheilSenResult sen;          // slope in bytes/second, interval at ci_level; intercept at start_t
  double variance_factor = 1;  // Hamed–Rao factor used for the interval
};

// `min_span_s`: the fitted stretch after the start is at least this long. nullopt with fewer than
// 6 points.
std::optional<LeakRateFit> FitLeakRate(std::span<const FloorPoint> points, double min_span_s, double ci_level,
                                       size_t max_points);

// FitLeakRate's start_t alone (seconds), for callers that only ask where the growth began: the same
// candidate search without the rate fit after it (one Mann–Kendall and one Sen's slope on up to
// max_points points). nullopt exactly where FitLeakRate gives nullopt.
std::optional<double> FindGrowthStart(std::span<const FloorPoint> points, double min_span_s, size_t max_points);

}  // namespace vw::detection
