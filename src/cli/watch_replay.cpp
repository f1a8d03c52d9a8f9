#include "cli/watch_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/analyze_framework.h"
#include "cli/replay_xids.h"
#include "cli/trace_flags.h"
#include "core/exit_codes.h"
#include "core/printable.h"
#include "core/units.h"
#include "detection/alerts.h"
#include "detection/series_builder.h"
#include "outputs/alert_sinks.h"
#include "sources/kernel/kernel_log_reader.h"
#include "sources/trace/line_reader.h"
#include "sources/trace/process_rows.h"
#include "sources/trace/trace_reader.h"
#include "storage/history_store.h"

namespace vw::cli {
namespace {

// TraceRecords of one instant -> a HostSnapshot the pipeline takes.
// `total`: --total, the card's size for a file that does not record it (as analyze takes it).
GpuSnapshot GpuFromRecord(const TraceRecord& r, unsigned fallback_index, std::optional<uint64_t> total) {
  GpuSnapshot g;
  g.t = r.sample.t;
  g.index = r.gpu.index ? static_cast<unsigned>(*r.gpu.index) : fallback_index;
  g.uuid = r.gpu.uuid;
  g.name = r.gpu.name;
  g.pci_bus_id = r.gpu.pci_bus_id;
  g.memory_total_bytes = r.sample.total_bytes ? r.sample.total_bytes : total;
  g.memory_used_bytes = r.sample.used_bytes;
  g.memory_free_bytes = r.sample.free_bytes;
  g.memory_reserved_bytes = r.sample.reserved_bytes;
  g.gpu_util_ratio = r.sample.gpu_util_ratio;
  if (r.sample.processes) {
    // One entry per PID, as NVML lists a process (a table lists it once per MIG instance).
    std::vector<int64_t> pids;
    std::vector<ProcessMemory> merged;
    for (const ProcessMemory& pm : trace::OnePerPid(*r.sample.processes, &pids, &merged)) {
      ProcessSnapshot p;
      p.pid = pm.pid;
      p.used_bytes = pm.used_bytes;
      p.sm_util_ratio = pm.sm_util_ratio;
      p.compute = pm.type.find('C') != std::string::npos;
      p.graphics = pm.type.find('G') != std::string::npos;
      p.info.alive = true;
      p.info.command = pm.command;
      // A process on a MIG GPU instance whose memory the file shows: the instance, as NVML lists it.
      p.gpu_instance_id = pm.gpu_instance_id;
      if (pm.gpu_instance_id && pm.instance_total_bytes && !MigInstanceOf(g.mig_devices, p)) {
        g.mig_enabled = true;
        MigDeviceSnapshot m;
        m.gpu_instance_id = *pm.gpu_instance_id;
        m.memory_used_bytes = pm.instance_used_bytes;
        m.memory_total_bytes = pm.instance_total_bytes;
        g.mig_devices.push_back(std::move(m));
      }
      g.processes.push_back(std::move(p));
    }
  }
  return g;
}

// Why --replay refuses a PyTorch memory log, which `analyze` reads.
constexpr const char* kNoFrameworkLog =
    "a PyTorch memory log counts steps, not time, so it cannot be replayed in time; read it with "
    "`vramwatch analyze FILE`";

// How --replay reads its file: --format, --columns, --total, and --interval as the spacing of a
// file without timestamps (only when given: its default is the live sampling interval).
Result<trace::TraceOptions> ReplayTraceOptions(const WatchFlags& f) {
  trace::TraceOptions o;
  o.lenient = f.lenient;
  if (f.format == "torch") return Status::InvalidArgument(std::string("--format torch: ") + kNoFrameworkLog);
  auto format = trace::ParseTraceFormat(f.format);
  if (!format.ok()) return format.status().WithContext("--format");
  o.format = *format;
  if (!f.columns.empty()) {
    auto cols = SplitColumnsFlag(f.columns);
    if (!cols.ok()) return cols.status();
    o.columns = std::move(*cols);
  }
  if (f.interval_given) {
    auto d = ParseDuration(f.interval);
    if (!d.ok()) return d.status().WithContext("--interval");
    if (!(*d > 0)) return Status::InvalidArgument("--interval: must be greater than zero");
    o.interval_s = *d;
  }
  if (!f.total.empty()) {
    auto b = ParseSize(f.total, SizeUnits::kGpuMemory);
    if (!b.ok()) return b.status().WithContext("--total");
    if (*b == 0) return Status::InvalidArgument("--total: must be greater than zero");
    o.total_bytes = *b;
  }
  return o;
}

// What a replay reads and writes, opened by OpenReplay.
struct ReplayIo {
  double speed = 0;  // --speed: trace seconds per second; 0 = as fast as possible
  trace::TraceOptions trace;
  // A recording's reader also gives the host its header names (empty for other formats): its
  // alerts carry that hostname, as the live daemon's there would, so a live daemon later started on
  // the same --db continues them.
  std::unique_ptr<trace::TraceReader> reader;
  std::unique_ptr<storage::HistoryStore> history;      // --db
  std::unique_ptr<outputs::JsonLinesAlertSink> jsonl;  // --alert-log
  std::optional<kernel::KernelLogScan> klog;           // --kernel-log FILE
};

// Opens what `f` names for a replay, in the order their errors are reported: --speed, the trace
// flags, the file, --db, --alert-log, --kernel-log.
Status OpenReplay(const WatchFlags& f, const storage::HistoryOptions& hopts, ReplayIo* io) {
  if (f.speed != "max") {
    char* end = nullptr;
    io->speed = std::strtod(f.speed.c_str(), &end);
    if (end == f.speed.c_str() || *end != '\0' || !(io->speed > 0)) {
      return Status::InvalidArgument("--speed '" + f.speed + "': expected a positive factor (e.g. 60) or 'max'");
    }
  }
  auto topts = ReplayTraceOptions(f);
  if (!topts.ok()) return topts.status();
  io->trace = *topts;
  auto reader = trace::OpenTrace(f.replay, io->trace);
  if (!reader.ok()) {
    if (IsFrameworkLogFile(f.replay, f.format)) {
      return Status::InvalidArgument(fmt::format("{}: {}", f.replay, kNoFrameworkLog));
    }
    return reader.status();
  }
  io->reader = std::move(*reader);
  if (!f.db.empty()) {
    auto h = storage::HistoryStore::Open(f.db, hopts);
    if (!h.ok()) return h.status().WithContext("--db");
    io->history = std::move(*h);
    if (std::string n = DbOverCapNote(f.db, *io->history, hopts.db.max_size_bytes); !n.empty()) {
      std::fprintf(stderr, "vramwatch watch: %s\n", Printable(n).c_str());
    }
  }
  if (!f.alert_log.empty()) {
    auto j = outputs::JsonLinesAlertSink::Open(f.alert_log);
    if (!j.ok()) return j.status();
    io->jsonl = std::move(*j);
    io->jsonl->set_note(
        [](const std::string& line) { std::fprintf(stderr, "vramwatch watch: %s\n", Printable(line).c_str()); });
  }
  // Xid lines of --kernel-log FILE, fed when the trace reaches their time (cli/replay_xids.h).
  if (!f.kernel_log.empty() && f.kernel_log != "none") {
    auto scan = kernel::ReadKernelLogFile(f.kernel_log);
    if (!scan.ok()) return scan.status().WithContext("--kernel-log");
    io->klog = std::move(*scan);
  }
  return Status::Ok();
}

// The worst severity of the alerts that fired: the replay's exit code.
struct WorstSink : outputs::AlertSink {
  Severity worst = Severity::kOk;
  void Send(const std::vector<detection::AlertEvent>& events) override {
    for (const auto& e : events) {
      if (e.kind == detection::AlertEventKind::kFiring) worst = std::max(worst, e.alert.condition.severity);
    }
  }
};

// Reads the trace and hands the pipeline the records of one instant at a time, paced by --speed,
// with the Xid events that fall due.
class ReplayFeeder {
 public:
  ReplayFeeder(const WatchFlags& f, ReplayIo& io, outputs::LogAlertSink& log, WatchPipeline& pipeline,
               const std::atomic<bool>& stop)
      : f_(f), io_(io), log_(log), pipeline_(pipeline), stop_(stop) {}

  // To the end of the trace, or until `stop`; then the note on Xid lines later than its end.
  // Errors: the reader's (what was read before stays fed).
  Status Run() {
    while (!stop_) {
      auto next = io_.reader->Next();
      if (!next.ok()) {
        NoteUnterminatedTail();
        return next.status();
      }
      if (!next->has_value()) break;
      const TraceRecord& r = **next;
      if (have_ && r.sample.t != pending_.t) Complete();
      auto [it, added] = index_of_.emplace(r.gpu.key, static_cast<unsigned>(index_of_.size()));
      pending_.t = r.sample.t;
      pending_.gpus.push_back(GpuFromRecord(r, it->second, io_.trace.total_bytes));
      listed_ = listed_ || r.sample.processes.has_value();
      have_ = true;
    }
    Complete();
    while (!held_.empty()) {
      Ingest(std::move(held_.front()));
      held_.pop_front();
    }
    if (left_out_ > 0) {
      Note(
          fmt::format("{} instant(s) out of time order left out (lines dated ahead of the lines on both sides of "
                      "them, up to {} in a row, or behind them), as analyze leaves them out",
                      left_out_, kHeld));
    }
    if (!stop_) NoteUnterminatedTail();
    if (const size_t n = io_.reader->skipped_count(); n > 0) {
      // As analyze --lenient shows them: "file:line:column: expected ...".
      std::string text = fmt::format("skipped {} malformed line(s) (--lenient):", n);
      for (const trace::SkippedLine& s : io_.reader->skipped_examples()) {
        text += fmt::format("\n  {}:{}:{}", f_.replay, s.line, s.reason);
      }
      Note(text);
    }
    if (xids_ && xids_->not_yet_due() > 0) {
      Note(fmt::format("{} Xid line(s) of {} are later than the trace's end and were not replayed",
                       xids_->not_yet_due(), f_.kernel_log));
    }
    return Status::Ok();
  }

 private:
  void NoteUnterminatedTail() const {
    if (const std::string note = trace::UnterminatedTailNote(f_.replay, io_.reader->unterminated_tail_bytes());
        !note.empty()) {
      Note(note);
    }
  }
  void Note(const std::string& text) const {
    if (!f_.quiet) std::fprintf(stderr, "vramwatch watch: %s\n", PrintableLines(text).c_str());
  }

  // The first instant: the trace's clock is known from its first record. A zone-less trace is the
  // local wall clock of the machine that recorded it, so its alert times are printed without a
  // zone; a trace without a clock gets offsets ("t+2h 11m 50s"), as its evidence, not 1970 dates.
  void Start(double t0) {
    const auto clock = outputs::AlertClockFor(io_.reader->has_zone(), io_.reader->synthetic_time());
    log_.set_clock(clock);
    if (io_.jsonl) io_.jsonl->set_clock(clock);
    // Evidence names clock times as the alert lines do (UTC, or the trace's wall clock as
    // written); a trace without a clock keeps offsets from the start of each series.
    pipeline_.SetEvidenceTimes(detection::EvidenceTimesFor(io_.reader->has_zone(), io_.reader->synthetic_time()));
    if (io_.klog) {
      xids_.emplace(*io_.klog, io_.reader->has_zone(), t0);
      if (std::string n = kernel::UnreadableXidNote(*io_.klog, f_.kernel_log, true); !n.empty())
        Note("kernel log " + n);
      for (const std::string& n : xids_->notes()) Note(n);
    }
  }

  // One instant of the trace: every record of one time, and whether one carried a process list.
  struct Instant {
    HostSnapshot snap;
    bool listed = false;
  };

  // The pending instant is complete. As analyze does (detection::SeriesBuilder::HoldBackSamples),
  // the last kHeld instants are held until the ones after them show whether a run of them is ahead
  // of its neighbours on both sides (lines with a wrong date): that run is left out, and so is an
  // instant behind both the instants held and the one fed before them. The first instant is never
  // left out this way.
  void Complete() {
    if (!have_) return;
    Instant next{std::move(pending_), listed_};
    pending_ = HostSnapshot{};
    have_ = false;
    listed_ = false;
    size_t ahead = 0;
    while (ahead < held_.size() && held_[held_.size() - 1 - ahead].snap.t > next.snap.t) ++ahead;
    if (ahead > 0) {
      if ((fed_any_ && next.snap.t < prev_t_) || (!fed_any_ && ahead == held_.size())) {
        ++left_out_;  // behind what came before it
        return;
      }
      left_out_ += ahead;  // the run held is ahead of both its neighbours
      held_.resize(held_.size() - ahead);
    }
    if (held_.size() == kHeld) {
      Ingest(std::move(held_.front()));
      held_.pop_front();
    }
    held_.push_back(std::move(next));
  }

  // One instant into the pipeline, after waiting out its gap at --speed.
  void Ingest(Instant instant) {
    HostSnapshot& snap = instant.snap;
    if (io_.speed > 0 && fed_any_ && snap.t > prev_t_) {
      // In short slices, so that SIGINT/SIGTERM end a replay at once, not after a long gap. Counted
      // in seconds as a double: at a tiny --speed (1e-12) the gap is longer than the steady
      // clock's nanoseconds can hold, and a time point past that would wrap into the past.
      const double wait_s = (snap.t - prev_t_) / io_.speed;
      const auto from = std::chrono::steady_clock::now();
      while (!stop_) {
        const double left = wait_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
        if (!(left > 0)) break;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.1)));
      }
    }
    if (!fed_any_) Start(snap.t);
    fed_any_ = true;
    prev_t_ = snap.t;
    // A given --hostname wins over the recording header's, which the reader has read by now (from
    // the file itself: a pipe or standard input cannot be opened a second time for it).
    snap.hostname = f_.hostname ? f_.host : io_.reader->host();
    pipeline_.Ingest(snap, instant.listed, false);
    if (xids_) {
      kernel::KernelLogScan due = xids_->Due(snap.t);
      if (!due.events.empty()) pipeline_.IngestXids(due, snap.t);
    }
  }

  const WatchFlags& f_;
  ReplayIo& io_;
  outputs::LogAlertSink& log_;
  WatchPipeline& pipeline_;
  const std::atomic<bool>& stop_;
  std::optional<ReplayXids> xids_;
  std::map<std::string, unsigned> index_of_;
  HostSnapshot pending_;
  bool have_ = false;
  static constexpr size_t kHeld = detection::SeriesBuilder::kHeld;
  std::deque<Instant> held_;  // the latest complete instants, oldest first, not fed yet (Complete)
  bool fed_any_ = false;
  size_t left_out_ = 0;  // instants left out of time order
  // Whether a record of the pending time carried a process list: a recording writes one every
  // --process-interval, and a record without one is no news about the processes (as a live
  // sample between process refreshes), not an empty list.
  bool listed_ = false;
  double prev_t_ = 0;  // the time of the instant fed last
};

}  // namespace

int RunReplay(const WatchFlags& f, WatchConfig config, const storage::HistoryOptions& history,
              const std::atomic<bool>& stop) {
  ReplayIo io;
  if (Status s = OpenReplay(f, history, &io); !s.ok()) return WatchFail(s.message());
  WorstSink worst;
  // Control characters in a recorded command or host written out, as the live daemon's lines.
  outputs::LogAlertSink log([](const std::string& line) { std::printf("%s\n", Printable(line).c_str()); });
  std::vector<outputs::AlertSink*> sinks{&log, &worst};
  if (io.jsonl) sinks.push_back(io.jsonl.get());
  config.alerts.resend_interval_s = 0;  // a replay prints each change once
  config.replay = true;
  WatchPipeline pipeline(config, io.history.get(), sinks);
  if (io.klog) pipeline.SetKernelLogSource(f.kernel_log);
  ReplayFeeder feeder(f, io, log, pipeline, stop);
  if (Status s = feeder.Run(); !s.ok()) return WatchFail(s.message());
  pipeline.Flush();
  for (const std::string& line : pipeline.GpuVerdictLines()) std::printf("%s\n", Printable(line).c_str());
  std::fflush(stdout);
  return ExitCodeFor(worst.worst);
}

}  // namespace vw::cli
