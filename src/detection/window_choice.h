// Window choice: the trend windows the leak engine tests on one series and which of them a leak
// verdict rests on. The longest window that passes, unless the history rules hold it back (a young
// segment, slow growth: SettledAge) or a longer window shows the growth slowing down; when none
// passes, one more window from where the growth began (AddOnsetWindow, AddCycleOnsetWindow); and the
// sizes tested on a swinging load's cycle-free floor (CycleWindows). docs/detection.md, sections "4.
// Windows" and "6. Verdict over the windows". Internal to the engine's verdict.
//
// Input: FloorPoint series in time order. Units: seconds, bytes, bytes/second. Pure functions
// (those given a TestedWindows& update it in place), thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "detection/growth_window.h"
#include "detection/leak_engine.h"

namespace vw::detection {

// One trend window of a series: its length and the growth tests on its last `seconds`.
struct Window {
  double seconds = 0;
  GrowthWindow test;
};

// The windows tested on one series, shortest first, and the choice among them (ChooseWindow).
struct TestedWindows {
  std::vector<Window> windows;
  std::optional<size_t> leak_at;    // the window a leak verdict rests on, if any
  std::optional<size_t> vetoed_by;  // the longer window that showed a passing one slowing down, if any
  bool smooth = false;              // the chosen window is slow and young but rose all through it
  std::optional<size_t> onset;      // the window that starts where the growth began, if one was added
};

// How long the segment has been settled, against the engine's history rules.
struct SettledAge {
  bool young = false;         // under min_history_seconds: only fast, steady growth over a full first window
  bool slow_young = false;    // under slow_history_seconds: no growth slower than slow_rate_bps ...
  bool smooth_young = false;  // ... and under smooth_history_seconds not even steady growth
  // ... unless this settled floor (not opened) rose all through the window; empty: no exception
  // (the cycle-free floor and the envelopes).
  std::span<const FloorPoint> floor;
  double first_window = 0;  // seconds
};

// The TrendFit of a window (Assessment::trend, Assessment::window_fits): its fit and its tests' figures.
TrendFit FitOf(const Window& w);

// Runs the growth tests over each window size on one series and chooses the window.
TestedWindows TestSeries(std::span<const FloorPoint> analysed, std::span<const double> sizes, const GrowthOptions& go,
                         const EngineConfig& c, const SettledAge& age);

// Picks the longest window that passes, is not held back by the history rules, and that no longer
// window shows slowing down. `v.windows` in increasing size.
void ChooseWindow(TestedWindows& v, const EngineConfig& c, const SettledAge& age);

// Whether a passing window is held back by the history rules. *smooth is set when the window is
// slow and young but grew continuously, in regular steps, or rose all through it.
bool TooYoung(const Window& w, const EngineConfig& c, const SettledAge& age, bool* smooth);

// The rate (bytes/second) the interval's lower end must reach in a young segment over a window of
// window_s: fast_rate_bps over the first window, falling with young_rate_exponent as windows grow.
double YoungRate(const EngineConfig& c, double first_window_s, double window_s);

// Whether a window's growth came in no steps: its largest steps above the noise carry at most
// continuous_share of the rise (counted only on a floor that does not swing). An allocator's
// staircase is all steps.
bool Continuous(const GrowthWindow& g, const EngineConfig& c);

// Whether some window's floor rose significantly.
bool AnyWindowGrew(const TestedWindows& v);

// When no window passed but some window shows significant growth: one more window, from where the
// growth began (FindGrowthStart over the longest window) to now, tested at onset_alpha. A leak
// that began inside every configured window leaves their first third flat and fails the
// keeps-going tests there; from its own start it rises in every third. The window is at least
// onset_min_seconds and at most onset_max_share of the longest one, and the history rules apply to
// it as to any window. Failing that, in a segment past the young-job rule, a fast leak's window from
// where it began at least fast_onset_min_seconds ago, its rate's interval above fast_rate_bps.
void AddOnsetWindow(TestedWindows& v, std::span<const FloorPoint> series, GrowthOptions go, const EngineConfig& c,
                    const SettledAge& age);

// AddOnsetWindow on the cycle-free floor: when none of its windows passed but one of them or the
// floor itself (`floor_grew`) grew significantly, one more window from where the cycle-free
// floor's growth began, at least oscillation_min_periods periods of `period_s` long, its block
// means (over block_s) tested as the other windows' are (`go`) at no looser than onset_alpha.
// `flats` holds each window's block means, in step with v.windows.
void AddCycleOnsetWindow(TestedWindows& v, std::vector<std::vector<FloorPoint>>& flats,
                         std::span<const FloorPoint> cycle_free, double period_s, double block_s, GrowthOptions go,
                         bool floor_grew, const EngineConfig& c, const SettledAge& age);

// Whether the growth of the settled floor began only after it held flat (EngineConfig's
// late_onset_*). `settled`: the segment's settled floor, spikes removed.
bool BeganAfterFlat(std::span<const FloorPoint> settled, const EngineConfig& c);

// The windows tested on the cycle-free floor: the configured sizes, plus geometric steps between
// two consecutive sizes that are more than oscillation_window_ratio apart, once the shorter one is
// at least min_history_seconds long. Each as (seconds, intermediate), in increasing size.
std::vector<std::pair<double, bool>> CycleWindows(std::span<const double> sizes, const EngineConfig& c);

}  // namespace vw::detection
