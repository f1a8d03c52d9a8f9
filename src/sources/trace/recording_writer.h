// RecordingWriter: writes `vramwatch record` files, which `vramwatch analyze` (and `watch --replay`)
// read back through OpenTrace() as TraceFormat::kRecording.
//
// The format is JSON lines (UTF-8, "\n"):
//   line 1: {"schema":"vramwatch.record/1","started":"2026-07-14T08:12:38Z","host":"node1",
//            "source":"nvml","interval_s":1.0}
//   then one object per GPU per sample:
//   {"t":"2026-07-14T08:12:39.250Z","gpu":"0","index":0,"uuid":"GPU-...","pci_bus_id":"00000000:3B:00.0",
//    "name":"NVIDIA H100 80GB HBM3","used_bytes":12582912,"total_bytes":85520809984,"free_bytes":null,
//    "reserved_bytes":null,"util":0.93,
//    "processes":[{"pid":4242,"type":"C","command":"python","used_bytes":10485760,"sm_util":0.9}]}
// Sizes are bytes, util ratios 0..1, `t` ISO 8601 (with "Z" when the clock is UTC); a missing value
// is null, never 0 (an unknown command, type, uuid, name or bus id is null, never ""). "type" is
// spelled as `check` shows it: "C", "G", "M" (MPS) joined with '+' ("C+M"). "processes" is present
// only when the source listed processes at that instant. Readers ignore fields they do not know, so
// later versions may add fields under the same schema.
//
// Each Write() emits one complete line and flushes it, so a killed recorder leaves a readable file.
// Not thread-safe: one writer per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "core/sample.h"
#include "core/status.h"

namespace vw::trace {

inline constexpr const char* kRecordingSchema = "vramwatch.record/1";

struct RecordingHeader {
  double started = 0;                // seconds since the epoch (UTC)
  std::string host;                  // may be empty
  std::string source;                // "nvml", "emulator", "replay", ...
  std::optional<double> interval_s;  // sampling period, seconds
};

// The JSON text of the header line and of one record line (no trailing newline).
std::string RecordingHeaderLine(const RecordingHeader& header);
// `utc`: write times with "Z" (true for NVML samples, whose clock is UTC).
std::string RecordingRecordLine(const TraceRecord& record, bool utc = true);

class RecordingWriter {
 public:
  // Creates (truncates) `path` ("-" for standard output) and writes the header line. Errors name
  // the file ("write recording to run.jsonl: File too large"), or "standard output" for "-".
  // The file is written in append mode, and a file found shorter than what was written to it (cut
  // to nothing by logrotate's copytruncate) gets the header line again before the next record: it
  // stays a recording that analyze and watch --replay read, not NUL bytes then records.
  static Result<std::unique_ptr<RecordingWriter>> Create(const std::string& path, const RecordingHeader& header);
  ~RecordingWriter();
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Appends one record line and flushes it.
  Status Write(const TraceRecord& record, bool utc = true);
  // Flushes and closes; later Write() calls fail. Also done by the destructor (errors lost there).
  Status Close();
  size_t records_written() const { return records_; }

 private:
  RecordingWriter(std::FILE* f, bool own, std::string path, std::string header)
      : file_(f), own_(own), path_(std::move(path)), header_(std::move(header)) {}
  Status WriteLine(const std::string& line);

  std::FILE* file_;
  bool own_;
  std::string path_;      // as messages name it: the path, or "standard output" for "-"
  std::string header_;    // the header line, written again after the file was cut
  uint64_t written_ = 0;  // bytes written to the file since it was created or last found cut
  size_t records_ = 0;
};

}  // namespace vw::trace
