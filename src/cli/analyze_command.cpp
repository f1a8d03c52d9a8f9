// `vramwatch analyze FILE...`: offline analysis of recorded traces.
// Reads each file as a stream (format auto-detected), feeds one SeriesBuilder per GPU (and per
// GPU+PID where the trace lists processes), then prints the text report or the JSON object.
#include "cli/analyze_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cli/analyze_prometheus.h"
#include "cli/analyze_settings.h"
#include "cli/commands.h"
#include "cli/trace_flags.h"
#include "core/exit_codes.h"
#include "core/time.h"
#include "core/units.h"
#include "detection/series_builder.h"
#include "outputs/analyze_report.h"
#include "outputs/json_text.h"
#include "outputs/report_files.h"
#include "sources/trace/block_parallel_reader.h"
#include "sources/trace/compact_sample.h"
#include "sources/trace/pipelined_reader.h"
#include "sources/trace/trace_reader.h"
#include "sources/trace/trace_values.h"

namespace vw::cli {
namespace {

// Threads `analyze` parses with: the hardware threads (at least 2, at most 8), or
// VRAMWATCH_ANALYZE_THREADS=N. With N >= 2 a regular --query-gpu CSV file is parsed in blocks on N
// threads while this one feeds the series builders; other files and pipes are parsed on one
// second thread. N = 1 does everything on this thread. The output is the same either way (tests
// compare them).
size_t AnalyzeThreads() {
  static const size_t n = [] {
    const char* env = std::getenv("VRAMWATCH_ANALYZE_THREADS");
    if (env != nullptr && *env != '\0') {
      char* end = nullptr;
      const unsigned long v = std::strtoul(env, &end, 10);
      if (*end == '\0' && v >= 1) return static_cast<size_t>(std::min<unsigned long>(v, 64));
    }
    return std::clamp<size_t>(std::thread::hardware_concurrency(), 2, 8);
  }();
  return n;
}

// Block size for block-parallel parsing: VRAMWATCH_ANALYZE_BLOCK_BYTES (tests use small blocks so
// that small files cross many block boundaries), else the reader's default.
trace::BlockParallelOptions ParallelOptions() {
  trace::BlockParallelOptions o;
  o.threads = AnalyzeThreads();
  if (const char* env = std::getenv("VRAMWATCH_ANALYZE_BLOCK_BYTES"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*end == '\0' && v > 0) o.block_bytes = static_cast<size_t>(v);
  }
  return o;
}

// Snapshot() of every builder, on AnalyzeThreads() threads (each builder is used by one thread).
std::vector<detection::SeriesAnalysis> SnapshotAll(const std::vector<detection::SeriesBuilder*>& builders) {
  std::vector<detection::SeriesAnalysis> out(builders.size());
  const size_t threads = std::min(AnalyzeThreads(), builders.size());
  if (threads <= 1) {
    for (size_t i = 0; i < builders.size(); ++i) out[i] = builders[i]->Snapshot();
    return out;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < builders.size(); i = next++) out[i] = builders[i]->Snapshot();
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

class Progress {
 public:
  explicit Progress(const std::string& file, bool enabled) : file_(file), enabled_(enabled && isatty(2)) {}
  void Update(uint64_t done, uint64_t total) {
    if (!enabled_ || total < (64ull << 20)) return;
    int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
    if (pct == last_) return;
    last_ = pct;
    std::fprintf(stderr, "\r%s: %3d %%", file_.c_str(), pct);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fputs("\r\033[K", stderr);
  }

 private:
  std::string file_;
  bool enabled_;
  bool shown_ = false;
  int last_ = -1;
};

// The processes a GPU's last process list named, with their memory (bytes), and its time; and
// when each PID listed was first listed (seconds).
struct ListedHolders {
  double t = 0;
  std::vector<std::pair<int64_t, double>> bytes;  // (PID, used bytes)
  std::unordered_map<int64_t, double> first_seen;
};

// Processes the previous list of this GPU named and this one does not: their memory is noted as
// departed on the GPU series (a fall it explains does not cut the series), with when they were
// first listed. Then `h` becomes this list.
void NoteDepartures(ListedHolders& h, const MemorySample& s, detection::SeriesBuilder& gpu_series) {
  const std::vector<ProcessMemory>& now = *s.processes;
  auto listed = [&now](int64_t pid) {
    return std::any_of(now.begin(), now.end(), [pid](const ProcessMemory& p) { return p.pid == pid; });
  };
  for (const auto& [pid, bytes] : h.bytes) {
    if (listed(pid)) continue;
    const auto first = h.first_seen.find(pid);
    gpu_series.NoteDeparture(h.t, s.t, bytes, pid,
                             first == h.first_seen.end() ? std::nullopt : std::optional<double>(first->second));
  }
  std::erase_if(h.first_seen, [&](const auto& entry) { return !listed(entry.first); });
  for (const ProcessMemory& p : now) h.first_seen.try_emplace(p.pid, s.t);
  h.t = s.t;
  h.bytes.clear();
  for (const ProcessMemory& p : now)
    if (p.used_bytes) h.bytes.emplace_back(p.pid, static_cast<double>(*p.used_bytes));
}

// Reads one file into per-series builders; returns the analysed series in first-seen order.
Result<std::vector<outputs::AnalyzedSeries>> AnalyzeFile(const std::string& path, const AnalyzeFlags& flags,
                                                         AnalyzeSettings& settings) {
  // Parsing runs on other threads while this one feeds the series builders: in blocks on several
  // threads for a regular --query-gpu CSV file, else on one second thread.
  std::unique_ptr<trace::BlockParallelReader> parallel;
  if (AnalyzeThreads() > 1) {
    auto p = trace::BlockParallelReader::Open(path, settings.trace, ParallelOptions());
    if (!p.ok()) return p.status();
    parallel = std::move(*p);
  }
  std::unique_ptr<trace::TraceReader> opened;
  std::unique_ptr<trace::PipelinedTraceReader> pipelined;
  if (!parallel) {
    auto o = trace::OpenTrace(path, settings.trace);
    if (!o.ok()) return o.status();
    opened = std::move(*o);
    if (AnalyzeThreads() > 1) pipelined = std::make_unique<trace::PipelinedTraceReader>(std::move(opened));
  }
  trace::TraceReader& reader = parallel    ? static_cast<trace::TraceReader&>(*parallel)
                               : pipelined ? static_cast<trace::TraceReader&>(*pipelined)
                                           : *opened;

  std::vector<std::string> order;  // series keys in first-seen order
  std::map<std::string, std::unique_ptr<detection::SeriesBuilder>> builders;
  auto builder_for = [&](const std::string& key, const GpuIdentity& gpu) -> detection::SeriesBuilder& {
    auto it = builders.find(key);
    if (it == builders.end()) {
      it = builders.emplace(key, std::make_unique<detection::SeriesBuilder>(gpu)).first;
      it->second->HoldBackOneSample();  // a lone sample ahead of both neighbours is left out
      order.push_back(key);
    }
    return *it->second;
  };
  // The GPU series by the record's GPU key, without building the "gpu:KEY" string per record: GPUs
  // usually come round in the same order, so the entry after the last one hit is tried first.
  std::vector<std::pair<std::string, detection::SeriesBuilder*>> gpu_cache;
  size_t last_hit = 0;
  // Keys are short ("0".."7" for indices): compared inline, without a memcmp call per record.
  auto same_key = [](const std::string& a, const std::string& b) {
    const size_t len = a.size();
    if (len != b.size()) return false;
    if (len > 8) return std::memcmp(a.data(), b.data(), len) == 0;
    for (size_t i = 0; i < len; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  };
  auto gpu_builder_for = [&](const GpuIdentity& gpu) -> detection::SeriesBuilder& {
    const size_t n_cached = gpu_cache.size();
    for (size_t k = 0; k < n_cached; ++k) {
      size_t i = last_hit + 1 + k;
      if (i >= n_cached) i -= n_cached;
      if (same_key(gpu_cache[i].first, gpu.key)) {
        last_hit = i;
        return *gpu_cache[i].second;
      }
    }
    detection::SeriesBuilder& b = builder_for("gpu:" + gpu.key, gpu);
    gpu_cache.emplace_back(gpu.key, &b);
    last_hit = gpu_cache.size() - 1;
    return b;
  };

  Progress progress(path, flags.progress && !flags.json);
  size_t n = 0;
  SeenGpus seen;             // GPUs --gpu left out, for the message when it matches none
  bool gpu_matched = false;  // a record passed the --gpu filter
  // Block-parallel parsing hands over compact samples and each batch's GPU table: the GPU filter
  // and the series are resolved once per table entry, when its first sample passes the filters
  // (so series are created in the same order as record by record). No process lists here.
  trace::SampleBatch batch;
  std::vector<signed char> batch_selected;  // per batch GPU: -1 not known yet, 0 filtered out, 1 kept
  std::vector<detection::SeriesBuilder*> batch_series;
  while (parallel) {
    auto more = parallel->NextBatch(&batch);
    if (!more.ok()) return more.status();
    if (!*more) break;
    batch_selected.assign(batch.gpu_count, -1);
    batch_series.assign(batch.gpu_count, nullptr);
    for (size_t i = 0; i < batch.count; ++i) {
      const trace::CompactSample& c = batch.samples[i];
      if (++n % 65536 == 0) progress.Update(reader.bytes_read(), reader.bytes_total());
      signed char& selected = batch_selected[c.gpu];
      if (selected < 0) {
        selected = GpuSelected(flags, batch.gpus[c.gpu]) ? 1 : 0;
        if (selected == 0) seen.Note(batch.gpus[c.gpu]);
        gpu_matched = gpu_matched || selected == 1;
      }
      if (selected == 0) continue;
      if (settings.since_s && c.t < *settings.since_s) continue;
      if (settings.until_s && c.t > *settings.until_s) continue;
      detection::SeriesBuilder*& series = batch_series[c.gpu];
      if (series == nullptr) series = &gpu_builder_for(batch.gpus[c.gpu]);
      const std::optional<uint64_t> total = c.total() ? c.total() : settings.trace.total_bytes;
      series->AddMemory(c.t, c.used(), total, c.reserved());
    }
  }
  std::map<std::string, ListedHolders> holders;  // by GPU key: the last process list seen
  TraceRecord own;                               // reused: the reader allocates nothing per record in the steady state
  while (!parallel) {
    const TraceRecord* in = &own;
    if (pipelined) {
      auto next = pipelined->NextRecord();
      if (!next.ok()) return next.status();
      if (*next == nullptr) break;
      in = *next;
    } else {
      auto more = reader.NextInto(&own);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    const TraceRecord& rec = *in;
    if (++n % 65536 == 0) progress.Update(reader.bytes_read(), reader.bytes_total());
    if (!GpuSelected(flags, rec.gpu)) {
      seen.Note(rec.gpu);
      continue;
    }
    gpu_matched = true;
    if (settings.since_s && rec.sample.t < *settings.since_s) continue;
    if (settings.until_s && rec.sample.t > *settings.until_s) continue;
    detection::SeriesBuilder& gpu_series = gpu_builder_for(rec.gpu);
    if (!rec.sample.total_bytes && settings.trace.total_bytes) {
      MemorySample with_total = rec.sample;
      with_total.total_bytes = settings.trace.total_bytes;
      gpu_series.Add(with_total);
    } else {
      gpu_series.Add(rec.sample);
    }
    if (!rec.sample.processes) continue;
    NoteDepartures(holders[rec.gpu.key], rec.sample, gpu_series);
    if (flags.no_processes) continue;
    const std::optional<uint64_t> total = rec.sample.total_bytes ? rec.sample.total_bytes : settings.trace.total_bytes;
    uint64_t listed_bytes = 0;  // the memory of every process listed with a value
    for (const ProcessMemory& p : *rec.sample.processes) listed_bytes += p.used_bytes.value_or(0);
    for (const ProcessMemory& p : *rec.sample.processes) {
      if (!p.used_bytes) continue;
      detection::SeriesBuilder& ps = builder_for(fmt::format("gpu:{}/pid:{}", rec.gpu.key, p.pid), rec.gpu);
      ps.SetProcess(p.pid, p.command);
      ps.SetCapacity(total, rec.sample.reserved_bytes);
      // The runway of a process counts what the GPU's other holders use now.
      ps.SetHeldByOthers(detection::HeldByOthers(rec.sample.used_bytes, *p.used_bytes, listed_bytes - *p.used_bytes));
      ps.Add(rec.sample.t, static_cast<double>(*p.used_bytes));
    }
  }

  settings.report.skipped_lines += reader.skipped_count();
  for (const trace::SkippedLine& s : reader.skipped_examples()) {
    // The reason begins with the column: "file:line:column: expected ...", as in the strict error.
    settings.report.skipped_examples.push_back(fmt::format("{}:{}:{}", path, s.line, s.reason));
  }

  // The assessments are independent: compute them on the worker threads, report in first-seen order.
  // The trace's clock, known now, sets how the report writes times and how the evidence names
  // moments (clock times as the report writes them, offsets only for a trace without a clock).
  std::vector<detection::SeriesBuilder*> ordered;
  for (const std::string& key : order) {
    detection::SeriesBuilder* b = builders[key].get();
    b->Finish();
    b->SetTimeFlags(reader.has_zone(), reader.synthetic_time());
    ordered.push_back(b);
  }
  std::vector<detection::SeriesAnalysis> snapshots = SnapshotAll(ordered);
  // Process series are reported only when there is something to say about them, or when no GPU
  // series has memory values (a pmon log: its processes are all there is, even too short).
  bool gpu_memory = false, process_memory = false;
  for (const detection::SeriesAnalysis& a : snapshots) {
    if (a.assessment.samples == 0) continue;
    if (a.pid) {
      process_memory = true;
    } else {
      gpu_memory = true;
    }
  }
  std::vector<outputs::AnalyzedSeries> out;
  for (size_t i = 0; i < ordered.size(); ++i) {
    outputs::AnalyzedSeries s{path, std::move(snapshots[i]), ordered[i]->samples_without_memory()};
    bool is_process = s.analysis.pid.has_value();
    bool quiet = s.analysis.assessment.verdict == detection::Verdict::kInsufficientData;
    if (is_process && quiet && gpu_memory) continue;
    if (!is_process && !gpu_memory && process_memory) continue;  // pmon: no device memory to show
    out.push_back(std::move(s));
  }
  if (out.empty()) {
    if (n == 0) return Status::ParseError(fmt::format("{}: no samples found (is it empty?)", path));
    if (!flags.gpus.empty() && !gpu_matched) {
      const std::string present = seen.Text();
      return Status::NotFound(fmt::format("{}: no GPU matches --gpu {}; the GPUs in the trace: {}", path,
                                          GpusWanted(flags), present.empty() ? "none" : present));
    }
    return Status::ParseError(fmt::format("{}: no samples in the selected range", path));
  }
  bool any_memory = false;
  for (const auto& s : out) {
    any_memory = any_memory || s.analysis.assessment.samples > 0 || s.analysis.above_total > 0;  // CheckSeries
  }
  if (!any_memory) {
    return Status::ParseError(fmt::format(
        "{}: no memory values: the trace has no memory.used (or fb) column, or every value is missing", path));
  }
  return out;
}

// Series that cannot be reported as they are: used memory above the card's size on every sample
// (columns in the wrong order, a wrong --total), or more samples out of time order than in order
// (a file written newest first): an error naming the cause, never a verdict on them.
Status CheckSeries(const outputs::AnalyzedSeries& s, const AnalyzeFlags& flags) {
  const detection::SeriesAnalysis& a = s.analysis;
  const std::string name = a.pid ? fmt::format("GPU {} PID {}", a.gpu.key, *a.pid) : fmt::format("GPU {}", a.gpu.key);
  // Used memory above the card's total, on `how_many` samples: a wrong reading of the file, named
  // with the flag to check.
  auto above_total = [&](double total, double least, const std::string& how_many) {
    std::string hint;
    if (!flags.columns.empty()) {
      hint = fmt::format(
          "are the --columns in the file's order? --columns {} reads memory.used and memory.total from those places",
          flags.columns);
    } else if (!flags.total.empty()) {
      hint = fmt::format("is --total {} the card's size?", flags.total);
    } else {
      hint = "are the memory.used and memory.total columns swapped?";
    }
    return Status::InvalidArgument(
        fmt::format("{}: {}: memory used is above the card's total ({}) on {} (the least is {}): {}", s.source, name,
                    FormatBytes(total), how_many, FormatBytes(least), hint));
  };
  // Samples above the total they came with are left out by the builder (SeriesAnalysis::above_total):
  // a few are a garbled line, reported; more of them than samples kept is a wrong reading of the file.
  if (a.above_total > 0 && a.above_total > a.assessment.samples && a.first_above_total) {
    return above_total(static_cast<double>(a.first_above_total->total_bytes),
                       static_cast<double>(a.least_above_total_bytes),
                       a.assessment.samples == 0
                           ? std::string("every sample")
                           : fmt::format("{} of {} samples", a.above_total, a.above_total + a.assessment.samples));
  }
  // The samples kept, against the card's latest total (a total that changed within the file).
  if (a.total_bytes && !a.raw.empty()) {
    double least = a.raw.front().used_bytes;
    for (const detection::SeriesPoint& p : a.raw) least = std::min(least, p.used_bytes);
    if (least > static_cast<double>(*a.total_bytes)) {
      return above_total(static_cast<double>(*a.total_bytes), least, "every sample");
    }
  }
  if (a.out_of_order > a.assessment.samples) {
    std::string first;
    if (a.first_out_of_order_t && a.first_out_of_order_after_t) {
      auto shown = [&](double t) {
        return a.synthetic_time ? fmt::format("t+{}", FormatDuration(t)) : FormatIso8601(t, a.has_zone);
      };
      first = fmt::format(" (the first, at {}, came after {})", shown(*a.first_out_of_order_t),
                          shown(*a.first_out_of_order_after_t));
    }
    return Status::InvalidArgument(fmt::format(
        "{}: {}: the samples run backwards in time: {} of {} are older than the sample before them{}; is the file "
        "written newest first, or logs joined in the wrong order? Sort it by time and run again",
        s.source, name, a.out_of_order, a.out_of_order + a.assessment.samples, first));
  }
  return Status::Ok();
}

}  // namespace

int RunAnalyze(const AnalyzeFlags& flags, std::FILE* out) {
  auto settings = ResolveAnalyzeFlags(flags);
  if (!settings.ok()) {
    std::fprintf(stderr, "vramwatch analyze: %s\n", settings.status().message().c_str());
    return kExitUnknown;
  }
  std::vector<outputs::AnalyzedSeries> all;
  if (flags.files.empty() == flags.prometheus_url.empty()) {
    std::fprintf(stderr, "vramwatch analyze: give trace FILEs or --prometheus URL (one of the two)\n");
    return kExitUnknown;
  }
  if (!flags.prometheus_url.empty()) {
    auto series = AnalyzePrometheus(flags, *settings);
    if (!series.ok()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", series.status().message().c_str());
      return kExitUnknown;
    }
    all = std::move(*series);
  }
  for (const std::string& path : flags.files) {
    auto series = AnalyzeFile(path, flags, *settings);
    if (!series.ok()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", series.status().message().c_str());
      return kExitUnknown;
    }
    for (auto& s : *series) all.push_back(std::move(s));
  }
  for (const auto& s : all) {
    Status st = CheckSeries(s, flags);
    if (!st.ok()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", st.message().c_str());
      return kExitUnknown;
    }
  }
  if (!flags.plot_path.empty() || !flags.html_path.empty()) {
    std::vector<detection::SeriesAnalysis> analyses;
    for (const auto& s : all) analyses.push_back(s.analysis);
    outputs::Theme theme = flags.theme == "light"  ? outputs::Theme::kLight
                           : flags.theme == "dark" ? outputs::Theme::kDark
                                                   : outputs::Theme::kAuto;
    if (!flags.plot_path.empty()) {
      outputs::SvgOptions svg;
      svg.theme = theme;
      Status st = outputs::WriteSvgPlot(flags.plot_path, analyses, svg);
      if (!st.ok()) {
        std::fprintf(stderr, "vramwatch analyze: --plot: %s\n", st.message().c_str());
        return kExitUnknown;
      }
    }
    if (!flags.html_path.empty()) {
      outputs::HtmlReportOptions html;
      html.theme = theme;
      for (const std::string& f : flags.files) html.source += (html.source.empty() ? "" : ", ") + f;
      Status st = outputs::WriteHtmlReport(flags.html_path, analyses, html);
      if (!st.ok()) {
        std::fprintf(stderr, "vramwatch analyze: --html: %s\n", st.message().c_str());
        return kExitUnknown;
      }
    }
  }
  if (flags.json) {
    std::fputs(outputs::JsonText(outputs::RenderAnalyzeJson(all, settings->report), 2).c_str(), out);
    std::fputs("\n", out);
  } else {
    std::fputs(outputs::RenderAnalyzeText(all, settings->report).c_str(), out);
  }
  Severity worst = Severity::kOk;
  bool any_judged = false;
  for (const auto& s : all) {
    Severity sev = outputs::SeverityOf(s.analysis, settings->report);
    if (sev > worst) worst = sev;
    if (s.analysis.assessment.verdict != detection::Verdict::kInsufficientData) any_judged = true;
  }
  if (!any_judged) return kExitUnknown;
  return ExitCodeFor(worst);
}

CommandRunner AddAnalyzeCommand(CLI::App& app) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Analyse recorded GPU memory traces: leak or plateau, leak rate with its range, time to OOM, and why.\n"
      "Reads nvidia-smi --query-gpu CSV (any fields, with or without header/units), a bare memory.used loop,\n"
      "nvidia-smi dmon/pmon logs, repeated full nvidia-smi tables, and vramwatch recordings.\n"
      "Examples:\n"
      "  vramwatch analyze gpu.csv\n"
      "  vramwatch analyze --json --gpu 0 run1.csv run2.csv\n"
      "  vramwatch analyze --format values --interval 300s --total 80GiB used.log\n"
      "  vramwatch analyze --prometheus http://prometheus:9090 --query DCGM_FI_DEV_FB_USED --range 12h\n"
      "Exit codes: 0 no leak, 1 leak, 2 leak with runway under --critical-runway, 3 bad input or no verdict.");
  cmd->add_option("files", flags->files, "Trace files to read ('-' for standard input)");
  cmd->add_option("--prometheus", flags->prometheus_url,
                  "Analyse series from this Prometheus server instead of files, e.g. http://prometheus:9090");
  cmd->add_option("--query", flags->query,
                  "PromQL for used memory with --prometheus, e.g. DCGM_FI_DEV_FB_USED or "
                  "vramwatch_gpu_memory_used_bytes{hostname=\"node-7\"}")
      ->capture_default_str();
  cmd->add_option("--range", flags->range, "How far back to read with --prometheus")->capture_default_str();
  cmd->add_option("--end", flags->end, "End of the --range (ISO 8601 or epoch seconds; default now)");
  cmd->add_option("--unit", flags->unit,
                  "Unit of the --query values: bytes, KiB, MiB, GiB, or auto (MiB for DCGM_FI_DEV_FB_*, bytes for "
                  "names ending in _bytes; any other name stops and asks for --unit)")
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "Input format: auto, query-csv, values, dmon, pmon, smi-table, recording")
      ->capture_default_str();
  cmd->add_option("--columns", flags->columns,
                  "Column names of a CSV written with noheader, e.g. timestamp,index,memory.used,memory.total");
  cmd->add_option("--interval", flags->interval, "Sample spacing for files without timestamps, e.g. 5s, 300s");
  cmd->add_option("--total", flags->total, "Card memory size when the file lacks it, e.g. 80GiB, 24576MiB");
  cmd->add_option("--gpu", flags->gpus, "Only this GPU (index, UUID or PCI bus id); repeatable")
      ->type_size(1)
      ->allow_extra_args(false)
      ->expected(1, 1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--since", flags->since, "Ignore samples before this time (as written in the trace)");
  cmd->add_option("--until", flags->until, "Ignore samples after this time");
  cmd->add_option("--critical-runway", flags->critical_runway,
                  "A leak is CRITICAL when the pessimistic time to OOM is shorter than this")
      ->capture_default_str();
  cmd->add_option("--plot", flags->plot_path,
                  "Also write the charts as one SVG file (several GPUs as small multiples)");
  cmd->add_option("--html", flags->html_path,
                  "Also write a self-contained HTML report (charts, verdicts, evidence; no network needed)");
  cmd->add_option("--theme", flags->theme, "Colours of --plot/--html: auto (follows the viewer), light, dark")
      ->check(CLI::IsMember({"auto", "light", "dark"}))
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "Print the vramwatch.analyze/1 JSON object instead of text");
  cmd->add_flag("--lenient", flags->lenient, "Skip malformed lines (they are counted and shown) instead of failing");
  cmd->add_flag("--no-processes", flags->no_processes, "Do not analyse per-process series");
  cmd->add_flag("!--no-progress", flags->progress, "Never show a progress bar on stderr");
  return [flags] { return RunAnalyze(*flags, stdout); };
}

}  // namespace vw::cli
