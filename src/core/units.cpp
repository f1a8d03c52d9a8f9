#include "core/units.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/ascii.h"

namespace vw {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Reads a non-negative decimal number at the front of `s`; advances `s` past it.
bool TakeNumber(std::string_view& s, double& out) {
  size_t n = 0;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
  if (n == 0) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + n, out);
  if (ec != std::errc() || ptr != s.data() + n) return false;
  s.remove_prefix(n);
  return true;
}

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  const std::string shown(text);
  if (s.empty()) return Status::InvalidArgument("empty duration; expected e.g. 30s, 5m, 2h, 1h30m");
  double total = 0;
  bool any = false;
  while (!s.empty()) {
    double v = 0;
    if (!TakeNumber(s, v)) {
      return Status::InvalidArgument(
          fmt::format("bad duration '{}': expected a number followed by ms, s, m, h or d", shown));
    }
    size_t n = 0;
    while (n < s.size() && std::isalpha(static_cast<unsigned char>(s[n]))) ++n;
    std::string_view unit = s.substr(0, n);
    s.remove_prefix(n);
    double scale;
    if (unit.empty() || unit == "s" || unit == "sec")
      scale = 1;
    else if (unit == "ms")
      scale = 1e-3;
    else if (unit == "m" || unit == "min")
      scale = 60;
    else if (unit == "h")
      scale = 3600;
    else if (unit == "d")
      scale = 86400;
    else {
      return Status::InvalidArgument(
          fmt::format("bad duration '{}': unknown unit '{}' (use ms, s, m, h or d)", shown, unit));
    }
    if (unit.empty() && (any || !s.empty())) {
      return Status::InvalidArgument(fmt::format("bad duration '{}': a unit is missing", shown));
    }
    total += v * scale;
    any = true;
  }
  if (!any || !std::isfinite(total)) return Status::InvalidArgument(fmt::format("bad duration '{}'", shown));
  if (total > kMaxDurationSeconds) {
    return Status::InvalidArgument(fmt::format("bad duration '{}': too large (at most 100 years, 36525d)", shown));
  }
  return total;
}

Result<uint64_t> ParseSize(std::string_view text, SizeUnits units) {
  std::string_view s = Trim(text);
  const std::string shown(text);
  double v = 0;
  if (!TakeNumber(s, v)) {
    return Status::InvalidArgument(
        fmt::format("bad size '{}': expected a number with an optional unit (MiB, GiB, MB, GB)", shown));
  }
  s = Trim(s);
  if (s.empty() && units == SizeUnits::kGpuMemory && v != 0) {
    const std::string number(Trim(text));
    return Status::InvalidArgument(
        fmt::format("bad size '{}': give a unit ({}MiB, or {}B for bytes)", shown, number, number));
  }
  // Units in any case, as the headers and values of a capture take them ("80gib", "512 mb").
  const std::string unit = AsciiLower(s);
  double scale;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "kib" || unit == "k")
    scale = 1024.0;
  else if (unit == "mib" || unit == "m")
    scale = kMiB;
  else if (unit == "gib" || unit == "g")
    scale = kGiB;
  else if (unit == "tib" || unit == "t")
    scale = kGiB * 1024.0;
  else if (unit == "kb")
    scale = units == SizeUnits::kGpuMemory ? 1024.0 : 1e3;
  else if (unit == "mb")
    scale = units == SizeUnits::kGpuMemory ? kMiB : 1e6;
  else if (unit == "gb")
    scale = units == SizeUnits::kGpuMemory ? kGiB : 1e9;
  else if (unit == "tb")
    scale = units == SizeUnits::kGpuMemory ? kGiB * 1024.0 : 1e12;
  else {
    return Status::InvalidArgument(fmt::format(
        "bad size '{}': unknown unit '{}' (use B, KiB, MiB, GiB, TiB, kB, MB, GB, TB, or K, M, G, T for KiB to TiB)",
        shown, s));
  }
  double bytes = v * scale;
  if (!std::isfinite(bytes) || bytes > 1.8e19) {
    return Status::InvalidArgument(fmt::format("bad size '{}': too large", shown));
  }
  return static_cast<uint64_t>(std::round(bytes));
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return seconds > 0 ? "never" : "-";
  std::string sign = seconds < 0 ? "-" : "";
  auto s = static_cast<long long>(std::llround(std::fabs(seconds)));
  long long d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
  if (d > 0) return fmt::format("{}{}d {}h", sign, d, h);
  if (h > 0) return fmt::format("{}{}h {}m", sign, h, m);
  if (m > 0) return fmt::format("{}{}m {}s", sign, m, sec);
  return fmt::format("{}{}s", sign, sec);
}

std::string FormatDurationFlag(double seconds) {
  if (!std::isfinite(seconds)) return FormatDuration(seconds);
  std::string out = seconds < 0 ? "-" : "";
  auto s = static_cast<long long>(std::llround(std::fabs(seconds)));
  if (s == 0) return "0s";
  const std::pair<long long, char> units[] = {{3600, 'h'}, {60, 'm'}, {1, 's'}};
  for (const auto& [size, unit] : units) {
    if (s >= size) out += fmt::format("{}{}", s / size, unit);
    s %= size;
  }
  return out;
}

namespace {

// FormatDuration one unit finer: "4d 20h 16m", "20h 19m 30s"; under an hour as FormatDuration.
std::string FormatDurationFine(double seconds) {
  if (!std::isfinite(seconds)) return FormatDuration(seconds);
  std::string sign = seconds < 0 ? "-" : "";
  auto s = static_cast<long long>(std::llround(std::fabs(seconds)));
  long long d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
  if (d > 0) return fmt::format("{}{}d {}h {}m", sign, d, h, m);
  if (h > 0) return fmt::format("{}{}h {}m {}s", sign, h, m, sec);
  return FormatDuration(seconds);
}

}  // namespace

std::pair<std::string, std::string> FormatDurationRange(double lo_seconds, double hi_seconds) {
  std::string lo = FormatDuration(lo_seconds), hi = FormatDuration(hi_seconds);
  if (lo == hi) return {FormatDurationFine(lo_seconds), FormatDurationFine(hi_seconds)};
  return {lo, hi};
}

std::string FormatBytes(double bytes) {
  double a = std::fabs(bytes);
  if (a >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  if (a >= kMiB) return fmt::format("{:.0f} MiB", bytes / kMiB);
  if (a >= 1024.0) return fmt::format("{:.0f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string FormatRate(double bytes_per_second) {
  double per_hour = bytes_per_second * kSecondsPerHour;
  if (std::fabs(per_hour) >= 10 * kGiB) return fmt::format("{:.1f} GiB/h", per_hour / kGiB);
  if (std::fabs(per_hour) >= 10 * kMiB) return fmt::format("{:.0f} MiB/h", per_hour / kMiB);
  return fmt::format("{:.1f} MiB/h", per_hour / kMiB);
}

}  // namespace vw
