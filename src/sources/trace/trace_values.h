// Value parsing shared by the trace parsers: trimming, the missing-value spellings, memory sizes
// with units, percentages, timestamps (with a fast path for nvidia-smi's own format) and the
// `date` lines people put between samples. All functions are pure and thread-safe; none allocates
// on the success path except where a std::string is returned.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"

namespace vw::trace {

// Inline: called for every line of a trace.
inline bool IsTrimmedSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsTrimmedSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsTrimmedSpace(s.back())) s.remove_suffix(1);
  return s;
}

// True for the spellings nvidia-smi and people use for "no value": empty, "N/A", "-", "ERR!" (a
// table cell nvidia-smi could not read), and any
// bracketed text such as "[N/A]", "[Not Supported]", "[Insufficient Permissions]",
// "[Unknown Error]", "[GPU is lost]", "[GPU requires reset]". `s` must be trimmed.
bool IsMissingValue(std::string_view s);

// Memory units as written in headers ("memory.used [MiB]") and values ("12 MiB"). nvidia-smi's
// "MB" (dmon, pmon, old drivers) means MiB, so MB/GB are binary here too.
enum class MemUnit : uint8_t { kNone, kBytes, kKiB, kMiB, kGiB, kTiB };
double MemUnitBytes(MemUnit u);
// "MiB" -> kMiB, in any case ("mib", "GIB", "gb"; MB/GB/KB are binary, above); "" -> kNone;
// unknown -> std::nullopt.
std::optional<MemUnit> ParseMemUnit(std::string_view unit);

enum class ValueError : uint8_t { kOk, kNotNumber, kBadUnit, kOutOfRange };

// A trimmed memory value: "1234", "1234 MiB", "1.5 GiB". `default_unit` applies when the value has
// no unit (kNone means MiB, nvidia-smi's unit). Missing values give *out = std::nullopt, kOk.
ValueError ParseMemoryValue(std::string_view s, MemUnit default_unit, std::optional<uint64_t>* out);

// ParseMemoryValue's common case, inline: "20011" (when `default_unit` is MiB or kNone) or
// "20011 MiB"/"20011MiB". False for anything else, leaving *out alone: then call ParseMemoryValue.
inline bool ParseMibFast(std::string_view s, MemUnit default_unit, std::optional<uint64_t>* out) {
  const size_t len = s.size();
  size_t n = 0;
  uint64_t v = 0;
  while (n < len && n < 12 && static_cast<unsigned>(s[n] - '0') < 10) v = v * 10 + static_cast<uint64_t>(s[n++] - '0');
  if (n == 0) return false;
  const char* r = s.data() + n;
  const size_t rest = len - n;
  const bool ok = (rest == 0 && (default_unit == MemUnit::kNone || default_unit == MemUnit::kMiB)) ||
                  (rest == 4 && r[0] == ' ' && r[1] == 'M' && r[2] == 'i' && r[3] == 'B') ||
                  (rest == 3 && r[0] == 'M' && r[1] == 'i' && r[2] == 'B');
  if (!ok) return false;
  *out = v << 20;
  return true;
}

// A trimmed percentage "37 %", "37%", "37" -> 0.37; must be within 0..100.
ValueError ParsePercentValue(std::string_view s, std::optional<double>* out);

// A non-negative integer that fills the whole of `s`.
bool ParseUint(std::string_view s, uint64_t* out);

// Remembers the last date seen by ParseTraceTimestamp, so rows of the same day skip the calendar
// arithmetic. One per reader; not shared between threads.
struct DateCache {
  char date[10] = {};
  double day_seconds = 0;  // seconds since the epoch at 00:00 of `date`
  bool valid = false;
  // The last whole second seen ("YYYY/MM/DD HH:MM:SS"): rows of several GPUs share it.
  char second[19] = {};
  double second_seconds = 0;  // day_seconds + seconds of day of `second`
  bool second_valid = false;
};

// ParseTimestamp with a fast path for "YYYY/MM/DD HH:MM:SS.mmm" (no allocation).
// The 19 bytes of "YYYY/MM/DD HH:MM:SS" at a and b (both readable) compared as three overlapping
// words: whether two nvidia-smi timestamps fall in the same second.
inline bool SameSecond(const char* a, const char* b) {
  uint64_t a0, b0, a1, b1;
  uint32_t a2, b2;
  std::memcpy(&a0, a, 8);
  std::memcpy(&b0, b, 8);
  std::memcpy(&a1, a + 8, 8);
  std::memcpy(&b1, b + 8, 8);
  std::memcpy(&a2, a + 15, 4);
  std::memcpy(&b2, b + 15, 4);
  return ((a0 ^ b0) | (a1 ^ b1) | (a2 ^ b2)) == 0;
}

// ms / 1000.0 for ms in 0..999: the fractions ParseTraceTimestamp adds to whole seconds.
extern const std::array<double, 1000> kMilliFractions;

bool ParseTraceTimestamp(std::string_view s, Timestamp* out, DateCache* cache = nullptr);

// A line that only carries a clock reading, as `date` or a loop prints it between samples:
// "2025-09-21 16:12:24", "Sun May  4 04:27:32 AM EDT 2025", "Tue Oct 29 19:00:23 2024",
// "==== Sun May  4 04:27:32 AM EDT 2025 ====", "2026-07-14T08:12:38Z". Zone names (EDT, UTC+2)
// are ignored: the time is taken as the wall clock, as for nvidia-smi timestamps. Returns false
// for anything else.
bool ParseDateLine(std::string_view line, Timestamp* out);

// True for separator lines: only '-', '=', '#', '*' or spaces (at least 3 marks).
bool IsSeparatorLine(std::string_view line);

// "00000000:3b:00.0" / "0000:3B:00.0" -> "00000000:3B:00.0"; anything else is returned trimmed.
std::string NormalizePciBusId(std::string_view s);
// The same, written into *out (reusing its capacity).
void AssignPciBusId(std::string_view s, std::string* out);

// `s` shortened to 40 characters with control bytes shown as '?', for "got '...'" in messages.
std::string Shown(std::string_view s);

}  // namespace vw::trace
