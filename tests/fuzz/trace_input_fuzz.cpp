// Fuzz target: any bytes as a trace file, read by every reader and fed to the series a report is
// built from (the engine, the decimated curve, the assessment). The first byte picks the options:
// bits 0-2 the format (auto, query-csv, values, dmon, pmon, smi-table, recording, auto), bit 3
// lenient, bit 4 a 1 s interval, bit 5 the column list of a noheader CSV. A reader's error ends
// the input; anything else (a crash, a sanitizer report, a hang) is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "detection/series_builder.h"
#include "sources/trace/trace_reader.h"

namespace {

// A file of this process's own (readers take paths), rewritten for every input.
const std::string& InputPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/vw-fuzz-trace-" + std::to_string(getpid());
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t options = data[0];
  if (FILE* f = std::fopen(InputPath().c_str(), "wb")) {
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else {
    std::perror(InputPath().c_str());
    std::abort();
  }
  using vw::trace::TraceFormat;
  constexpr TraceFormat kFormats[8] = {TraceFormat::kAuto,      TraceFormat::kQueryCsv, TraceFormat::kValues,
                                       TraceFormat::kDmon,      TraceFormat::kPmon,     TraceFormat::kSmiTable,
                                       TraceFormat::kRecording, TraceFormat::kAuto};
  vw::trace::TraceOptions o;
  o.format = kFormats[options & 7];
  o.lenient = (options & 8) != 0;
  if (options & 16) o.interval_s = 1.0;
  if (options & 32) o.columns = {"timestamp", "index", "memory.used", "memory.total"};
  auto reader = vw::trace::OpenTrace(InputPath(), o);
  if (!reader.ok()) return 0;
  vw::detection::SeriesBuilder series(vw::GpuIdentity{.key = "0"});
  series.SetTimeFlags((*reader)->has_zone(), (*reader)->synthetic_time());
  vw::TraceRecord record;
  for (size_t n = 1; n <= 200000; ++n) {
    auto more = (*reader)->NextInto(&record);
    if (!more.ok() || !*more) break;
    series.Add(record.sample);
    if (n % 4096 == 0) (void)series.Snapshot();
  }
  (void)series.Snapshot();
  return 0;
}
