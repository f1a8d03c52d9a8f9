// LayoutChart: where every part of one memory chart goes (see plot_geometry.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "core/time.h"
#include "core/units.h"
#include "outputs/plot_geometry.h"

namespace vw::outputs {
namespace {

using detection::SeriesAnalysis;
using detection::Verdict;

}  // namespace

std::string FitText(std::string text, double width, double font_px) {
  if (TextWidth(text, font_px) <= width) return text;
  // The longest prefix of whole code points that fits with the "…". TextWidth grows by the same
  // amount per code point, so the count is computed once and then checked (a step either way at
  // most, for rounding): shortening one code point at a time and measuring again was quadratic
  // (a minute for a 400 KB command line).
  std::vector<size_t> starts;  // byte offset of each code point
  starts.reserve(std::min<size_t>(text.size(), 4096));
  const double per = TextWidth("x", font_px);
  const size_t want = per > 0 ? static_cast<size_t>(std::max(0.0, std::floor(width / per))) + 1 : 0;
  for (size_t i = 0; i < text.size() && starts.size() <= want; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  auto prefix = [&](size_t n) { return n < starts.size() ? text.substr(0, starts[n]) : text; };
  size_t n = want > 0 ? want - 1 : 0;  // code points kept, the "…" being one more
  while (n > 0 && TextWidth(prefix(n) + "…", font_px) > width) --n;
  while (n + 1 < starts.size() && TextWidth(prefix(n + 1) + "…", font_px) <= width) ++n;
  return prefix(n) + "…";
}

std::vector<Point> DecimateByColumn(const std::vector<Point>& pts) {
  std::vector<Point> out;
  size_t i = 0;
  while (i < pts.size()) {
    double column = std::floor(pts[i].x);
    size_t first = i, lo = i, hi = i, last = i;
    while (i < pts.size() && std::floor(pts[i].x) == column) {
      if (pts[i].y > pts[lo].y) lo = i;  // y grows downwards: larger y is less memory
      if (pts[i].y < pts[hi].y) hi = i;
      last = i;
      ++i;
    }
    std::vector<size_t> keep = {first, lo, hi, last};
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    for (size_t k : keep) out.push_back(pts[k]);
  }
  return out;
}

std::vector<std::string> WrapParts(const std::vector<std::string>& parts, double width, double font_px,
                                   size_t max_lines) {
  std::vector<std::string> lines;
  for (const auto& part : parts) {
    if (!lines.empty() && TextWidth(lines.back() + " · " + part, font_px) <= width) {
      lines.back() += " · " + part;
    } else {
      lines.push_back(part);
    }
  }
  if (lines.size() > max_lines) {
    for (size_t i = max_lines; i < lines.size(); ++i) lines[max_lines - 1] += " · " + lines[i];
    lines.resize(max_lines);
  }
  for (auto& l : lines) l = FitText(l, width, font_px);
  return lines;
}

std::vector<LegendItem> FlowLegend(const std::vector<std::pair<std::string, std::string>>& entries, double left,
                                   double right, double font_px, double* row_y) {
  std::vector<LegendItem> items;
  double lx = left, ly = *row_y;
  for (const auto& [role, text] : entries) {
    double item_w = 22 + TextWidth(text, font_px);
    if (lx + item_w > right && lx > left) {
      lx = left;
      ly += kLegendRowPx;
    }
    LegendItem item;
    item.role = role;
    item.text = text;
    bool area = role == "band" || role == "warmup";
    item.swatch = area ? Rect{lx, ly + 3, 16, 9} : Rect{lx, ly + 6, 16, 3};
    Point at{lx + 20, ly + 11};
    item.label = {text, "legend", Anchor::kStart, font_px, at, LabelBox(text, font_px, Anchor::kStart, at)};
    items.push_back(item);
    lx += item_w + 14;
  }
  *row_y = ly;
  return items;
}

void PlaceXTicks(const std::function<std::vector<Tick>(int)>& ticks, const LinearScale& x, const Rect& plot,
                 double width, double font_px, std::vector<Tick>* out, std::vector<PlacedLabel>* labels) {
  for (int n = std::max(2, static_cast<int>(plot.w / 70)); n >= 1; --n) {
    out->clear();
    labels->clear();
    bool clash = false;
    for (const auto& t : ticks(n)) {
      Point at{x(t.value), plot.bottom() + font_px + 5};
      Rect box = LabelBox(t.label, font_px, Anchor::kMiddle, at);
      if (box.x < 0 || box.right() > width) continue;
      Rect padded{box.x - 6, box.y, box.w + 12, box.h};
      for (const auto& prev : *labels) clash = clash || prev.box.Intersects(padded);
      out->push_back(t);
      labels->push_back({t.label, "xtick", Anchor::kMiddle, font_px, at, box});
    }
    if (!clash) break;
  }
}

void LayoutFrame(const FrameSpec& spec, const ChartOptions& o, ChartFrame* f) {
  const double fp = o.font_px;
  const double pad = 10, right_margin = 14;
  f->width = o.width;
  f->height = o.height;
  f->title = FitText(spec.title, o.width - 2 * pad, o.title_px);
  f->title_at = {pad, pad + o.title_px};
  f->subtitle_lines = WrapParts(spec.subtitle_parts, o.width - 2 * pad, fp + 1, spec.max_subtitle_lines);
  f->subtitle_at = {pad, f->title_at.y + fp + 7};
  const double subtitle_bottom =
      f->subtitle_at.y + static_cast<double>(std::max<size_t>(1, f->subtitle_lines.size()) - 1) * (fp + 4);

  // Y ticks decide the left margin; the legend flows in rows under the subtitle.
  f->y_ticks = BytesTicks(0, spec.y_hi, 6);
  double ylab_w = 0;
  for (const auto& t : f->y_ticks) ylab_w = std::max(ylab_w, TextWidth(t.label, fp));
  const double left = pad + ylab_w + 8;
  double ly = subtitle_bottom + 8;
  f->legend = FlowLegend(spec.legend, left, o.width - right_margin, fp, &ly);

  const double top = ly + kLegendRowPx + 6;
  const double bottom = o.height - (2 * fp + 18);
  f->plot = {left, top, std::max(10.0, o.width - right_margin - left), std::max(10.0, bottom - top)};
  f->x = LinearScale(spec.x_lo, spec.x_hi, f->plot.x, f->plot.right());
  f->y = LinearScale(0, spec.y_hi, f->plot.bottom(), f->plot.y);

  // Y tick labels right-aligned against the plot; x ticks as many as fit without their labels
  // touching (a tick whose label would leave the chart is dropped with its label).
  f->y_tick_labels.clear();
  for (const auto& t : f->y_ticks) {
    Point at{f->plot.x - 6, f->y(t.value) + 0.35 * fp};
    f->y_tick_labels.push_back({t.label, "ytick", Anchor::kEnd, fp, at, LabelBox(t.label, fp, Anchor::kEnd, at)});
  }
  PlaceXTicks(spec.x_ticks, f->x, f->plot, o.width, fp, &f->x_ticks, &f->x_tick_labels);
  Point xt_at{f->plot.x + f->plot.w / 2, o.height - 6};
  f->x_title = {spec.x_title, "xtitle", Anchor::kMiddle, fp, xt_at, LabelBox(spec.x_title, fp, Anchor::kMiddle, xt_at)};
}

std::vector<LabelSpot> MarkLabelSpots(double x, const Rect& plot, double font_px, int rows) {
  std::vector<LabelSpot> spots;
  for (int row = 0; row < rows; ++row) {
    const double y = plot.y + font_px + 3 + row * (font_px + 4);
    spots.push_back({{x + 3, y}, Anchor::kStart});
    spots.push_back({{x - 3, y}, Anchor::kEnd});
  }
  return spots;
}

std::vector<size_t> GapStarts(const std::vector<double>& times) {
  std::vector<double> steps;
  for (size_t i = 1; i < times.size(); ++i) {
    if (times[i] > times[i - 1]) steps.push_back(times[i] - times[i - 1]);
  }
  std::vector<size_t> out;
  if (steps.empty()) return out;
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
  const double gap = std::max(5 * steps[steps.size() / 2], 60.0);
  for (size_t i = 1; i < times.size(); ++i) {
    if (times[i] - times[i - 1] > gap) out.push_back(i);
  }
  return out;
}

namespace {

// The verdict with its numbers, as " · "-separated parts.
std::vector<std::string> SubtitleParts(const SeriesAnalysis& s, const ChartOptions& o) {
  const auto& a = s.assessment;
  auto when = [&](double t) { return ReportTime(s, t, o.label_offset_s); };
  std::vector<std::string> parts;
  if (!o.source.empty()) parts.push_back(o.source);
  switch (a.verdict) {
    case Verdict::kLeak: {
      parts.push_back(a.rate_bps ? "leak " + RateText(a) : "leak");
      if (a.leak_start_t) parts.push_back("since " + when(*a.leak_start_t));
      if (a.tto_s) {
        parts.push_back("OOM in " + OomAtText(s, o.label_offset_s));
        if (a.tto_lo_s) parts.push_back(OomRangeText(a));
      } else if (!a.capacity_bytes) {
        parts.push_back("capacity unknown: no OOM forecast");
      }
      break;
    }
    case Verdict::kPlateau:
      parts.push_back("plateau");
      if (a.floor_bytes) parts.push_back("floor " + FormatBytes(*a.floor_bytes));
      if (a.peak_bytes) parts.push_back("peak " + FormatBytes(*a.peak_bytes));
      if (a.capacity_bytes && a.peak_bytes)
        parts.push_back("headroom " + FormatBytes(*a.capacity_bytes - *a.peak_bytes));
      if (a.settled_at) parts.push_back("settled " + when(*a.settled_at));
      break;
    case Verdict::kSettling: parts.push_back("settling: growth is slowing down, no verdict yet"); break;
    case Verdict::kWarmup: parts.push_back("warm-up: still in the initial ramp"); break;
    case Verdict::kInsufficientData:
      parts.push_back(
          fmt::format("insufficient data: {} samples over {}", a.samples, FormatDuration(a.end_t - a.start_t)));
      break;
  }
  return parts;
}

struct Domain {
  double t_lo = 0, t_hi = 1, data_end = 1;
  double y_hi = kGiB;
};

Domain ComputeDomain(const SeriesAnalysis& s, const std::optional<Projection>& proj, const ChartOptions& o) {
  const auto& a = s.assessment;
  Domain d;
  bool any = false;
  double lo = 0, hi = 0, ymax = 0;
  auto take_t = [&](double t) {
    lo = any ? std::min(lo, t) : t;
    hi = any ? std::max(hi, t) : t;
    any = true;
  };
  for (const auto& p : s.raw) {
    take_t(p.t);
    ymax = std::max(ymax, p.used_bytes);
  }
  for (const auto& b : s.buckets) {
    take_t(b.t_start);
    take_t(b.t_end);
    ymax = std::max(ymax, b.peak_bytes);
  }
  if (a.samples > 0) {
    take_t(a.start_t);
    take_t(a.end_t);
  }
  if (!any) {
    lo = 0;
    hi = 3600;
  }
  if (hi - lo < 60) hi = lo + 60;
  const double span = hi - lo;
  d.t_lo = lo;
  d.data_end = hi;
  double t_hi = hi + 0.02 * span;
  if (proj) {
    double horizon = hi + o.max_projection_spans * span;
    if (proj->t_oom <= horizon) {
      t_hi = std::max(hi, proj->t_oom);
      if (proj->t_oom_late && *proj->t_oom_late <= horizon) t_hi = std::max(t_hi, *proj->t_oom_late);
      t_hi += 0.04 * (t_hi - lo);
    } else {
      t_hi = hi + 0.15 * span;  // room for the forecast's start and the note
    }
  }
  d.t_hi = t_hi;
  if (a.capacity_bytes) ymax = std::max(ymax, *a.capacity_bytes);
  if (s.total_bytes) ymax = std::max(ymax, static_cast<double>(*s.total_bytes));
  if (a.peak_bytes) ymax = std::max(ymax, *a.peak_bytes);
  d.y_hi = ymax > 0 ? ymax * 1.10 : kGiB;  // room for a label above the capacity line
  return d;
}

}  // namespace

ChartLayout LayoutChart(const SeriesAnalysis& s, const ChartOptions& o) {
  const auto& a = s.assessment;
  ChartLayout L;
  const double fp = o.font_px;
  const double label_off = s.has_zone ? o.label_offset_s : 0;
  const TimeLabels tstyle = s.synthetic_time ? TimeLabels::kElapsed : TimeLabels::kClock;

  std::optional<Projection> proj = ProjectToCapacity(a);
  Domain dom = ComputeDomain(s, proj, o);

  FrameSpec spec;
  spec.title = SeriesName(s) + " — " + VerdictText(a.verdict);
  spec.subtitle_parts = SubtitleParts(s, o);
  for (const auto& part : spec.subtitle_parts) L.subtitle += (L.subtitle.empty() ? "" : " · ") + part;
  spec.legend = {{"raw", "used"}};
  if (!s.buckets.empty()) {
    spec.legend.push_back({"floor", "floor"});
    spec.legend.push_back({"peak", "peak"});
  }
  const bool draw_trend = a.trend && a.verdict == Verdict::kLeak;
  if (draw_trend) spec.legend.push_back({"trend", "fitted trend"});
  if (proj) spec.legend.push_back({"band", "forecast & range"});
  if (a.capacity_bytes) spec.legend.push_back({"capacity", "capacity"});
  bool shade = a.settled_at.has_value() || a.verdict == Verdict::kWarmup || a.verdict == Verdict::kSettling;
  if (shade) spec.legend.push_back({"warmup", a.verdict == Verdict::kSettling ? "settling" : "warm-up"});
  if (!s.events.empty()) spec.legend.push_back({"event", "events"});
  spec.x_lo = dom.t_lo;
  spec.x_hi = dom.t_hi;
  spec.y_hi = dom.y_hi;
  spec.x_ticks = [&](int n) { return TimeTicks(dom.t_lo, dom.t_hi, n, tstyle, label_off); };
  if (s.synthetic_time) {
    spec.x_title = "time since the start of the trace";
  } else {
    std::string date = FormatClock(dom.t_lo + label_off).substr(0, 10);
    // The zone as the text and HTML reports mark clock times: "UTC", or "UTC+02:00" at an offset.
    const std::string zone = ZoneMark(s.has_zone, false, label_off);
    spec.x_title = zone.empty() ? fmt::format("local time (as recorded) · {}", date)
                                : fmt::format("time ({}) · {}", zone.substr(1), date);
  }
  LayoutFrame(spec, o, &L);

  // Data, each line in stretches between gaps (decimated stretch by stretch, so no point of one
  // stretch is joined to the next).
  std::vector<double> times;
  times.reserve(s.raw.size());
  for (const auto& p : s.raw) times.push_back(p.t);
  std::vector<size_t> cuts = GapStarts(times);
  cuts.push_back(s.raw.size());
  for (size_t from = 0, c = 0; c < cuts.size(); from = cuts[c++]) {
    std::vector<Point> stretch;
    for (size_t i = from; i < cuts[c]; ++i) stretch.push_back({L.x(s.raw[i].t), L.y(s.raw[i].used_bytes)});
    if (stretch.empty()) continue;
    if (!L.raw.empty()) L.raw_breaks.push_back(L.raw.size());
    for (const Point& p : DecimateByColumn(stretch)) L.raw.push_back(p);
  }
  times.clear();
  for (const auto& b : s.buckets) {
    double tm = (b.t_start + b.t_end) / 2;
    times.push_back(tm);
    L.floor.push_back({L.x(tm), L.y(b.floor_bytes)});
    L.peak.push_back({L.x(tm), L.y(b.peak_bytes)});
  }
  L.envelope_breaks = GapStarts(times);
  if (shade) {
    double t_end = a.settled_at ? *a.settled_at : dom.data_end;
    double x0 = L.x(dom.t_lo), x1 = std::clamp(L.x(t_end), L.plot.x, L.plot.right());
    if (x1 > x0) L.warmup = Rect{x0, L.plot.y, x1 - x0, L.plot.h};
  }
  if (a.capacity_bytes) L.capacity_y = L.y(*a.capacity_bytes);
  if (draw_trend) {
    const auto& f = *a.trend;
    double t_a = std::max(dom.t_lo, a.leak_start_t ? *a.leak_start_t : f.t0);
    double t_b = a.samples > 0 ? a.end_t : dom.data_end;
    if (t_b > t_a) {
      L.trend = {{L.x(t_a), L.y(f.y0_bytes + f.slope_bps * (t_a - f.t0))},
                 {L.x(t_b), L.y(f.y0_bytes + f.slope_bps * (t_b - f.t0))}};
    }
  }

  // Forecast: the line to the capacity, clipped at the right edge, and the fan of its range.
  std::vector<LabelRequest> requests;
  if (proj) {
    const double t_hi = dom.t_hi;
    auto at_time = [&](double rate, double t) { return proj->y_start + rate * (t - proj->t_start); };
    Point start{L.x(proj->t_start), L.y(proj->y_start)};
    double end_t = std::min(proj->t_oom, t_hi);
    L.projection = {start, {L.x(end_t), L.y(at_time(proj->rate_bps, end_t))}};
    // Drawn back over the leak's stretch, the same line runs along the tops of the spikes.
    double back_t = std::max(dom.t_lo, a.leak_start_t ? *a.leak_start_t : (a.trend ? a.trend->t0 : proj->t_start));
    if (back_t < proj->t_start) {
      L.projection_back = {{L.x(back_t), L.y(at_time(proj->rate_bps, back_t))}, start};
    }
    double early = proj->t_oom_early.value_or(proj->t_oom);
    double fast = early > proj->t_start ? (proj->capacity - proj->y_start) / (early - proj->t_start) : 0;
    std::optional<double> late = proj->t_oom_late;
    double slow = late && *late > proj->t_start ? (proj->capacity - proj->y_start) / (*late - proj->t_start)
                                                : std::max(0.0, a.rate_lo_bps.value_or(0));
    L.band.push_back(start);
    if (early <= t_hi) {
      L.band.push_back({L.x(early), L.y(proj->capacity)});
      double cap_end = late ? std::min(*late, t_hi) : t_hi;
      L.band.push_back({L.x(cap_end), L.y(proj->capacity)});
      if (!late || *late > t_hi) L.band.push_back({L.x(t_hi), L.y(at_time(slow, t_hi))});
    } else {
      L.band.push_back({L.x(t_hi), L.y(at_time(fast, t_hi))});
      L.band.push_back({L.x(t_hi), L.y(at_time(slow, t_hi))});
    }
    const double cy = L.y(proj->capacity);
    if (proj->t_oom <= t_hi) {
      L.oom = Point{L.x(proj->t_oom), cy};
      double r0 = L.x(std::max(early, proj->t_start));
      double r1 = L.x(late ? std::min(*late, t_hi) : t_hi);
      L.oom_range_x = std::make_pair(r0, r1);
      // As the reports name it (ReportTime), the date left out on the day the data ends.
      std::string when = ReportTime(s, proj->t_oom, o.label_offset_s);
      const std::string end_day = ReportTime(s, proj->t_start, o.label_offset_s).substr(0, 10);
      if (!s.synthetic_time && when.substr(0, 10) == end_day) when = when.substr(11);
      std::string text = "OOM " + when + " (in " + FormatDuration(proj->t_oom - proj->t_start) + ")";
      double ox = L.oom->x;
      requests.push_back({text,
                          "oom",
                          fp,
                          {{{ox - 6, cy - 7}, Anchor::kEnd},
                           {{ox + 6, cy - 7}, Anchor::kStart},
                           {{ox - 6, cy + fp + 6}, Anchor::kEnd},
                           {{ox + 6, cy + fp + 6}, Anchor::kStart},
                           {{ox - 6, cy + 2 * fp + 10}, Anchor::kEnd}}});
    } else {
      std::string text = "OOM in " + FormatDuration(proj->t_oom - proj->t_start) + " → beyond this chart";
      double rx = L.plot.right() - 4;
      requests.push_back(
          {text,
           "beyond",
           fp,
           {{{rx, cy + fp + 6}, Anchor::kEnd}, {{rx, cy - 7}, Anchor::kEnd}, {{rx, cy + 2 * fp + 10}, Anchor::kEnd}}});
    }
  }
  if (L.capacity_y) {
    double cy = *L.capacity_y;
    std::string text = "capacity " + FormatBytes(*a.capacity_bytes);
    requests.push_back({text,
                        "capacity",
                        fp,
                        {{{L.plot.x + 4, cy - 5}, Anchor::kStart},
                         {{L.plot.x + 4, cy + fp + 4}, Anchor::kStart},
                         {{L.plot.right() - 4, cy + fp + 4}, Anchor::kEnd},
                         {{L.plot.right() - 4, cy - 5}, Anchor::kEnd}}});
  }
  if (L.warmup) {
    std::vector<LabelSpot> spots;
    for (int row = 0; row < 3; ++row)
      spots.push_back({{L.warmup->x + 4, L.plot.bottom() - 5 - row * (fp + 4)}, Anchor::kStart});
    for (int row = 0; row < 3; ++row)
      spots.push_back({{L.warmup->x + 4, L.plot.y + fp + 3 + row * (fp + 4)}, Anchor::kStart});
    requests.push_back({a.verdict == Verdict::kSettling ? "settling" : "warm-up", "warmup", fp, spots});
  }
  for (const auto& e : s.events) {
    if (e.t < dom.t_lo || e.t > dom.t_hi) continue;
    double ex = L.x(e.t);
    L.events.push_back({ex, e.label});
    requests.push_back({e.label, "event", fp, MarkLabelSpots(ex, L.plot, fp, 4)});
  }
  L.labels = PlaceLabels(requests, L.plot);
  return L;
}

}  // namespace vw::outputs
