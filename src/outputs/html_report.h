// The HTML report of `analyze --html FILE.html`: one self-contained page (inline CSS and SVG, no
// script, no external URL of any kind) with, per analysed series, the verdict in words, the chart
// (svg_plot.h), the key numbers and the evidence sentences. Several series are laid out as small
// multiples; a summary table comes first. Light and dark themes follow `prefers-color-scheme`
// unless `theme` forces one.
//
// DOM contract (tests and scripts rely on it): each series is a `section.vw-series` with
// `data-gpu`, `data-verdict` (VerdictKey: "leak", "insufficient_data", ...), for a process series `data-pid`, and
// `data-source` when the series come from several sources (HtmlReportOptions::sources); it
// holds one `svg[data-gpu]` chart and a `.vw-verdict` paragraph; the chart has `[data-role=oom]` exactly when the
// series is a leak with a time to OOM.
//
// Pure function returning a string; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "detection/series_analysis.h"
#include "outputs/framework_report.h"
#include "outputs/svg_plot.h"

namespace vw::outputs {

struct HtmlReportOptions {
  std::string title = "vramwatch report";
  std::string source;  // what was analysed ("trace.csv"), shown under the title and in <title>
  // Each series' source, in the order of the series (AnalyzedSeries::source): when they are not all
  // the same, each section's heading and the summary table name the file its series came from.
  std::vector<std::string> sources;
  std::string generated_at;  // when, as the caller wants it shown ("2026-07-14 14:05")
  Theme theme = Theme::kAuto;
  double label_offset_s = 0;  // see ChartOptions
};

// `framework`: PyTorch memory logs, a section per device after the series (`section.vw-framework`
// with data-source, data-device, data-verdict = FrameworkVerdictName and data-layer when one grows;
// its chart is framework_plot.h's).
std::string RenderHtmlReport(const std::vector<detection::SeriesAnalysis>& series,
                             const HtmlReportOptions& options = {}, const std::vector<FrameworkReport>& framework = {});

// The verdict of one series as a sentence: "Leak of +1.50 GiB/h (1.30–1.70 GiB/h) since 08:40;
// memory runs out around 20:34 (in 6h 34m; between 19:47 and 21:34)."
std::string VerdictSentence(const detection::SeriesAnalysis& series, double label_offset_s = 0);

}  // namespace vw::outputs
