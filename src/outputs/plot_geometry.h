// Plot geometry: everything about a memory chart that is arithmetic, not markup. Scales, "nice"
// tick steps and labels for a GiB axis and a clock (or elapsed) time axis, the projection of a
// leak's trend to the capacity line, placement of in-plot labels so none overlap, and the grid of
// small multiples. svg_plot.h turns a ChartLayout into SVG; tests check the numbers here.
//
// Units: data times are seconds (core/time.h: times without a zone are wall clock on the UTC scale
// and are labelled as written), data sizes are bytes, everything else is pixels (SVG user units,
// origin top-left, y down). Pure functions, no state: safe from any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detection/series_analysis.h"

namespace vw::outputs {

struct Point {
  double x = 0, y = 0;
};

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  // True when the interiors overlap (touching edges do not count).
  bool Intersects(const Rect& o) const;
  bool Contains(const Rect& o) const;
};

// Maps the data interval [d0, d1] onto the pixel interval [r0, r1] (r1 < r0 for a y axis).
class LinearScale {
 public:
  LinearScale() = default;
  LinearScale(double d0, double d1, double r0, double r1) : d0_(d0), d1_(d1), r0_(r0), r1_(r1) {}
  double operator()(double v) const;
  double Invert(double px) const;
  double domain_lo() const { return d0_; }
  double domain_hi() const { return d1_; }

 private:
  double d0_ = 0, d1_ = 1, r0_ = 0, r1_ = 1;
};

struct Tick {
  double value = 0;  // data units (bytes or seconds)
  std::string label;
};

// Smallest step of the form {1, 2, 2.5, 5} × 10^k with span / step <= max_intervals.
double NiceStep(double span, int max_intervals);

// Ticks of a byte axis covering [lo, hi] (bytes): multiples of a nice step in GiB (MiB when hi is
// under 1 GiB), labelled "40 GiB", "12.5 GiB", "512 MiB" with as many decimals as the step needs.
std::vector<Tick> BytesTicks(double lo, double hi, int max_intervals);

// Time axis label styles: clock times as written, or elapsed time from the first sample for
// traces that had no clock (SeriesAnalysis::synthetic_time).
enum class TimeLabels { kClock, kElapsed };

// Ticks of a time axis covering [lo, hi] (seconds). Steps come from a fixed list (1 s … 7 d) so
// ticks fall on round clock times; `label_offset_s` is added before formatting (a zone offset for
// zoned data; 0 for wall-clock data). Clock labels: "08:30", "08:30:15" for sub-minute steps,
// "Jul 15" at midnight or for day steps. Elapsed labels: "0", "45m", "1h 30m", "2d".
std::vector<Tick> TimeTicks(double lo, double hi, int max_intervals, TimeLabels style, double label_offset_s = 0);

// Estimated rendered width of `text` at `font_px` (a generous per-character width for the sans
// fonts the SVG asks for), used for layout and overlap checks.
double TextWidth(std::string_view text, double font_px);

// Anchoring of a text label: its box starts at, is centred on, or ends at the x it is given.
enum class Anchor { kStart, kMiddle, kEnd };

// One place a label may go: its baseline anchor point and how the text hangs from it.
struct LabelSpot {
  Point at;
  Anchor anchor = Anchor::kStart;
};

// A label to place, with the spots it may take, tried in order.
struct LabelRequest {
  std::string text;
  std::string role;  // "capacity", "oom", "warmup", "event", "beyond"
  double font_px = 11;
  std::vector<LabelSpot> candidates;
};

struct PlacedLabel {
  std::string text;
  std::string role;
  Anchor anchor = Anchor::kStart;
  double font_px = 11;
  Point at;  // baseline anchor as chosen
  Rect box;  // its bounding box
};

// Box of a label drawn at baseline `at` (ascent ~0.8 em above, descent ~0.25 em below).
Rect LabelBox(std::string_view text, double font_px, Anchor anchor, Point at);

// Greedy placement: each request in order takes its first candidate whose box lies inside `bounds`
// and overlaps neither `occupied` nor a label placed before it. Requests with no such candidate are
// left out (the caller orders requests by importance).
std::vector<PlacedLabel> PlaceLabels(const std::vector<LabelRequest>& requests, const Rect& bounds,
                                     const std::vector<Rect>& occupied = {});

// The part of a leak's forecast that is drawn: the line from the recent peak at the end of the data
// to the capacity line, reaching it at end_t + tto_s; and the fan of the rate's interval.
struct Projection {
  double t_start = 0;                             // end of the data (seconds)
  double y_start = 0;                             // bytes: the recent peak (the fitted floor when the peak is unknown)
  double capacity = 0;                            // bytes
  double t_oom = 0;                               // seconds: t_start + tto_s
  std::optional<double> t_oom_early, t_oom_late;  // from the rate interval (late absent: never)
  double rate_bps = 0;                            // slope of the drawn line, bytes/second
};

// The projection for an assessment, or nothing unless it is a leak with a known time to OOM.
std::optional<Projection> ProjectToCapacity(const detection::Assessment& a);

struct ChartOptions {
  double width = 880;   // px, whole chart including title, legend and axes
  double height = 380;  // px
  double font_px = 11;
  double title_px = 14;
  // Added to zoned times before formatting clock labels. Clock times of zoned data are marked as
  // ZoneMark writes them ("UTC", "UTC+02:00" at this offset): in the time axis title, the subtitle
  // and the OOM label; wall-clock and synthetic times carry no mark.
  double label_offset_s = 0;
  // The forecast is drawn at most this many data spans past the end; an OOM further out is noted at
  // the right edge instead of squashing the data.
  double max_projection_spans = 3;
  // The file the series came from, first in the subtitle (and so in the chart's <title>); empty:
  // not named (a figure or page whose series all come from one file, which it names itself).
  std::string source;
};

struct LegendItem {
  std::string role;  // css role: "raw", "floor", "peak", "trend", "band", "capacity", "warmup", "event"
  std::string text;
  Rect swatch;
  PlacedLabel label;
};

struct EventMark {
  double x = 0;  // px
  std::string label;
};

// What every chart lays out alike (LayoutFrame): title and subtitle, legend, plot area, axes.
struct ChartFrame {
  double width = 0, height = 0;
  std::string title;                        // "GPU 0 · NVIDIA H100 80GB HBM3 — leak"
  std::vector<std::string> subtitle_lines;  // the subtitle, wrapped at " · " to fit the width
  Point title_at, subtitle_at;              // baselines; subtitle lines step down by font_px + 4
  Rect plot;                                // the plotting area
  LinearScale x, y;
  std::vector<Tick> x_ticks, y_ticks;
  std::vector<PlacedLabel> x_tick_labels, y_tick_labels;
  PlacedLabel x_title;  // "local time (as recorded) · 2026-07-14"; the y unit is in its tick labels
  std::vector<LegendItem> legend;
};

// What a chart puts in its frame.
struct FrameSpec {
  std::string title;                        // cut with "…" to the width
  std::vector<std::string> subtitle_parts;  // joined with " · " into at most max_subtitle_lines lines
  size_t max_subtitle_lines = 3;
  std::vector<std::pair<std::string, std::string>> legend;  // (role, text), in order
  double x_lo = 0, x_hi = 1;                                // the x axis, in its data units
  double y_hi = 1;                                          // bytes: the y axis runs from 0 to this
  std::function<std::vector<Tick>(int max_intervals)> x_ticks;
  std::string x_title;
};

// Lays out `frame` for `spec` at options.width × options.height: the title at the top left, the
// subtitle under it, the legend's rows under that, a byte axis whose widest tick label sets the
// left margin, the plot area below the legend, the x ticks whose labels fit (PlaceXTicks), and
// the x axis title at the bottom.
void LayoutFrame(const FrameSpec& spec, const ChartOptions& options, ChartFrame* frame);

// Where the label of a vertical mark at `x` (px) may go, tried in order: beside it, right then
// left, in `rows` rows down from the top of `plot`.
std::vector<LabelSpot> MarkLabelSpots(double x, const Rect& plot, double font_px, int rows);

// Everything a chart draws, in pixels.
struct ChartLayout : ChartFrame {
  std::string subtitle;      // the verdict with its numbers, in one line
  std::vector<Point> raw;    // thin line of the used memory (column-decimated)
  std::vector<Point> floor;  // floor envelope (bucket low quantile)
  std::vector<Point> peak;   // peak envelope (bucket max)
  // Where each of those lines breaks: indices of the points that start a new stretch after a gap
  // in the data (no sample for over GapSeconds()): a gap is drawn as a gap, never as a line
  // joining the samples on either side of it. The floor and peak share theirs.
  std::vector<size_t> raw_breaks, envelope_breaks;
  std::optional<Rect> warmup;  // shaded warm-up / settling stretch
  std::optional<double> capacity_y;
  std::vector<Point> trend;                              // fitted trend over the fitted stretch
  std::vector<Point> projection;                         // forecast line (clipped to the plot)
  std::vector<Point> projection_back;                    // the forecast line drawn back over the leak's stretch
  std::vector<Point> band;                               // polygon of the rate interval's fan (clipped to the plot)
  std::optional<Point> oom;                              // where the forecast meets capacity, when inside the plot
  std::optional<std::pair<double, double>> oom_range_x;  // px on the capacity line, clipped
  std::vector<EventMark> events;
  std::vector<PlacedLabel> labels;  // in-plot labels, none overlapping
};

// The indices i of `times` (seconds, ascending) where times[i] - times[i-1] is a gap in the data:
// over five times the median step, and over a minute.
std::vector<size_t> GapStarts(const std::vector<double>& times);

inline constexpr double kLegendRowPx = 16;  // height of a legend row

// Legend entries (role, text) flowing in rows of kLegendRowPx from `left` to `right`: a
// swatch (a bar for "band" and "warmup", a line otherwise) and its text. `row_y`: the top of the
// first row in, of the last row out.
std::vector<LegendItem> FlowLegend(const std::vector<std::pair<std::string, std::string>>& entries, double left,
                                   double right, double font_px, double* row_y);

// The x ticks under `plot`: `ticks(n)` gives at most n intervals; from one tick per 70 px down to
// one, the first set whose labels neither come within 6 px of each other nor leave [0, width] (a
// tick whose label would leave is dropped with it).
void PlaceXTicks(const std::function<std::vector<Tick>(int)>& ticks, const LinearScale& x, const Rect& plot,
                 double width, double font_px, std::vector<Tick>* out, std::vector<PlacedLabel>* labels);

// Shortens `text` with "…" until it fits `width` at `font_px`.
std::string FitText(std::string text, double width, double font_px);

// Joins parts with " · " into lines no wider than `width` (at most `max_lines`, the last one cut).
std::vector<std::string> WrapParts(const std::vector<std::string>& parts, double width, double font_px,
                                   size_t max_lines);

// Keeps, per pixel column, the first, lowest, highest and last point (y grows downwards), so a
// thin line drawn from thousands of samples keeps every spike and costs a few points per pixel.
std::vector<Point> DecimateByColumn(const std::vector<Point>& pts);

// Lays out one chart of a series.
ChartLayout LayoutChart(const detection::SeriesAnalysis& s, const ChartOptions& options = {});

// Small multiples: n cells of at least min_cell_width in rows filling `total_width`, with `gap`
// between them; returns each cell's rectangle (row-major).
std::vector<Rect> SmallMultiples(size_t n, double total_width, double cell_height, double min_cell_width, double gap);

// Human strings shared by the chart and the report.
std::string VerdictText(detection::Verdict v);  // "leak", "plateau", "settling", "warm-up", "insufficient data"
// The verdict as the JSON contracts spell it ("insufficient_data", "warmup", ...), for data-verdict.
std::string VerdictKey(detection::Verdict v);
std::string SeriesName(const detection::SeriesAnalysis& s);  // "GPU 0 · NVIDIA H100" or "GPU 0 · pid 4242 python"
// What follows a clock time of a trace that named its zone: " UTC", or " UTC+02:00" when times
// are shown at an offset (seconds); "" on a trace's own wall clock or a synthetic clock.
std::string ZoneMark(bool has_zone, bool synthetic, double label_offset_s = 0);
// How every report of a series (the text report and its evidence, the HTML page, the charts)
// names a moment, its leak rate and its runway, so they read alike:
// - ReportTime: "t+2h 5m" on a trace without a clock (the time from its first sample),
//   "2026-07-14 08:12 UTC" on one that named its zone ("... UTC+02:00" when shown at
//   label_offset_s, seconds), "2026-07-14 08:12" on a trace's own wall clock;
std::string ReportTime(const detection::SeriesAnalysis& s, double t, double label_offset_s = 0);
// - RateText: core's FormatRate with the 90 % interval when both ends are known, "1500 MiB/h (90 %
//   range 1480 MiB/h … 1520 MiB/h)"; "" without a rate;
std::string RateText(const detection::Assessment& a);
// - OomAtText: "1d 20h (at t+2d 0h)", the runway and the moment it ends; "" without a runway;
std::string OomAtText(const detection::SeriesAnalysis& s, double label_offset_s = 0);
// - OomRangeText: "range 1d 19h … 1d 21h" ("… never" when the slower rate never gets there); ""
//   without the pessimistic end.
std::string OomRangeText(const detection::Assessment& a);
// - OomText: both, "1d 20h (at t+2d 0h), range 1d 19h … 1d 21h", as the text report, the HTML facts
//   and the verdict sentence write the runway; "" without a runway.
std::string OomText(const detection::SeriesAnalysis& s, double label_offset_s = 0);

}  // namespace vw::outputs
