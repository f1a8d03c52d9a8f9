// The framework view in `analyze`'s report: for each PyTorch memory log, each device's layers
// (detection/framework_split.h) as text, and as the "framework" list of the vramwatch.analyze/1
// JSON object (docs/analyze.md, "PyTorch memory logs"). Sizes in bytes, rates in bytes per step;
// a value that was not measured is null. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/finding.h"
#include "detection/framework_split.h"

namespace vw::outputs {

struct FrameworkReport {
  std::string source;  // the file as given
  size_t lines = 0;    // lines in the file
  // Values not read (a fraction with no unit; under --lenient, a line with a bad value), and the
  // first few of them with their place.
  size_t not_read = 0;
  std::vector<std::string> not_read_examples;
  std::vector<detection::FrameworkSplit> devices;
  std::vector<FrameworkStep> steps;  // every step the log printed, of every device (for the charts;
                                     // `analyze` keeps them only with --plot or --html)
};

// Every step of one device, in the log's order (what SplitFrameworkView was given).
std::vector<FrameworkStep> DeviceSteps(const FrameworkReport& report, int device);

// How a chart or a page heading names the log: its file name without the directories ("-":
// "standard input"); the whole path stays in their data-source attribute.
std::string FrameworkSourceName(const std::string& source);

// "growing in the application's live tensors", "no growth (it rose, then held)", "too short to
// judge", ... (FrameworkText writes the first word of a growing one in capitals).
std::string FrameworkHeadline(const detection::FrameworkSplit& split);

// One entry per device: {"source", "device", "steps", "first_line", "last_line", "verdict",
// "layer", "layers": {"allocated": {"steps", "first_bytes", "last_bytes", "min_bytes",
// "max_bytes", "rate_bytes_per_step", "rate_ci_bytes_per_step", "mann_kendall_z",
// "mann_kendall_p", "rising", "settled"}, ...}, "evidence", "next_step", "not_read",
// "not_read_examples"} (the last two are the log's, on each of its devices).
nlohmann::json FrameworkJson(const std::vector<FrameworkReport>& reports);

// "PyTorch memory log train.log, device 0: GROWING in the application's live tensors", the
// evidence indented below it, then "Next: ...".
std::string FrameworkText(const std::vector<FrameworkReport>& reports);

// WARNING for a device whose memory grows; OK otherwise.
Severity FrameworkSeverity(const detection::FrameworkSplit& split);

}  // namespace vw::outputs
