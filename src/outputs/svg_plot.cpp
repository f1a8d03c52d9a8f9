// SVG writer for ChartLayout (see svg_plot.h).
#include "outputs/svg_plot.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "outputs/svg_markup.h"

namespace vw::outputs {
namespace {

using detection::SeriesAnalysis;

struct Palette {
  const char *bg, *fg, *muted, *grid, *axis, *raw, *floor, *peak, *trend, *capacity, *warm, *event;
  const char *allocated, *reserved, *driver;  // a PyTorch memory log's layers (framework_plot.h)
};

// Light: dark ink on white. Dark: light ink on near-black, brighter hues so thin lines stay visible.
// Every line stands out from its background by 3:1 at least (WCAG's contrast for graphics): the
// raw curve is lighter than the floor drawn over it, not so light it cannot be told from white.
constexpr Palette kLight = {"#ffffff", "#1f2328", "#57606a", "#e6e9ed", "#8c959f", "#7890b3", "#1a5fd0", "#c2740a",
                            "#c8202b", "#24292f", "#8c959f", "#7e3fd8", "#1a5fd0", "#c2740a", "#1a7f72"};
constexpr Palette kDark = {"#0d1117", "#e6edf3", "#9da7b3", "#262c36", "#6e7681", "#4f6a8f", "#58a6ff", "#f0b13a",
                           "#ff6b6b", "#d0d7de", "#8b949e", "#c297ff", "#58a6ff", "#f0b13a", "#3fc1b0"};

std::string ColourRules(const Palette& p, std::string_view scope) {
  std::string s;
  // Every selector of a comma list gets the scope: ".vw-a,.vw-b" in the dark scope is
  // ".vw-theme-dark .vw-a,.vw-theme-dark .vw-b", not a rule for .vw-b in every theme.
  auto rule = [&](std::string_view classes, std::string_view decl) {
    std::string selectors;
    for (size_t at = 0; at <= classes.size();) {
      size_t comma = classes.find(',', at);
      if (comma == std::string_view::npos) comma = classes.size();
      if (!selectors.empty()) selectors += ',';
      selectors += fmt::format("{} {}", scope, classes.substr(at, comma - at));
      at = comma + 1;
    }
    s += fmt::format("{}{{{}}}\n", selectors, decl);
  };
  rule(".vw-bg", fmt::format("fill:{}", p.bg));
  rule("text", fmt::format("fill:{}", p.fg));
  rule(".vw-sub", fmt::format("fill:{}", p.muted));
  rule(".vw-tick", fmt::format("fill:{}", p.muted));
  rule(".vw-grid", fmt::format("stroke:{}", p.grid));
  rule(".vw-axis", fmt::format("stroke:{}", p.axis));
  rule(".vw-raw", fmt::format("stroke:{}", p.raw));
  rule(".vw-floor", fmt::format("stroke:{}", p.floor));
  rule(".vw-peak", fmt::format("stroke:{}", p.peak));
  rule(".vw-dot-raw", fmt::format("fill:{}", p.raw));
  rule(".vw-dot-floor", fmt::format("fill:{}", p.floor));
  rule(".vw-dot-peak", fmt::format("fill:{}", p.peak));
  rule(".vw-trend,.vw-projection,.vw-projection-back,.vw-oom-range,.vw-oom-drop", fmt::format("stroke:{}", p.trend));
  rule(".vw-band,.vw-oom-dot", fmt::format("fill:{}", p.trend));
  rule(".vw-oom-dot", fmt::format("stroke:{}", p.bg));
  rule(".vw-label", fmt::format("stroke:{}", p.bg));
  rule(".vw-label-oom,.vw-label-beyond", fmt::format("fill:{}", p.trend));
  rule(".vw-capacity", fmt::format("stroke:{}", p.capacity));
  rule(".vw-warmup", fmt::format("fill:{}", p.warm));
  rule(".vw-event", fmt::format("stroke:{}", p.event));
  rule(".vw-label-event", fmt::format("fill:{}", p.event));
  rule(".vw-swatch-band", fmt::format("fill:{}", p.trend));
  rule(".vw-swatch-warmup", fmt::format("fill:{}", p.warm));
  rule(".vw-allocated", fmt::format("stroke:{}", p.allocated));
  rule(".vw-reserved", fmt::format("stroke:{}", p.reserved));
  rule(".vw-driver", fmt::format("stroke:{}", p.driver));
  return s;
}

std::string SvgOpen(const SeriesAnalysis& s, const SvgOptions& o) {
  const auto& c = o.chart;
  std::string attrs =
      fmt::format("class=\"vw-chart {}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" data-gpu=\"{}\"",
                  ThemeClass(o.theme), Num(c.width), Num(c.height), Num(c.width), Num(c.height), XmlEscape(s.gpu.key));
  if (o.cell_at) attrs += fmt::format(" x=\"{}\" y=\"{}\"", Num(o.cell_at->x), Num(o.cell_at->y));
  if (s.pid) attrs += fmt::format(" data-pid=\"{}\"", *s.pid);
  attrs += fmt::format(" data-verdict=\"{}\"", XmlEscape(VerdictKey(s.assessment.verdict)));
  if (o.standalone && !o.cell_at) attrs += " xmlns=\"http://www.w3.org/2000/svg\"";
  return "<svg " + attrs + ">\n";
}

// The chart's elements inside an <svg> of its own size.
std::string ChartBody(const SeriesAnalysis& s, const ChartLayout& L) {
  std::string out = ChartHeadMarkup(L.title, L.subtitle, L.width, L.height, L.title_at, L.subtitle_at, L.subtitle_lines,
                                    L.x_title.font_px + 4);
  out += LegendMarkup(L.legend);
  out += AxesMarkup(L.plot, L.x, L.y, L.x_ticks, L.x_tick_labels, L.y_ticks, L.y_tick_labels, L.x_title);
  const Rect& P = L.plot;
  if (L.warmup) {
    const Rect& w = *L.warmup;
    out +=
        fmt::format("<rect class=\"vw-warmup\" data-role=\"warmup\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                    Num(w.x), Num(w.y), Num(w.w), Num(w.h));
  }
  if (L.band.size() >= 3) {
    out += fmt::format("<polygon class=\"vw-band\" data-role=\"band\" points=\"{}\"/>\n", PointsAttr(L.band));
  }
  if (!L.raw.empty()) {
    out += fmt::format("<path class=\"vw-raw\" data-role=\"raw\" d=\"{}\"/>\n", PathData(L.raw, L.raw_breaks));
    out += LonePointDots(L.raw, L.raw_breaks, "raw");
  }
  if (!L.peak.empty()) {
    out += fmt::format("<path class=\"vw-peak\" data-role=\"peak\" d=\"{}\"/>\n", PathData(L.peak, L.envelope_breaks));
    out += LonePointDots(L.peak, L.envelope_breaks, "peak");
  }
  if (!L.floor.empty()) {
    out +=
        fmt::format("<path class=\"vw-floor\" data-role=\"floor\" d=\"{}\"/>\n", PathData(L.floor, L.envelope_breaks));
    out += LonePointDots(L.floor, L.envelope_breaks, "floor");
  }
  for (const auto& e : L.events) {
    out += fmt::format("<line class=\"vw-event\" data-role=\"event\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                       Num(e.x), Num(P.y), Num(P.bottom()));
  }
  if (L.capacity_y) {
    out += fmt::format(
        "<line class=\"vw-capacity\" data-role=\"capacity\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n", Num(P.x),
        Num(P.right()), Num(*L.capacity_y));
  }
  if (L.trend.size() == 2) {
    out += fmt::format("<polyline class=\"vw-trend\" data-role=\"trend\" points=\"{}\"/>\n", PointsAttr(L.trend));
  }
  if (L.projection_back.size() == 2) {
    out += fmt::format("<polyline class=\"vw-projection-back\" data-role=\"projection-back\" points=\"{}\"/>\n",
                       PointsAttr(L.projection_back));
  }
  if (L.projection.size() == 2) {
    out += fmt::format("<polyline class=\"vw-projection\" data-role=\"projection\" points=\"{}\"/>\n",
                       PointsAttr(L.projection));
  }
  const auto& a = s.assessment;
  if (L.oom) {
    if (L.oom_range_x) {
      out += fmt::format(
          "<line class=\"vw-oom-range\" data-role=\"oom-range\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n",
          Num(L.oom_range_x->first), Num(L.oom_range_x->second), Num(L.oom->y));
    }
    out += fmt::format("<line class=\"vw-oom-drop\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", Num(L.oom->x),
                       Num(L.oom->y), Num(P.bottom()));
    out +=
        fmt::format("<circle class=\"vw-oom-dot\" data-role=\"oom\" data-t=\"{:.0f}\" cx=\"{}\" cy=\"{}\" r=\"5\"/>\n",
                    a.end_t + a.tto_s.value_or(0), Num(L.oom->x), Num(L.oom->y));
  } else if (L.projection.size() == 2 && L.capacity_y) {
    // The forecast reaches the capacity past the right edge: an arrow there says so.
    double x = P.right(), y = *L.capacity_y;
    out += fmt::format(
        "<path class=\"vw-oom-dot\" data-role=\"oom\" data-beyond=\"true\" data-t=\"{:.0f}\" d=\"M{} {} l-9 -6 v12 "
        "z\"/>\n",
        a.end_t + a.tto_s.value_or(0), Num(x), Num(y));
  }
  for (const auto& l : L.labels) {
    out += TextEl(l, "vw-label vw-label-" + l.role, fmt::format(" data-role=\"label-{}\"", l.role));
  }
  return out;
}

}  // namespace

std::string_view ThemeClass(Theme theme) {
  switch (theme) {
    case Theme::kAuto: return "vw-theme-auto";
    case Theme::kLight: return "vw-theme-light";
    case Theme::kDark: return "vw-theme-dark";
  }
  return "vw-theme-auto";
}

std::string ChartCss() {
  std::string css =
      ".vw-chart{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",sans-serif;font-size:11px}\n"
      ".vw-chart .vw-title{font-size:14px;font-weight:600}\n"
      ".vw-chart .vw-sub{font-size:12px}\n"
      ".vw-chart .vw-axis-title{font-size:11px}\n"
      ".vw-chart line,.vw-chart polyline,.vw-chart path.vw-raw,.vw-chart path.vw-floor,.vw-chart "
      "path.vw-peak{fill:none}\n"
      ".vw-chart path.vw-allocated,.vw-chart path.vw-reserved,.vw-chart "
      "path.vw-driver{fill:none;stroke-linejoin:round}\n"
      ".vw-chart .vw-allocated,.vw-chart .vw-reserved{stroke-width:2}\n"
      ".vw-chart .vw-driver{stroke-width:1.6;stroke-dasharray:6 2}\n"
      ".vw-chart .vw-grid{stroke-width:1}\n"
      ".vw-chart .vw-dot{stroke:none}\n"
      ".vw-chart .vw-raw{stroke-width:0.8;stroke-linejoin:round}\n"
      ".vw-chart .vw-floor{stroke-width:2.2;stroke-linejoin:round}\n"
      ".vw-chart .vw-peak{stroke-width:1.2;stroke-linejoin:round}\n"
      ".vw-chart .vw-trend{stroke-width:2.5}\n"
      ".vw-chart .vw-projection{stroke-width:2;stroke-dasharray:7 4}\n"
      ".vw-chart .vw-projection-back{stroke-width:1.2;stroke-dasharray:2 4;stroke-opacity:0.8}\n"
      ".vw-chart .vw-band{fill-opacity:0.15;stroke:none}\n"
      ".vw-chart .vw-capacity{stroke-width:1.5;stroke-dasharray:9 3 2 3}\n"
      ".vw-chart .vw-warmup{fill-opacity:0.14}\n"
      ".vw-chart .vw-event{stroke-width:1.3;stroke-dasharray:2 3}\n"
      ".vw-chart .vw-oom-range{stroke-width:6;stroke-linecap:round;stroke-opacity:0.45}\n"
      ".vw-chart .vw-oom-drop{stroke-width:1;stroke-dasharray:3 3}\n"
      ".vw-chart .vw-oom-dot{stroke-width:2}\n"
      ".vw-chart .vw-label{paint-order:stroke;stroke-width:3px;stroke-linejoin:round}\n"
      ".vw-chart .vw-label-oom,.vw-chart .vw-label-beyond{font-weight:600}\n";
  css += ColourRules(kLight, ".vw-chart");
  css += ColourRules(kDark, ".vw-theme-dark");
  css += "@media (prefers-color-scheme: dark){\n" + ColourRules(kDark, ".vw-theme-auto") + "}\n";
  return css;
}

std::string RenderSvgChart(const SeriesAnalysis& series, const SvgOptions& options) {
  ChartLayout layout = LayoutChart(series, options.chart);
  std::string out;
  if (options.standalone && !options.cell_at) out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += SvgOpen(series, options);
  if (options.embed_style && !options.cell_at) out += "<style>\n" + ChartCss() + "</style>\n";
  out += ChartBody(series, layout);
  out += "</svg>\n";
  return out;
}

std::vector<std::string> SourcesToName(const std::vector<std::string>& sources, size_t series) {
  std::vector<std::string> out(series);
  bool several = false;
  for (size_t i = 0; i < series && i < sources.size(); ++i) {
    out[i] = sources[i];
    several = several || sources[i] != sources[0];
  }
  return several ? out : std::vector<std::string>(series);
}

std::string RenderSvgSmallMultiples(const std::vector<SeriesAnalysis>& series, const SvgOptions& options) {
  std::vector<SvgCell> cells;
  for (const auto& s : series) cells.push_back([&s](const SvgOptions& o) { return RenderSvgChart(s, o); });
  return RenderSvgFigure(cells, options);
}

std::string RenderSvgFigure(const std::vector<SvgCell>& cells, const SvgOptions& options) {
  if (cells.size() == 1) return cells.front()(options);
  std::vector<Rect> rects =
      SmallMultiples(cells.size(), options.grid_width, options.cell_height, options.min_cell_width, 16);
  double height = rects.empty() ? options.cell_height : rects.back().bottom();
  std::string out;
  if (options.standalone) out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<svg class=\"vw-chart vw-grid-figure {}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\"{}>\n",
                     ThemeClass(options.theme), Num(options.grid_width), Num(height), Num(options.grid_width),
                     Num(height), options.standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "");
  if (options.embed_style) out += "<style>\n" + ChartCss() + "</style>\n";
  out += fmt::format("<rect class=\"vw-bg\" width=\"{}\" height=\"{}\"/>\n", Num(options.grid_width), Num(height));
  for (size_t i = 0; i < cells.size(); ++i) {
    SvgOptions cell = options;
    cell.chart.width = rects[i].w;
    cell.chart.height = rects[i].h;
    cell.cell_at = Point{rects[i].x, rects[i].y};
    out += cells[i](cell);
  }
  out += "</svg>\n";
  return out;
}

}  // namespace vw::outputs
