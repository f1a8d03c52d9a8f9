// SVG charts of analysed memory series: one chart, or several as small multiples in one SVG.
//
// The markup comes from LayoutChart (plot_geometry.h); this file only writes it. Colours live in a
// stylesheet of class rules (no CSS variables, so plain SVG viewers draw them too): light by
// default, dark under `prefers-color-scheme: dark`, or one theme forced with Theme. Elements carry
// data-role attributes ("raw", "floor", "peak", "trend", "projection", "band", "capacity", "oom",
// "oom-range", "warmup", "event") and the root carries data-gpu, data-pid (process series) and
// data-verdict, so tests and scripts can find them.
//
// Pure functions returning strings; safe from any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detection/series_analysis.h"
#include "outputs/plot_geometry.h"
#include "outputs/svg_markup.h"

namespace vw::outputs {

enum class Theme { kAuto, kLight, kDark };

struct SvgOptions {
  ChartOptions chart;
  Theme theme = Theme::kAuto;
  bool standalone = true;   // a file of its own: XML declaration and namespace
  bool embed_style = true;  // false when the page holding the SVG already has ChartCss()
  // Small multiples: width of the whole figure, and each cell's minimum width and height (px).
  double grid_width = 1200;
  double min_cell_width = 560;
  double cell_height = 340;
  // Set when the chart is a cell of a figure (RenderSvgFigure): an <svg> nested at this place,
  // without an XML declaration or a style of its own.
  std::optional<Point> cell_at;
};

// Writes one chart with the options given (its size in options.chart).
using SvgCell = std::function<std::string(const SvgOptions& options)>;

// The chart stylesheet (all themes); RenderHtmlReport puts it once in the page head.
std::string ChartCss();

// Class naming the theme ("vw-theme-auto", "vw-theme-light", "vw-theme-dark").
std::string_view ThemeClass(Theme theme);

// Each series' source (`sources[i]` for series i, `series` of them) when they come from more than
// one (the files of `analyze a.csv b.csv`, whose GPUs may share a name), by file name; all empty
// when they come from one, which the figure or page names as a whole.
std::vector<std::string> SourcesToName(const std::vector<std::string>& sources, size_t series);

// One chart.
std::string RenderSvgChart(const detection::SeriesAnalysis& series, const SvgOptions& options = {});

// One SVG holding a chart per series in a grid (a single series gets one full-size chart).
std::string RenderSvgSmallMultiples(const std::vector<detection::SeriesAnalysis>& series,
                                    const SvgOptions& options = {});

// One SVG of the charts `cells` write: a single one full size, several in a grid of small multiples
// (each cell given its size and cell_at) with the stylesheet once.
std::string RenderSvgFigure(const std::vector<SvgCell>& cells, const SvgOptions& options = {});

}  // namespace vw::outputs
