// When `watch` and `record` sample, and when a sample carries a process list: ticks every
// --interval on the steady clock (a late sample does not shift the ones after it, and no tick is
// made up when sampling fell behind), and a list is due once --process-interval has passed,
// within half a sampling interval. All times are seconds; steady-clock time points where named.
// Header-only, no state: the loops that call it own the clock.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <thread>

#include "core/units.h"

namespace vw::cli {

// Whether the sample taken at `now_s` carries a process list, the last one having been taken at
// `last_s` (-1e300: none yet). Samples come every `interval_s`, after the NVML calls, so a list
// asked for exactly at its due time would often fall a whole interval late: it is due within
// half a sampling interval of `process_interval_s`.
inline bool ProcessListDue(double now_s, double last_s, double process_interval_s, double interval_s) {
  return now_s - last_s >= process_interval_s - 0.5 * interval_s;
}

// Sample times keep to the clock the run started with (core/time.h SteadyWallNow), so a step of the
// system clock is said, not followed: the words for `step` (SystemClockStep(), seconds) when it
// moved by more than a second from `*said` (the step last said, 0 at start; then updated), else
// empty. `who`: "the daemon", "the recording".
inline std::string ClockStepNote(double step, double* said, const std::string& who) {
  if (std::fabs(step - *said) <= 1.0) return {};
  const double moved = step - *said;
  *said = step;
  std::string now = std::fabs(step) <= 1.0
                        ? "agrees with it again"
                        : FormatDuration(std::fabs(step)) + (step > 0 ? " behind it" : " ahead of it");
  return "the system clock stepped " + std::string(moved > 0 ? "ahead" : "back") + " by " +
         FormatDuration(std::fabs(moved)) + "; the sample times of " + who +
         " keep to the clock it started with (which now " + (std::fabs(step) <= 1.0 ? now : "is " + now) +
         ") until it is restarted";
}

// The next tick after `tick`, `interval_s` later; `now` when that is already past (behind: do not
// try to catch up).
inline std::chrono::steady_clock::time_point NextTick(std::chrono::steady_clock::time_point tick, double interval_s,
                                                      std::chrono::steady_clock::time_point now) {
  tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s));
  return tick < now ? now : tick;
}

// The end of a --duration of `duration_s` seconds counted from `start`, capped at 30 years
// (within what the steady clock can count); none without a duration.
inline std::optional<std::chrono::steady_clock::time_point> DeadlineOf(std::chrono::steady_clock::time_point start,
                                                                       std::optional<double> duration_s) {
  if (!duration_s) return std::nullopt;
  return start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(std::min(*duration_s, 30 * 365 * 86400.0)));
}

// Sleeps until `tick` or `deadline`, whichever is earlier, in steps of at most 100 ms so that
// `stop` (set by a signal handler) is seen promptly. Returns at once when `stop` is set.
inline void SleepUntilTick(std::chrono::steady_clock::time_point tick,
                           const std::optional<std::chrono::steady_clock::time_point>& deadline,
                           const std::atomic<bool>& stop) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point wake = deadline ? std::min(tick, *deadline) : tick;
  while (!stop && Clock::now() < wake) {
    std::this_thread::sleep_for(std::min<Clock::duration>(wake - Clock::now(), std::chrono::milliseconds(100)));
  }
}

}  // namespace vw::cli
