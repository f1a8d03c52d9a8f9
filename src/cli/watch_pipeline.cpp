// WatchPipeline (cli/watch_pipeline.h): the samples in, each GPU's engine and assessment, the
// learned baselines, the NVML call histograms and the history flushes. The rest of the class is
// in watch_resume.cpp, watch_processes.cpp, watch_findings.cpp, watch_alerts.cpp and
// watch_state.cpp.
#include "cli/watch_pipeline.h"

#include <algorithm>
#include <cstdio>

#include "detection/mig_instances.h"
#include "outputs/check_report.h"
#include "outputs/daemon_status_json.h"

namespace vw::cli {

WatchPipeline::WatchPipeline(WatchConfig config, storage::HistoryStore* history, std::vector<outputs::AlertSink*> sinks)
    : config_(std::move(config)), history_(history), sinks_(std::move(sinks)), tracker_(config_.alerts) {}

WatchPipeline::GpuTrack& WatchPipeline::Track(const GpuSnapshot& g) {
  const std::string key = detection::GpuKey(g);
  auto it = gpus_.find(key);
  if (it == gpus_.end()) it = gpus_.emplace(key, GpuTrack(config_.engine)).first;
  return it->second;
}

std::string WatchPipeline::WorkloadKey(const GpuSnapshot& g) const {
  if (!config_.label.empty()) return "label:" + config_.label;
  const ProcessSnapshot* biggest = nullptr;
  for (const auto& p : g.processes) {
    if (p.used_bytes && (!biggest || *p.used_bytes > biggest->used_bytes.value_or(0))) biggest = &p;
  }
  if (biggest && !biggest->info.container_id.empty()) return "container:" + biggest->info.container_id;
  if (biggest && !CommandOf(*biggest).empty()) return "cmd:" + CommandOf(*biggest);
  return {};
}

void WatchPipeline::AssessGpu(const std::string& key, GpuTrack& t, double now) {
  t.last_assess_t = now;
  const detection::Assessment as = t.engine.Assess();
  t.verdict = SeriesVerdictOf(as);
  const std::string wk = WorkloadKey(t.last);
  if (wk.empty()) return;
  auto b = baselines_.find(wk);
  // A plateau is learned once a trend test found no growth (a window was tested), not from
  // settled data too short for one.
  if (t.verdict.verdict == "plateau" && !as.window_fits.empty() && t.verdict.floor_bytes &&
      now - t.last_baseline_t >= config_.baseline_interval_s) {
    t.last_baseline_t = now;
    std::optional<storage::Baseline> prev;
    if (b != baselines_.end()) prev = b->second;
    storage::Baseline learned = storage::Learn(prev, wk, *t.verdict.floor_bytes, now);
    baselines_[wk] = learned;
    if (history_) history_->baselines().Put(learned);
    b = baselines_.find(wk);
  }
  if (b != baselines_.end()) t.verdict.baseline_bytes = b->second.level_bytes;
  (void)key;
}

void WatchPipeline::Ingest(const HostSnapshot& sampled, bool processes_fresh, bool run_findings) {
  HostSnapshot filled;
  const HostSnapshot& snap = processes_fresh && KeepVanishedFacts(sampled, &filled) ? filled : sampled;
  const double now = snap.t;
  if (started_ == 0) started_ = now;
  last_t_ = std::max(last_t_, now);
  ++samples_;
  if (!snap.hostname.empty()) hostname_ = snap.hostname;
  if (!snap.driver_version.empty()) driver_version_ = snap.driver_version;
  if (!snap.nvml_version.empty()) nvml_version_ = snap.nvml_version;
  if (snap.cuda_driver_version) cuda_driver_version_ = snap.cuda_driver_version;
  host_pids_visible_ = snap.host_pids_visible;
  if (processes_fresh) holder_scan_ = snap.holder_scan;
  for (const GpuSnapshot& g : snap.gpus) {
    const std::string key = detection::GpuKey(g);
    GpuTrack& t = Track(g);
    if (!t.first_seen_t) t.first_seen_t = now;
    if (auto r = resumed_xid_counts_.find(key); r != resumed_xid_counts_.end()) {
      for (const auto& [xid, n] : r->second) t.xids[xid] += n;
      resumed_xid_counts_.erase(r);
    }
    // {call, code}: the NVML function and a fixed token (NVML_ERROR_..., timeout, blocked); a
    // failure that is no NVML call (an index out of range) counts as call "unknown", code "other".
    for (const NvmlCallError& e : g.nvml_errors) ++nvml_errors_[{e.function, e.code_name}];
    if (g.nvml_errors.empty()) {
      for (const std::string& e : g.errors) {
        const size_t colon = e.find(':');
        ++nvml_errors_[{colon == std::string::npos ? "unknown" : e.substr(0, colon), "other"}];
      }
    }
    std::vector<ProcessSnapshot> keep_procs = t.last.processes;
    // A replayed record is an answer even without the GPU's used memory (a pmon file lists only
    // the processes): a file cannot be stale, and its process lists are judged all the same.
    if (g.responsive && !g.lost && (g.memory_used_bytes || config_.replay)) {
      CheckIdentity(key, t, g, now);
      t.last = g;
      if (!processes_fresh) t.last.processes = std::move(keep_procs);
      t.last_ok_t = now;
      t.answered = true;
      if (g.memory_total_bytes) {
        t.engine.SetCapacity(static_cast<double>(*g.memory_total_bytes),
                             static_cast<double>(g.memory_reserved_bytes.value_or(0)));
      }
      if (g.memory_used_bytes) {
        t.engine.Add(now, static_cast<double>(*g.memory_used_bytes));
        if (history_) history_->Append(outputs::GpuSeriesName(key), now, *g.memory_used_bytes);
      }
      if (processes_fresh) {
        t.unattributed = outputs::UnattributedBytes(g);
        t.mig_unattributed = detection::MigUnattributedByInstance(g);
        RefreshProcesses(key, t, g, now);
      }
    } else {
      // Stale or lost: keep the last good values for display, mark the state.
      t.answered = false;
      GpuSnapshot kept = t.last.uuid.empty() ? g : t.last;
      kept.responsive = g.responsive;
      kept.lost = g.lost;
      kept.errors = g.errors;
      kept.nvml_errors = g.nvml_errors;
      t.last = kept;
    }
    if (now - t.last_assess_t >= config_.assess_interval_s) AssessGpu(key, t, now);
  }
  if (!resumed_procs_.empty()) CloseResumedOfUnlistedGpus(snap);
  UpdateFindings(snap, processes_fresh, run_findings);
  EvaluateAlerts(now);
  MaybeFlush(now, false);
}

void WatchPipeline::CountNvmlError(const std::string& call, const std::string& code) {
  ++nvml_errors_[{call, code}];
}

void WatchPipeline::RecordNvmlCall(const std::string& call, double seconds) {
  outputs::NvmlCallStats& c = nvml_calls_[call];
  const auto& bounds = outputs::NvmlLatencyBuckets();
  if (c.bucket_counts.empty()) {
    c.call = call;
    c.bucket_counts.assign(bounds.size(), 0);
  }
  for (size_t b = 0; b < bounds.size(); ++b) {
    if (seconds <= bounds[b]) ++c.bucket_counts[b];
  }
  ++c.count;
  c.sum_seconds += seconds;
}

void WatchPipeline::SetNvmlCallStats(std::vector<outputs::NvmlCallStats> calls) {
  for (outputs::NvmlCallStats& c : calls) {
    std::string name = c.call;
    nvml_calls_[name] = std::move(c);
  }
}

void WatchPipeline::MaybeFlush(double now, bool force) {
  if (!history_) return;
  if (!force && now - last_flush_ < config_.flush_interval_s) return;
  last_flush_ = now;
  auto retention = [&] {
    last_retention_ = now;
    // Each part of it runs on its own (HistoryStore::ApplyRetention): a failure is said on stderr
    // when it starts or changes, and shown in the status notes while it lasts.
    const Status r = history_->ApplyRetention(now);
    if (!r.ok() && r.ToString() != retention_error_) {
      std::fprintf(stderr, "vramwatch watch: history retention: %s\n", r.ToString().c_str());
    } else if (r.ok() && !retention_error_.empty()) {
      std::fprintf(stderr, "vramwatch watch: history retention works again\n");
    }
    retention_error_ = r.ok() ? std::string() : r.ToString();
  };
  // The file deleted or replaced under the daemon: the writes go on, but not where a restart (or
  // a person) looks. Said once on stderr, and in the status notes while it lasts.
  if (std::string gone = history_->FileGoneProblem(); gone != history_file_problem_) {
    if (!gone.empty()) std::fprintf(stderr, "vramwatch watch: history: %s\n", gone.c_str());
    history_file_problem_ = std::move(gone);
  }
  Status s = history_->Flush();
  // Another program holding the write lock: the flush waited its short busy timeout
  // (HistoryOptions::write_busy_timeout_ms); nothing else is tried now, so that sampling does not
  // wait on the lock, and the batch is tried again at the next flush.
  const bool busy = !s.ok() && s.code() == StatusCode::kUnavailable;
  // A full disk (or a cap without room to make) gets room back from retention alone: while paused
  // it still runs when due (and at the last flush, before a stop), and the batch is tried again
  // after it.
  if (!s.ok() && !busy && (force || now - last_retention_ >= config_.retention_interval_s)) {
    retention();
    s = history_->Flush();
  }
  for (const std::string& e : history_->TakeErrors()) std::fprintf(stderr, "vramwatch watch: %s\n", e.c_str());
  if (history_->evicted_rows() > 0 && !room_made_said_) {
    room_made_said_ = true;
    std::fprintf(stderr,
                 "vramwatch watch: history is at its --db-max-size: the oldest samples are deleted to make room for "
                 "the newest (raise --db-max-size, or shorten --raw-retention or --aggregate-retention)\n");
  }
  if (!s.ok()) {
    if (!history_paused_) std::fprintf(stderr, "vramwatch watch: history paused: %s\n", s.ToString().c_str());
    history_paused_ = true;
    history_error_ = s.ToString();
    if (busy) return;
    // The state a restart resumes from (alerts above all: one firing now must not page again after
    // a restart) is small: it may fit where the batch of samples does not.
    const Status st = history_->FlushState();
    if (!st.ok() && !state_unsaved_) {
      std::fprintf(stderr, "vramwatch watch: alert and process state not saved either: %s\n", st.ToString().c_str());
    }
    state_unsaved_ = !st.ok();
    return;
  }
  if (history_paused_) std::fprintf(stderr, "vramwatch watch: history resumed\n");
  history_paused_ = false;
  state_unsaved_ = false;
  if (now - last_retention_ >= config_.retention_interval_s) retention();
}

void WatchPipeline::Flush() {
  MaybeFlush(last_t_, true);
}

}  // namespace vw::cli
