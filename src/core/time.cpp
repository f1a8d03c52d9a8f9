#include "core/time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace vw {

namespace {

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The wall clock and the steady clock read together at SteadyWallNow's first use.
struct ClockAnchor {
  double wall = SystemNow();
  std::chrono::steady_clock::time_point steady = std::chrono::steady_clock::now();
};

const ClockAnchor& Anchor() {
  static const ClockAnchor anchor;  // initialised once, thread-safe
  return anchor;
}

}  // namespace

double SteadyWallNow() {
  const ClockAnchor& a = Anchor();
  return a.wall + std::chrono::duration<double>(std::chrono::steady_clock::now() - a.steady).count();
}

double SystemClockStep() {
  const double steady_wall = SteadyWallNow();
  return SystemNow() - steady_wall;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Reads exactly `width` digits (or 1..width when width_min < width).
bool TakeInt(std::string_view& s, size_t width_min, size_t width_max, int& out) {
  size_t n = 0;
  while (n < s.size() && n < width_max && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n < width_min) return false;
  out = 0;
  for (size_t i = 0; i < n; ++i) out = out * 10 + (s[i] - '0');
  s.remove_prefix(n);
  return true;
}

bool TakeChar(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

bool ValidDateTime(int y, int mo, int d, int h, int mi, int se) {
  return y >= 1970 && y <= 9999 && ValidCivilDate(y, mo, d) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 &&
         se <= 60;
}

double Compose(int y, int mo, int d, int h, int mi, int se, double frac) {
  return static_cast<double>(DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
         h * 3600.0 + mi * 60.0 + se + frac;
}

// ".696" -> 0.696; advances past the digits.
double TakeFraction(std::string_view& s) {
  if (s.empty() || (s.front() != '.' && s.front() != ',')) return 0;
  s.remove_prefix(1);
  double frac = 0, scale = 0.1;
  while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.front()))) {
    frac += (s.front() - '0') * scale;
    scale /= 10;
    s.remove_prefix(1);
  }
  return frac;
}

Result<Timestamp> ParseCtime(std::string_view s, const std::string& shown) {
  // "Tue Oct 29 19:00:23 2024"
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() < 20) return Status::ParseError("bad timestamp '" + shown + "'");
  s.remove_prefix(4);  // weekday and space
  int mo = 0;
  for (int i = 0; i < 12; ++i) {
    if (s.substr(0, 3) == kMonths[static_cast<size_t>(i)]) mo = i + 1;
  }
  if (mo == 0) return Status::ParseError("bad timestamp '" + shown + "': unknown month");
  s.remove_prefix(3);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  int d, h, mi, se, y;
  if (!TakeInt(s, 1, 2, d) || !TakeChar(s, ' ') || !TakeInt(s, 2, 2, h) || !TakeChar(s, ':') || !TakeInt(s, 2, 2, mi) ||
      !TakeChar(s, ':') || !TakeInt(s, 2, 2, se) || !TakeChar(s, ' ') || !TakeInt(s, 4, 4, y) || !Trim(s).empty() ||
      !ValidDateTime(y, mo, d, h, mi, se)) {
    return Status::ParseError("bad timestamp '" + shown + "': expected e.g. 'Tue Oct 29 19:00:23 2024'");
  }
  return Timestamp{Compose(y, mo, d, h, mi, se, 0), false};
}

}  // namespace

bool ValidCivilDate(int year, int month, int day) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int last = month == 2 && leap ? 29 : kDays[static_cast<size_t>(month - 1)];
  return day <= last;
}

long long DaysFromCivil(int year, unsigned month, unsigned day) {
  // Howard Hinnant's well-known days_from_civil algorithm (public domain arithmetic).
  year -= month <= 2 ? 1 : 0;
  const long long era = (year >= 0 ? year : year - 399) / 400;
  const auto yoe = static_cast<unsigned>(year - era * 400);
  const unsigned doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

bool PlausibleTime(double seconds) {
  return std::isfinite(seconds) && std::fabs(seconds) < kTimestampLimitSeconds;
}

namespace {

// Written as epoch seconds: only digits and dots (so not shaped like a date).
bool EpochShaped(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// The value of text shaped as epoch seconds: +inf when it has too many digits for a double,
// nullopt when it is no number ("1.2.3", ".").
std::optional<double> EpochValue(std::string_view s) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) return std::numeric_limits<double>::infinity();
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

bool EpochBeyondRange(std::string_view text) {
  const std::string_view s = Trim(text);
  if (!EpochShaped(s)) return false;
  const std::optional<double> v = EpochValue(s);
  return v && !PlausibleTime(*v);
}

Result<Timestamp> ParseTimestamp(std::string_view text) {
  std::string_view s = Trim(text);
  const std::string shown(s);
  if (s.empty()) return Status::ParseError("empty timestamp");
  if (std::isalpha(static_cast<unsigned char>(s.front()))) return ParseCtime(s, shown);

  // Epoch seconds: only digits and at most one dot, and not shaped like a date.
  if (EpochShaped(s)) {
    const std::optional<double> v = EpochValue(s);
    if (!v) return Status::ParseError("bad timestamp '" + shown + "': expected epoch seconds");
    if (!PlausibleTime(*v)) {
      const bool millis = *v < 1000 * kTimestampLimitSeconds;  // 1764189075000: a time in milliseconds
      return Status::ParseError("bad timestamp '" + shown + "': epoch seconds after the year 9999" +
                                (millis ? " (milliseconds? seconds are expected)" : ""));
    }
    return Timestamp{*v, true};
  }

  int y, mo, d, h = 0, mi = 0, se = 0;
  // dmon/pmon: "20261129 19:11:56" (the date without separators, then the time of day).
  if (s.size() > 9 && s[8] == ' ' &&
      std::all_of(s.begin(), s.begin() + 8, [](char c) { return c >= '0' && c <= '9'; })) {
    std::string_view rest = s.substr(9);
    if (!TakeInt(s, 4, 4, y) || !TakeInt(s, 2, 2, mo) || !TakeInt(s, 2, 2, d)) {
      return Status::ParseError("bad timestamp '" + shown + "': bad date");
    }
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!TakeInt(rest, 1, 2, h) || !TakeChar(rest, ':') || !TakeInt(rest, 2, 2, mi) || !TakeChar(rest, ':') ||
        !TakeInt(rest, 2, 2, se) || !Trim(rest).empty()) {
      return Status::ParseError("bad timestamp '" + shown + "': expected YYYYMMDD HH:MM:SS (dmon/pmon)");
    }
    if (!ValidDateTime(y, mo, d, h, mi, se)) {
      return Status::ParseError("bad timestamp '" + shown + "': no such date or time");
    }
    return Timestamp{Compose(y, mo, d, h, mi, se, 0), false};
  }
  if (!TakeInt(s, 4, 4, y) || s.empty() || (s.front() != '/' && s.front() != '-')) {
    return Status::ParseError("bad timestamp '" + shown + "': expected " + std::string(kTimestampForms));
  }
  char sep = s.front();
  s.remove_prefix(1);
  if (!TakeInt(s, 1, 2, mo) || !TakeChar(s, sep) || !TakeInt(s, 1, 2, d)) {
    return Status::ParseError("bad timestamp '" + shown + "': bad date");
  }
  double frac = 0;
  if (!s.empty() && (s.front() == ' ' || s.front() == 'T' || s.front() == '_')) {
    s.remove_prefix(1);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    if (!TakeInt(s, 1, 2, h) || !TakeChar(s, ':') || !TakeInt(s, 2, 2, mi)) {
      return Status::ParseError("bad timestamp '" + shown + "': bad time of day");
    }
    if (TakeChar(s, ':') && !TakeInt(s, 2, 2, se)) {
      return Status::ParseError("bad timestamp '" + shown + "': bad seconds");
    }
    frac = TakeFraction(s);
  }
  if (!ValidDateTime(y, mo, d, h, mi, se)) {
    return Status::ParseError("bad timestamp '" + shown + "': no such date or time (a field is out of range)");
  }
  double t = Compose(y, mo, d, h, mi, se, frac);
  s = Trim(s);
  if (s.empty()) return Timestamp{t, false};
  if (s == "Z" || s == "z" || s == "UTC") return Timestamp{t, true};
  if (s.front() == '+' || s.front() == '-') {
    int sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
    int oh = 0, om = 0;
    if (!TakeInt(s, 2, 2, oh)) return Status::ParseError("bad timestamp '" + shown + "': bad zone offset");
    TakeChar(s, ':');
    if (!s.empty() && !TakeInt(s, 2, 2, om)) {
      return Status::ParseError("bad timestamp '" + shown + "': bad zone offset");
    }
    if (!s.empty() || oh > 23 || om > 59) {
      return Status::ParseError("bad timestamp '" + shown + "': bad zone offset");
    }
    return Timestamp{t - sign * (oh * 3600.0 + om * 60.0), true};
  }
  return Status::ParseError("bad timestamp '" + shown + "': unexpected text after the time");
}

std::string FormatIso8601(double seconds, bool with_zone) {
  double whole = std::floor(seconds);
  auto ms = static_cast<int>(std::lround((seconds - whole) * 1000.0));
  auto s = static_cast<long long>(whole);
  if (ms == 1000) {
    ms = 0;
    ++s;
  }
  long long days = s >= 0 ? s / 86400 : (s - 86399) / 86400;
  long long rem = s - days * 86400;
  // civil_from_days (inverse of DaysFromCivil).
  long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long y = static_cast<long long>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  std::string out =
      fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", y, m, d, rem / 3600, (rem % 3600) / 60, rem % 60);
  if (ms != 0) out += fmt::format(".{:03d}", ms);
  if (with_zone) out += "Z";
  return out;
}

std::string FormatClock(double seconds) {
  std::string iso = FormatIso8601(std::floor(seconds / 60.0) * 60.0, false);
  iso[10] = ' ';
  return iso.substr(0, 16);
}

}  // namespace vw
