// The chart of a PyTorch memory log's device (see framework_plot.h).
#include "outputs/framework_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "outputs/svg_markup.h"

namespace vw::outputs {
namespace {

using detection::FrameworkSplit;
using detection::LayerTrend;

struct Drawn {
  const char* role;
  const char* legend;
  std::optional<uint64_t> FrameworkStep::*value;
};

// The layers a log prints as figures of their own, bottom to top.
constexpr Drawn kDrawn[] = {
    {"allocated", "allocated (live tensors)", &FrameworkStep::allocated_bytes},
    {"reserved", "reserved (PyTorch's allocator)", &FrameworkStep::reserved_bytes},
    {"driver", "driver (used memory)", &FrameworkStep::driver_used_bytes},
};

bool IsDrawn(const std::string& name) {
  return std::any_of(std::begin(kDrawn), std::end(kDrawn), [&](const Drawn& d) { return name == d.role; });
}

// Whole steps: a nice step of at least 1, multiples of it inside [lo, hi], labelled as numbers.
std::vector<Tick> StepTicks(double lo, double hi, int max_intervals) {
  const double step = std::max(1.0, std::ceil(NiceStep(hi - lo, std::max(1, max_intervals))));
  std::vector<Tick> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9; v += step) {
    if (v >= lo) out.push_back({v, fmt::format("{:.0f}", v)});
  }
  return out;
}

std::vector<std::string> SubtitleParts(const FrameworkSplit& d) {
  std::vector<std::string> parts;
  parts.push_back(
      fmt::format("{} step{} judged (lines {}–{})", d.steps, d.steps == 1 ? "" : "s", d.first_line, d.last_line));
  if (d.first_step > 0) {
    parts.push_back(fmt::format("{} step{} before a restart left out", d.first_step, d.first_step == 1 ? "" : "s"));
  }
  if (d.verdict == detection::FrameworkVerdict::kTooShort) {
    parts.push_back(fmt::format("at least {} steps are needed to test", detection::kMinFrameworkSteps));
  }
  for (const LayerTrend& t : d.layers) {
    if (t.rising && t.rate_bytes_per_step) {
      parts.push_back(fmt::format("{} {}/step", t.name, detection::FrameworkSignedBytes(*t.rate_bytes_per_step)));
    }
  }
  return parts;
}

}  // namespace

FrameworkChartLayout LayoutFrameworkChart(const std::string& source, const FrameworkSplit& d,
                                          const std::vector<FrameworkStep>& steps, const ChartOptions& o) {
  FrameworkChartLayout L;
  const double fp = o.font_px;
  double y_max = 0;
  std::vector<const Drawn*> present;
  for (const Drawn& layer : kDrawn) {
    bool any = false;
    for (const FrameworkStep& s : steps) {
      if (const auto& v = s.*layer.value) {
        any = true;
        y_max = std::max(y_max, static_cast<double>(*v));
      }
    }
    if (any) present.push_back(&layer);
  }
  const double y_hi = y_max > 0 ? y_max * 1.10 : kGiB;
  std::vector<const LayerTrend*> rising;
  for (const LayerTrend& t : d.layers) {
    if (t.rising && t.rate_bytes_per_step && t.intercept_bytes && IsDrawn(t.name)) rising.push_back(&t);
  }

  FrameSpec spec;
  spec.title = fmt::format("{} · device {} — {}", FrameworkSourceName(source), d.device, FrameworkHeadline(d));
  spec.subtitle_parts = SubtitleParts(d);
  spec.max_subtitle_lines = 2;
  for (const Drawn* layer : present) spec.legend.push_back({layer->role, layer->legend});
  if (!rising.empty()) spec.legend.push_back({"trend", "Sen's line of a rising layer"});
  if (d.first_step > 0) spec.legend.push_back({"event", "restart"});
  spec.x_lo = 1;
  spec.x_hi = std::max(2.0, static_cast<double>(steps.size()));
  spec.y_hi = y_hi;
  spec.x_ticks = [&](int n) { return StepTicks(spec.x_lo, spec.x_hi, n); };
  spec.x_title = fmt::format("step of device {} in the log", d.device);
  LayoutFrame(spec, o, &L);

  for (const Drawn* layer : present) {
    std::vector<Point> pts;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (const auto& v = steps[i].*layer->value) {
        pts.push_back({L.x(static_cast<double>(i + 1)), L.y(static_cast<double>(*v))});
      }
    }
    L.lines.push_back({layer->role, DecimateByColumn(pts)});
  }
  if (d.steps > 0) {
    // Sen's line is fitted by the step's index in the run judged: at index j it is
    // intercept + rate·j, drawn at the step's number first_step + j + 1.
    const double j_end = static_cast<double>(d.steps - 1);
    for (const LayerTrend* t : rising) {
      auto at = [&](double j) {
        const double v = std::clamp(*t->intercept_bytes + *t->rate_bytes_per_step * j, 0.0, y_hi);
        return Point{L.x(static_cast<double>(d.first_step) + j + 1), L.y(v)};
      };
      L.trends.push_back({t->name, at(0), at(j_end)});
    }
  }
  if (d.first_step > 0) {
    const double rx = L.x(static_cast<double>(d.first_step) + 1);
    L.restart_x = rx;
    L.labels = PlaceLabels({{"restart", "event", fp, MarkLabelSpots(rx, L.plot, fp, 3)}}, L.plot);
  }
  return L;
}

std::string RenderFrameworkChart(const FrameworkReport& report, const FrameworkSplit& d, const SvgOptions& o) {
  const std::vector<FrameworkStep> steps = DeviceSteps(report, d.device);
  const FrameworkChartLayout L = LayoutFrameworkChart(report.source, d, steps, o.chart);
  std::string out;
  if (o.standalone && !o.cell_at) out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  std::string attrs = fmt::format(
      "class=\"vw-chart vw-framework-chart {}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "data-source=\"{}\" data-device=\"{}\" data-verdict=\"{}\"",
      ThemeClass(o.theme), Num(L.width), Num(L.height), Num(L.width), Num(L.height), XmlEscape(report.source), d.device,
      detection::FrameworkVerdictName(d.verdict));
  if (const char* layer = detection::FrameworkLayerName(d.layer)) attrs += fmt::format(" data-layer=\"{}\"", layer);
  if (o.cell_at) attrs += fmt::format(" x=\"{}\" y=\"{}\"", Num(o.cell_at->x), Num(o.cell_at->y));
  if (o.standalone && !o.cell_at) attrs += " xmlns=\"http://www.w3.org/2000/svg\"";
  out += "<svg " + attrs + ">\n";
  if (o.embed_style && !o.cell_at) out += "<style>\n" + ChartCss() + "</style>\n";

  std::string subtitle;
  for (const auto& line : L.subtitle_lines) subtitle += (subtitle.empty() ? "" : " · ") + line;
  out += ChartHeadMarkup(L.title, subtitle, L.width, L.height, L.title_at, L.subtitle_at, L.subtitle_lines,
                         L.x_title.font_px + 4);
  out += LegendMarkup(L.legend);
  out += AxesMarkup(L.plot, L.x, L.y, L.x_ticks, L.x_tick_labels, L.y_ticks, L.y_tick_labels, L.x_title);
  if (L.restart_x) {
    out += fmt::format("<line class=\"vw-event\" data-role=\"restart\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                       Num(*L.restart_x), Num(L.plot.y), Num(L.plot.bottom()));
  }
  // The trends first: a layer's own line stays on top where its fit follows it.
  for (const FrameworkTrend& t : L.trends) {
    out += fmt::format("<polyline class=\"vw-trend\" data-role=\"trend\" data-layer=\"{}\" points=\"{}\"/>\n", t.layer,
                       PointsAttr({t.from, t.to}));
  }
  for (const FrameworkLine& line : L.lines) {
    out += fmt::format("<path class=\"vw-{0}\" data-role=\"{0}\" d=\"{1}\"/>\n", line.role, PathData(line.points));
  }
  for (const auto& l : L.labels) {
    out += TextEl(l, "vw-label vw-label-" + l.role, fmt::format(" data-role=\"label-{}\"", l.role));
  }
  out += "</svg>\n";
  return out;
}

std::vector<SvgCell> FrameworkCells(const std::vector<FrameworkReport>& reports) {
  std::vector<SvgCell> cells;
  for (const FrameworkReport& r : reports) {
    for (const FrameworkSplit& d : r.devices) {
      cells.push_back([&r, &d](const SvgOptions& o) { return RenderFrameworkChart(r, d, o); });
    }
  }
  return cells;
}

}  // namespace vw::outputs
