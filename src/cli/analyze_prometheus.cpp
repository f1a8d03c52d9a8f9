#include "cli/analyze_prometheus.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "cli/trace_flags.h"
#include "core/units.h"
#include "detection/series_builder.h"
#include "sources/prometheus/prometheus_reader.h"

namespace vw::cli {

Result<std::vector<outputs::AnalyzedSeries>> AnalyzePrometheus(const AnalyzeFlags& flags,
                                                               const AnalyzeSettings& settings) {
  auto range = ParseDuration(flags.range);
  if (!range.ok()) return range.status().WithContext("--range");
  auto unit = prometheus::ParseValueUnit(flags.unit);
  if (!unit.ok()) return unit.status().WithContext("--unit");
  std::optional<double> end;
  if (!flags.end.empty()) {
    auto t = ParseTimeFlag("--end", flags.end);
    if (!t.ok()) return t.status();
    end = *t;
  }
  auto fetched = prometheus::FetchPrometheusSeries(flags.prometheus_url, flags.query, *range, end, *unit);
  if (!fetched.ok()) return fetched.status();
  std::vector<outputs::AnalyzedSeries> out;
  for (const prometheus::PrometheusSeries& ps : *fetched) {
    if (!GpuSelected(flags, ps.gpu)) continue;
    detection::SeriesBuilder b(ps.gpu);
    if (ps.pid) b.SetProcess(*ps.pid, ps.labels.count("command") ? ps.labels.at("command") : "");
    b.SetTimeFlags(/*has_zone=*/true, /*synthetic_time=*/false);
    for (TraceRecord rec : ps.records) {
      if (settings.since_s && rec.sample.t < *settings.since_s) continue;
      if (settings.until_s && rec.sample.t > *settings.until_s) continue;
      if (!rec.sample.total_bytes && settings.trace.total_bytes) rec.sample.total_bytes = settings.trace.total_bytes;
      b.Add(rec.sample);
    }
    out.push_back({fmt::format("{} {}", flags.prometheus_url, flags.query), b.Snapshot(), b.samples_without_memory()});
  }
  if (out.empty()) {
    return Status::NotFound(fmt::format("{}: the query '{}' returned no series{} over the last {}",
                                        flags.prometheus_url, flags.query, flags.gpus.empty() ? "" : " matching --gpu",
                                        flags.range));
  }
  return out;
}

}  // namespace vw::cli
