// LineTraceReader: what every text trace parser shares: the LineReader, the display name used in
// messages, the options, the sticky error, lenient skipping with examples, and the clock flags.
//
// A format implements ReadNext(), which reads lines until it can hand out one record (or reaches
// the end). Malformed input goes through Malformed(): in strict mode it returns the ParseError
// "FILE:LINE:COL: expected ..., got '...'", in lenient mode it records the line and returns ok so the
// parser skips it. Not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "sources/trace/line_reader.h"
#include "sources/trace/trace_reader.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {

// Most examples of skipped lines kept for the report.
inline constexpr size_t kMaxSkippedExamples = 10;

// The error for a trace that ended without a single record (`skipped`: lenient skips).
Status NoSamplesError(const std::string& display, size_t skipped);

class LineTraceReader : public TraceReader {
 public:
  LineTraceReader(std::unique_ptr<LineReader> in, std::string display, TraceOptions options, TraceFormat format);

  Result<std::optional<TraceRecord>> Next() final;
  Result<bool> NextInto(TraceRecord* record) final;
  TraceFormat format() const override { return format_; }
  uint64_t bytes_read() const override { return in_->bytes_read(); }
  uint64_t bytes_total() const override { return in_->bytes_total(); }
  uint64_t unterminated_tail_bytes() const override { return in_->unterminated_tail_bytes(); }
  size_t skipped_count() const override { return skipped_count_; }
  const std::vector<SkippedLine>& skipped_examples() const override { return skipped_; }
  bool synthetic_time() const override { return synthetic_time_; }
  bool has_zone() const override { return has_zone_; }

 protected:
  // Fills *out with the next record and sets *got, or leaves *got false at the end of the input.
  // *out holds a previous record (or garbage): overwrite every field.
  virtual Status ReadNext(TraceRecord* out, bool* got) = 0;

  // One ReadNext() with the input's I/O status and the --total default applied, but without the
  // sticky error and the "no samples" check of NextInto() (block-parallel reading calls this per
  // block, where an empty block is no error).
  // Inline, so that a final reader class calls its own ReadNext() directly.
  Status ReadRecord(TraceRecord* out, bool* got) {
    *got = false;
    Status s = ReadNext(out, got);
    if (s.ok() && mixed_clock_line_ != 0) s = MixedClock();
    if (s.ok() && !*got) s = InputStatus();
    if (!s.ok()) return s;
    if (*got && !out->sample.total_bytes && options_.total_bytes) out->sample.total_bytes = options_.total_bytes;
    return Status::Ok();
  }
  // Carries on where another reader of the same file stopped (block-parallel reading falling back
  // to one thread): `records` already handed out, lenient skips so far and their first examples,
  // and whether a zone was seen.
  // `row_clock` is the RowClock the rows read before carried, first seen at `row_clock_line`.
  void Resume(uint64_t records, size_t skipped_count, std::vector<SkippedLine> examples, bool has_zone,
              RowClock row_clock, size_t row_clock_line);

  // A malformed line: error in strict mode, counted and skipped (ok) in lenient mode. `col` is the
  // 1-based character position of the offending text in the line.
  Status Malformed(size_t line, size_t col, std::string_view expected, std::string_view got);
  // An error that lenient mode cannot skip (a missing option, an unusable file).
  Status Fatal(size_t line, size_t col, std::string_view message) const;
  // 1-based column of `part` inside `line` (both views into the same buffer).
  static size_t ColumnOf(std::string_view line, std::string_view part);
  // Wraps a line cut by the LineReader as a malformed line.
  Status OverlongLine();

  // The next line that is not blank: *line as read, *trimmed without surrounding blanks. A line cut
  // by the LineReader goes through OverlongLine() (skipped in lenient mode). Returns false at the
  // end of the input, or with *error set when an overlong line is an error (strict mode).
  bool NextContentLine(std::string_view* line, std::string_view* trimmed, Status* error) {
    while (NextLine(line)) {
      if (LineOverlong()) {
        *error = OverlongLine();
        if (!error->ok()) return false;
        continue;
      }
      *trimmed = Trim(*line);
      if (!trimmed->empty()) return true;
    }
    return false;
  }
  // The input itself (a parser that finds some lines without Next(), see LineReader::MappedRest).
  LineReader& input() { return *in_; }
  // The next line; false at the end of the input (check in_->status() for I/O errors).
  bool NextLine(std::string_view* line) { return in_->Next(line); }
  // True when the line last returned by NextLine() was cut (see LineReader::kMaxLine).
  bool LineOverlong() const { return in_->overlong(); }
  Status InputStatus() const;
  size_t line_number() const { return in_->line_number(); }
  const std::string& display() const { return display_; }
  const TraceOptions& options() const { return options_; }
  void NoteTime(const Timestamp& ts) { has_zone_ = has_zone_ || ts.has_zone; }
  // A row's own timestamp (`line`, 1-based), with a zone or without. Rows that mix the two cannot be
  // put on one clock (one without a zone is the recording machine's local time, unknown here):
  // ReadRecord() fails at the first row of the other kind, in lenient mode too.
  void NoteRowTime(bool zone, size_t line) {
    has_zone_ = has_zone_ || zone;
    const RowClock kind = zone ? RowClock::kZone : RowClock::kNoZone;
    if (row_clock_ == RowClock::kNone) {
      row_clock_ = kind;
      row_clock_line_ = line;
    } else if (row_clock_ != kind && mixed_clock_line_ == 0) {
      mixed_clock_line_ = line;
    }
  }
  RowClock row_clock() const { return row_clock_; }
  size_t row_clock_line() const { return row_clock_line_; }
  void set_synthetic_time() { synthetic_time_ = true; }
  // Seconds between samples for files without a clock, or a Fatal error naming --interval.
  Result<double> RequireInterval(size_t line, std::string_view why) const;

 private:
  std::unique_ptr<LineReader> in_;
  std::string display_;
  TraceOptions options_;
  TraceFormat format_;
  Status error_;
  size_t skipped_count_ = 0;
  uint64_t records_ = 0;
  std::vector<SkippedLine> skipped_;
  bool synthetic_time_ = false;
  bool has_zone_ = false;
  RowClock row_clock_ = RowClock::kNone;  // the kind of the first row timestamp
  size_t row_clock_line_ = 0;             // its line
  size_t mixed_clock_line_ = 0;           // the first row of the other kind; 0 while none
  Status MixedClock() const;
};

}  // namespace vw::trace
