// `analyze --prometheus URL`: series pulled from a Prometheus server instead of files, analysed as
// a file's series are (cli/analyze_command.h). --query over the last --range (ending at --end, or
// now), its values read in --unit; one series per GPU (or MIG GPU instance) that --gpu selects,
// times kept within --since/--until, on a UTC clock. What the answer said beside the series (a
// Prometheus warning, series of one GPU read as one, a series that ended early, values too large
// for GPU memory) goes to the notes (AddNote).
#pragma once

#include <vector>

#include "cli/analyze_command.h"
#include "cli/analyze_settings.h"
#include "core/status.h"
#include "outputs/analyze_report.h"

namespace vw::cli {

// Errors: the flags' ("--range: ...", "--unit: ...", "--end: ...", "--timeout: ...",
// "--bearer-token-file: ..."), the server's, "URL: the query '...' returned no series over the last
// RANGE" when none is left, and the GPUs it returned when --gpu matches none of them.
Result<std::vector<outputs::AnalyzedSeries>> AnalyzePrometheus(const AnalyzeFlags& flags, AnalyzeSettings& settings);

}  // namespace vw::cli
