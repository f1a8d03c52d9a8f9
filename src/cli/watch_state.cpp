// WatchPipeline (cli/watch_pipeline.h): what the daemon publishes (the DaemonState that /metrics,
// /api/v1/status and the page render) and the closing lines of a --replay.
#include <fmt/format.h>

#include <algorithm>

#include "cli/watch_pipeline.h"
#include "core/units.h"

namespace vw::cli {

outputs::SeriesVerdict SeriesVerdictOf(const detection::Assessment& a) {
  outputs::SeriesVerdict v;
  v.verdict = std::string(detection::VerdictName(a.verdict));
  v.leak_rate_bps = a.rate_bps;
  v.leak_rate_lo_bps = a.rate_lo_bps;
  v.leak_rate_hi_bps = a.rate_hi_bps;
  v.time_to_oom_s = a.tto_s;
  v.time_to_oom_lo_s = a.tto_lo_s;
  v.time_to_oom_hi_s = a.tto_hi_s;
  v.leak_start_t = a.leak_start_t;
  v.floor_bytes = a.floor_bytes;
  v.peak_bytes = a.peak_bytes;
  v.load_rise_bps = a.load_rise_bps;
  v.held_until_t = a.held_until_t;
  v.evidence = a.evidence;
  v.summary = a.summary;
  return v;
}

std::shared_ptr<const outputs::DaemonState> WatchPipeline::BuildState(double now) const {
  auto s = std::make_shared<outputs::DaemonState>();
  s->t = now;
  s->hostname = hostname_;
  s->driver_version = driver_version_;
  s->cuda_driver_version = cuda_driver_version_;
  s->nvml_version = nvml_version_;
  s->nvml_library = nvml_library_;
  s->nvml_functions = nvml_functions_;
  s->kernel_log_source = kernel_log_source_;
  s->xid_events = xid_events_read_;
  s->version = config_.version;
  s->host_pids_visible = host_pids_visible_;
  s->holder_scan = holder_scan_;
  s->kernel_log_up = kernel_log_up_;
  s->kernel_log_note = kernel_log_note_;
  s->xid_events_from_nvml = xid_events_from_nvml_;
  s->sample_interval_s = sample_interval_s_;
  s->started_t = started_;
  s->samples_total = samples_;
  s->history_enabled = history_ != nullptr;
  s->history_paused = history_paused_;
  s->history_dropped_samples = history_ ? history_->dropped_samples() : 0;
  s->notifications_failed = notifications_failed_;
  s->notifications_dropped = notifications_dropped_;
  for (const auto& [key, t] : ShownGpus()) {
    outputs::GpuState g;
    g.snapshot = t->last;
    g.last_sample_t = t->last_ok_t;
    g.unattributed_bytes = t->unattributed;
    g.mig_unattributed_bytes = t->mig_unattributed;
    g.analysis = t->verdict;
    g.stale = !t->answered;
    g.xid_events = t->xids;
    for (const auto& [pid, p] : t->procs) g.process_analysis[std::to_string(pid)] = p->verdict;
    s->gpus.push_back(std::move(g));
  }
  s->findings = findings_.findings;
  s->notes = findings_.notes;
  if (!retention_error_.empty()) {
    s->notes.push_back(
        "history retention fails, so the database grows past --raw-retention and "
        "--aggregate-retention: " +
        retention_error_);
  }
  if (!history_file_problem_.empty()) s->notes.push_back("history: " + history_file_problem_);
  if (history_ && history_->evicted_rows() > 0) {
    s->notes.push_back(fmt::format(
        "history is at its --db-max-size: {} stored samples and aggregates were deleted before their retention to "
        "make room for the newest",
        history_->evicted_rows()));
  }
  s->findings_window_s = findings_window_s_;
  using Times = detection::EngineConfig::EvidenceTimes;
  const Times times = config_.engine.evidence_times;
  const outputs::AlertClock alert_clock = times == Times::kTraceTime   ? outputs::AlertClock::kTraceTime
                                          : times == Times::kWallClock ? outputs::AlertClock::kWallClock
                                                                       : outputs::AlertClock::kUtc;
  for (const detection::Alert& a : tracker_.Active()) {
    outputs::AlertView v;
    v.name = a.condition.name;
    v.state = std::string(detection::AlertStateName(a.state));
    auto gpu = a.condition.labels.find("gpu");
    if (gpu != a.condition.labels.end()) v.gpu = gpu->second;
    v.severity = std::string(SeverityName(a.condition.severity));
    // A firing alert's time is when it fired (Alertmanager's startsAt); a pending one's when its
    // condition started holding. On the clock the evidence names moments on: UTC live, a replayed
    // trace's wall clock or its offsets ("t+2h 11m 50s") when it had no clock.
    v.since = outputs::AlertTimeText(a.fired_at.value_or(a.active_since), alert_clock);
    auto sum = a.condition.annotations.find("summary");
    if (sum != a.condition.annotations.end()) v.summary = sum->second;
    s->alerts.push_back(std::move(v));
  }
  s->nvml_errors = nvml_errors_;
  for (const auto& [call, c] : nvml_calls_) s->nvml_calls.push_back(c);
  return s;
}

std::vector<std::pair<const std::string*, const WatchPipeline::GpuTrack*>> WatchPipeline::ShownGpus() const {
  std::vector<std::pair<const std::string*, const GpuTrack*>> order;
  // A GPU known only from history (Resume) is not shown until NVML lists it: one that is gone
  // since the restart (fallen off the bus, removed) is not a GPU of this host any more.
  for (const auto& [key, t] : gpus_) {
    if (t.first_seen_t) order.emplace_back(&key, &t);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->last.index < b.second->last.index; });
  return order;
}

std::vector<std::string> WatchPipeline::GpuVerdictLines() const {
  std::vector<std::string> out;
  for (const auto& [key_ptr, track] : ShownGpus()) {
    const std::string& key = *key_ptr;
    const GpuTrack& t = *track;
    std::string line = "GPU " + key + ": " + t.verdict.verdict;
    if (t.verdict.leak_rate_bps) line += ", " + FormatRate(*t.verdict.leak_rate_bps);
    if (t.verdict.time_to_oom_s) line += ", out of memory in " + FormatDuration(*t.verdict.time_to_oom_s);
    std::string sep = "; Xid ";
    for (const auto& [xid, n] : t.xids) {
      line += fmt::format("{}{} x{}", sep, xid, n);
      sep = ", ";
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace vw::cli
