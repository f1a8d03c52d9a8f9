#include "cli/analyze_prometheus.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "cli/trace_flags.h"
#include "core/file_io.h"
#include "core/time.h"
#include "core/units.h"
#include "detection/series_builder.h"
#include "sources/prometheus/prometheus_reader.h"

namespace vw::cli {

namespace {

// A secret read from `path` for `flag`: its one line, the line end taken off. A control character
// in it (a second line, a NUL) is refused: it would end up in an HTTP header.
Result<std::string> SecretFromFile(const char* flag, const std::string& path) {
  auto text = ReadWholeFile(path, 1 << 20);
  if (!text.ok()) return text.status().WithContext(flag);
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ' || t.back() == '\t')) t.pop_back();
  if (t.empty()) return Status::InvalidArgument(std::string(flag) + " " + path + ": is empty");
  for (char c : t) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(flag) + " " + path +
                                     ": holds a control character (expected one line)");
    }
  }
  return t;
}

// The flags that say how to reach the server: the timeout, a token or a user and password from a
// file, a CA file.
Result<prometheus::FetchOptions> FetchOptionsOf(const AnalyzeFlags& flags) {
  prometheus::FetchOptions o;
  auto timeout = ParseDuration(flags.timeout);
  if (!timeout.ok()) return timeout.status().WithContext("--timeout");
  if (*timeout <= 0) return Status::InvalidArgument("--timeout: must be greater than zero");
  o.timeout_s = *timeout;
  if (!flags.bearer_token_file.empty()) {
    auto token = SecretFromFile("--bearer-token-file", flags.bearer_token_file);
    if (!token.ok()) return token.status();
    o.bearer_token = *token;
  }
  if (!flags.basic_auth_file.empty()) {
    auto pair = SecretFromFile("--basic-auth-file", flags.basic_auth_file);
    if (!pair.ok()) return pair.status();
    const size_t colon = pair->find(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("--basic-auth-file " + flags.basic_auth_file +
                                     ": expected one line USER:PASSWORD");
    }
    o.basic_user = pair->substr(0, colon);
    o.basic_password = pair->substr(colon + 1);
  }
  if (!flags.ca_file.empty()) {
    auto ca = ReadWholeFile(flags.ca_file, 16 << 20);  // named now, not as a TLS failure later
    if (!ca.ok()) return ca.status().WithContext("--ca-file");
    o.ca_file = flags.ca_file;
  }
  return o;
}

}  // namespace

Result<std::vector<outputs::AnalyzedSeries>> AnalyzePrometheus(const AnalyzeFlags& flags, AnalyzeSettings& settings) {
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
  auto options = FetchOptionsOf(flags);
  if (!options.ok()) return options.status();
  auto fetched = prometheus::FetchPrometheusSeries(flags.prometheus_url, flags.query, *range, end, *unit, *options);
  if (!fetched.ok()) return fetched.status();
  for (const std::string& w : fetched->warnings) AddNote(settings, "Prometheus warned: " + w);
  if (!fetched->each_sample_once && !fetched->series.empty()) {
    AddNote(settings, fmt::format("the query is read every {}: a sample may be read at several steps (only a plain "
                                  "selector such as DCGM_FI_DEV_FB_USED{{...}} is read at its samples' own times), "
                                  "which makes the rate's interval look narrower than the data allow",
                                  FormatDuration(fetched->step_s)));
  }
  // Every series stopping well before the range's end: the exporters stopped, or the range (its
  // --end, by default now) is ahead of the data. Said once, not per series.
  if (!fetched->series.empty() && fetched->end_t - fetched->newest_t > std::max(600.0, 10 * fetched->step_s)) {
    AddNote(settings,
            fmt::format("the newest sample of the query is at {}, {} before the range's end ({}): the "
                        "exporters stopped, or --end is past the data; judged on what there is",
                        FormatIso8601(fetched->newest_t, true), FormatDuration(fetched->end_t - fetched->newest_t),
                        flags.end.empty() ? "now" : "--end"));
  }
  const std::string source = fmt::format("{} {}", prometheus::UrlForMessages(flags.prometheus_url), flags.query);
  std::vector<outputs::AnalyzedSeries> out;
  SeenGpus seen;
  size_t left_out_processes = 0;  // per-process series --no-processes left out
  for (const prometheus::PrometheusSeries& ps : fetched->series) {
    if (!GpuSelected(flags, ps.gpu)) {
      seen.Note(ps.gpu);
      continue;
    }
    if (flags.no_processes && ps.pid) {
      ++left_out_processes;
      continue;
    }
    const std::string name = SeriesName(ps.gpu, ps.pid);
    if (ps.merged > 1) {
      std::string labels;
      for (const std::string& l : ps.changed_labels) labels += (labels.empty() ? "" : ", ") + l;
      AddNote(settings, fmt::format("{}: {} Prometheus series of this GPU (their {} changed over the range) are read "
                                    "as one",
                                    name, ps.merged, labels.empty() ? "labels" : labels));
    }
    if (ps.apart > 1) {
      AddNote(settings, fmt::format("{}: one of {} Prometheus series of this GPU that hold values at the same times "
                                    "(told apart by the labels in their keys): each is judged on its own",
                                    name, ps.apart));
    }
    if (ps.implausible > 0) {
      AddNote(settings, fmt::format("{}: {} value(s) too large for GPU memory (the first: {}) are left out as missing; "
                                    "is --unit right?",
                                    name, ps.implausible, ps.first_implausible));
    }
    // A series that stopped long before the others: a card replaced, an exporter gone.
    if (prometheus::SeriesEnded(ps, fetched->newest_t, fetched->step_s)) {
      AddNote(settings, fmt::format("{}: its last sample is at {}, {} before the newest of the query (a card replaced "
                                    "or an exporter gone?): judged on what it has",
                                    name, FormatIso8601(ps.points.back().t, true),
                                    FormatDuration(fetched->newest_t - ps.points.back().t)));
    }
    detection::SeriesBuilder b(ps.gpu);
    if (ps.pid) b.SetProcess(*ps.pid, ps.labels.count("command") ? ps.labels.at("command") : "");
    b.SetTimeFlags(/*has_zone=*/true, /*synthetic_time=*/false);
    for (const prometheus::SeriesPoint& p : ps.points) {
      if (settings.since_s && p.t < *settings.since_s) continue;
      if (settings.until_s && p.t > *settings.until_s) continue;
      MemorySample sample;
      sample.t = p.t;
      sample.used_bytes = p.used_bytes;
      // --total, when given, over the size the companion query read (which may be wrong).
      sample.total_bytes = settings.trace.total_bytes ? settings.trace.total_bytes : ps.total_bytes;
      b.Add(sample);
    }
    out.push_back({source, b.Snapshot(), b.samples_without_memory()});
  }
  if (out.empty()) {
    if (left_out_processes > 0) {
      return Status::NotFound(fmt::format(
          "{}: the query '{}' returned only per-process series (a pid label), which --no-processes leaves out",
          prometheus::UrlForMessages(flags.prometheus_url), flags.query));
    }
    if (!flags.gpus.empty() && !fetched->series.empty()) {
      return Status::NotFound(fmt::format("{}: no GPU of the query '{}' matches --gpu {}; the GPUs it returned: {}",
                                          prometheus::UrlForMessages(flags.prometheus_url), flags.query,
                                          GpusWanted(flags), seen.Text()));
    }
    const std::string over = end ? fmt::format("the {} up to {}", flags.range, FormatIso8601(*end, true))
                                 : fmt::format("the last {}", flags.range);
    return Status::NotFound(fmt::format("{}: the query '{}' returned no series over {}",
                                        prometheus::UrlForMessages(flags.prometheus_url), flags.query, over));
  }
  return out;
}

}  // namespace vw::cli
