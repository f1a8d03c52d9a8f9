// TraceReader: streams the samples of a recorded trace file, one record at a time, whatever the
// format (nvidia-smi --query-gpu CSV, a bare memory.used loop, dmon/pmon logs, repeated full
// nvidia-smi tables, vramwatch recordings). Memory use does not depend on the file size.
//
// Errors name the file, line and column and what was expected ("run.csv:12:31: expected a number of
// MiB in memory.used, got 'abc'"). With `lenient`, bad lines are skipped and counted instead.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.h"
#include "core/status.h"

namespace vw::trace {

// What the row timestamps read so far carry: none yet, a time zone (or epoch seconds), or no zone.
enum class RowClock : uint8_t { kNone, kZone, kNoZone };

enum class TraceFormat {
  kAuto,       // detect from the first lines
  kQueryCsv,   // nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]
  kValues,     // one memory.used number per line (optionally "12 MiB"), no timestamps
  kDmon,       // nvidia-smi dmon
  kPmon,       // nvidia-smi pmon
  kSmiTable,   // repeated full nvidia-smi tables
  kRecording,  // vramwatch record output
};

std::string_view TraceFormatName(TraceFormat f);              // "query-csv", "values", ...
Result<TraceFormat> ParseTraceFormat(std::string_view name);  // inverse; "auto" accepted

struct TraceOptions {
  TraceFormat format = TraceFormat::kAuto;
  // Column names for a CSV written with `noheader` ("timestamp,index,memory.used,memory.total").
  std::vector<std::string> columns;
  // Spacing of samples for files without timestamps (seconds); also the default start is 0.
  std::optional<double> interval_s;
  // Card size when the file does not say (bytes).
  std::optional<uint64_t> total_bytes;
  bool lenient = false;  // skip malformed lines (counted) instead of failing
};

struct SkippedLine {
  size_t line = 0;
  std::string reason;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;

  // The next record; std::nullopt at the end of the file; a non-ok Status on malformed input
  // (unless lenient) or I/O error. After an error, Next() keeps returning that error.
  virtual Result<std::optional<TraceRecord>> Next() = 0;

  // Like Next(), but fills `*record`, reusing its strings' capacity, so a loop that passes the same
  // record allocates nothing per record in the steady state (the fast path for large files).
  // Returns true when a record was read, false at the end of the file; `*record` is unspecified
  // after false or an error. Do not mix with Next() expectations about ownership: each call
  // overwrites every field of `*record`.
  virtual Result<bool> NextInto(TraceRecord* record);

  virtual TraceFormat format() const = 0;
  // Bytes consumed so far and the file size (0 when unknown), for progress bars.
  virtual uint64_t bytes_read() const = 0;
  virtual uint64_t bytes_total() const = 0;
  // Lines skipped in lenient mode: the count and the first few with reasons.
  virtual size_t skipped_count() const = 0;
  virtual const std::vector<SkippedLine>& skipped_examples() const = 0;
  // True when the trace has no clock (sample times were synthesised from interval_s).
  virtual bool synthetic_time() const = 0;
  // True when the trace's timestamps carried a zone (see core/time.h).
  virtual bool has_zone() const = 0;
  // Bytes of a last line without a line end, left out (line_reader.h: the file is probably still
  // being written); 0 when none. Known once the end is reached.
  virtual uint64_t unterminated_tail_bytes() const { return 0; }
  // The host a recording's header names (`vramwatch record`'s "host"); empty for the other formats,
  // for a header without one, and before the header was read (it is once Next() gave a record).
  virtual std::string host() const { return {}; }
};

// Opens `path` ("-" for standard input) and detects or applies the format.
Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path, const TraceOptions& options);

}  // namespace vw::trace
