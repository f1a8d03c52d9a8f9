// GrowthWindow: the leak tests on one window of a floor series (the engine runs it for each trend
// window that the data covers).
//
// Input: points (t, floor) in time order. The tests, in order:
//   1. trend: Mann–Kendall (tie- and Hamed–Rao-corrected, never shrinking the variance) with
//      z > 0 and p < alpha;
//   2. rate: Sen's slope with its ci_level interval; the lower end must be > 0 and the slope at
//      least min_rate_bps;
//   3. size: the floor rose by at least min_growth_bytes (median of the last sixth minus median of
//      the first sixth), so one or two allocator steps never suffice;
//   4. keeps going: the floor rose in every third of the window, each third's rate at least
//      third_fraction of the window's slope, and the last third's rate at least late_fraction of
//      the first third's (a staircase that stops or thins out fails here);
//      No third's rise may be under third_balance of the largest (one big step among small ones);
//      the measured rise per time must agree with Sen's slope within rise_consistency; no single
//      jump may carry more than max_jump_share of the rise (unless it is within the noise), nor
//      the top_jumps largest steps together more than max_top_jumps_share of it;
//   5. not slowing down: the second half's Sen slope is not clearly below the first half's (under
//      strong_slowdown_ratio of it, or under slowdown_ratio with disjoint intervals: a settling curve).
// Long windows are thinned to at most max_points points first (consecutive points grouped, the
// group's lowest floor kept), which keeps the cost O(max_points²).
//
// Units: seconds, bytes, bytes/second. Pure function, thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "detection/mann_kendall.h"
#include "detection/theil_sen.h"

namespace vw::detection {

struct FloorPoint {
  double t = 0;      // seconds (middle of the bucket's samples)
  double floor = 0;  // bytes
};

struct GrowthOptions {
  double alpha = 0.01;
  double ci_level = 0.90;
  double min_rate_bps = 0;
  double min_growth_bytes = 0;
  double third_fraction = 0.35;
  double late_fraction = 0.5;
  double slowdown_ratio = 0.8;
  double strong_slowdown_ratio = 0.6;
  double third_balance = 0.25;    // smallest third's rise at least this share of the largest's
  double rise_consistency = 2.0;  // measured rise rate within this factor of Sen's slope
  double max_jump_share = 0.3;    // largest jump (3-point medians) at most this share of the rise,
                                  // unless within 5 noise deviations
  // The top_jumps largest steps (jumps as above, each step counted once, only those above the
  // noise) together at most this share of the rise: growth made of a few steps is an allocator's
  // staircase (its large blocks), a leak's comes in many. 0 steps: no such test.
  size_t top_jumps = 0;
  double max_top_jumps_share = 0.6;
  // Counted steps (top_jumps > 0) higher than regular_min_step_bytes (a caching allocator's own
  // block sizes, up to 20 MiB, step a healthy staircase in equal steps; smaller steps are left
  // out) that are equal and evenly spaced are one buffer leaked per period
  // (GrowthWindow::regular): at least regular_min_steps of them; each within
  // regular_size_tolerance of their median height, plus three deviations of a step's measured
  // height (below; a leaked buffer's steps are equal, but measured through the noise); the
  // longest gap between them at most regular_gap_ratio times the shortest, give or take a point
  // at either end, and no shorter than the stretch after the last step (the stretch before the
  // first may be longer: a leak that began inside the window); together carrying regular_carry
  // to 1/regular_carry of the rise at Sen's slope. 0 bytes: never asked.
  double regular_min_step_bytes = 0;
  size_t regular_min_steps = 3;
  double regular_size_tolerance = 0.05;
  // A step's height is measured to within the deviation of a jump on the floor's noise, or of the
  // difference of two levels where the floor holds flat for minutes between them (its deviation
  // about its own level between the steps, times √2); only steps above five such deviations
  // count. The more the heights spread, the more steps are needed: with d the largest distance
  // of a height from their median h, n steps with (d / h)^(n − 1) at most regular_chance, so
  // that blocks of random sizes come that close no more easily than three within 10 % do
  // (0: regular_min_steps however far they spread).
  double regular_chance = 0;
  double regular_gap_ratio = 1.25;
  double regular_carry = 0.8;
  // When true a jump is measured net of what Sen's slope predicts between the two medians: for
  // short series of block means, where three points span a large share of the window.
  bool jump_net_of_slope = false;
  // When true and the trend test is not significant, the window stops there: `significant` is
  // false, `failed` says so, and `sen` and every later number are left unset. For series whose
  // windows are only looked at when one passes (the cycle-free floor, the lower envelopes).
  bool stop_when_not_significant = false;
  // With stop_when_not_significant: a stopped window's Mann–Kendall result is still read where it
  // finds an upward trend at p ≤ read_alpha (a rise worth watching, at a looser level than alpha).
  // The autocorrelation correction is computed only where the test without it finds an upward trend
  // at max(alpha, read_alpha), as it may only lower z: a window that fails there fails both with it.
  double read_alpha = 0;
  size_t max_points = 120;
  size_t min_points = 12;
};

// Growth in equal steps at a regular pace (GrowthOptions' regular_*).
struct RegularStepping {
  size_t steps = 0;
  double step_bytes = 0;      // their median height
  double period_seconds = 0;  // mean time from one to the next
};

struct GrowthWindow {
  double t0 = 0, t1 = 0;  // first and last point used (seconds)
  size_t points = 0;
  std::optional<MannKendallResult> mk;
  std::optional<TheilSenResult> sen;         // slope in bytes/second
  double rise_bytes = 0;                     // measured rise of the floor over the window
  std::array<double, 3> third_rate_bps{};    // rate of the floor in each third
  std::array<double, 3> third_rise_bytes{};  // rise of the floor in each third
  // For the evidence's wording only (no test reads these): the floor's level at the window's start,
  // at its thirds' boundaries and at its end (t0 + k·span/3, k = 0..3). Each is the median, over the
  // points within a twelfth of the window either side of that moment (a sixth on its one side at the
  // ends), of their floors moved to that moment along those points' own Sen slope, so a floor
  // rising at a constant rate r reads
  // exactly r·span/3 per third and r·span in all. (third_rise_bytes and rise_bytes, which the
  // tests read, run between level centres span/4, span/3 and span/4 apart, and over 5/6 of it.)
  // Set only when every level has points (`boundary_levels`).
  std::array<double, 4> boundary_level_bytes{};
  bool boundary_levels = false;
  // Sen's slope of each half of the window (for the slowdown test): computed only when the trend is
  // significant, as no other window's or verdict's reading needs them.
  std::optional<TheilSenResult> first_half, second_half;
  bool significant = false, fast_enough = false, large_enough = false, every_third = false, keeps_pace = false,
       consistent = false, no_big_jump = false, not_slowing = false;
  double largest_jump_bytes = 0;  // largest rise between the medians of 3 points and the 3 before
  double top_jumps_bytes = 0;     // the options' top_jumps largest steps above the noise, summed
  bool few_steps = false;         // ... and they carry more than max_top_jumps_share of the rise
  bool steps_counted = false;     // whether the steps were counted (options.top_jumps > 0)
  // Set when the steps are equal and evenly spaced; the tests of how the rise spreads over the
  // window (every third, keeps pace, consistency, single jump, few steps) then pass.
  std::optional<RegularStepping> regular;
  double noise_bytes = 0;  // point-to-point noise of the floor (robust standard deviation)
  bool leak = false;       // every test passed
  // The first test that failed, in words ("no significant trend", "growth only in the first third",
  // ...); empty for a leak.
  std::string failed;
};

// nullopt when there are fewer than options.min_points points.
std::optional<GrowthWindow> TestGrowthWindow(std::span<const FloorPoint> points, const GrowthOptions& options);

// Robust standard deviation of the floor's point-to-point noise (MAD of first differences / √2).
double FloorNoise(std::span<const FloorPoint> points);

// Largest fall of the floor below an earlier high (bytes); large under an oscillating load.
double MaxDrawdown(std::span<const FloorPoint> points);

// Whether the floor rose all through the points, at one pace: cut into `parts` stretches of equal
// time, each stretch's Sen slope has the lower end of its ci_level interval above zero and (when
// agree_level > 0) its agree_level interval holds the Sen slope of all the points. An allocator
// staircase late in a job steps a few times an hour at most, so some stretch stays flat or rises
// much faster than the rest; a leak rises in every one at its rate. Each stretch is thinned to
// max_points first; false when one holds fewer than 5 points.
bool RisesThroughout(std::span<const FloorPoint> points, int parts, double ci_level, double agree_level,
                     size_t max_points);

// Sen's slope of the floor over time, with its ci_level interval (TheilSen); times are taken from
// `origin` (seconds), so the intercept is the fitted floor there. variance_factor as TheilSen's.
std::optional<TheilSenResult> SenOfFloor(std::span<const FloorPoint> points, double origin, double ci_level,
                                         double variance_factor = 1);

// The points thinned to at most max_points (exposed for tests).
std::vector<FloorPoint> ThinPoints(std::span<const FloorPoint> points, size_t max_points);

}  // namespace vw::detection
