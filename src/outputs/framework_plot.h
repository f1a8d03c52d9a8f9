// The chart of one device of a PyTorch memory log (framework_report.h): its layers by step, the
// way the framework split judged them. Lines for `allocated` (live tensors), `reserved` (held by
// the caching allocator) and `driver` (the driver's used memory), those the log prints; the gap
// between the first two is the allocator's cache, between the last two what lies below PyTorch.
// Each drawn layer that the split found rising gets its Sen's line over the steps judged; a
// restart (the steps before it not judged) is a dashed mark.
//
// The x axis is the step's number among the device's steps (1 for the first; a log's steps have no
// clock), the y axis bytes from 0, as the memory charts of svg_plot.h. Elements carry data-role
// ("allocated", "reserved", "driver", "trend" with data-layer, "restart") and the root carries
// data-source, data-device, data-verdict (FrameworkVerdictName) and data-layer (FrameworkLayerName,
// when one grows), so tests and scripts can find them. Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "detection/framework_split.h"
#include "outputs/framework_report.h"
#include "outputs/plot_geometry.h"
#include "outputs/svg_plot.h"

namespace vw::outputs {

struct FrameworkLine {
  std::string role;           // "allocated", "reserved", "driver"
  std::vector<Point> points;  // decimated by pixel column
};

struct FrameworkTrend {
  std::string layer;  // the rising layer it fits
  Point from, to;     // px: over the steps judged
};

struct FrameworkChartLayout : ChartFrame {
  // x: step number (1-based); y: bytes. The subtitle: steps and lines, restart, each rising
  // layer's rate.
  std::vector<FrameworkLine> lines;
  std::vector<FrameworkTrend> trends;
  std::optional<double> restart_x;  // px: the first step judged, when steps before it were left out
  std::vector<PlacedLabel> labels;  // "restart"
};

// `steps`: the device's steps (DeviceSteps); `split`: SplitFrameworkView of them.
FrameworkChartLayout LayoutFrameworkChart(const std::string& source, const detection::FrameworkSplit& split,
                                          const std::vector<FrameworkStep>& steps, const ChartOptions& options = {});

// The chart as SVG, standalone or as a cell of a figure (SvgOptions::cell_at).
std::string RenderFrameworkChart(const FrameworkReport& report, const detection::FrameworkSplit& split,
                                 const SvgOptions& options = {});

// A figure cell for each device of each report, in order (for RenderSvgFigure).
std::vector<SvgCell> FrameworkCells(const std::vector<FrameworkReport>& reports);

}  // namespace vw::outputs
