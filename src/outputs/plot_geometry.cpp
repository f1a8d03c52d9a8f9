// Scales, ticks, label boxes and placement, and the leak projection (see plot_geometry.h).
#include "outputs/plot_geometry.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "core/time.h"
#include "core/units.h"

namespace vw::outputs {

bool Rect::Intersects(const Rect& o) const {
  return x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
}

bool Rect::Contains(const Rect& o) const {
  constexpr double kSlack = 1e-6;
  return o.x >= x - kSlack && o.y >= y - kSlack && o.right() <= right() + kSlack && o.bottom() <= bottom() + kSlack;
}

double LinearScale::operator()(double v) const {
  if (d1_ == d0_) return r0_;
  return r0_ + (v - d0_) / (d1_ - d0_) * (r1_ - r0_);
}

double LinearScale::Invert(double px) const {
  if (r1_ == r0_) return d0_;
  return d0_ + (px - r0_) / (r1_ - r0_) * (d1_ - d0_);
}

double NiceStep(double span, int max_intervals) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  max_intervals = std::max(1, max_intervals);
  double raw = span / max_intervals;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  }
  return 10 * mag;
}

namespace {

// Decimals needed to print multiples of `step` exactly (step in display units).
int DecimalsFor(double step) {
  for (int d = 0; d < 4; ++d) {
    double scaled = step * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6) return d;
  }
  return 4;
}

struct CivilTime {
  int year, month, day, hour, minute, second;
};

CivilTime ToCivil(double seconds) {
  auto whole = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  return {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::string ElapsedLabel(double seconds) {
  if (std::fabs(seconds) < 0.5) return "0";
  std::string sign = seconds < 0 ? "-" : "";
  auto s = static_cast<long long>(std::llround(std::fabs(seconds)));
  long long d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
  std::string out;
  auto part = [&](long long v, const char* unit) {
    if (v == 0) return;
    if (!out.empty()) out += ' ';
    out += fmt::format("{}{}", v, unit);
  };
  part(d, "d");
  part(h, "h");
  part(m, "m");
  part(sec, "s");
  return sign + out;
}

}  // namespace

std::vector<Tick> BytesTicks(double lo, double hi, int max_intervals) {
  std::vector<Tick> ticks;
  if (!(hi > lo)) return ticks;
  const bool gib = std::max(std::fabs(lo), std::fabs(hi)) >= kGiB;
  const double unit = gib ? kGiB : kMiB;
  const char* unit_name = gib ? "GiB" : "MiB";
  double step = NiceStep((hi - lo) / unit, max_intervals);
  int decimals = DecimalsFor(step);
  for (double k = std::ceil(lo / unit / step - 1e-9); k * step <= hi / unit + 1e-9; k += 1) {
    double v = k * step + 0.0;
    if (std::fabs(v) < step * 1e-9) v = 0;  // never "-0 GiB"
    ticks.push_back({v * unit, fmt::format("{:.{}f} {}", v, decimals, unit_name)});
  }
  return ticks;
}

std::vector<Tick> TimeTicks(double lo, double hi, int max_intervals, TimeLabels style, double label_offset_s) {
  static constexpr std::array<double, 21> kSteps = {
      1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400, 172800, 604800};
  std::vector<Tick> ticks;
  if (!(hi > lo)) return ticks;
  max_intervals = std::max(1, max_intervals);
  double step = kSteps.back();
  for (double s : kSteps) {
    if ((hi - lo) / s <= max_intervals) {
      step = s;
      break;
    }
  }
  const double offset = style == TimeLabels::kClock ? label_offset_s : 0;
  for (double k = std::ceil((lo + offset) / step - 1e-9); k * step <= hi + offset + 1e-9; k += 1) {
    double shifted = k * step;
    std::string label;
    if (style == TimeLabels::kElapsed) {
      label = ElapsedLabel(shifted);
    } else {
      CivilTime c = ToCivil(shifted);
      bool midnight = c.hour == 0 && c.minute == 0 && c.second == 0;
      if (step >= 86400 || midnight) {
        label = fmt::format("{} {}", kMonths[c.month - 1], c.day);
      } else if (step < 60) {
        label = fmt::format("{:02}:{:02}:{:02}", c.hour, c.minute, c.second);
      } else {
        label = fmt::format("{:02}:{:02}", c.hour, c.minute);
      }
    }
    ticks.push_back({shifted - offset, std::move(label)});
  }
  return ticks;
}

double TextWidth(std::string_view text, double font_px) {
  size_t glyphs = 0;
  for (unsigned char ch : text) {
    if ((ch & 0xC0) != 0x80) ++glyphs;  // count UTF-8 code points, not bytes
  }
  return static_cast<double>(glyphs) * font_px * 0.62;
}

Rect LabelBox(std::string_view text, double font_px, Anchor anchor, Point at) {
  double w = TextWidth(text, font_px);
  double x = at.x;
  if (anchor == Anchor::kMiddle) x -= w / 2;
  if (anchor == Anchor::kEnd) x -= w;
  return {x, at.y - 0.8 * font_px, w, 1.05 * font_px};
}

std::vector<PlacedLabel> PlaceLabels(const std::vector<LabelRequest>& requests, const Rect& bounds,
                                     const std::vector<Rect>& occupied) {
  std::vector<PlacedLabel> placed;
  std::vector<Rect> taken = occupied;
  for (const LabelRequest& r : requests) {
    for (const LabelSpot& spot : r.candidates) {
      Rect box = LabelBox(r.text, r.font_px, spot.anchor, spot.at);
      if (!bounds.Contains(box)) continue;
      bool clash = std::any_of(taken.begin(), taken.end(), [&](const Rect& t) { return t.Intersects(box); });
      if (clash) continue;
      placed.push_back({r.text, r.role, spot.anchor, r.font_px, spot.at, box});
      taken.push_back(box);
      break;
    }
  }
  return placed;
}

std::optional<Projection> ProjectToCapacity(const detection::Assessment& a) {
  if (a.verdict != detection::Verdict::kLeak || !a.tto_s || !a.capacity_bytes) return std::nullopt;
  if (!std::isfinite(*a.tto_s) || *a.tto_s < 0) return std::nullopt;
  Projection p;
  p.t_start = a.end_t;
  p.capacity = *a.capacity_bytes;
  if (a.peak_bytes) {
    p.y_start = *a.peak_bytes;
  } else if (a.trend) {
    p.y_start = a.trend->y0_bytes + a.trend->slope_bps * (a.end_t - a.trend->t0);
  } else if (a.last_used_bytes) {
    p.y_start = *a.last_used_bytes;
  } else {
    return std::nullopt;
  }
  p.t_oom = a.end_t + *a.tto_s;
  // The drawn slope is what makes the line meet the capacity at the reported time; it equals the
  // reported rate when the engine computed tto as (capacity - peak) / rate.
  p.rate_bps = *a.tto_s > 0 ? (p.capacity - p.y_start) / *a.tto_s : (a.rate_bps ? *a.rate_bps : 0);
  if (a.tto_lo_s && std::isfinite(*a.tto_lo_s)) p.t_oom_early = a.end_t + *a.tto_lo_s;
  if (a.tto_hi_s && std::isfinite(*a.tto_hi_s)) p.t_oom_late = a.end_t + *a.tto_hi_s;
  return p;
}

std::vector<Rect> SmallMultiples(size_t n, double total_width, double cell_height, double min_cell_width, double gap) {
  std::vector<Rect> cells;
  if (n == 0) return cells;
  size_t cols = static_cast<size_t>(std::max(1.0, std::floor((total_width + gap) / (min_cell_width + gap))));
  cols = std::min(cols, n);
  double cell_w = (total_width - static_cast<double>(cols - 1) * gap) / static_cast<double>(cols);
  for (size_t i = 0; i < n; ++i) {
    size_t row = i / cols, col = i % cols;
    cells.push_back({static_cast<double>(col) * (cell_w + gap), static_cast<double>(row) * (cell_height + gap), cell_w,
                     cell_height});
  }
  return cells;
}

std::string VerdictText(detection::Verdict v) {
  switch (v) {
    case detection::Verdict::kLeak: return "leak";
    case detection::Verdict::kPlateau: return "plateau";
    case detection::Verdict::kSettling: return "settling";
    case detection::Verdict::kWarmup: return "warm-up";
    case detection::Verdict::kInsufficientData: return "insufficient data";
  }
  return "unknown";
}

std::string VerdictKey(detection::Verdict v) {
  switch (v) {
    case detection::Verdict::kLeak: return "leak";
    case detection::Verdict::kPlateau: return "plateau";
    case detection::Verdict::kSettling: return "settling";
    case detection::Verdict::kWarmup: return "warmup";
    case detection::Verdict::kInsufficientData: return "insufficient_data";
  }
  return "unknown";
}

std::string SeriesName(const detection::SeriesAnalysis& s) {
  std::string gpu = "GPU " + (s.gpu.key.empty() ? (s.gpu.index ? std::to_string(*s.gpu.index) : "?") : s.gpu.key);
  if (s.pid) {
    std::string out = fmt::format("{} · pid {}", gpu, *s.pid);
    if (!s.process_command.empty()) out += " " + s.process_command;
    return out;
  }
  if (!s.gpu.name.empty()) gpu += " · " + s.gpu.name;
  return gpu;
}

std::string ZoneMark(bool has_zone, bool synthetic, double label_offset_s) {
  if (synthetic || !has_zone) return "";
  const long minutes = std::lround(label_offset_s / 60);
  if (minutes == 0) return " UTC";
  return fmt::format(" UTC{}{:02}:{:02}", minutes < 0 ? '-' : '+', std::labs(minutes) / 60, std::labs(minutes) % 60);
}

std::string ReportTime(const detection::SeriesAnalysis& s, double t, double label_offset_s) {
  if (s.synthetic_time) return "t+" + FormatDuration(t);
  const double off = s.has_zone ? label_offset_s : 0;
  return FormatClock(t + off) + ZoneMark(s.has_zone, false, off);
}

std::string RateText(const detection::Assessment& a) {
  if (!a.rate_bps) return "";
  std::string out = FormatRate(*a.rate_bps);
  if (a.rate_lo_bps && a.rate_hi_bps)
    out += fmt::format(" (90 % range {} … {})", FormatRate(*a.rate_lo_bps), FormatRate(*a.rate_hi_bps));
  return out;
}

std::string OomAtText(const detection::SeriesAnalysis& s, double label_offset_s) {
  const detection::Assessment& a = s.assessment;
  if (!a.tto_s) return "";
  return fmt::format("{} (at {})", FormatDuration(*a.tto_s), ReportTime(s, a.end_t + *a.tto_s, label_offset_s));
}

std::string OomText(const detection::SeriesAnalysis& s, double label_offset_s) {
  const std::string at = OomAtText(s, label_offset_s), range = OomRangeText(s.assessment);
  return range.empty() || at.empty() ? at : at + ", " + range;
}

std::string OomRangeText(const detection::Assessment& a) {
  if (!a.tto_lo_s) return "";
  if (!a.tto_hi_s) return fmt::format("range {} … never", FormatDuration(*a.tto_lo_s));
  const auto [lo, hi] = FormatDurationRange(*a.tto_lo_s, *a.tto_hi_s);
  return fmt::format("range {} … {}", lo, hi);
}

}  // namespace vw::outputs
