#include "cli/watch_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli/xid_summary.h"
#include "core/time.h"
#include "core/units.h"
#include "outputs/check_report.h"
#include "outputs/daemon_status_json.h"
#include "sources/kernel/xid_catalog.h"

namespace vw::cli {

namespace {

// A leak alert's `description`: the leak's own sentences (Assessment::summary), not the first of
// the evidence, which may say where the analysis starts (a restart) and nothing about the leak;
// that first sentence only when there is no summary.
std::string LeakDescription(const outputs::SeriesVerdict& v) {
  if (!v.summary.empty()) return v.summary;
  return v.evidence.empty() ? std::string() : v.evidence.front();
}

// The lifecycle record of a process on GPU `key` as last seen in `p` (times in seconds, peak in
// bytes); its end is left for the caller.
storage::ProcessRecord ProcessRecordOf(const std::string& key, int64_t pid, const ProcessSnapshot& p,
                                       double first_seen_s, double last_seen_s, uint64_t peak_bytes) {
  storage::ProcessRecord r;
  r.gpu = key;
  r.pid = pid;
  r.first_seen_s = first_seen_s;
  r.last_seen_s = last_seen_s;
  r.peak_bytes = peak_bytes;
  r.command = CommandOf(p);
  r.user = p.info.user;
  r.container = p.info.container_id;
  r.pod = p.info.pod_uid;
  r.slurm_job = p.info.slurm_job;
  return r;
}

// Alert name for a finding kind that should page or ticket someone; empty for the rest.
std::string AlertNameOf(const Finding& f) {
  if (f.severity != Severity::kCritical) return {};
  if (f.kind == "orphaned_memory") return "GpuOrphanedMemory";
  if (f.kind == "zombie_holder") return "GpuZombieHolder";
  if (f.kind == "stuck_holder") return "GpuStuckHolder";
  if (f.kind == "dead_holder") return "GpuDeadHolder";
  if (f.kind == "gpu_lost") return "GpuLost";
  if (f.kind == "nvml_error") return "GpuNvmlError";
  if (f.kind == "xid") return "GpuXidError";
  return {};
}

}  // namespace

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

WatchPipeline::WatchPipeline(WatchConfig config, storage::HistoryStore* history, std::vector<outputs::AlertSink*> sinks)
    : config_(std::move(config)), history_(history), sinks_(std::move(sinks)), tracker_(config_.alerts) {}

WatchPipeline::GpuTrack& WatchPipeline::Track(const GpuSnapshot& g) {
  const std::string key = detection::GpuKey(g);
  auto it = gpus_.find(key);
  if (it == gpus_.end()) it = gpus_.emplace(key, GpuTrack(config_.engine)).first;
  return it->second;
}

size_t WatchPipeline::Resume(double now, const std::optional<std::string>& hostname) {
  if (history_ == nullptr) return 0;
  size_t fed = 0;
  if (auto all = history_->baselines().All(); all.ok()) {
    for (auto& b : *all) baselines_[b.key] = b;
  }
  // Alerts firing before the restart fire on (or resolve) without waiting out `for:` again.
  if (auto firing = history_->alerts().All(); firing.ok()) {
    for (const auto& a : *firing) {
      // Another host's alert (a replayed recording, a renamed node): this daemon never sent it and
      // will not see its condition, so it is neither continued nor resolved.
      auto host = a.labels.find("hostname");
      const std::string of = host == a.labels.end() ? std::string() : host->second;
      if (hostname && of != *hostname) {
        std::fprintf(stderr,
                     "vramwatch watch: dropped the stored alert %s: it is for host '%s', this is '%s' (no "
                     "notification)\n",
                     a.key.c_str(), of.c_str(), hostname->c_str());
        history_->alerts().Remove(a.key);
        continue;
      }
      detection::AlertCondition c;
      c.name = a.name;
      c.labels = a.labels;
      c.annotations = a.annotations;
      c.severity = static_cast<Severity>(a.severity);
      tracker_.RestoreFiring(c, a.active_since, a.fired_at);
    }
  }
  if (auto running = history_->processes().Running(); running.ok()) {
    for (auto& r : *running) {
      // Records the daemon itself never closed: resumed or closed at the first process refresh.
      if (r.last_seen_s >= now - config_.resume_s) {
        resumed_procs_[{r.gpu, r.pid}] = r;
      } else {
        r.end = storage::ProcessEnd::kExited;
        history_->processes().Upsert(r);
      }
    }
  }
  ResumeXids();
  auto names = history_->SeriesNames();
  if (!names.ok()) return 0;
  for (const std::string& name : *names) {
    if (name.rfind("gpu:", 0) != 0 || name.find('/') != std::string::npos) continue;
    auto pts = history_->Recent(name, now - config_.resume_s);
    if (!pts.ok() || pts->empty()) continue;
    const std::string key = name.substr(4);
    auto it = gpus_.find(key);
    if (it == gpus_.end()) it = gpus_.emplace(key, GpuTrack(config_.engine)).first;
    for (const auto& p : *pts) it->second.engine.Add(p.t, static_cast<double>(p.used_bytes));
    fed += pts->size();
  }
  return fed;
}

void WatchPipeline::ResumeXids() {
  if (Status s = history_->xids().ForgetOtherBoots(config_.boot_id); !s.ok()) {
    std::fprintf(stderr, "vramwatch watch: history: %s\n", s.ToString().c_str());
  }
  auto stored = history_->xids().Load(config_.boot_id);
  if (!stored.ok()) {
    std::fprintf(stderr, "vramwatch watch: history: %s\n", stored.status().ToString().c_str());
    return;
  }
  for (const auto& [key, n] : stored->counts) {
    if (key.second > 0) resumed_xid_counts_[key.first][static_cast<unsigned>(key.second)] += n;
  }
  for (const storage::StoredXid& x : stored->events) {
    SeenXid seen;
    seen.seen_t = x.seen_s;
    seen.event.xid = x.xid;
    seen.event.pci_bus_id = x.pci_bus_id;
    seen.event.pid = x.pid;
    seen.event.process_name = x.process_name;
    seen.event.message = x.message;
    seen.event.caused_by_xid = x.caused_by_xid;
    seen.event.line = x.line;
    xids_seen_.push_back(std::move(seen));
  }
  while (xids_seen_.size() > config_.max_xid_events) xids_seen_.pop_front();
}

bool WatchPipeline::KeepVanishedFacts(const HostSnapshot& in, HostSnapshot* out) const {
  bool any = false;
  for (size_t gi = 0; gi < in.gpus.size(); ++gi) {
    const GpuSnapshot& g = in.gpus[gi];
    const std::string key = detection::GpuKey(g);
    auto t = gpus_.find(key);
    for (size_t pi = 0; pi < g.processes.size(); ++pi) {
      const ProcessSnapshot& p = g.processes[pi];
      if (p.info.alive || p.info.state != ProcState::kGone || !p.listed_by_nvml) continue;
      const ProcTrack* known = nullptr;
      if (t != gpus_.end()) {
        auto it = t->second.procs.find(p.pid);
        if (it != t->second.procs.end()) known = it->second.get();
      }
      ProcessInfo last;
      if (known != nullptr) {
        last = known->last_snapshot.info;
      } else if (auto stored = resumed_procs_.find({key, p.pid}); stored != resumed_procs_.end()) {
        // Gone before this daemon started: what its stored record says (its record goes on).
        last.command = stored->second.command;
        last.user = stored->second.user;
        last.container_id = stored->second.container;
        last.pod_uid = stored->second.pod;
        last.slurm_job = stored->second.slurm_job;
      } else {
        continue;
      }
      if (last.command.empty() && last.user.empty() && last.container_id.empty() && last.pod_uid.empty() &&
          last.slurm_job.empty()) {
        continue;
      }
      if (!any) *out = in;
      any = true;
      ProcessInfo& info = out->gpus[gi].processes[pi].info;
      info.uid = last.uid;
      info.user = last.user;
      info.command = last.command;
      info.container_pid = last.container_pid;
      info.container_id = last.container_id;
      info.pod_uid = last.pod_uid;
      info.slurm_job = last.slurm_job;
    }
  }
  return any;
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
  t.verdict = SeriesVerdictOf(t.engine.Assess());
  const std::string wk = WorkloadKey(t.last);
  if (wk.empty()) return;
  auto b = baselines_.find(wk);
  if (t.verdict.verdict == "plateau" && t.verdict.floor_bytes &&
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

void WatchPipeline::ResumeProcess(const std::string& key, GpuTrack& t, int64_t pid, const ProcessSnapshot& p,
                                  ProcTrack& pt, double now) {
  auto it = resumed_procs_.find({key, pid});
  if (it == resumed_procs_.end()) return;
  const storage::ProcessRecord r = std::move(it->second);
  resumed_procs_.erase(it);
  // A PID reused by another program is a new process: its old record ends where it was last seen.
  if (r.command != CommandOf(p)) {
    EndedWhileDown(key, t, r, now);
    return;
  }
  pt.first_seen = r.first_seen_s;
  pt.peak = r.peak_bytes.value_or(0);
  auto pts = history_->Recent(outputs::ProcessSeriesName(key, pid), std::max(r.first_seen_s, now - config_.resume_s));
  if (!pts.ok()) return;
  for (const auto& s : *pts) {
    if (s.t >= now) break;
    pt.engine.Add(s.t, static_cast<double>(s.used_bytes));
    pt.peak = std::max(pt.peak, s.used_bytes);
  }
}

std::optional<uint64_t> WatchPipeline::LastStoredBytes(const std::string& key, const storage::ProcessRecord& r) {
  if (!history_) return std::nullopt;
  auto pts = history_->Raw(outputs::ProcessSeriesName(key, r.pid),
                           std::max(r.first_seen_s, r.last_seen_s - config_.resume_s), r.last_seen_s);
  if (!pts.ok() || pts->empty()) return std::nullopt;
  return pts->back().used_bytes;
}

void WatchPipeline::EndedWhileDown(const std::string& key, GpuTrack& t, storage::ProcessRecord r, double now) {
  r.end = storage::ProcessEnd::kExited;
  if (history_) history_->processes().Upsert(r);
  // The fall of the GPU's series from its stored samples to the live ones is its memory going, not
  // a restart of the series. Its record is revised like any ended holder's when that memory stays
  // held, unowned (ReviseEnded).
  if (std::optional<uint64_t> last = LastStoredBytes(key, r); last && *last > 0) {
    t.engine.NoteDeparture(r.last_seen_s, now, static_cast<double>(*last), r.pid, r.first_seen_s);
    t.recently_ended.emplace_back(std::move(r), *last);
  }
}

void WatchPipeline::CloseUnresumed(const std::string& key, GpuTrack& t, double now) {
  for (auto it = resumed_procs_.lower_bound({key, std::numeric_limits<int64_t>::min()});
       it != resumed_procs_.end() && it->first.first == key;) {
    EndedWhileDown(key, t, std::move(it->second), now);
    it = resumed_procs_.erase(it);
  }
}

void WatchPipeline::EndProcess(const std::string& key, GpuTrack& t, int64_t pid, ProcTrack& p, const GpuSnapshot& g) {
  if (!history_ || !p.on_gpu) return;  // a device file holder only: it had no life here
  storage::ProcessRecord r = ProcessRecordOf(key, pid, p.last_snapshot, p.first_seen, p.last_seen, p.peak);
  // NVML listed memory for it for longer than the lazy-reclaim grace after its /proc entry was gone
  // (a dead holder): it vanished while its memory stayed held, whatever happens to that memory now.
  const bool vanished = p.gone_since && p.last_seen - *p.gone_since >= config_.check.grace_s && p.last > 0;
  r.end = vanished ? storage::ProcessEnd::kVanishedMemoryHeld : storage::ProcessEnd::kExited;
  history_->processes().Upsert(r);
  t.recently_ended.emplace_back(r, p.last);
  (void)g;
}

void WatchPipeline::ReviseEnded(GpuTrack& t, const GpuSnapshot& g, double now) {
  // Memory may lag a kill by seconds (lazy reclaim): a holder whose share of memory is still held,
  // unowned, while the grace runs is recorded as vanished with its memory held.
  auto un = outputs::UnattributedBytes(g);
  for (auto it = t.recently_ended.begin(); it != t.recently_ended.end();) {
    auto& [r, last] = *it;
    const bool held = un && last > 0 && *un >= std::max<uint64_t>(last / 2, config_.check.orphan_threshold_bytes);
    if (held && history_) {
      r.end = storage::ProcessEnd::kVanishedMemoryHeld;
      history_->processes().Upsert(r);
    }
    if (held || now - r.last_seen_s > 2 * config_.check.grace_s + config_.assess_interval_s) {
      it = t.recently_ended.erase(it);
    } else {
      ++it;
    }
  }
}

void WatchPipeline::RefreshProcesses(const std::string& key, GpuTrack& t, const GpuSnapshot& g, double now) {
  // The memory of the processes listed with a value: less a process's own, what the others hold
  // when the GPU's own used memory is unknown (detection::HeldByOthers; 0 for the only holder).
  uint64_t listed_bytes = 0;
  for (const ProcessSnapshot& p : g.processes) listed_bytes += p.used_bytes.value_or(0);
  std::map<int64_t, bool> seen;
  for (const ProcessSnapshot& p : g.processes) {
    seen[p.pid] = true;
    auto it = t.procs.find(p.pid);
    if (it == t.procs.end()) {
      it = t.procs.emplace(p.pid, std::make_unique<ProcTrack>(config_.engine)).first;
      it->second->first_seen = now;
    }
    ProcTrack& pt = *it->second;
    // A life on this GPU starts when NVML lists the PID here (or it holds memory here): a process
    // that only has /dev/nvidiaN open (CUDA opens every device file) reaches the findings, but
    // gets no lifecycle record on this GPU.
    if (!pt.on_gpu && (p.listed_by_nvml || p.used_bytes.value_or(0) > 0)) {
      pt.on_gpu = true;
      pt.first_seen = now;
      if (history_ && !resumed_procs_.empty()) ResumeProcess(key, t, p.pid, p, pt, now);
    }
    pt.last_seen = now;
    pt.last_snapshot = p;
    if (p.info.alive || p.info.state != ProcState::kGone) {
      pt.gone_since.reset();
    } else if (!pt.gone_since) {
      pt.gone_since = now;
    }
    if (p.used_bytes) {
      pt.engine.Add(now, static_cast<double>(*p.used_bytes));
      pt.peak = std::max(pt.peak, *p.used_bytes);
      pt.last = *p.used_bytes;
      if (g.memory_total_bytes)
        pt.engine.SetCapacity(static_cast<double>(*g.memory_total_bytes),
                              static_cast<double>(g.memory_reserved_bytes.value_or(0)));
      // Its runway counts what the GPU's other holders use now.
      // Set at every refresh, so the memory of holders that have left stops counting.
      pt.engine.SetHeldByOthers(
          detection::HeldByOthers(g.memory_used_bytes, *p.used_bytes, listed_bytes - *p.used_bytes));
      if (history_) history_->Append(outputs::ProcessSeriesName(key, p.pid), now, *p.used_bytes);
    }
    if (history_ && pt.on_gpu) {
      history_->processes().Upsert(ProcessRecordOf(key, p.pid, p, pt.first_seen, now, pt.peak));
    }
  }
  // A PID that left the list ends its series (segmented at exit).
  for (auto it = t.procs.begin(); it != t.procs.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    EndProcess(key, t, it->first, *it->second, g);
    // A fall of the GPU's memory that its exit explains does not cut the GPU series.
    if (it->second->last > 0)
      t.engine.NoteDeparture(it->second->last_seen, now, static_cast<double>(it->second->last), it->first,
                             it->second->first_seen);
    it = t.procs.erase(it);
  }
  if (!resumed_procs_.empty() && detection::ProcessListComplete(g)) CloseUnresumed(key, t, now);
  ReviseEnded(t, g, now);
  if (now - t.last_proc_assess_t >= config_.process_assess_interval_s) {
    t.last_proc_assess_t = now;
    for (auto& [pid, pt] : t.procs) pt->verdict = SeriesVerdictOf(pt->engine.Assess());
  }
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
  if (run_findings && processes_fresh) {
    window_.push_back(snap);
    // The findings judge the newest sample at least grace_s old and every one after it: once the
    // daemon has seen grace_s, the window spans at least grace_s whatever the jitter of the sample
    // times (orphaned_memory is critical only over a window that long, so a window that spanned
    // grace_s give or take a millisecond flipped it between critical and warning every tick).
    while (window_.size() > 2 && window_[1].t <= now - config_.check.grace_s) window_.pop_front();
    detection::CheckInput in;
    in.samples.assign(window_.begin(), window_.end());
    if (!xids_seen_.empty()) {
      kernel::KernelLogScan kept;
      kept.uuid_by_pci = xid_uuid_by_pci_;
      for (const SeenXid& x : xids_seen_) kept.events.push_back(x.event);
      in.xids = SummarizeXids(kept, snap);
    }
    detection::CheckConfig cfg = config_.check;
    cfg.window_s = window_.size() > 1 ? window_.back().t - window_.front().t : 0;
    findings_ = detection::EvaluateCheck(in, cfg);
  } else if (!run_findings && !xids_seen_.empty()) {
    // Under --replay there is no live /proc: only the xid rule runs, over every GPU seen so far.
    HostSnapshot known = snap;
    known.gpus.clear();
    for (const auto& [key, t] : gpus_) {
      if (t.first_seen_t) known.gpus.push_back(t.last);
    }
    kernel::KernelLogScan kept;
    kept.uuid_by_pci = xid_uuid_by_pci_;
    for (const SeenXid& x : xids_seen_) kept.events.push_back(x.event);
    detection::CheckInput in;
    in.samples = {known};
    in.xids = SummarizeXids(kept, known);
    detection::CheckResult all = detection::EvaluateCheck(in, config_.check);
    findings_ = detection::CheckResult{};
    for (Finding& f : all.findings) {
      if (f.kind == "xid") findings_.findings.push_back(std::move(f));
    }
  }
  EvaluateAlerts(now);
  MaybeFlush(now, false);
}

void WatchPipeline::IngestNvmlUnavailable(double now, const std::string& hostname, const std::string& error) {
  if (started_ == 0) started_ = now;
  last_t_ = std::max(last_t_, now);
  if (!hostname.empty()) hostname_ = hostname;
  Finding f;
  f.kind = "nvml_error";
  f.severity = Severity::kCritical;
  f.message = "cannot use NVML: " + error;
  f.action = "check that the NVIDIA driver is loaded (nvidia-smi); --nvml-lib chooses another library";
  findings_ = detection::CheckResult{};
  findings_.findings.push_back(std::move(f));
  findings_.worst = Severity::kCritical;
  EvaluateAlerts(now);
  MaybeFlush(now, false);
}

void WatchPipeline::EvaluateAlerts(double now) {
  auto events = tracker_.Evaluate(now, Conditions(now));
  for (outputs::AlertSink* s : sinks_) s->Send(events);
  if (history_) {
    for (const detection::AlertEvent& e : events) {
      if (e.kind == detection::AlertEventKind::kResolved) {
        history_->alerts().Remove(e.alert.key);
      } else if (e.kind == detection::AlertEventKind::kFiring) {
        storage::StoredAlert a;
        a.key = e.alert.key;
        a.name = e.alert.condition.name;
        a.labels = e.alert.condition.labels;
        a.annotations = e.alert.condition.annotations;
        a.severity = static_cast<int>(e.alert.condition.severity);
        a.active_since = e.alert.active_since;
        a.fired_at = e.alert.fired_at.value_or(now);
        history_->alerts().Put(a);
      }
    }
  }
}

void WatchPipeline::IngestXids(const kernel::KernelLogScan& scan, double now) {
  for (const auto& [pci, uuid] : scan.uuid_by_pci) xid_uuid_by_pci_[pci] = uuid;
  xid_events_read_ += scan.events.size();
  HostSnapshot known;
  for (const auto& [key, t] : gpus_) {
    if (t.first_seen_t) known.gpus.push_back(t.last);  // not a GPU known only from history
  }
  kernel::KernelLogScan lookup;
  lookup.uuid_by_pci = xid_uuid_by_pci_;
  for (const kernel::XidEvent& e : scan.events) {
    const std::string key = XidGpuKey(e, lookup, known);
    auto gpu = key.empty() ? gpus_.end() : gpus_.find(key);
    if (gpu != gpus_.end() && e.xid > 0) {
      ++gpu->second.xids[static_cast<unsigned>(e.xid)];
      if (history_) history_->xids().Count(config_.boot_id, key, e.xid);
    }
    if (history_ && kernel::StaysUntilReset(e.xid, e.message)) {
      storage::StoredXid x;
      x.boot_id = config_.boot_id;
      x.gpu = key;
      x.xid = e.xid;
      x.seen_s = now;
      x.pci_bus_id = e.pci_bus_id;
      x.pid = e.pid;
      x.process_name = e.process_name;
      x.message = e.message;
      x.caused_by_xid = e.caused_by_xid;
      x.line = e.line;
      history_->xids().Keep(x);
    }
    xids_seen_.push_back({e, now});
  }
  auto expired = [&](const SeenXid& x) {
    return !kernel::StaysUntilReset(x.event.xid, x.event.message) && x.seen_t < now - config_.xid_max_age_s;
  };
  xids_seen_.erase(std::remove_if(xids_seen_.begin(), xids_seen_.end(), expired), xids_seen_.end());
  while (xids_seen_.size() > config_.max_xid_events) xids_seen_.pop_front();
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

std::vector<detection::AlertCondition> WatchPipeline::Conditions(double now) const {
  std::vector<detection::AlertCondition> out;
  for (const auto& [key, t] : gpus_) {
    if (!t.first_seen_t) continue;  // known only from history: NVML does not list it (now)
    std::map<std::string, std::string> labels{{"gpu", key}, {"uuid", t.last.uuid}, {"hostname", hostname_}};
    const auto& v = t.verdict;
    if (v.verdict == "leak" && v.leak_rate_bps) {
      detection::AlertCondition c;
      c.name = "GpuMemoryLeak";
      c.labels = labels;
      c.severity = detection::RunwayIsCritical(v.time_to_oom_lo_s, v.time_to_oom_s, config_.critical_runway_s)
                       ? Severity::kCritical
                       : Severity::kWarning;
      std::string summary = fmt::format("GPU {} leaks {}", key, FormatRate(*v.leak_rate_bps));
      if (v.time_to_oom_s) summary += "; out of memory in " + FormatDuration(*v.time_to_oom_s);
      if (v.baseline_bytes && t.last.memory_used_bytes && *v.baseline_bytes > 0) {
        // Only above: a workload keyed by its command line may hold less here than its plateau
        // elsewhere (the same script on another GPU), and "-46 % above" says nothing.
        const double above = (static_cast<double>(*t.last.memory_used_bytes) - *v.baseline_bytes) / *v.baseline_bytes;
        if (std::round(above * 100) >= 1) {
          summary += fmt::format("; {:.0f} % above this workload's plateau and rising", above * 100);
        }
      }
      c.annotations["summary"] = summary;
      if (std::string d = LeakDescription(v); !d.empty()) c.annotations["description"] = std::move(d);
      out.push_back(std::move(c));
    }
    // A process series that says leak alerts on its own, whatever the GPU series says (another
    // holder's exit or load can hide a process's leak in the GPU's total).
    for (const auto& [pid, pt] : t.procs) {
      const auto& pv = pt->verdict;
      if (pv.verdict != "leak" || !pv.leak_rate_bps) continue;
      detection::AlertCondition c;
      c.name = "GpuProcessMemoryLeak";
      c.labels = labels;
      c.labels["pid"] = std::to_string(pid);
      c.severity = detection::RunwayIsCritical(pv.time_to_oom_lo_s, pv.time_to_oom_s, config_.critical_runway_s)
                       ? Severity::kCritical
                       : Severity::kWarning;
      std::string summary = fmt::format("PID {} on GPU {} leaks {}", pid, key, FormatRate(*pv.leak_rate_bps));
      if (pv.time_to_oom_s) summary += "; out of memory in " + FormatDuration(*pv.time_to_oom_s);
      if (!CommandOf(pt->last_snapshot).empty()) summary += " (" + CommandOf(pt->last_snapshot) + ")";
      c.annotations["summary"] = summary;
      if (std::string d = LeakDescription(pv); !d.empty()) c.annotations["description"] = std::move(d);
      out.push_back(std::move(c));
    }
    // Stale: no good sample for stale_alert_s, counted from the last one, or for a GPU that never
    // answered, from the first sample that listed it.
    const std::optional<double> since = t.last_ok_t ? t.last_ok_t : t.first_seen_t;
    if (since && now - *since > config_.stale_alert_s) {
      detection::AlertCondition c;
      c.name = "GpuStale";
      c.labels = labels;
      c.severity = Severity::kWarning;
      c.annotations["summary"] =
          t.last_ok_t ? fmt::format("GPU {} has not answered NVML for {}", key, FormatDuration(now - *since))
                      : fmt::format("GPU {} has not answered NVML since it was first listed, {} ago", key,
                                    FormatDuration(now - *since));
      out.push_back(std::move(c));
    }
  }
  for (const Finding& f : findings_.findings) {
    std::string name = AlertNameOf(f);
    if (name.empty()) continue;
    detection::AlertCondition c;
    c.name = name;
    c.labels = {{"gpu", f.gpu}, {"hostname", hostname_}};
    // uuid whenever the GPU is known, as on the GPU alerts above and on every /metrics series.
    if (auto g = gpus_.find(f.gpu); g != gpus_.end() && !g->second.last.uuid.empty()) {
      c.labels["uuid"] = g->second.last.uuid;
    }
    if (f.kind == "xid") {
      // One alert per GPU and Xid code, named like the rules' `xid` label; the PIDs the driver
      // named are in the summary (a second PID must not open a second alert).
      if (f.xid) c.labels["xid"] = std::to_string(*f.xid);
    } else if (f.pid) {
      c.labels["pid"] = std::to_string(*f.pid);
    }
    c.severity = f.severity;
    c.annotations["summary"] = f.message;
    if (!f.action.empty()) c.annotations["description"] = f.action;
    out.push_back(std::move(c));
  }
  return out;
}

void WatchPipeline::MaybeFlush(double now, bool force) {
  if (!history_) return;
  if (!force && now - last_flush_ < config_.flush_interval_s) return;
  last_flush_ = now;
  Status s = history_->Flush();
  if (!s.ok()) {
    if (!history_paused_) std::fprintf(stderr, "vramwatch watch: history paused: %s\n", s.ToString().c_str());
    history_paused_ = true;
    history_error_ = s.ToString();
    return;
  }
  if (history_paused_) std::fprintf(stderr, "vramwatch watch: history resumed\n");
  history_paused_ = false;
  if (now - last_retention_ >= config_.retention_interval_s) {
    last_retention_ = now;
    Status r = history_->ApplyRetention(now);
    if (!r.ok()) std::fprintf(stderr, "vramwatch watch: history retention: %s\n", r.ToString().c_str());
  }
}

void WatchPipeline::Flush() {
  MaybeFlush(last_t_, true);
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
  s->kernel_log_up = kernel_log_up_;
  s->kernel_log_note = kernel_log_note_;
  s->started_t = started_;
  s->samples_total = samples_;
  s->history_enabled = history_ != nullptr;
  s->history_paused = history_paused_;
  s->history_dropped_samples = history_ ? history_->dropped_samples() : 0;
  s->notifications_failed = notifications_failed_;
  s->notifications_dropped = notifications_dropped_;
  std::vector<const GpuTrack*> order;
  // A GPU known only from history (Resume) is not shown until NVML lists it: one that is gone
  // since the restart (fallen off the bus, removed) is not a GPU of this host any more.
  for (const auto& [key, t] : gpus_) {
    if (t.first_seen_t) order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](const GpuTrack* a, const GpuTrack* b) { return a->last.index < b->last.index; });
  for (const GpuTrack* t : order) {
    outputs::GpuState g;
    g.snapshot = t->last;
    g.last_sample_t = t->last_ok_t;
    g.unattributed_bytes = t->unattributed;
    g.analysis = t->verdict;
    g.stale = !t->answered;
    g.xid_events = t->xids;
    for (const auto& [pid, p] : t->procs) g.process_analysis[std::to_string(pid)] = p->verdict;
    s->gpus.push_back(std::move(g));
  }
  s->findings = findings_.findings;
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

std::vector<std::string> WatchPipeline::GpuVerdictLines() const {
  std::vector<std::string> out;
  for (const auto& [key, t] : gpus_) {
    if (!t.first_seen_t) continue;
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
