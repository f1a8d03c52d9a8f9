// Writing the chart and report files of `analyze --plot FILE.svg` and `--html FILE.html`.
//
// Each call renders (svg_plot.h, html_report.h) and writes the whole file, replacing it; the file
// appears complete or not at all (written to FILE.tmp, then renamed). Errors name the path and the
// system's reason. Safe from any thread for distinct paths.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "detection/series_analysis.h"
#include "outputs/framework_report.h"
#include "outputs/html_report.h"
#include "outputs/svg_plot.h"

namespace vw::outputs {

// One SVG: a single chart, or small multiples: a chart per series, then one per device of each
// PyTorch memory log (framework_plot.h). `sources`: each series' source; when they differ each
// chart names its file (SourcesToName).
Status WriteSvgPlot(const std::string& path, const std::vector<detection::SeriesAnalysis>& series,
                    const SvgOptions& options = {}, const std::vector<FrameworkReport>& framework = {},
                    const std::vector<std::string>& sources = {});

Status WriteHtmlReport(const std::string& path, const std::vector<detection::SeriesAnalysis>& series,
                       const HtmlReportOptions& options = {}, const std::vector<FrameworkReport>& framework = {});

}  // namespace vw::outputs
