// A load that swings: the stages of the leak engine's verdict (LeakEngine::Judge) for a floor that
// swings with a load (FloorTests::oscillating; docs/detection.md, section 6, from "Oscillating
// loads"). The floor's regular cycle over the longest window, estimated once (CycleOfLongest); a
// window that passed on the floor, confirmed on the floor with that cycle removed
// (ConfirmOnCycleFree); when none passed, that cycle-free floor's block means and then the lower
// envelopes tested in the floor's stead (TestCycleFree, TestEnvelopes); when nothing passed there
// either, the leak verdicts from the cycle-free floor's lows (LeakFromCycleFreeLows) and from steady
// growth that runs out soon or past the load's swings (LeakFromImminentFill); and, with any other
// verdict, what the cycle-free floor showed (AddLoadNotes). Internal to the engine's verdict.
//
// Input: FloorPoint series in time order. Units: seconds, bytes, bytes/second. Thread-safe: each
// object belongs to one verdict.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "detection/floor_shape.h"
#include "detection/growth_window.h"
#include "detection/leak_engine.h"
#include "detection/mann_kendall.h"
#include "detection/oscillation.h"
#include "detection/settled_floor.h"
#include "detection/window_choice.h"

namespace vw::detection {

// The regular cycle of the floor over the longest window: the cycle (unset when none is found), the
// floor over that window with it removed, and the blocks (seconds) that floor is averaged over.
struct LongestCycle {
  std::optional<Oscillation> cycle;
  std::vector<FloorPoint> cycle_free;
  double block_s = 0;
};

// The LongestCycle of a settled floor (not opened), estimated once, when first asked: not every
// verdict needs it.
class CycleOfLongest {
 public:
  // `settled` must outlive this object.
  explicit CycleOfLongest(const SettledFloor& settled) : settled_(settled) {}

  const LongestCycle& Get();

  // A swinging load's growth that passed on its floor or its lower envelope is confirmed on the
  // cycle-free floor when a cycle is found (the floor alone can wander for hours with the load while
  // its cycle as a whole stays put): Mann–Kendall over the last `w_s` seconds of that floor's block
  // means, or nullopt when no cycle is found or the window holds too few periods to ask.
  std::optional<MannKendallResult> CycleFreeTrend(double w_s);

 private:
  const SettledFloor& settled_;
  std::optional<LongestCycle> longest_;
};

// A window that passed on a swinging load's floor but whose cycle-free floor did not rise.
struct Unconfirmed {
  size_t window = 0;         // index in the floor's windows
  Oscillation cycle;         // the cycle removed
  double block_seconds = 0;  // the cycle-free floor was averaged over blocks of this
  MannKendallResult mk;      // on those block means
};

// A window that passed on a swinging load's cycle-free block means but whose lows did not rise.
struct LowsUnconfirmed {
  double window_seconds = 0;
  double lows_block_seconds = 0;
  double means_z = 0;  // Mann–Kendall on the block means
  double lows_z = 0;   // ... and on the lows
};

// A rise of a swinging load's cycle-free floor that no test called a leak (EngineConfig::watch_alpha),
// on the block means of one of its windows (the cycle and block width are the floor's own).
struct LoadRise {
  double window_seconds = 0;
  MannKendallResult mk;
  double slope_bps = 0;  // Sen's slope of the block means
};

// What the tests on a swinging load's own series found (TestCycleFree, TestEnvelopes).
struct SwingTests {
  std::optional<Oscillation> estimated;  // the cycle found, whether or not a window passed on it
  std::vector<FloorPoint> cycle_free;    // the floor over the longest window with that cycle removed
  double block_s = 0;                    // ... averaged over blocks this long (seconds) for the tests
  std::optional<LoadRise> watch;         // the most significant rise of its block means (watch_alpha)
  std::optional<LowsUnconfirmed> lows_unconfirmed;
  std::optional<PreRise> pre_rise;  // a passing window whose end did not stand above the floor before it
  // A series on which a window passed in the floor's stead: the cycle-free floor's block means, or
  // a lower envelope of the settled floor.
  std::optional<TestedWindows> passed;    // its windows and their choice (leak_at set); unset: none passed
  std::vector<FloorPoint> passed_points;  // its points: the passing window's block means, or the envelope
  double envelope_s = 0;                  // the lower envelope's span (seconds); 0 for the cycle-free floor
  std::optional<Oscillation> cycle;       // the cycle removed, when the cycle-free floor passed
};

// A window that passed on a swinging floor (f.oscillating, f.v.leak_at set), confirmed on the
// cycle-free floor (oscillating_confirm_z): when that floor did not rise over it, f.v.leak_at is
// reset and the window is returned.
std::optional<Unconfirmed> ConfirmOnCycleFree(FloorTests& f, CycleOfLongest& cycles, const EngineConfig& c);

// When no window passed on a swinging floor: its regular cycle (estimated over the longest window)
// removed, the median floor at each phase subtracted, and the rest averaged over blocks, then tested
// at the stricter oscillation_alpha (a second series tested at every check, with noise that stays
// serially correlated at the block scale). Besides the configured windows, intermediate ones
// (consecutive sizes at most oscillation_window_ratio apart, above min_history_seconds) are tested
// at oscillation_intermediate_alpha: a leak that began hours into a job fails the keeps-going tests
// on a window that starts long before it, and three hours of block means are often too few. A
// passing window must also show in the cycle-free floor's lows (oscillating_lows_*) and stand above
// the floor before it (oscillating_pre_*). With a cycle found, sets swing's cycle figures
// (estimated, cycle_free, block_s, watch, and why a window did not pass) and, when one passes,
// swing.passed.
void TestCycleFree(const SettledFloor& settled, const FloorTests& f, CycleOfLongest& cycles, SwingTests& swing);

// When the cycle-free floor found nothing: the lower envelopes (the lowest floor over each of
// envelope_seconds), each tested over the windows at least three spans long and a passing window
// confirmed on the cycle-free floor; the first that passes is set in swing.passed.
void TestEnvelopes(const SettledFloor& settled, CycleOfLongest& cycles, SwingTests& swing);

// With a cycle found (swing.estimated) and no window passing, on the floor or in its stead: has the
// cycle-free floor just moved to a level it never reached before, are its block lows rising (a
// settled job only, for both), or has it ramped up to a new level after a long stretch below it
// (any job)? The rate is fitted on the cycle-free floor. Returns whether it called a leak (a's
// verdict, trend, rate, evidence and runway then set).
bool LeakFromCycleFreeLows(Assessment& a, const SettledFloor& settled, const SwingTests& swing);

// Asked as LeakFromCycleFreeLows is, after it: growth under the cycle that no test called, steady and
// running into the card soon or past the load's swings (imminent_fill.h). Returns whether it called
// a leak (as that does).
bool LeakFromImminentFill(Assessment& a, const SettledFloor& settled, const SwingTests& swing);

// What the cycle-free floor showed when it rose without a leak verdict (lows that did not rise, an
// end that did not stand above the floor before it, a rise worth watching: a.load_rise_bps), added
// to a's evidence with every verdict but a leak that follows the swing tests.
void AddLoadNotes(Assessment& a, const SwingTests& swing, const EngineConfig& c);

}  // namespace vw::detection
