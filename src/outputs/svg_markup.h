// The pieces of SVG markup every chart writes alike: numbers to a tenth of a pixel, paths and
// point lists, placed text, the legend and the axes with their grid. The charts (svg_plot.h,
// framework_plot.h) lay out in pixels (plot_geometry.h); these functions only write. Pure
// functions returning strings; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "outputs/plot_geometry.h"

namespace vw::outputs {

// Escapes &, <, >, " and ' for XML/HTML text and attribute values, and writes out what XML cannot
// hold or a reader should see: control characters other than newline and tab as \xNN (\r as
// \r), C1 code points as \u0080..\u009f, U+FFFE and U+FFFF as \ufffe and \uffff, and each byte
// that is not valid UTF-8 as \xNN (as
// core/printable.h does for a terminal). A GPU name or command line from a file stays readable and
// the document stays well-formed.
std::string XmlEscape(std::string_view text);

// A pixel value to one decimal ("12.3"; never "-0.0").
std::string Num(double v);

// An SVG path through `pts` that lifts the pen at each index of `breaks` (a gap in the data); a
// stretch of one point between gaps is a 2 px dash (LonePointDots marks it).
std::string PathData(const std::vector<Point>& pts, const std::vector<size_t>& breaks = {});

// A filled <circle class="vw-dot vw-dot-ROLE" data-role="ROLE-dot"> of radius 2.5 px at each point
// of `pts` that is a stretch on its own (no neighbour before or after it across `breaks`, as in
// PathData), so that a line of one sample is seen; empty when there is none.
std::string LonePointDots(const std::vector<Point>& pts, const std::vector<size_t>& breaks, std::string_view role);

// "x,y x,y ..." for a polyline or polygon.
std::string PointsAttr(const std::vector<Point>& pts);

// A <text> of class `cls` at the label's place; `extra` is added to its attributes as given.
std::string TextEl(const PlacedLabel& l, std::string_view cls, std::string_view extra = "");

// The top of a chart: its <title> (`title`: `tooltip`), the background of `width` × `height`, the
// title at `title_at` and the subtitle's lines from `subtitle_at`, each `line_step` px lower.
std::string ChartHeadMarkup(const std::string& title, const std::string& tooltip, double width, double height,
                            Point title_at, Point subtitle_at, const std::vector<std::string>& subtitle_lines,
                            double line_step);

// <g data-role="legend">: each item's swatch (class vw-ROLE, or vw-swatch-ROLE for "band" and
// "warmup") and its text.
std::string LegendMarkup(const std::vector<LegendItem>& legend);

// <g data-role="y-axis"> and <g data-role="x-axis">: grid lines across `plot` at the ticks, their
// labels, the x axis title, and the x axis line.
std::string AxesMarkup(const Rect& plot, const LinearScale& x, const LinearScale& y, const std::vector<Tick>& x_ticks,
                       const std::vector<PlacedLabel>& x_labels, const std::vector<Tick>& y_ticks,
                       const std::vector<PlacedLabel>& y_labels, const PlacedLabel& x_title);

}  // namespace vw::outputs
