#include "cli/analyze_file.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/printable.h"
#include "core/units.h"
#include "detection/series_builder.h"
#include "sources/trace/block_parallel_reader.h"
#include "sources/trace/compact_sample.h"
#include "sources/trace/line_reader.h"
#include "sources/trace/pipelined_reader.h"
#include "sources/trace/process_rows.h"
#include "sources/trace/trace_reader.h"

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

// "FILE:  42 %" on one row of the terminal on stderr, rewritten in place (only on a terminal, for
// files of 64 MiB and more); cleared when done. The name is written out as Printable does and cut
// at its start to fit the row, since "\r" can only rewrite a line that did not wrap.
class Progress {
 public:
  explicit Progress(const std::string& file, bool enabled) : enabled_(enabled && isatty(2)) {
    if (!enabled_) return;
    winsize ws{};
    const size_t columns = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    file_ = PrintableTail(file, std::max<size_t>(columns, 20) - 8);  // ": 100 %" and a spare column
  }
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
  // The holders still listed, for the engine to tell a job replaced by later ones: gathered at the
  // first departure only (most lists have none).
  std::vector<detection::ListedHolder> still_listed;
  bool gathered = false;
  for (const auto& [pid, bytes] : h.bytes) {
    if (listed(pid)) continue;
    if (!gathered) {
      for (const ProcessMemory& p : now) {
        const auto first = h.first_seen.find(p.pid);
        if (p.used_bytes) {
          still_listed.push_back(
              {first == h.first_seen.end() ? s.t : first->second, static_cast<double>(*p.used_bytes)});
        }
      }
      gathered = true;
    }
    const auto first = h.first_seen.find(pid);
    gpu_series.NoteDeparture(h.t, s.t, bytes, pid,
                             first == h.first_seen.end() ? std::nullopt : std::optional<double>(first->second),
                             still_listed);
  }
  std::erase_if(h.first_seen, [&](const auto& entry) { return !listed(entry.first); });
  for (const ProcessMemory& p : now) h.first_seen.try_emplace(p.pid, s.t);
  h.t = s.t;
  h.bytes.clear();
  for (const ProcessMemory& p : now)
    if (p.used_bytes) h.bytes.emplace_back(p.pid, static_cast<double>(*p.used_bytes));
}

// The reader of one file. Parsing runs on other threads while this one feeds the series builders:
// in blocks on several threads for a regular --query-gpu CSV file (`parallel`), else on one second
// thread (`pipelined`); with AnalyzeThreads() 1, on this thread (`opened`).
struct FileReader {
  std::unique_ptr<trace::BlockParallelReader> parallel;
  std::unique_ptr<trace::TraceReader> opened;
  std::unique_ptr<trace::PipelinedTraceReader> pipelined;
  trace::TraceReader* reader = nullptr;  // the one in use
};

Status OpenFileReader(const std::string& path, const trace::TraceOptions& options, FileReader* out) {
  if (AnalyzeThreads() > 1) {
    auto p = trace::BlockParallelReader::Open(path, options, ParallelOptions());
    if (!p.ok()) return p.status();
    out->parallel = std::move(*p);
  }
  if (!out->parallel) {
    auto o = trace::OpenTrace(path, options);
    if (!o.ok()) return o.status();
    out->opened = std::move(*o);
    if (AnalyzeThreads() > 1) out->pipelined = std::make_unique<trace::PipelinedTraceReader>(std::move(out->opened));
  }
  out->reader = out->parallel    ? static_cast<trace::TraceReader*>(out->parallel.get())
                : out->pipelined ? static_cast<trace::TraceReader*>(out->pipelined.get())
                                 : out->opened.get();
  return Status::Ok();
}

// A note (AddNote) when the reader left out the last line of `path` for want of a line end
// (trace/line_reader.h): the file is probably still being written.
// Returns `error`, so that a reading error (no samples left, say) comes after the note.
Status NoteUnterminatedTail(const std::string& path, const trace::TraceReader& reader, AnalyzeSettings& settings,
                            Status error = Status::Ok()) {
  const std::string note =
      trace::UnterminatedTailNote(path == "-" ? "<stdin>" : path, reader.unterminated_tail_bytes());
  if (!note.empty()) AddNote(settings, note);
  return error;
}

// A note for each file flag this file made needless, so that it is not ignored in silence: an
// --interval for a file with its own times, a --total for a GPU whose rows give memory.total.
void NoteNeedlessFlags(const std::string& path, const trace::TraceReader& reader,
                       const std::vector<outputs::AnalyzedSeries>& series, AnalyzeSettings& settings) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  if (settings.trace.interval_s && !reader.synthetic_time()) {
    AddNote(settings, fmt::format("{}: --interval is not used: the file has its own times", shown));
  }
  if (!settings.trace.total_bytes) return;
  std::vector<std::string> own;  // GPUs whose rows gave their size
  for (const outputs::AnalyzedSeries& s : series) {
    const detection::SeriesAnalysis& a = s.analysis;
    if (a.pid || !a.total_bytes || *a.total_bytes == *settings.trace.total_bytes) continue;
    own.push_back(fmt::format("GPU {} ({})", a.gpu.key, FormatBytes(static_cast<double>(*a.total_bytes))));
  }
  if (own.empty()) return;
  AddNote(settings, fmt::format("{}: --total is not used for {}: the file gives the card's memory.total", shown,
                                fmt::join(own, ", ")));
}

// The series of one file by key ("gpu:0", "gpu:0/pid:4242"), in first-seen order.
class FileSeries {
 public:
  // The series `key` of `gpu`, made at its first use.
  detection::SeriesBuilder& Series(const std::string& key, const GpuIdentity& gpu) {
    auto it = builders_.find(key);
    if (it == builders_.end()) {
      it = builders_.emplace(key, std::make_unique<detection::SeriesBuilder>(gpu)).first;
      it->second->HoldBackSamples();  // a short run of samples ahead of both neighbours is left out
      order_.push_back(key);
    }
    return *it->second;
  }

  // The GPU series by the record's GPU key, without building the "gpu:KEY" string per record: GPUs
  // usually come round in the same order, so the entry after the last one hit is tried first.
  // Past kScannedGpus keys (a file of many GPU UUIDs) a hash lookup takes over from the scan, which
  // would make reading such a file quadratic in its keys.
  // A key whose UUID changes (another GPU took its index, as after a swap or in logs of several
  // hosts) starts a series of its own, "gpu:KEY@UUID": one GPU's leak is not charged to another.
  // A series made before its GPU's identity was known (a recording's first lines of a GPU whose
  // handle failed) takes it from the first record that has it.
  detection::SeriesBuilder& GpuSeries(const GpuIdentity& gpu) {
    const size_t n_cached = gpu_cache_.size();
    if (n_cached <= kScannedGpus) {
      for (size_t k = 0; k < n_cached; ++k) {
        size_t i = last_hit_ + 1 + k;
        if (i >= n_cached) i -= n_cached;
        if (SameKey(gpu_cache_[i].first, gpu.key)) {
          last_hit_ = i;
          if (OtherUuid(*gpu_cache_[i].second, gpu)) gpu_cache_[i].second = &SwappedGpuSeries(gpu);
          gpu_cache_[i].second->CompleteGpu(gpu);
          return *gpu_cache_[i].second;
        }
      }
    } else if (auto it = gpu_by_key_.find(gpu.key); it != gpu_by_key_.end()) {
      if (OtherUuid(*it->second, gpu)) it->second = &SwappedGpuSeries(gpu);
      it->second->CompleteGpu(gpu);
      return *it->second;
    }
    detection::SeriesBuilder& b = Series("gpu:" + gpu.key, gpu);
    gpu_cache_.emplace_back(gpu.key, &b);
    gpu_by_key_.emplace(gpu.key, &b);
    last_hit_ = gpu_cache_.size() - 1;
    return b;
  }

  // Whether `gpu` names a UUID other than the one series `b` was made for.
  static bool OtherUuid(const detection::SeriesBuilder& b, const GpuIdentity& gpu) {
    return !gpu.uuid.empty() && !b.gpu().uuid.empty() && !SameKey(b.gpu().uuid, gpu.uuid);
  }
  // The series of `gpu` under its key and UUID, the cached entries now pointing to it.
  detection::SeriesBuilder& SwappedGpuSeries(const GpuIdentity& gpu) {
    const auto first = builders_.find("gpu:" + gpu.key);  // the key's first GPU, come back
    detection::SeriesBuilder& b = first != builders_.end() && first->second->gpu().uuid == gpu.uuid
                                      ? *first->second
                                      : Series("gpu:" + gpu.key + "@" + gpu.uuid, gpu);
    gpu_by_key_[gpu.key] = &b;
    for (auto& [key, series] : gpu_cache_) {
      if (SameKey(key, gpu.key)) series = &b;
    }
    return b;
  }

  // A note (AddNote) for each GPU series that no column identified (no index, UUID or bus id) and
  // whose samples came in bursts: a file of several GPUs read as one, whose verdict means nothing.
  void NoteBursts(const std::string& path, AnalyzeSettings& settings) const {
    for (const auto& [key, b] : builders_) {
      const GpuIdentity& g = b->gpu();
      if (key.find("/pid:") != std::string::npos) continue;  // a process's series
      if (g.index || !g.uuid.empty() || !g.pci_bus_id.empty()) continue;
      const size_t gaps = b->close_gaps() + b->wide_gaps();
      if (gaps < 20 || b->close_gaps() * 5 < gaps || b->wide_gaps() * 10 < gaps) continue;
      AddNote(settings, fmt::format("{}: GPU {}: {} of its samples came within 20 ms of the one before, in "
                                    "bursts between gaps of 0.5 s or more: the file may hold several GPUs that no "
                                    "column tells apart, read as one; add index (or uuid) to the --query-gpu fields",
                                    path == "-" ? "<stdin>" : path, g.key, b->close_gaps()));
    }
  }

  // Every series finished, on the trace's clock, in first-seen order.
  std::vector<detection::SeriesBuilder*> Finish(bool has_zone, bool synthetic_time) {
    std::vector<detection::SeriesBuilder*> ordered;
    for (const std::string& key : order_) {
      detection::SeriesBuilder* b = builders_[key].get();
      b->Finish();
      b->SetTimeFlags(has_zone, synthetic_time);
      ordered.push_back(b);
    }
    return ordered;
  }

 private:
  // Keys are short ("0".."7" for indices): compared inline, without a memcmp call per record.
  static bool SameKey(const std::string& a, const std::string& b) {
    const size_t len = a.size();
    if (len != b.size()) return false;
    if (len > 8) return std::memcmp(a.data(), b.data(), len) == 0;
    for (size_t i = 0; i < len; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  std::vector<std::string> order_;  // series keys in first-seen order
  std::map<std::string, std::unique_ptr<detection::SeriesBuilder>> builders_;
  static constexpr size_t kScannedGpus = 16;
  std::vector<std::pair<std::string, detection::SeriesBuilder*>> gpu_cache_;
  std::unordered_map<std::string, detection::SeriesBuilder*> gpu_by_key_;  // the same, by key
  size_t last_hit_ = 0;
};

// The analysed series of `path` to report, in first-seen order. The assessments are independent:
// computed on the worker threads. The trace's clock, known now that it is read, sets how the
// report writes times and how the evidence names moments (clock times as the report writes them,
// offsets only for a trace without a clock).
std::vector<outputs::AnalyzedSeries> ReportedSeries(const std::string& path, FileSeries& series,
                                                    const trace::TraceReader& reader) {
  std::vector<detection::SeriesBuilder*> ordered = series.Finish(reader.has_zone(), reader.synthetic_time());
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
  return out;
}

}  // namespace

Result<std::vector<outputs::AnalyzedSeries>> AnalyzeFile(const std::string& path, const AnalyzeFlags& flags,
                                                         AnalyzeSettings& settings, bool* no_gpu_matched) {
  FileReader files;
  if (Status s = OpenFileReader(path, settings.trace, &files); !s.ok()) return s;
  trace::BlockParallelReader* const parallel = files.parallel.get();
  trace::PipelinedTraceReader* const pipelined = files.pipelined.get();
  trace::TraceReader& reader = *files.reader;
  FileSeries builders;

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
    if (!more.ok()) return NoteUnterminatedTail(path, reader, settings, more.status());
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
      if (series == nullptr) series = &builders.GpuSeries(batch.gpus[c.gpu]);
      const std::optional<uint64_t> total = c.total() ? c.total() : settings.trace.total_bytes;
      series->AddMemory(c.t, c.used(), total, c.reserved());
    }
  }
  std::map<std::string, ListedHolders> holders;  // by GPU key: the last process list seen
  // A PID that comes back with another command is another process (the PID was reused): its
  // series is "gpu:K/pid:N#2" (then #3 ...). By "gpu:K/pid:N": the process in use, from 1.
  std::map<std::string, int> pid_generation;
  std::vector<ProcessMemory> merged;  // OnePerPid's, reused
  std::vector<int64_t> pid_scratch;
  TraceRecord own;  // reused: the reader allocates nothing per record in the steady state
  while (!parallel) {
    const TraceRecord* in = &own;
    if (pipelined) {
      auto next = pipelined->NextRecord();
      if (!next.ok()) return NoteUnterminatedTail(path, reader, settings, next.status());
      if (*next == nullptr) break;
      in = *next;
    } else {
      auto more = reader.NextInto(&own);
      if (!more.ok()) return NoteUnterminatedTail(path, reader, settings, more.status());
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
    detection::SeriesBuilder& gpu_series = builders.GpuSeries(rec.gpu);
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
    for (const ProcessMemory& p : trace::OnePerPid(*rec.sample.processes, &pid_scratch, &merged)) {
      if (!p.used_bytes) continue;
      const std::string base = fmt::format("gpu:{}/pid:{}", rec.gpu.key, p.pid);
      int& generation = pid_generation.try_emplace(base, 1).first->second;
      auto key = [&] { return generation == 1 ? base : fmt::format("{}#{}", base, generation); };
      detection::SeriesBuilder* ps_now = &builders.Series(key(), rec.gpu);
      if (!p.command.empty() && !ps_now->process_command().empty() && ps_now->process_command() != p.command) {
        ++generation;
        ps_now = &builders.Series(key(), rec.gpu);
      }
      detection::SeriesBuilder& ps = *ps_now;
      ps.SetProcess(p.pid, p.command.empty() ? ps.process_command() : p.command);
      if (p.gpu_instance_id && p.instance_total_bytes) {
        // On a MIG GPU instance: its room is the instance's, shared with the instance's holders only.
        uint64_t instance_listed = 0;
        for (const ProcessMemory& q : *rec.sample.processes) {
          if (q.gpu_instance_id == p.gpu_instance_id) instance_listed += q.used_bytes.value_or(0);
        }
        ps.SetMigInstance(p.gpu_instance_id, *p.instance_total_bytes);
        ps.SetHeldByOthers(
            detection::HeldByOthers(p.instance_used_bytes, *p.used_bytes, instance_listed - *p.used_bytes));
      } else {
        ps.SetMigInstance(std::nullopt);
        ps.SetCapacity(total, rec.sample.reserved_bytes);
        // The runway of a process counts what the GPU's other holders use now.
        ps.SetHeldByOthers(detection::HeldByOthers(rec.sample.used_bytes, *p.used_bytes, listed_bytes - *p.used_bytes));
      }
      ps.Add(rec.sample.t, static_cast<double>(*p.used_bytes));
    }
  }

  (void)NoteUnterminatedTail(path, reader, settings);
  settings.report.skipped_lines += reader.skipped_count();
  for (const trace::SkippedLine& s : reader.skipped_examples()) {
    // The reason begins with the column: "file:line:column: expected ...", as in the strict error.
    settings.report.skipped_examples.push_back(fmt::format("{}:{}:{}", path, s.line, s.reason));
  }

  std::vector<outputs::AnalyzedSeries> out = ReportedSeries(path, builders, reader);
  builders.NoteBursts(path, settings);
  NoteNeedlessFlags(path, reader, out, settings);
  if (out.empty()) {
    if (n == 0) return Status::ParseError(fmt::format("{}: no samples found (is it empty?)", path));
    if (!flags.gpus.empty() && !gpu_matched) {
      if (no_gpu_matched != nullptr) *no_gpu_matched = true;
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

}  // namespace vw::cli
