// The `analyze` report: one block of text per series for people, or the `vramwatch.analyze/1`
// JSON object for scripts (documented in docs/analyze.md and docs/schema/analyze.schema.json).
//
// Sizes in JSON are bytes, rates bytes/second, durations seconds, times ISO 8601; the text uses
// MiB/GiB, MiB/h and "9h 12m". Pure functions of the analyses: no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/finding.h"
#include "detection/series_analysis.h"

namespace vw::outputs {

struct AnalyzedSeries {
  std::string source;  // file name (or Prometheus URL) the series came from
  detection::SeriesAnalysis analysis;
  size_t samples_without_memory = 0;  // samples whose memory value was missing ([N/A])
};

struct AnalyzeReportOptions {
  // A leak whose pessimistic runway is shorter is CRITICAL.
  double critical_runway_s = detection::kCriticalRunwaySeconds;
  size_t skipped_lines = 0;                   // lenient mode: lines skipped in all files
  std::vector<std::string> skipped_examples;  // "run.csv:12: expected ..."
  // Notes on the input that did not stop the analysis (a last line left out for want of a line
  // end, a file of several GPUs read as one, a file left out by --gpu), in the order they arose;
  // the same words as on stderr. In JSON as "notes".
  std::vector<std::string> notes;
};

// Severity of one series: a leak is WARNING, CRITICAL when the pessimistic time to OOM is under
// the critical runway; everything else OK.
Severity SeverityOf(const detection::SeriesAnalysis& a, const AnalyzeReportOptions& options);

// The next steps for a person, following the verdict (and the evidence at hand).
std::vector<std::string> NextSteps(const detection::SeriesAnalysis& a);

std::string RenderAnalyzeText(const std::vector<AnalyzedSeries>& series, const AnalyzeReportOptions& options);
nlohmann::json RenderAnalyzeJson(const std::vector<AnalyzedSeries>& series, const AnalyzeReportOptions& options);

}  // namespace vw::outputs
