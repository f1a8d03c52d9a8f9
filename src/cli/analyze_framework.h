// PyTorch memory logs in `analyze` (cli/analyze_command.h): a file that no trace format reads and
// that prints PyTorch's allocated/reserved memory (sources/trace/framework_log.h), or any file
// under --format torch, is read whole and each device's layers are judged
// (detection/framework_split.h). Plain functions; files are read on the calling thread.
#pragma once

#include <string>

#include "core/status.h"
#include "outputs/framework_report.h"

namespace vw::cli {

// Whether `path` is read as a PyTorch memory log: always under --format torch (`format` "torch"),
// never under another explicit format or for standard input without it; under "auto", when its
// first 64 KiB fit no trace format and read as such a log. A file that cannot be opened is not
// one: the trace reader then names it and the reason.
bool IsFrameworkLogFile(const std::string& path, const std::string& format);

// The report of one log ("-": standard input). Errors name the file and the line.
Result<outputs::FrameworkReport> AnalyzeFrameworkLog(const std::string& path);

}  // namespace vw::cli
