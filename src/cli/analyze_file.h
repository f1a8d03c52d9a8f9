// One trace file read and analysed for `analyze` (cli/analyze_command.h). The file is read as a
// stream (format auto-detected or --format) into one SeriesBuilder per GPU, and one per GPU and
// PID where the trace lists processes (not with --no-processes); a PID that leaves a GPU's list is
// noted as a departure on that GPU's series. Parsing runs on other threads while this one feeds
// the builders (VRAMWATCH_ANALYZE_THREADS; the output is the same on any number of threads), and
// the series are assessed on those threads too. A progress line is shown on a terminal's stderr
// for files of 64 MiB or more.
#pragma once

#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/analyze_settings.h"
#include "core/status.h"
#include "outputs/analyze_report.h"

namespace vw::cli {

// The series of `path` to report, in first-seen order: every GPU series --gpu selects, and the
// process series that have something to say (all of them when no GPU series has memory values, as
// in a pmon log). Lines skipped under --lenient are added to settings.report. Errors: the reader's,
// and "PATH: no samples found (is it empty?)", "PATH: no GPU matches --gpu ...", "PATH: no samples
// in the selected range", "PATH: no memory values: ..."; `*no_gpu_matched` (when given) is set
// true with the --gpu one, which several files together may still satisfy.
Result<std::vector<outputs::AnalyzedSeries>> AnalyzeFile(const std::string& path, const AnalyzeFlags& flags,
                                                         AnalyzeSettings& settings, bool* no_gpu_matched = nullptr);

}  // namespace vw::cli
