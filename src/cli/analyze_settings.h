// `analyze`'s flags (cli/analyze_command.h) resolved: how to read the traces, the --since/--until
// range, the report options, and which GPUs --gpu selects, with the words for the GPUs it left out
// when it matches none. Plain data and functions, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "core/sample.h"
#include "core/status.h"
#include "outputs/analyze_report.h"
#include "sources/trace/trace_reader.h"

namespace vw::cli {

// Everything parsed from the flags, with units applied.
struct AnalyzeSettings {
  trace::TraceOptions trace;               // --format, --columns, --interval (s), --total (bytes), --lenient
  std::optional<double> since_s, until_s;  // --since, --until: sample times (seconds) kept, both ends included
  outputs::AnalyzeReportOptions report;    // --critical-runway (s); the skipped lines are added as files are read
};

// Errors name the flag: "--interval: must be greater than zero", "--since ... is after --until ...".
Result<AnalyzeSettings> ResolveAnalyzeFlags(const AnalyzeFlags& f);

// A note on the input that does not stop the analysis: printed on stderr ("vramwatch analyze: "
// and `note`, control characters written out) and kept for the report (settings.report.notes).
void AddNote(AnalyzeSettings& settings, const std::string& note);

// Whether --gpu selects `gpu` (every GPU when it is not given): its key, UUID or index, or its PCI
// bus id in either spelling (lspci/sysfs "0000:3b:00.0" or NVML's "00000000:3B:00.0").
bool GpuSelected(const AnalyzeFlags& f, const GpuIdentity& gpu);

// A series in messages: "GPU node-7/0", or "GPU node-7/0 PID 4242" for a process's.
std::string SeriesName(const GpuIdentity& gpu, std::optional<int64_t> pid);

// The --gpu values as given: "0, 3".
std::string GpusWanted(const AnalyzeFlags& f);

// The GPUs a trace holds, for the message when --gpu matches none of them: "0, 1" or
// "0 (00000000:3B:00.0, GPU-5b8c...)". Keeps the first kMaxListed.
class SeenGpus {
 public:
  void Note(const GpuIdentity& gpu);
  std::string Text() const;

 private:
  static constexpr size_t kMaxListed = 16;
  std::vector<std::string> keys_, listed_;
};

}  // namespace vw::cli
