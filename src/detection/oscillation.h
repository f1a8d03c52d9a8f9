// Oscillation: finds the period of a regular oscillation in a floor series (a serving load's
// KV-cache cycle) and removes it, so that growth underneath it can be tested like any other floor.
//
// EstimateOscillation: the series is detrended by least squares and its autocorrelation computed
// over lags of up to a few periods (index lags; the engine's buckets are on a regular grid). The
// period is the first autocorrelation peak after the first negative value, when that peak is at
// least min_autocorrelation, refined on the peak near the largest multiple of it that the lags
// cover (parabolic interpolation), which makes it precise to about a bucket divided by that
// multiple. The profile is the median detrended floor at each phase of the cycle (one bin per
// bucket of the period). When the line finds no period, the search runs again on the series less
// a centred moving mean over max_period_seconds (at most a min_periods-th of the series): a trend
// that bends (a leak that began inside the series) leaves no slow swing there. That mean holds
// part of the cycle, so the profile is then read against a moving mean one period long instead.
// RemoveOscillation: each floor minus the profile at its phase (interpolated linearly between the
// bins' centres). A healthy oscillating load becomes
// flat (plus its short swings), a leak underneath it stays a slope.
//
// Units: seconds, bytes. Pure functions, thread-safe. Cost O(n · lags), lags ≤ max_lag_points.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "detection/growth_window.h"

namespace vw::detection {

struct OscillationOptions {
  double min_period_seconds = 240;   // shortest period looked for
  double max_period_seconds = 5400;  // longest
  double min_periods = 3;            // the series must hold at least this many periods
  double min_autocorrelation = 0.3;  // the peak at the period must reach this
  size_t max_lag_points = 240;       // autocorrelation computed up to this lag (cost bound)
};

struct Oscillation {
  double period_seconds = 0;
  double autocorrelation = 0;   // at the period (before refinement)
  double t_ref = 0;             // phase 0 (seconds)
  double bin_seconds = 0;       // width of one profile bin
  std::vector<double> profile;  // bytes: median detrended floor per phase bin
  double amplitude_bytes = 0;   // profile max − min
};

// nullopt when the series shows no clear periodic oscillation (or is too short for min_periods).
std::optional<Oscillation> EstimateOscillation(std::span<const FloorPoint> points, const OscillationOptions& options);

// Each floor minus the (interpolated) profile at its phase; times unchanged.
std::vector<FloorPoint> RemoveOscillation(std::span<const FloorPoint> points, const Oscillation& oscillation);

// Means over consecutive blocks of block_seconds from the first point (time and floor averaged);
// a last block holding under half as many points as a full one is dropped. Averaging the
// oscillation-free series over a fraction of the period cancels most of what the fixed profile
// missed, and leaves points whose noise is nearly independent.
std::vector<FloorPoint> BlockMeans(std::span<const FloorPoint> points, double block_seconds);

}  // namespace vw::detection
