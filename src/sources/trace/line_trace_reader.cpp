#include "sources/trace/line_trace_reader.h"

#include <fmt/format.h>

#include "sources/trace/trace_values.h"

namespace vw::trace {

LineTraceReader::LineTraceReader(std::unique_ptr<LineReader> in, std::string display, TraceOptions options,
                                 TraceFormat format)
    : in_(std::move(in)), display_(std::move(display)), options_(std::move(options)), format_(format) {}

Status NoSamplesError(const std::string& display, size_t skipped) {
  return Status::ParseError(
      skipped > 0
          ? fmt::format("{}: no valid samples ({} malformed lines skipped)", display, skipped)
          : fmt::format("{}: no samples in the trace (it is empty or holds only headers and comments)", display));
}

void LineTraceReader::Resume(uint64_t records, size_t skipped_count, std::vector<SkippedLine> examples, bool has_zone,
                             RowClock row_clock, size_t row_clock_line) {
  records_ = records;
  skipped_count_ = skipped_count;
  skipped_ = std::move(examples);
  has_zone_ = has_zone;
  row_clock_ = row_clock;
  row_clock_line_ = row_clock_line;
}

Status LineTraceReader::MixedClock() const {
  const bool zone = row_clock_ == RowClock::kNoZone;  // the offending row is of the other kind
  const std::string before = row_clock_line_ != 0 ? fmt::format(" (from line {})", row_clock_line_) : "";
  return Fatal(
      mixed_clock_line_, 1,
      fmt::format("this timestamp carries {} time zone and those of the rows before it{} {}: their times cannot "
                  "be put on one clock (a time without a zone is the recording machine's local time); "
                  "write every timestamp one way, or split the file where they change",
                  zone ? "a" : "no", before, zone ? "do not" : "do"));
}

Result<bool> LineTraceReader::NextInto(TraceRecord* record) {
  if (!error_.ok()) return error_;
  bool got = false;
  Status s = ReadRecord(record, &got);
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  if (!got) {
    if (records_ == 0) {
      error_ = NoSamplesError(display_, skipped_count_);
      return error_;
    }
    return false;
  }
  ++records_;
  return true;
}

Result<std::optional<TraceRecord>> LineTraceReader::Next() {
  TraceRecord rec;
  auto got = NextInto(&rec);
  if (!got.ok()) return got.status();
  if (!*got) return std::optional<TraceRecord>();
  return std::optional<TraceRecord>(std::move(rec));
}

Status LineTraceReader::Malformed(size_t line, size_t col, std::string_view expected, std::string_view got) {
  std::string msg = fmt::format("expected {}, got '{}'", expected, Shown(got));
  if (!options_.lenient) return Status::ParseError(fmt::format("{}:{}:{}: {}", display_, line, col, msg));
  ++skipped_count_;
  if (skipped_.size() < kMaxSkippedExamples) skipped_.push_back(SkippedLine{line, fmt::format("{}: {}", col, msg)});
  return Status::Ok();
}

Status LineTraceReader::Fatal(size_t line, size_t col, std::string_view message) const {
  if (line == 0) return Status::ParseError(fmt::format("{}: {}", display_, message));
  return Status::ParseError(fmt::format("{}:{}:{}: {}", display_, line, col, message));
}

size_t LineTraceReader::ColumnOf(std::string_view line, std::string_view part) {
  if (part.data() < line.data() || part.data() > line.data() + line.size()) return 1;
  // Characters, not bytes: count UTF-8 lead bytes before the part.
  size_t col = 1;
  for (const char* p = line.data(); p < part.data(); ++p) {
    if ((static_cast<unsigned char>(*p) & 0xC0) != 0x80) ++col;
  }
  return col;
}

Status LineTraceReader::OverlongLine() {
  return Malformed(line_number(), 1, fmt::format("a line shorter than {} bytes", LineReader::kMaxLine),
                   "<very long line>");
}

Status LineTraceReader::InputStatus() const {
  if (in_->status().ok()) return Status::Ok();
  return in_->status().WithContext(display_);
}

Result<double> LineTraceReader::RequireInterval(size_t line, std::string_view why) const {
  if (options_.interval_s && *options_.interval_s > 0) return *options_.interval_s;
  return Fatal(
      line, 1,
      fmt::format("{}; pass the sampling interval, e.g. --interval 1s (or --interval 15s for a 15 s loop)", why));
}

}  // namespace vw::trace
