// WatchPipeline (cli/watch_pipeline.h), per process: each PID's engine and its lifecycle record
// (first seen, last seen, peak, how it ended), the departures a PID leaves in its GPU's series,
// and the last known /proc facts of a holder whose /proc entry is gone.
#include <algorithm>
#include <map>

#include "cli/watch_pipeline.h"
#include "outputs/check_report.h"
#include "outputs/daemon_status_json.h"

namespace vw::cli {

namespace {

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
  r.pod_namespace = p.info.pod_namespace;
  r.pod_name = p.info.pod_name;
  r.container_name = p.info.container_name;
  r.slurm_job = p.info.slurm_job;
  return r;
}

}  // namespace

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
        last.pod_namespace = stored->second.pod_namespace;
        last.pod_name = stored->second.pod_name;
        last.container_name = stored->second.container_name;
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
      CopyIdentity(last, info);
    }
  }
  return any;
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
      // Its runway counts what the GPU's other holders use now; on a MIG GPU instance, the
      // instance's size and its other holders only. Set at every refresh, so the memory of
      // holders that have left stops counting.
      if (const MigDeviceSnapshot* mig = MigInstanceOf(g.mig_devices, p)) {
        uint64_t instance_listed = 0;
        for (const ProcessSnapshot& q : g.processes) {
          if (q.gpu_instance_id == p.gpu_instance_id) instance_listed += q.used_bytes.value_or(0);
        }
        pt.engine.SetCapacity(static_cast<double>(*mig->memory_total_bytes), 0);
        pt.engine.SetHeldByOthers(
            detection::HeldByOthers(mig->memory_used_bytes, *p.used_bytes, instance_listed - *p.used_bytes), true);
      } else {
        if (g.memory_total_bytes)
          pt.engine.SetCapacity(static_cast<double>(*g.memory_total_bytes),
                                static_cast<double>(g.memory_reserved_bytes.value_or(0)));
        pt.engine.SetHeldByOthers(
            detection::HeldByOthers(g.memory_used_bytes, *p.used_bytes, listed_bytes - *p.used_bytes));
      }
      if (history_) history_->Append(outputs::ProcessSeriesName(key, p.pid), now, *p.used_bytes);
    }
    if (history_ && pt.on_gpu) {
      history_->processes().Upsert(ProcessRecordOf(key, p.pid, p, pt.first_seen, now, pt.peak));
    }
  }
  // A PID that left the list ends its series (segmented at exit). Not at once when a list could
  // not be read (a failed or hung call): a PID missing from it is not known to have left, and
  // ending it would close its lifecycle record, drop its leak verdict and note a departure on the
  // GPU's engine for memory that never fell. It ends at the next complete list that lacks it, or
  // once it has been missing for twice the grace (and a refresh) while the lists stay incomplete
  // (a list call that keeps failing must not keep every departed PID, and its alert, for ever).
  const bool complete = detection::ProcessListComplete(g);
  const double patience_s = 2 * config_.check.grace_s + config_.process_assess_interval_s;
  // The holders listed now, for a departure's engine: one replaced by jobs that came after it is
  // not taken off the GPU's samples (LeakEngine::NoteDeparture).
  std::vector<detection::ListedHolder> still_listed;
  for (const auto& [pid, pt] : t.procs) {
    if (seen.count(pid) && pt->last > 0) still_listed.push_back({pt->first_seen, static_cast<double>(pt->last)});
  }
  for (auto it = t.procs.begin(); it != t.procs.end();) {
    if (seen.count(it->first) || (!complete && now - it->second->last_seen < patience_s)) {
      ++it;
      continue;
    }
    EndProcess(key, t, it->first, *it->second, g);
    // A fall of the GPU's memory that its exit explains does not cut the GPU series.
    if (it->second->last > 0)
      t.engine.NoteDeparture(it->second->last_seen, now, static_cast<double>(it->second->last), it->first,
                             it->second->first_seen, still_listed);
    it = t.procs.erase(it);
  }
  // Records resumed from the database whose PID no list shows: closed at the first complete list,
  // or after the same patience when the lists stay incomplete.
  if (!resumed_procs_.empty() && (complete || now - started_ >= patience_s)) CloseUnresumed(key, t, now);
  ReviseEnded(t, g, now);
  // Every process_assess_interval_s; a process without enough data for a verdict yet (a new one)
  // at every refresh, so that what the status says of it (its samples, its span) is current: that
  // assessment stops early and costs little.
  const bool due = now - t.last_proc_assess_t >= config_.process_assess_interval_s;
  if (due) t.last_proc_assess_t = now;
  for (auto& [pid, pt] : t.procs) {
    if (due || pt->verdict.verdict == "insufficient_data") pt->verdict = SeriesVerdictOf(pt->engine.Assess());
  }
}

}  // namespace vw::cli
