#include "cli/analyze_settings.h"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "cli/trace_flags.h"
#include "core/printable.h"
#include "core/units.h"
#include "sources/trace/trace_values.h"

namespace vw::cli {

Result<AnalyzeSettings> ResolveAnalyzeFlags(const AnalyzeFlags& f) {
  AnalyzeSettings s;
  // "torch": PyTorch memory logs (cli/analyze_framework.h), not a trace format.
  auto format = trace::ParseTraceFormat(f.format == "torch" ? std::string("auto") : f.format);
  if (!format.ok()) {
    return Status::InvalidArgument(
        fmt::format("--format: {}, or torch (a PyTorch memory log)", format.status().message()));
  }
  s.trace.format = *format;
  if (!f.columns.empty()) {
    auto columns = SplitColumnsFlag(f.columns);
    if (!columns.ok()) return columns.status();
    s.trace.columns = std::move(*columns);
  }
  if (!f.interval.empty()) {
    auto d = ParseDuration(f.interval);
    if (!d.ok()) return d.status().WithContext("--interval");
    if (*d <= 0) return Status::InvalidArgument("--interval: must be greater than zero");
    s.trace.interval_s = *d;
  }
  if (!f.total.empty()) {
    auto b = ParseSize(f.total, SizeUnits::kGpuMemory);
    if (!b.ok()) return b.status().WithContext("--total");
    if (*b == 0) {
      return Status::InvalidArgument(fmt::format("--total: bad size '{}': must be greater than zero", f.total));
    }
    s.trace.total_bytes = *b;
  }
  s.trace.lenient = f.lenient;
  for (auto [text, out] : {std::pair{&f.since, &s.since_s}, std::pair{&f.until, &s.until_s}}) {
    if (text->empty()) continue;
    auto t = ParseTimeFlag(out == &s.since_s ? "--since" : "--until", *text);
    if (!t.ok()) return t.status();
    *out = *t;
  }
  if (s.since_s && s.until_s && *s.since_s > *s.until_s) {
    return Status::InvalidArgument(
        fmt::format("--since {} is after --until {}: no sample can be in that range", f.since, f.until));
  }
  auto runway = ParseDuration(f.critical_runway);
  if (!runway.ok()) return runway.status().WithContext("--critical-runway");
  s.report.critical_runway_s = *runway;
  return s;
}

bool GpuSelected(const AnalyzeFlags& f, const GpuIdentity& gpu) {
  if (f.gpus.empty()) return true;
  for (const std::string& want : f.gpus) {
    if (want == gpu.key || (!gpu.uuid.empty() && want == gpu.uuid) ||
        (gpu.index && want == std::to_string(*gpu.index))) {
      return true;
    }
    // PCI bus ids in either spelling: lspci/sysfs "0000:3b:00.0" or NVML's "00000000:3B:00.0".
    if (!gpu.pci_bus_id.empty() && want.find(':') != std::string::npos &&
        (want == gpu.pci_bus_id || trace::NormalizePciBusId(want) == trace::NormalizePciBusId(gpu.pci_bus_id))) {
      return true;
    }
  }
  return false;
}

std::string SeriesName(const GpuIdentity& gpu, std::optional<int64_t> pid) {
  return pid ? fmt::format("GPU {} PID {}", gpu.key, *pid) : fmt::format("GPU {}", gpu.key);
}

std::string GpusWanted(const AnalyzeFlags& f) {
  std::string out;
  for (const std::string& g : f.gpus) out += (out.empty() ? "" : ", ") + g;
  return out;
}

void AddNote(AnalyzeSettings& settings, const std::string& note) {
  std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(note).c_str());
  settings.report.notes.push_back(note);
}

void SeenGpus::Note(const GpuIdentity& gpu) {
  if (listed_.size() >= kMaxListed) return;
  for (const std::string& k : keys_) {
    if (k == gpu.key) return;
  }
  keys_.push_back(gpu.key);
  std::string ids;
  for (const std::string* id : {&gpu.pci_bus_id, &gpu.uuid}) {
    if (id->empty() || *id == gpu.key) continue;
    ids += (ids.empty() ? "" : ", ") + *id;
  }
  listed_.push_back(ids.empty() ? gpu.key : fmt::format("{} ({})", gpu.key, ids));
}

std::string SeenGpus::Text() const {
  std::string out;
  for (const std::string& g : listed_) out += (out.empty() ? "" : "; ") + g;
  return out;
}

}  // namespace vw::cli
