// The parsers behind OpenTrace(), one per format, and format detection. Internal to sources/trace:
// callers use OpenTrace() from trace_reader.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/trace/compact_sample.h"
#include "sources/trace/line_reader.h"
#include "sources/trace/trace_reader.h"

namespace vw::trace {

// Guesses the format from the first decoded bytes of a file (`complete`: they are the whole file).
// Returns a ParseError naming `display` when the text fits no format or holds no data.
Result<TraceFormat> DetectTraceFormat(std::string_view head, bool complete, const std::string& display);

// nvidia-smi --query-gpu CSV (and, labelled kValues, a value loop with --columns).
std::unique_ptr<TraceReader> NewQueryCsvReader(std::unique_ptr<LineReader> in, std::string display,
                                               const TraceOptions& options, TraceFormat label);
// What a --query-gpu CSV parser carries from one line to the next that matters for the lines after
// a block boundary (block-parallel reading): the column layout and the last `date` line's time.
struct QueryCsvCarry {
  std::string header_text;            // the header line in effect, trimmed ("" with none or --columns)
  bool have_columns = false;          // a layout is known (header seen, or --columns applied)
  bool columns_from_options = false;  // the layout is the --columns list
  std::optional<double> block_time;   // seconds since the epoch of the last `date` line

  bool SameLayout(const QueryCsvCarry& o) const {
    return have_columns == o.have_columns && columns_from_options == o.columns_from_options &&
           header_text == o.header_text;
  }
};

// How a block's lines used the carry they started with.
struct QueryCsvBlockUse {
  bool layout_read = false;  // a line was read with the starting layout (before any header)
  bool layout_set = false;   // a header line (or --columns) set the layout
  bool time_set = false;     // a `date` line set block_time
};

// Where a block parser puts the records of its block: compact samples and the block's GPU table.
// `scratch` are records of the caller's that rows are parsed into when they do not take the
// compact scan (reused from block to block, so they keep their strings' capacity).
struct CompactBlockOutput {
  GpuTable* gpus = nullptr;                       // appended to (Intern)
  std::vector<CompactSample>* samples = nullptr;  // grown as needed; the first `count` are the block's
  size_t count = 0;
  TraceRecord* scratch = nullptr;
  size_t scratch_count = 0;  // at least 1
};

// A --query-gpu CSV parser for one block of a file, started from a guessed carry. Rows without a
// timestamp column (their time depends on every earlier row) are not parsed in a block: they end
// it with a non-ok Status, as does any error; the caller then reads that part of the file with one
// sequential parser. Line numbers count from the block's first line; lenient skips are kept with
// those numbers. Used by one thread.
class QueryCsvBlockParser {
 public:
  virtual ~QueryCsvBlockParser() = default;
  // Parses the whole block into *out (the records the sequential reader would give, in order, with
  // --total applied). A plain data row of the GPU the table predicts (see ParseQueryRowExpected)
  // is stored without a TraceRecord; every other line goes through the sequential reader's path.
  virtual Status ParseBlock(CompactBlockOutput* out) = 0;
  // Rows of the last ParseBlock() taken by the compact scan (tests, diagnostics).
  virtual size_t compact_rows() const = 0;
  virtual QueryCsvCarry carry() const = 0;  // the carry after the lines read so far
  virtual QueryCsvBlockUse use() const = 0;
  virtual size_t lines_read() const = 0;
  virtual size_t block_skipped_count() const = 0;
  virtual const std::vector<SkippedLine>& block_skipped_examples() const = 0;
  virtual bool block_has_zone() const = 0;
  virtual RowClock block_row_clock() const = 0;     // the block's row timestamps (a mix is an error)
  virtual size_t block_row_clock_line() const = 0;  // the line of its first, within the block
};

std::unique_ptr<QueryCsvBlockParser> NewQueryCsvBlockParser(std::unique_ptr<LineReader> in, std::string display,
                                                            const TraceOptions& options, const QueryCsvCarry& start);

// Where a sequential --query-gpu CSV reader takes over from block-parallel reading.
struct QueryCsvResume {
  QueryCsvCarry carry;
  uint64_t records = 0;  // handed out before
  size_t skipped_count = 0;
  std::vector<SkippedLine> skipped_examples;
  bool has_zone = false;
  RowClock row_clock = RowClock::kNone;
  size_t row_clock_line = 0;  // the line of the first row timestamp
};

// A --query-gpu CSV reader over `in` (positioned at a line start) continuing from `from`.
std::unique_ptr<TraceReader> ResumeQueryCsvReader(std::unique_ptr<LineReader> in, std::string display,
                                                  const TraceOptions& options, const QueryCsvResume& from);

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
