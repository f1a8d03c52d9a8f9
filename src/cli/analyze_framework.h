// PyTorch memory logs in `analyze` (cli/analyze_command.h): a file that no trace format reads and
// that prints PyTorch's allocated/reserved memory (sources/trace/framework_log.h), or any file
// under --format torch, is read whole and each device's layers are judged
// (detection/framework_split.h). Plain functions; files are read on the calling thread.
#pragma once

#include <string>

#include "cli/analyze_command.h"
#include "cli/analyze_settings.h"
#include "core/status.h"
#include "outputs/framework_report.h"

namespace vw::cli {

// Whether `path` is read as a PyTorch memory log: always under --format torch (`format` "torch"),
// never under another explicit format, nor for standard input, a pipe or a FIFO without it (they
// can be read only once); under "auto", for a regular file, when its
// first 64 KiB fit no trace format and read as such a log. A file that cannot be opened is not
// one: the trace reader then names it and the reason.
bool IsFrameworkLogFile(const std::string& path, const std::string& format);

// The report of one log ("-": standard input), of the devices --gpu names (all without it).
// Errors name the file and the line; --since/--until (times, which a log of steps does not have)
// and a --gpu that names none of the log's devices are errors too.
// `*no_device_matched` (when given) is set true with the error that --gpu names no device of the
// log, which several files together may still satisfy. A last line left out for want of a line
// end is noted in `settings` (AddNote).
Result<outputs::FrameworkReport> AnalyzeFrameworkLog(const std::string& path, const AnalyzeFlags& flags,
                                                     AnalyzeSettings& settings, bool* no_device_matched = nullptr);

}  // namespace vw::cli
