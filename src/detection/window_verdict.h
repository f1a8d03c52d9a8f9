// The window verdict: the last stages of the leak engine's verdict (LeakEngine::Judge), once the
// tests on the floor (settled_floor.h) and, on a floor that swings, on the load's own series
// (swinging_load.h) are done: docs/detection.md, section 6 ("The growth must run at the rate floor",
// "Rate and start") and "Verdicts". With a window chosen, a leak, its start and rate fitted from
// where the growth began (GrowthRate, CallLeak), unless that rate runs below the rate floor
// (BelowRateFloor); without one, why not: a window held back or failing a test, a trend that did not
// last, or a plateau (CallNoLeak). Each writes the verdict and its evidence into the Assessment it
// is given. Internal to the engine's verdict.
//
// Units: seconds, bytes, bytes/second. Pure functions apart from the Assessment they write,
// thread-safe.
#pragma once

#include <optional>

#include "detection/leak_engine.h"
#include "detection/leak_rate.h"
#include "detection/settled_floor.h"
#include "detection/swinging_load.h"

namespace vw::detection {

// The rate from where the growth began (the window may start on the plateau before it), over the
// longest window tested. A window can pass at the rate floor while the growth since its start runs
// slower (a staircase's late steps): such a leak would be reported below the floor it must reach.
// The rate of the chosen window's growth (a window was chosen: on the swinging load's series that
// passed in the floor's stead, else on the floor), fitted from where that growth began; nullopt
// when none is fitted or its interval reaches down to zero.
std::optional<LeakRateFit> GrowthRate(const SettledFloor& settled, const FloorTests& f, const SwingTests& swing);

// Whether the chosen window's growth `rate` runs below the rate floor a leak verdict needs
// (min_rate_bps, or slow_rate_bps under the slow-growth rule); if so, a's verdict is settling, with
// its trend and the sentence that says so. False when `rate` is unset.
bool BelowRateFloor(Assessment& a, const SettledFloor& settled, const FloorTests& f, const SwingTests& swing,
                    const std::optional<LeakRateFit>& rate);

// A leak verdict on the chosen window: its trend, start and rate (fitted from where the growth began
// when `rate` is set, else the window's own), the summary, the sentences that say why (how it rose,
// from where, which history rules it passed, that it did not slow down) and the runway.
void CallLeak(Assessment& a, const SettledFloor& settled, const FloorTests& f, const SwingTests& swing,
              const std::optional<LeakRateFit>& rate);

// No window chosen: settling when some window shows real growth (the longest that passed but was
// held back, or failed a test, with why; else one whose upward trend did not last), plateau
// otherwise. a.trend is the longest window's fit, or that of the window the evidence explains.
// `unconfirmed`: the floor's window the cycle-free floor did not confirm (ConfirmOnCycleFree), if any.
void CallNoLeak(Assessment& a, const SettledFloor& settled, const FloorTests& f,
                const std::optional<Unconfirmed>& unconfirmed);

}  // namespace vw::detection
