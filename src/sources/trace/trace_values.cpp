#include "sources/trace/trace_values.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace vw::trace {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Reads a non-negative decimal number at the front of `s` (integer fast path); advances `s`.
bool TakeNumber(std::string_view& s, double* out, bool* integral, uint64_t* ivalue) {
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size() && IsDigit(s[n]) && n < 18) v = v * 10 + static_cast<uint64_t>(s[n++] - '0');
  if (n > 0 && (n == s.size() || (s[n] != '.' && !IsDigit(s[n]) && s[n] != 'e' && s[n] != 'E'))) {
    *integral = true;
    *ivalue = v;
    *out = static_cast<double>(v);
    s.remove_prefix(n);
    return true;
  }
  *integral = false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, std::chars_format::fixed);
  if (ec != std::errc() || ptr == s.data() || !std::isfinite(*out) || *out < 0) return false;
  s.remove_prefix(static_cast<size_t>(ptr - s.data()));
  return true;
}

constexpr std::array<std::string_view, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                      "jul", "aug", "sep", "oct", "nov", "dec"};

int MonthFromName(std::string_view t) {
  if (t.size() < 3) return 0;
  for (size_t i = 0; i < kMonths.size(); ++i) {
    bool eq = true;
    for (size_t k = 0; k < 3; ++k) {
      char c = t[k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != kMonths[i][k]) eq = false;
    }
    if (eq) return static_cast<int>(i) + 1;
  }
  return 0;
}

bool TwoDigits(std::string_view s, size_t at, int* out) {
  if (at + 2 > s.size() || !IsDigit(s[at]) || !IsDigit(s[at + 1])) return false;
  *out = (s[at] - '0') * 10 + (s[at + 1] - '0');
  return true;
}

// "04:27:32" or "4:27:32" -> seconds of day.
bool ParseClock(std::string_view t, int* seconds) {
  int h = 0, m = 0, s = 0;
  size_t i = 0;
  while (i < t.size() && IsDigit(t[i]) && i < 2) h = h * 10 + (t[i++] - '0');
  if (i == 0 || i >= t.size() || t[i] != ':') return false;
  if (!TwoDigits(t, i + 1, &m) || i + 3 >= t.size() || t[i + 3] != ':' || !TwoDigits(t, i + 4, &s)) return false;
  if (i + 6 != t.size() || h > 23 || m > 59 || s > 60) return false;
  *seconds = h * 3600 + m * 60 + s;
  return true;
}

// The 10 bytes of "YYYY/MM/DD" compared as an 8-byte and a 2-byte word.
bool SameDate(const char* a, const char* b) {
  uint64_t a8, b8;
  uint16_t a2, b2;
  std::memcpy(&a8, a, 8);
  std::memcpy(&b8, b, 8);
  std::memcpy(&a2, a + 8, 2);
  std::memcpy(&b2, b + 8, 2);
  return a8 == b8 && a2 == b2;
}

// v / 100.0 for 0..100, computed once (a table read instead of a division per row; the same
// doubles as the division).
struct Fractions {
  std::array<double, 101> percent{};
  Fractions() {
    for (unsigned v = 0; v <= 100; ++v) percent[v] = v / 100.0;
  }
};
const Fractions kFractions;

constexpr std::array<double, 1000> MilliTable() {
  std::array<double, 1000> a{};
  for (size_t ms = 0; ms < a.size(); ++ms) a[ms] = static_cast<double>(ms) / 1000.0;
  return a;
}

}  // namespace

const std::array<double, 1000> kMilliFractions = MilliTable();

bool IsMissingValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.front() == '[' && s.back() == ']') return true;
  return s == "N/A" || s == "n/a" || s == "-" || s == "NA" || s == "ERR!";
}

double MemUnitBytes(MemUnit u) {
  switch (u) {
    case MemUnit::kBytes: return 1.0;
    case MemUnit::kKiB: return 1024.0;
    case MemUnit::kNone:
    case MemUnit::kMiB: return 1024.0 * 1024.0;
    case MemUnit::kGiB: return 1024.0 * 1024.0 * 1024.0;
    case MemUnit::kTiB: return 1024.0 * 1024.0 * 1024.0 * 1024.0;
  }
  return 1.0;
}

std::optional<MemUnit> ParseMemUnit(std::string_view u) {
  if (u.empty()) return MemUnit::kNone;
  if (u.size() > 5) return std::nullopt;
  char lower[5];
  for (size_t i = 0; i < u.size(); ++i) {
    const char c = u[i];
    lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view l(lower, u.size());
  if (l == "mib" || l == "mb" || l == "m") return MemUnit::kMiB;
  if (l == "gib" || l == "gb" || l == "g") return MemUnit::kGiB;
  if (l == "kib" || l == "kb" || l == "k") return MemUnit::kKiB;
  if (l == "tib" || l == "tb" || l == "t") return MemUnit::kTiB;
  if (l == "b" || l == "bytes") return MemUnit::kBytes;
  return std::nullopt;
}

ValueError ParseMemoryValue(std::string_view s, MemUnit default_unit, std::optional<uint64_t>* out) {
  // Fast path: "1234", "1234 MiB", "1234MiB" in MiB.
  if (!s.empty() && IsDigit(s.front()) && s.size() < 24) {
    size_t n = 0;
    uint64_t v = 0;
    while (n < s.size() && IsDigit(s[n]) && n < 12) v = v * 10 + static_cast<uint64_t>(s[n++] - '0');
    std::string_view rest = s.substr(n);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const bool mib_default = default_unit == MemUnit::kNone || default_unit == MemUnit::kMiB;
    if ((n == s.size() && mib_default) || (rest.size() == 3 && rest[0] == 'M' && rest[1] == 'i' && rest[2] == 'B')) {
      *out = v << 20;
      return ValueError::kOk;
    }
  }
  if (IsMissingValue(s)) {
    out->reset();
    return ValueError::kOk;
  }
  double v = 0;
  bool integral = false;
  uint64_t iv = 0;
  if (!TakeNumber(s, &v, &integral, &iv)) return ValueError::kNotNumber;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  MemUnit unit = default_unit;
  if (!s.empty()) {
    auto u = ParseMemUnit(s);
    if (!u) return ValueError::kBadUnit;
    unit = *u;
  }
  if (unit == MemUnit::kNone) unit = MemUnit::kMiB;
  if (integral && unit == MemUnit::kMiB && iv < (uint64_t{1} << 40)) {
    *out = iv << 20;
    return ValueError::kOk;
  }
  const double bytes = std::round(v * MemUnitBytes(unit));
  if (!(bytes < 1.8e19)) return ValueError::kOutOfRange;
  *out = static_cast<uint64_t>(bytes);
  return ValueError::kOk;
}

ValueError ParsePercentValue(std::string_view s, std::optional<double>* out) {
  // Fast path: "37", "37 %", "37%".
  if (!s.empty() && IsDigit(s.front()) && s.size() <= 5) {
    size_t n = 0;
    unsigned v = 0;
    while (n < s.size() && IsDigit(s[n])) v = v * 10 + static_cast<unsigned>(s[n++] - '0');
    std::string_view rest = s.substr(n);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if ((rest.empty() || (rest.size() == 1 && rest[0] == '%')) && v <= 100) {
      *out = kFractions.percent[v];
      return ValueError::kOk;
    }
  }
  if (IsMissingValue(s)) {
    out->reset();
    return ValueError::kOk;
  }
  double v = 0;
  bool integral = false;
  uint64_t iv = 0;
  if (!TakeNumber(s, &v, &integral, &iv)) return ValueError::kNotNumber;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (!s.empty() && s != "%") return ValueError::kBadUnit;
  if (v > 100.0) return ValueError::kOutOfRange;
  *out = v / 100.0;
  return ValueError::kOk;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

namespace {
bool ParseTraceTimestampSlow(std::string_view s, Timestamp* out) {
  auto r = ParseTimestamp(s);
  if (!r.ok()) return false;
  *out = *r;
  return true;
}
}  // namespace

bool ParseTraceTimestamp(std::string_view s, Timestamp* out, DateCache* cache) {
  // Fast path: "2026/07/14 08:12:38.696" (nvidia-smi), optionally without the milliseconds.
  if ((s.size() == 23 || s.size() == 19) && s[4] == '/' && s[7] == '/' && s[10] == ' ' && s[13] == ':' &&
      s[16] == ':') {
    // Same second as the previous row (several GPUs per sample): only the milliseconds differ.
    if (cache != nullptr && cache->second_valid && SameSecond(cache->second, s.data())) {
      int ms = 0;
      if (s.size() == 23) {
        if (!(s[19] == '.' && IsDigit(s[20]) && IsDigit(s[21]) && IsDigit(s[22])))
          return ParseTraceTimestampSlow(s, out);
        ms = (s[20] - '0') * 100 + (s[21] - '0') * 10 + (s[22] - '0');
      }
      out->seconds = cache->second_seconds + kMilliFractions[static_cast<size_t>(ms)];
      out->has_zone = false;
      return true;
    }
    int h, mi, se;
    bool ok = TwoDigits(s, 11, &h) && TwoDigits(s, 14, &mi) && TwoDigits(s, 17, &se) && h <= 23 && mi <= 59 && se <= 60;
    int ms = 0;
    if (ok && s.size() == 23) {
      ok = s[19] == '.' && IsDigit(s[20]) && IsDigit(s[21]) && IsDigit(s[22]);
      ms = (s[20] - '0') * 100 + (s[21] - '0') * 10 + (s[22] - '0');
    }
    if (ok) {
      double day;
      if (cache != nullptr && cache->valid && SameDate(cache->date, s.data())) {
        day = cache->day_seconds;
      } else {
        int y1, y2, mo, d;
        if (!(TwoDigits(s, 0, &y1) && TwoDigits(s, 2, &y2) && TwoDigits(s, 5, &mo) && TwoDigits(s, 8, &d)))
          return false;
        const int y = y1 * 100 + y2;
        if (y < 1970 || !ValidCivilDate(y, mo, d)) return false;  // once per new date (cached)
        day = static_cast<double>(DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0;
        if (cache != nullptr) {
          std::memcpy(cache->date, s.data(), 10);
          cache->day_seconds = day;
          cache->valid = true;
        }
      }
      const double whole = day + (h * 3600 + mi * 60 + se);
      if (cache != nullptr) {
        std::memcpy(cache->second, s.data(), 19);
        cache->second_seconds = whole;
        cache->second_valid = true;
      }
      out->seconds = whole + kMilliFractions[static_cast<size_t>(ms)];
      out->has_zone = false;
      return true;
    }
  }
  return ParseTraceTimestampSlow(s, out);
}

bool ParseDateLine(std::string_view line, Timestamp* out) {
  std::string_view s = Trim(line);
  while (!s.empty() && s.front() == '=') s.remove_prefix(1);
  while (!s.empty() && s.back() == '=') s.remove_suffix(1);
  s = Trim(s);
  if (s.size() < 8 || s.size() > 64 || s.find(':') == std::string_view::npos) return false;
  if (s.find(',') != std::string_view::npos || s.find('|') != std::string_view::npos) return false;
  if (IsDigit(s.front())) {
    auto r = ParseTimestamp(s);
    if (!r.ok()) return false;
    *out = *r;
    return true;
  }
  // `date` in its C/POSIX and en_US forms: "Sun May  4 04:27:32 AM EDT 2025", "Tue Oct 29 19:00:23 2024",
  // and the en_GB order "Sun 04 May 2025 04:27:32 AM EDT". Zone names are ignored.
  int month = 0, day = -1, year = -1, clock = -1;
  int pm = -1;  // -1 none, 0 AM, 1 PM
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    std::string_view t = s.substr(i, j - i);
    i = j;
    if (t.empty()) continue;
    int secs = 0;
    uint64_t num = 0;
    if (ParseClock(t, &secs)) {
      if (clock >= 0) return false;
      clock = secs;
    } else if (ParseUint(t, &num)) {
      if (t.size() == 4 && year < 0)
        year = static_cast<int>(num);
      else if (t.size() <= 2 && day < 0 && num >= 1 && num <= 31)
        day = static_cast<int>(num);
      else
        return false;
    } else if (t == "AM" || t == "am") {
      pm = 0;
    } else if (t == "PM" || t == "pm") {
      pm = 1;
    } else if (month == 0 && t.size() >= 3 && MonthFromName(t) != 0 && IsAlpha(t[0]) &&
               (t.size() == 3 || t.size() == 4)) {
      month = MonthFromName(t);
    } else {
      // Weekday or zone name ("Sun", "EDT", "UTC", "CEST", "+0200"): letters, digits, '+', '-'.
      for (char c : t) {
        if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.' && c != ',') return false;
      }
    }
  }
  if (month == 0 || day < 0 || year < 1970 || clock < 0 || !ValidCivilDate(year, month, day)) return false;
  if (pm >= 0) {
    int h = clock / 3600;
    if (h < 1 || h > 12) return false;
    if (pm == 1 && h != 12) clock += 12 * 3600;
    if (pm == 0 && h == 12) clock -= 12 * 3600;
  }
  out->seconds =
      static_cast<double>(DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day))) * 86400.0 +
      clock;
  out->has_zone = false;
  return true;
}

bool IsSeparatorLine(std::string_view line) {
  size_t marks = 0;
  for (char c : line) {
    if (c == '-' || c == '=' || c == '#' || c == '*')
      ++marks;
    else if (!IsSpace(c))
      return false;
  }
  return marks >= 3;
}

std::string NormalizePciBusId(std::string_view s) {
  std::string out;
  AssignPciBusId(s, &out);
  return out;
}

void AssignPciBusId(std::string_view s, std::string* out_ptr) {
  std::string& out = *out_ptr;
  s = Trim(s);
  out.assign(s.data(), s.size());
  // "dddd:bb:dd.f" or "dddddddd:bb:dd.f"
  size_t colon = out.find(':');
  if (colon == 4 && out.size() == 12) out.insert(0, "0000");
  if (out.size() == 16 && out[8] == ':' && out[11] == ':' && out[14] == '.') {
    for (char& c : out) {
      if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
    }
  }
}

std::string Shown(std::string_view s) {
  std::string out;
  const size_t n = std::min<size_t>(s.size(), 40);
  out.reserve(n + 3);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    out.push_back(c < 0x20 || c == 0x7F ? '?' : static_cast<char>(c));
  }
  if (s.size() > 40) out += "...";
  return out;
}

}  // namespace vw::trace
