// ImminentFill: whether a swinging load's cycle-free floor is rising steadily, and far enough past the
// swings, to be a leak whether or not the history rules would call it one.
//
// The rules that keep a young job's warm-up from being called a leak (three settled hours, the
// pace tests, windows of three periods or more under a cycle) cost a fast leak under a serving
// load hours: it can fill the card an hour or two after it began, before any of them lets it
// through. But growth that keeps one pace and leaves the load's swings behind is worth an alarm
// whatever it is. Two forms of "far enough" are asked, and either will do:
// - runs out soon: the rise at least range_multiple times the swings' range, and the room above
//   the recent peak gone within max_runway_seconds at the lower end of the rate's interval (or no
//   room left);
// - past the swings: the rise at least swings_range_multiple times the swings' range, with no
//   runway asked, where the floor before the growth covers at least min_before_per_growth times
//   the growth's own stretch (the swings' range is a yardstick only when measured over a longer
//   stretch than the growth: a slow batch-level drift covers little of its range in half an
//   hour). So this form holds early in a leak, while its growth is short next to the floor
//   before it.
//
// The test, on the cycle-free floor (one point per bucket, the cycle removed):
// - where the growth began: FitLeakRate's "level, then line" start over the points, at least
//   min_growth_seconds before the last point, with at least min_before_seconds of floor before it;
// - the rise since then (Sen's slope times the stretch) far enough past the range (highest less
//   lowest) the floor covered before it, the swings the load makes on its own, by either form;
// - since then: Mann–Kendall (tie- and Hamed–Rao-corrected, never shrinking the variance) at
//   level alpha with z > 0, the lower end of Sen's interval above zero, and growth at one pace:
//   each half's Sen interval above zero and neither half's slope under pace_ratio of the other's
//   (a warm-up curve slows down, a step leaves both halves flat).
//
// Units: seconds, bytes, bytes/second. Pure function, thread-safe. Cost: O(n) when only the
// runway form is asked and it rules the growth out first (the floor's range under half of what
// such growth would have added: room × min_growth / max_runway); else one FitLeakRate, and where
// that finds growth past the swings one Mann–Kendall on at most max_points points and two more
// Sen's slopes on the halves.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "detection/growth_window.h"
#include "detection/leak_rate.h"
#include "detection/mann_kendall.h"

namespace vw::detection {

struct ImminentFillOptions {
  double min_growth_seconds = 1800;  // the growth ran at least this long
  double min_before_seconds = 1800;  // ... after at least this much floor before it
  double alpha = 1e-5;               // two-sided Mann–Kendall level on the growth
  double pace_ratio = 0.6;           // each half's slope over the other's, at least
  // Runs out soon (0: this form not asked):
  double max_runway_seconds = 7200;  // room / rate_lo under this
  double range_multiple = 2;         // the rise, in ranges of the floor before the growth
  // Past the swings (0: this form not asked):
  double swings_range_multiple = 1.5;  // the rise, in ranges of the floor before the growth
  double min_before_per_growth = 1.5;  // the floor before, in multiples of the growth's stretch
  double ci_level = 0.90;
  size_t max_points = 120;
};

struct ImminentFill {
  LeakRateFit rate;               // start, Sen's slope and interval since the growth began
  MannKendallResult mk;           // on the points since then
  double rise_bytes = 0;          // Sen's slope × the stretch since the start
  double before_range_bytes = 0;  // highest less lowest floor before the start
  double before_seconds = 0;      // how long that stretch is
  bool runs_out_soon = false;     // the runway form passed (else only the swings form did)
};

// `room_bytes`: usable capacity less the recent peak (may be ≤ 0: no room left); nullopt when the
// capacity or the peak is unknown, which leaves only the swings form. nullopt unless every
// condition above holds.
std::optional<ImminentFill> FindImminentFill(std::span<const FloorPoint> cycle_free, std::optional<double> room_bytes,
                                             const ImminentFillOptions& options);

}  // namespace vw::detection
