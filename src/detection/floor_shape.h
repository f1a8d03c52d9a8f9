// Floor shapes: what the leak engine's verdict reads of a floor series besides the growth tests of
// one window (growth_window.h): the floor with its short upward spikes removed (Opening), its lower
// envelope under a load that swings (LowerEnvelope), stretches of it (Tail, Until), how much it rose
// lately (RecentRise), and where a window's end stands against the floor before the window
// (PreRiseOf). Internal to the engine's verdict (leak_engine_assess.cpp and the files of its stages).
//
// Input: FloorPoint series in time order. Units: seconds, bytes. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "detection/growth_window.h"

namespace vw::detection {

// Morphological opening over `width_s` (a running minimum over a centred window, then a running
// maximum over the same): removes upward excursions narrower than width_s (eval and checkpoint
// spikes) and keeps steps, slopes and wide plateaus. O(n) with monotonic deques.
std::vector<FloorPoint> Opening(std::span<const FloorPoint> pts, double width_s);

// Lower envelope: each point's floor replaced by the lowest floor over the preceding `span_s`
// (monotonic deque, O(n)). Under an oscillating load this follows the troughs.
std::vector<FloorPoint> LowerEnvelope(std::span<const FloorPoint> pts, double span_s);

// The last `seconds` of a time-ordered series (not empty).
std::span<const FloorPoint> Tail(std::span<const FloorPoint> pts, double seconds);

// The points of a time-ordered series up to time t (seconds), inclusive.
std::span<const FloorPoint> Until(std::span<const FloorPoint> pts, double t);

// How much the floor rose over the last `seconds`: the median of its last three points less the
// median of the three up to `seconds` before the last (bytes; 0 when the series is shorter).
double RecentRise(std::span<const FloorPoint> series, double seconds);

// Where a window of a swinging load's cycle-free block means ends, set against where the same floor
// stood before the window (bytes; EngineConfig::oscillating_pre_rise_share).
struct PreRise {
  double window_seconds = 0;
  double before_seconds = 0;  // the span of floor before the window that was looked at
  double before = 0;          // the median of that span's block means
  double low = 0;             // the median of the first sixth of the window's block means (3 at least)
  double high = 0;            // ... and of its last sixth
  // How much of the window's rise stands above the level before it: 1 for a leak started at the
  // window's start, about 0 for a floor that came back up from a dip.
  double Share() const { return high > low ? (high - before) / (high - low) : 1; }
};

// Where the window of the last `window_s` of `cycle_free` ends, against the floor before it (PreRise).
// `means`: the window's block means (block_s wide) of `cycle_free`, which ends where the window
// ends. nullopt when `cycle_free` holds less than min_before_s of floor in the window's length
// before it, or the window fewer than 12 block means.
std::optional<PreRise> PreRiseOf(std::span<const FloorPoint> cycle_free, std::span<const FloorPoint> means,
                                 double window_s, double block_s, double min_before_s);

}  // namespace vw::detection
