// The settled floor: the first stages of the leak engine's verdict (LeakEngine::Judge), from the
// segment's bucket floors. Where the floor settled (SettleGate; docs/detection.md, "3. Settling
// gate"); which windows the settled data covers (SettledWindows, "4. Windows"), into the
// SettledFloor that every later stage reads; and the growth tests on that floor with its spikes
// removed, with their choice of window (TestFloor, "6. Verdict over the windows"). A stage that
// reaches a verdict writes it, with its evidence, into the Assessment it is given. Internal to the
// engine's verdict.
//
// Input: FloorPoint series in time order. Units: seconds, bytes, bytes/second. Pure functions apart
// from the Assessment they write, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "detection/growth_window.h"
#include "detection/leak_engine.h"
#include "detection/window_choice.h"

namespace vw::detection {

// What every stage after the settling gate reads: the settings, the engine's clock, the segment's
// floors and their settled part, the windows that part covers, and its age.
struct SettledFloor {
  const EngineConfig& c;
  double first_t = 0;                    // the series' first sample (seconds): evidence names moments from it
  double last_t = 0;                     // its last sample (seconds)
  double bucket_s = 0;                   // the bucket width (seconds)
  std::span<const FloorPoint> pts;       // the segment's bucket floors (not opened), oldest first
  std::span<const FloorPoint> analysed;  // ... from where they settled
  double span_s = 0;                     // analysed's length (seconds)
  std::vector<double> sizes;             // the windows tested on it (seconds), increasing; never empty
  GrowthOptions go;                      // the growth tests' options from the settings
  SettledAge age;                        // analysed's age for the history rules (`floor` empty)
};

// Settling gate: the first of `pts` (at least 3) where the floor's rise over the last settle window
// is small, or no longer falling (steady growth is not a warm-up ramp); a.settled_at is set to its
// time. nullopt while still warming up (a's verdict and evidence then say so).
std::optional<size_t> SettleGate(Assessment& a, std::span<const FloorPoint> pts, const EngineConfig& c);

// Whether a floor whose settled part cannot be tested for a trend is still rising: by more than
// min_growth_bytes since it settled (`since`, bytes), or by the settling gate's step over the last
// settle window (`recent`, bytes): a floor the gate let through for rising steadily, not for being
// quiet, may have settled a moment ago, so no rise since then says nothing. Such a floor is warm-up,
// any other a plateau so far. `pts`: the segment's floors; `analysed`: their settled part.
struct RiseSoFar {
  double since = 0;
  double recent = 0;
  bool risen = false;   // since > min_growth_bytes
  bool rising = false;  // not risen, and recent ≥ the gate's step
  bool Rising() const { return risen || rising; }
};
RiseSoFar RiseSinceSettled(const Assessment& a, std::span<const FloorPoint> pts, std::span<const FloorPoint> analysed,
                           const EngineConfig& c);
// The evidence clause for it: ", and it has risen by +X since, more than Y: still warming up", or
// ", and it rose by +X in the last 30m: still rising", or empty for a floor not rising.
std::string RiseClause(const RiseSoFar& r, const EngineConfig& c);

// The windows of the data settled from pts[settled]: each configured one it covers, plus all of it
// when it falls between. nullopt when it is too short for a trend test (a's verdict, warm-up or
// plateau, and evidence then say so). `first_t`, `last_t`: the series' first and last sample;
// `bucket_s`: the bucket width (seconds).
std::optional<SettledFloor> SettledWindows(Assessment& a, std::span<const FloorPoint> pts, size_t settled,
                                           const EngineConfig& c, double first_t, double last_t, double bucket_s);

// The growth tests on the settled floor with its short spikes (narrower than spike_seconds) removed,
// and their choice of window.
struct FloorTests {
  bool oscillating = false;  // it swings with a load: fell below an earlier high by far more than its noise
  GrowthOptions go;          // the options its windows were tested with
  SettledAge age;            // its age for the history rules (`floor`: the settled floor, not opened)
  TestedWindows v;           // its windows and the choice among them
  bool late_onset = false;   // its growth began after it held flat (EngineConfig's late_onset_*)
};

// The floor's windows tested, and one chosen: at a stricter level on a floor that swings, with the
// step tests on one that does not; the young-job rules lifted for growth that began after the floor
// held flat; and, unless the floor swings, a window from where the growth began.
FloorTests TestFloor(const SettledFloor& settled);

}  // namespace vw::detection
