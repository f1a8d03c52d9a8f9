#include "sources/trace/trace_reader.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "sources/trace/line_reader.h"
#include "sources/trace/trace_formats.h"

namespace vw::trace {
namespace {

constexpr std::array<std::pair<TraceFormat, std::string_view>, 7> kNames = {{
    {TraceFormat::kAuto, "auto"},
    {TraceFormat::kQueryCsv, "query-csv"},
    {TraceFormat::kValues, "values"},
    {TraceFormat::kDmon, "dmon"},
    {TraceFormat::kPmon, "pmon"},
    {TraceFormat::kSmiTable, "smi-table"},
    {TraceFormat::kRecording, "recording"},
}};

constexpr size_t kDetectBytes = 64 * 1024;

}  // namespace

std::string_view TraceFormatName(TraceFormat f) {
  for (const auto& [format, name] : kNames) {
    if (format == f) return name;
  }
  return "unknown";
}

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const auto& [format, n] : kNames) {
    if (n == name) return format;
  }
  if (name == "csv") return TraceFormat::kQueryCsv;
  if (name == "table" || name == "nvidia-smi") return TraceFormat::kSmiTable;
  return Status::InvalidArgument(fmt::format(
      "unknown trace format '{}'; expected auto, query-csv, values, dmon, pmon, smi-table or recording", name));
}

Result<bool> TraceReader::NextInto(TraceRecord* record) {
  auto next = Next();
  if (!next.ok()) return next.status();
  if (!next->has_value()) return false;
  *record = std::move(**next);
  return true;
}

Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path, const TraceOptions& options) {
  auto in = LineReader::Open(path);
  if (!in.ok()) return in.status();
  std::unique_ptr<LineReader> reader = std::move(*in);
  const std::string display = path == "-" ? std::string("<stdin>") : path;
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    std::string_view head = reader->Peek(kDetectBytes);
    if (!reader->status().ok()) return reader->status().WithContext(display);
    auto detected = DetectTraceFormat(head, reader->at_eof_after_peek(), display);
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  switch (format) {
    case TraceFormat::kQueryCsv: return NewQueryCsvReader(std::move(reader), display, options, format);
    case TraceFormat::kValues:
      if (!options.columns.empty()) return NewQueryCsvReader(std::move(reader), display, options, format);
      return NewValuesReader(std::move(reader), display, options);
    case TraceFormat::kDmon:
    case TraceFormat::kPmon: return NewMonitorLogReader(std::move(reader), display, options, format);
    case TraceFormat::kSmiTable: return NewSmiTableReader(std::move(reader), display, options);
    case TraceFormat::kRecording: return NewRecordingReader(std::move(reader), display, options);
    case TraceFormat::kAuto: break;
  }
  return Status::Internal("OpenTrace: no reader for the format");
}

}  // namespace vw::trace
