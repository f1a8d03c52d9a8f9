// Timestamps: parsing the spellings GPU tools write, and ISO 8601 output.
//
// A timestamp is seconds since the Unix epoch as a double. Times written without a zone
// (nvidia-smi's "2026/07/14 08:12:38.696" is the host's local time) are taken as written, on the
// UTC scale ("wall clock"), and printed back without a zone, so a report's clock times read the
// same as the trace's. `has_zone` says whether the text named its zone.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace vw {

// The first instant no trace can hold: 10000-01-01T00:00:00 (seconds since the epoch). Dates are
// written with four-digit years, and epoch seconds beyond it are milliseconds or garbage.
inline constexpr double kTimestampLimitSeconds = 253402300800.0;

// Whether `seconds` is a time a trace can hold: finite and within ±kTimestampLimitSeconds.
bool PlausibleTime(double seconds);

// Whether `text` is written as epoch seconds (digits, at most one dot) that ParseTimestamp rejects
// for falling in the year 10000 or later: most often a time in milliseconds.
bool EpochBeyondRange(std::string_view text);

struct Timestamp {
  double seconds = 0;     // since 1970-01-01T00:00:00 (UTC, or wall clock when !has_zone)
  bool has_zone = false;  // the text carried Z, +hh:mm, or was epoch seconds
};

// Accepts: "2026/07/14 08:12:38.696" (nvidia-smi), "2026-07-14T08:12:38Z", "2026-07-14 08:12:38",
// "2026-07-14T08:12:38.5+02:00", epoch seconds "1764189075" or "1764189075.25", dmon/pmon's
// "20261129 19:11:56", and ctime "Tue Oct 29 19:00:23 2024". Leading/trailing spaces are ignored.
// Dates that do not exist ("2026-02-30") are rejected, and so are epoch seconds from the year
// 10000 on (kTimestampLimitSeconds; epoch milliseconds are named as the likely mistake).
Result<Timestamp> ParseTimestamp(std::string_view text);

// Now, in seconds since the epoch, on a clock that reads the system (wall) clock at its first use in
// the process and from then on advances with the steady clock. A step of the system clock (NTP
// correcting it, someone running `date`) does not make these times jump back or ahead, so that the
// intervals measured between them (alert durations, schedules, a series' samples) stay true; they
// keep to the wall clock as it was at the first use. Thread-safe.
double SteadyWallNow();

// How far the system clock has stepped since SteadyWallNow's first use: its reading now less
// SteadyWallNow() (seconds; positive when it went ahead). Slewing moves both clocks alike.
double SystemClockStep();

// The spellings ParseTimestamp accepts, as error messages list them.
inline constexpr std::string_view kTimestampForms =
    "YYYY/MM/DD HH:MM:SS.mmm, YYYYMMDD HH:MM:SS, ISO 8601 or epoch seconds";

// Whether the proleptic Gregorian date exists: month 1..12, day 1..28/29/30/31 (leap years
// included). 2026-02-30 and 2025-02-29 do not.
bool ValidCivilDate(int year, int month, int day);

// Days since the epoch for a proleptic Gregorian date (no validation beyond ranges).
long long DaysFromCivil(int year, unsigned month, unsigned day);

// "2026-07-14T08:12:38Z" (whole seconds) or with ".696" when milliseconds are non-zero.
// The "Z" is written only when with_zone is true.
std::string FormatIso8601(double seconds, bool with_zone);

// "2026-07-14 08:12" for human reports.
std::string FormatClock(double seconds);

}  // namespace vw
