// nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] loops, in every spelling seen in the
// wild: header or --columns, the header repeated before each row, units in the header or in the
// values, `date`/separator lines between blocks, several GPUs interleaved, per-process query blocks
// (skipped), rows without a timestamp column (time from the preceding `date` line, else from
// --interval).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sources/trace/csv_fields.h"
#include "sources/trace/line_trace_reader.h"
#include "sources/trace/query_csv_row.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

std::string_view ColumnLabel(CsvColumn k) {
  switch (k) {
    case CsvColumn::kTimestamp: return "timestamp";
    case CsvColumn::kIndex: return "index";
    case CsvColumn::kUuid: return "uuid";
    case CsvColumn::kPciBusId: return "pci.bus_id";
    case CsvColumn::kName: return "name";
    case CsvColumn::kUsed: return "memory.used";
    case CsvColumn::kTotal: return "memory.total";
    case CsvColumn::kFree: return "memory.free";
    case CsvColumn::kReserved: return "memory.reserved";
    case CsvColumn::kUtil: return "utilization.gpu";
    case CsvColumn::kPid: return "pid";
    case CsvColumn::kOther: return "field";
  }
  return "field";
}

std::string_view ValueErrorText(ValueError e) {
  switch (e) {
    case ValueError::kBadUnit: return " (unknown unit)";
    case ValueError::kOutOfRange: return " (out of range)";
    default: return "";
  }
}

// a == b, checking the last 8 bytes first: GPU UUIDs of one machine usually differ at the end, so a
// different GPU's row costs no memcmp call.
inline bool SameBytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.size() >= 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + a.size() - 8, 8);
    std::memcpy(&y, b.data() + b.size() - 8, 8);
    if (x != y) return false;
  }
  return std::memcmp(a.data(), b.data(), a.size()) == 0;
}

class QueryCsvReader final : public LineTraceReader, public QueryCsvBlockParser {
 public:
  using LineTraceReader::LineTraceReader;

  // Starts from `c` instead of the file's beginning (a block, or the rest of a file).
  void Import(const QueryCsvCarry& c) {
    if (c.have_columns && c.columns_from_options) {
      (void)SetColumnsFromOptions();  // it succeeded on the line that first applied it
    } else if (c.have_columns) {
      SplitCsv(c.header_text, &fields_);
      SetHeader(c.header_text);
    }
    block_time_ = c.block_time;
    use_ = QueryCsvBlockUse{};
  }
  void SetBlockMode() { block_mode_ = true; }
  using LineTraceReader::Resume;

  Status ParseBlock(CompactBlockOutput* out) override {
    compact_rows_ = 0;
    plain_.clear();
    for (;;) {
      TakePlainRows(out);
      // Anything else (or the end): the sequential reader's path, for one record.
      const size_t predicted = out->gpus->predicted();
      TraceRecord* rec = &out->scratch[std::min(predicted, out->scratch_count - 1)];
      bool got = false;
      VW_RETURN_IF_ERROR(ReadRecord(rec, &got));
      if (!got) return Status::Ok();
      Store(out, rec->sample, out->gpus->Intern(rec->gpu));
    }
  }
  size_t compact_rows() const override { return compact_rows_; }
  QueryCsvCarry carry() const override {
    return QueryCsvCarry{header_text_, have_columns_, header_from_options_, block_time_};
  }
  QueryCsvBlockUse use() const override { return use_; }
  size_t lines_read() const override { return line_number(); }
  size_t block_skipped_count() const override { return skipped_count(); }
  const std::vector<SkippedLine>& block_skipped_examples() const override { return skipped_examples(); }
  bool block_has_zone() const override { return has_zone(); }
  RowClock block_row_clock() const override { return row_clock(); }
  size_t block_row_clock_line() const override { return row_clock_line(); }

 protected:
  Status ReadNext(TraceRecord* out, bool* got) override {
    std::string_view line, t;
    Status error;
    while (NextContentLine(&line, &t, &error)) {
      const size_t ln = line_number();
      const char c = t.front();
      // The common data row: a digit first, at least 40 characters and a known layout of two or more
      // columns (so the split found a comma): it cannot be a header, comment, separator or `date`
      // line, so it is parsed straight away, as the checks below would have let it through.
      // A row the fused scan takes splits into exactly that many unquoted fields too.
      if (c >= '0' && c <= '9' && t.size() >= 40 && have_columns_ && !per_process_block_ && columns_.size() >= 2 &&
          columns_.size() <= kFastFields && FastRow(line, out)) {
        if (!use_.layout_set) use_.layout_read = true;
        *got = true;
        return Status::Ok();
      }
      if (c >= '0' && c <= '9' && t.size() >= 40 && have_columns_ && !per_process_block_ && columns_.size() >= 2 &&
          columns_.size() <= kFastFields &&
          SplitUnquotedInto(line, fast_fields_.data(), columns_.size()) == columns_.size()) {
        if (!use_.layout_set) use_.layout_read = true;
        bool bad = false;
        VW_RETURN_IF_ERROR(ParseRow(line, ln, fast_fields_.data(), out, &bad));
        if (bad) continue;
        *got = true;
        return Status::Ok();
      }
      // A header: its first name in any case, or quoted ("timestamp","index",... as pandas writes it).
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '"') {
        if (t == header_text_) {   // the header repeated before every row
          use_.layout_set = true;  // the layout is this line's, whatever it was before
          continue;
        }
        SplitCsv(t, &fields_);
        if (IsCsvHeader(fields_)) {
          SetHeader(t);
          VW_RETURN_IF_ERROR(CheckHeaderUnits(line, ln));
          continue;
        }
      }
      if (c == '#') continue;  // a comment
      if (c == '-' || c == '=' || c == '*') {
        if (IsSeparatorLine(t)) continue;
      }
      if (c < '0' || c > '9' || t.size() < 40 || t.find(',') == std::string_view::npos) {
        Timestamp ts;
        if (ParseDateLine(t, &ts)) {
          NoteTime(ts);
          block_time_ = ts.seconds;
          use_.time_set = true;
          group_.clear();
          continue;
        }
      }
      if (!use_.layout_set) use_.layout_read = true;
      if (!have_columns_) {
        if (options().columns.empty()) {
          return Fatal(ln, 1,
                       "this CSV has no header line, so its columns are unknown; pass them in the order of the "
                       "--query-gpu list, e.g. --columns timestamp,index,memory.used,memory.total");
        }
        VW_RETURN_IF_ERROR(SetColumnsFromOptions());
      }
      if (per_process_block_) continue;
      if (FastRow(line, out)) {
        *got = true;
        return Status::Ok();
      }
      // Fast path: an unquoted row with the right number of fields, split into a fixed array.
      if (columns_.size() <= kFastFields &&
          SplitUnquotedInto(line, fast_fields_.data(), columns_.size()) == columns_.size()) {
        bool bad = false;
        VW_RETURN_IF_ERROR(ParseRow(line, ln, fast_fields_.data(), out, &bad));
        if (bad) continue;
        *got = true;
        return Status::Ok();
      }
      SplitCsv(line, &fields_);
      if (fields_.size() != columns_.size()) {
        std::string_view at = fields_.size() > columns_.size() ? fields_[columns_.size()] : line.substr(line.size());
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, at),
                                     fmt::format("{} comma-separated fields as in the {}", columns_.size(),
                                                 header_from_options_ ? "--columns list" : "header"),
                                     fmt::format("{} fields", fields_.size())));
        continue;
      }
      bool bad = false;
      VW_RETURN_IF_ERROR(ParseRow(line, ln, fields_.data(), out, &bad));
      if (bad) continue;
      *got = true;
      return Status::Ok();
    }
    return error;
  }

 private:
  // The fused scan (query_csv_row.h) for layouts with a clock; false: use the general path.
  bool FastRow(std::string_view line, TraceRecord* out) {
    if (!fast_layout_) return false;
    bool zone = false;
    if (!ParseQueryRowFast(line, columns_.data(), columns_.size(), &date_cache_, out, &zone)) return false;
    NoteRowTime(zone, line_number());
    return true;
  }

  static void Store(CompactBlockOutput* out, const MemorySample& sample, uint32_t gpu) {
    std::vector<CompactSample>& samples = *out->samples;
    if (out->count == samples.size()) samples.emplace_back();
    ToCompact(sample, gpu, &samples[out->count++]);
  }

  // ParseBlock's loop for the common lines, which finds the lines itself (no per-line calls): a line
  // that starts with a digit, is 40 bytes or longer (without its "\r\n" or "\n"), ends in no blank
  // and is no longer than the LineReader's cut is its own trimmed text and would take the fused scan
  // in ReadNext() first. Such a row of the GPU the table predicts takes ParseQueryRowExpected (its
  // values straight into the block's samples), else the fused scan into a scratch record, as in
  // ReadNext(). Stops at the first line that is anything else (or a row the fused scan refuses),
  // leaving it to ReadRecord() as the next line of the input.
  void TakePlainRows(CompactBlockOutput* out) {
    if (!fast_layout_ || !have_columns_ || per_process_block_ || columns_.size() < 2 || columns_.size() > kFastFields ||
        !input().mapped()) {
      return;
    }
    const std::string_view rest = input().MappedRest();
    const char* p = rest.data();
    const char* const stop = p + rest.size();
    const CsvColumnSpec* cols = columns_.data();
    const size_t n = columns_.size();
    const std::optional<uint64_t> total = options().total_bytes;
    GpuTable& gpus = *out->gpus;
    std::vector<CompactSample>& samples = *out->samples;
    size_t count = out->count;
    size_t room = samples.size();  // samples.size(), kept here: the scan is an outside call
    size_t lines = 0;
    while (p != stop) {
      const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(stop - p)));
      const char* next = nl != nullptr ? nl + 1 : stop;
      const char* e = nl != nullptr ? nl : stop;
      if (e != p && e[-1] == '\r') --e;  // as LineReader: one CR before the LF
      const auto len = static_cast<size_t>(e - p);
      if (len < 40 || len > LineReader::kMaxLine || *p < '0' || *p > '9' || IsTrimmedSpace(e[-1])) break;
      const std::string_view line(p, len);
      const size_t predicted = gpus.predicted();
      bool zone = false;
      if (count == room) {
        samples.emplace_back();
        room = samples.size();
      }
      CompactSample& slot = samples[count];
      if (gpus.size() != 0 &&
          ParseQueryRowExpected(line, cols, n, &date_cache_, Expected(gpus, predicted), &slot, &zone)) {
        slot.gpu = gpus.Reuse(predicted);
        ++compact_rows_;
      } else {
        TraceRecord* rec = &out->scratch[std::min(predicted, out->scratch_count - 1)];
        if (!ParseQueryRowFast(line, cols, n, &date_cache_, rec, &zone)) break;
        ToCompact(rec->sample, gpus.Intern(rec->gpu), &slot);
      }
      NoteRowTime(zone, input().line_number() + lines + 1);  // the lines taken are skipped after the loop
      if ((slot.present & CompactSample::kTotal) == 0 && total) {
        slot.total_bytes = *total;
        slot.present |= CompactSample::kTotal;
      }
      ++count;
      p = next;
      ++lines;
    }
    out->count = count;
    if (lines == 0) return;
    input().SkipMapped(static_cast<size_t>(p - rest.data()), lines);
    if (!use_.layout_set) use_.layout_read = true;
  }

  // Entry i of the block's table with its plain texts (worked out once per entry: within a block
  // the table only grows).
  ExpectedGpu Expected(const GpuTable& gpus, size_t i) {
    while (plain_.size() < gpus.size()) plain_.push_back(PlainIdentityTexts(gpus[plain_.size()]));
    return ExpectedGpu{&gpus[i], plain_[i]};
  }

  void SetLayoutFlags() {
    fast_layout_ = fast_enabled_ && !per_process_block_ &&
                   std::any_of(columns_.begin(), columns_.end(),
                               [](const CsvColumnSpec& c) { return c.kind == CsvColumn::kTimestamp; });
  }

  void SetHeader(std::string_view t) {
    header_text_.assign(t.data(), t.size());
    columns_.clear();
    per_process_block_ = false;
    for (std::string_view f : fields_) {
      CsvColumnSpec spec;
      ParseCsvColumn(f, &spec);
      if (spec.kind == CsvColumn::kPid) per_process_block_ = true;
      columns_.push_back(spec);
    }
    have_columns_ = true;
    header_from_options_ = false;
    group_.clear();
    use_.layout_set = true;
    SetLayoutFlags();
  }

  // A memory column whose unit is none vramwatch knows ("memory.used [xyz]"): an error naming it,
  // since its values would otherwise be read as MiB. `line` is the header, fields_ its fields.
  Status CheckHeaderUnits(std::string_view line, size_t ln) const {
    for (size_t i = 0; i < columns_.size() && i < fields_.size(); ++i) {
      if (!columns_[i].unknown_unit) continue;
      return Fatal(ln, ColumnOf(line, fields_[i]),
                   fmt::format("column {} '{}': unknown memory unit; expected [MiB], [GiB], [KiB], [TiB] or [B] "
                               "(any case; MB, GB, KB and TB are read as binary, as nvidia-smi means them)",
                               i + 1, fields_[i]));
    }
    return Status::Ok();
  }

  Status SetColumnsFromOptions() {
    columns_.clear();
    for (const std::string& name : options().columns) {
      CsvColumnSpec spec;
      if (!ParseCsvColumn(name, &spec)) {
        return Status::InvalidArgument(fmt::format(
            "--columns: '{}' is not a --query-gpu field name (e.g. memory.used or 'memory.used [MiB]')", name));
      }
      if (spec.unknown_unit) {
        return Status::InvalidArgument(
            fmt::format("--columns: '{}': unknown memory unit; expected [MiB], [GiB], [KiB], [TiB] or [B]", name));
      }
      columns_.push_back(spec);
    }
    have_columns_ = true;
    header_from_options_ = true;
    use_.layout_set = true;
    SetLayoutFlags();
    return Status::Ok();
  }

  // Parses one data row into *rec; *bad when the row was malformed and skipped (lenient).
  // `fields` holds columns_.size() fields of `line`.
  Status ParseRow(std::string_view line, size_t ln, const std::string_view* fields, TraceRecord* rec, bool* bad) {
    std::string_view key_index, key_uuid, key_pci;
    bool have_time = false, have_uuid = false, have_name = false;
    // Reset every field, keeping the strings' capacity (no allocation per row once warm). The UUID
    // and name are overwritten only when they differ from what the record holds.
    ResetRowFields(rec);
    MemorySample& s = rec->sample;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const CsvColumnSpec& col = columns_[i];
      std::string_view v = fields[i];
      ValueError err = ValueError::kOk;
      std::string_view expected;
      switch (col.kind) {
        case CsvColumn::kOther:
        case CsvColumn::kPid: break;
        case CsvColumn::kTimestamp: {
          Timestamp ts;
          if (!ParseTraceTimestamp(v, &ts, &date_cache_)) {
            err = ValueError::kNotNumber;
            expected = EpochBeyondRange(v)
                           ? "epoch seconds before the year 10000 in timestamp (a time in milliseconds is no "
                             "time in seconds)"
                           : "a timestamp (YYYY/MM/DD HH:MM:SS.mmm, ISO 8601 or epoch seconds) in timestamp";
            break;
          }
          NoteRowTime(ts.has_zone, ln);
          s.t = ts.seconds;
          have_time = true;
          break;
        }
        case CsvColumn::kIndex: {
          uint64_t idx = 0;
          const bool number = ParseUint(v, &idx);
          if (!number && IsMissingValue(v)) break;
          if (!number || idx > 1000000) {
            err = ValueError::kNotNumber;
            expected = "a GPU index (0, 1, ...) in index";
            break;
          }
          rec->gpu.index = static_cast<int>(idx);
          key_index = v;
          break;
        }
        case CsvColumn::kUuid:
          if (!IsMissingValue(v)) {
            if (!SameBytes(rec->gpu.uuid, v)) rec->gpu.uuid.assign(v.data(), v.size());
            have_uuid = true;
            key_uuid = v;
          }
          break;
        case CsvColumn::kPciBusId:
          if (!IsMissingValue(v)) {
            AssignPciBusId(v, &rec->gpu.pci_bus_id);
            key_pci = rec->gpu.pci_bus_id;
          }
          break;
        case CsvColumn::kName:
          if (!IsMissingValue(v)) {
            if (v.find("\"\"") != std::string_view::npos) {
              // A quoted field writes a quote as two: "NVIDIA ""X""" is NVIDIA "X".
              std::string text;
              for (size_t k = 0; k < v.size(); ++k) {
                text += v[k];
                if (v[k] == '"' && k + 1 < v.size() && v[k + 1] == '"') ++k;
              }
              rec->gpu.name = std::move(text);
            } else if (!SameBytes(rec->gpu.name, v)) {
              rec->gpu.name.assign(v.data(), v.size());
            }
            have_name = true;
          }
          break;
        case CsvColumn::kUsed:
          if (!ParseMibFast(v, col.unit, &s.used_bytes)) err = ParseMemoryValue(v, col.unit, &s.used_bytes);
          break;
        case CsvColumn::kTotal:
          if (!ParseMibFast(v, col.unit, &s.total_bytes)) err = ParseMemoryValue(v, col.unit, &s.total_bytes);
          break;
        case CsvColumn::kFree:
          if (!ParseMibFast(v, col.unit, &s.free_bytes)) err = ParseMemoryValue(v, col.unit, &s.free_bytes);
          break;
        case CsvColumn::kReserved:
          if (!ParseMibFast(v, col.unit, &s.reserved_bytes)) err = ParseMemoryValue(v, col.unit, &s.reserved_bytes);
          break;
        case CsvColumn::kUtil: err = ParsePercentValue(v, &s.gpu_util_ratio); break;
      }
      if (err != ValueError::kOk) {
        std::string exp(expected);
        if (exp.empty()) {
          exp = col.kind == CsvColumn::kUtil
                    ? fmt::format("a percentage 0..100 in utilization.gpu{}", ValueErrorText(err))
                    : fmt::format("a number of MiB in {}{}", ColumnLabel(col.kind), ValueErrorText(err));
        }
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, v), exp, v));
        *bad = true;
        return Status::Ok();
      }
    }
    FinishRowIdentity(rec, have_uuid, have_name, key_index, key_uuid, key_pci);
    if (!have_time) {
      // The time of such a row depends on the lines before the block: a block stops here.
      if (block_mode_) return Status::Unavailable("a row without a timestamp column in a block");
      if (block_time_) {
        s.t = *block_time_;
      } else {
        auto interval = RequireInterval(ln, "the rows have no timestamp column and no `date` lines");
        if (!interval.ok()) return interval.status();
        if (group_.size() >= 4096 || std::find(group_.begin(), group_.end(), rec->gpu.key) != group_.end()) {
          ++group_index_;
          group_.clear();
        }
        group_.push_back(rec->gpu.key);
        s.t = static_cast<double>(group_index_) * *interval;
        set_synthetic_time();
      }
    }
    return Status::Ok();
  }

  static constexpr size_t kFastFields = 32;
  std::vector<std::string_view> fields_;
  std::array<std::string_view, kFastFields> fast_fields_;
  DateCache date_cache_;
  std::vector<CsvColumnSpec> columns_;
  std::string header_text_;
  bool have_columns_ = false;
  bool header_from_options_ = false;
  bool per_process_block_ = false;
  const bool fast_enabled_ = QueryRowFastPath();
  bool fast_layout_ = false;  // the columns have a timestamp: rows may take the fused scan
  std::optional<double> block_time_;
  std::vector<std::string> group_;  // GPU keys seen in the current sample instant (no clock)
  uint64_t group_index_ = 0;
  bool block_mode_ = false;  // parsing one block of a file (see QueryCsvBlockParser)
  QueryCsvBlockUse use_;
  size_t compact_rows_ = 0;     // rows of the block taken by ParseQueryRowExpected
  std::vector<uint8_t> plain_;  // PlainIdentityTexts of the block's GPU table entries so far
};

}  // namespace

std::unique_ptr<QueryCsvBlockParser> NewQueryCsvBlockParser(std::unique_ptr<LineReader> in, std::string display,
                                                            const TraceOptions& options, const QueryCsvCarry& start) {
  auto r = std::make_unique<QueryCsvReader>(std::move(in), std::move(display), options, TraceFormat::kQueryCsv);
  r->Import(start);
  r->SetBlockMode();
  return r;
}

std::unique_ptr<TraceReader> ResumeQueryCsvReader(std::unique_ptr<LineReader> in, std::string display,
                                                  const TraceOptions& options, const QueryCsvResume& from) {
  auto r = std::make_unique<QueryCsvReader>(std::move(in), std::move(display), options, TraceFormat::kQueryCsv);
  r->Import(from.carry);
  r->Resume(from.records, from.skipped_count, from.skipped_examples, from.has_zone, from.row_clock,
            from.row_clock_line);
  return r;
}

std::unique_ptr<TraceReader> NewQueryCsvReader(std::unique_ptr<LineReader> in, std::string display,
                                               const TraceOptions& options, TraceFormat label) {
  return std::make_unique<QueryCsvReader>(std::move(in), std::move(display), options, label);
}

}  // namespace vw::trace
