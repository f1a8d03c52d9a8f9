// The runbook loop: one memory.used value per line ("4321" or "4321 MiB"), no clock. Sample i is at
// i * --interval seconds; --total gives the card size. Blank, separator and `date` lines are skipped.
// (With --columns the loop is read by the CSV reader instead; see OpenTrace.)
#include <fmt/format.h>

#include "sources/trace/line_trace_reader.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

class ValuesReader : public LineTraceReader {
 public:
  ValuesReader(std::unique_ptr<LineReader> in, std::string display, const TraceOptions& options)
      : LineTraceReader(std::move(in), std::move(display), options, TraceFormat::kValues) {}

 protected:
  Status ReadNext(TraceRecord* out, bool* got) override {
    std::string_view line, t;
    Status error;
    while (NextContentLine(&line, &t, &error)) {
      const size_t ln = line_number();
      if (IsSeparatorLine(t)) continue;
      Timestamp ts;
      if (ParseDateLine(t, &ts)) continue;
      if (t.find(',') != std::string_view::npos) {
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, t),
                                     "one memory.used value per line (for several columns pass --columns, "
                                     "e.g. --columns utilization.gpu,memory.used)",
                                     t));
        continue;
      }
      std::optional<uint64_t> used;
      ValueError err = ParseMemoryValue(t, MemUnit::kMiB, &used);
      if (err != ValueError::kOk) {
        VW_RETURN_IF_ERROR(Malformed(ln, ColumnOf(line, t), "a memory.used value in MiB (e.g. 4321 or 4321 MiB)", t));
        continue;
      }
      auto interval = RequireInterval(ln, "a value-per-line trace has no clock");
      if (!interval.ok()) return interval.status();
      set_synthetic_time();
      TraceRecord rec;
      rec.gpu.key = "0";
      rec.sample.t = static_cast<double>(count_++) * *interval;
      rec.sample.used_bytes = used;
      *out = std::move(rec);
      *got = true;
      return Status::Ok();
    }
    return error;
  }

 private:
  uint64_t count_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> NewValuesReader(std::unique_ptr<LineReader> in, std::string display,
                                             const TraceOptions& options) {
  return std::make_unique<ValuesReader>(std::move(in), std::move(display), options);
}

}  // namespace vw::trace
