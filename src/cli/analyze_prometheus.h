// `analyze --prometheus URL`: series pulled from a Prometheus server instead of files, analysed as
// a file's series are (cli/analyze_command.h). --query over the last --range (ending at --end, or
// now), its values read in --unit; one series per returned time series that --gpu selects, times
// kept within --since/--until, on a UTC clock.
#pragma once

#include <vector>

#include "cli/analyze_command.h"
#include "cli/analyze_settings.h"
#include "core/status.h"
#include "outputs/analyze_report.h"

namespace vw::cli {

// Errors: the flags' ("--range: ...", "--unit: ...", "--end: ..."), the server's, and "URL: the
// query '...' returned no series over the last RANGE" when none is left.
Result<std::vector<outputs::AnalyzedSeries>> AnalyzePrometheus(const AnalyzeFlags& flags,
                                                               const AnalyzeSettings& settings);

}  // namespace vw::cli
