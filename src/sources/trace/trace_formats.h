// The parsers behind OpenTrace(), one per format, and format detection. Internal to sources/trace:
// callers use OpenTrace() from trace_reader.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sources/trace/line_reader.h"
#include "sources/trace/trace_reader.h"

namespace vw::trace {

// Guesses the format from the first decoded bytes of a file (`complete`: they are the whole file).
// Returns a ParseError naming `display` when the text fits no format or holds no data.
Result<TraceFormat> DetectTraceFormat(std::string_view head, bool complete, const std::string& display);

// nvidia-smi --query-gpu CSV (and, labelled kValues, a value loop with --columns).
std::unique_ptr<TraceReader> NewQueryCsvReader(std::unique_ptr<LineReader> in, std::string display,
                                               const TraceOptions& options, TraceFormat label);
// One memory.used value per line.
std::unique_ptr<TraceReader> NewValuesReader(std::unique_ptr<LineReader> in, std::string display,
                                             const TraceOptions& options);
// nvidia-smi dmon / pmon logs.
std::unique_ptr<TraceReader> NewMonitorLogReader(std::unique_ptr<LineReader> in, std::string display,
                                                 const TraceOptions& options, TraceFormat which);
// Repeated full nvidia-smi tables.
std::unique_ptr<TraceReader> NewSmiTableReader(std::unique_ptr<LineReader> in, std::string display,
                                               const TraceOptions& options);
// vramwatch record output (JSON lines).
std::unique_ptr<TraceReader> NewRecordingReader(std::unique_ptr<LineReader> in, std::string display,
                                                const TraceOptions& options);

}  // namespace vw::trace
