// WatchPipeline (cli/watch_pipeline.h): the alert conditions of a moment (a GPU's or a process's
// leak, a stale GPU, critical findings) into the `for:` tracker, and each change to the sinks and
// the stored alert state.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "cli/watch_pipeline.h"
#include "core/units.h"

namespace vw::cli {

namespace {

// A leak alert's `description`: the leak's own sentences (Assessment::summary), not the first of
// the evidence, which may say where the analysis starts (a restart) and nothing about the leak;
// that first sentence only when there is no summary.
std::string LeakDescription(const outputs::SeriesVerdict& v) {
  if (!v.summary.empty()) return v.summary;
  return v.evidence.empty() ? std::string() : v.evidence.front();
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

storage::StoredAlert ToStored(const detection::Alert& alert, double now) {
  storage::StoredAlert a;
  a.key = alert.key;
  a.name = alert.condition.name;
  a.labels = alert.condition.labels;
  a.annotations = alert.condition.annotations;
  a.severity = static_cast<int>(alert.condition.severity);
  a.active_since = alert.active_since;
  a.fired_at = alert.fired_at.value_or(now);
  a.unseen_s = detection::AlertTracker::UnseenFor(alert, now);
  return a;
}

}  // namespace

void WatchPipeline::EvaluateAlerts(double now) {
  auto events = tracker_.Evaluate(now, Conditions(now));
  for (outputs::AlertSink* s : sinks_) s->Send(events);
  if (!history_) return;
  for (const detection::AlertEvent& e : events) {
    if (e.kind == detection::AlertEventKind::kResolved) {
      history_->alerts().Remove(e.alert.key);
      stored_unseen_.erase(e.alert.key);
    } else if (e.kind == detection::AlertEventKind::kFiring) {
      history_->alerts().Put(ToStored(e.alert, now));
      stored_unseen_[e.alert.key] = 0;
    }
  }
  // A firing alert whose condition is not seen: how long, so that a restart goes on from there.
  // Put at every change (the next flush writes the latest, and so does the one at a stop), so a
  // daemon restarting every few seconds still adds up the time it looked.
  for (const detection::Alert& a : tracker_.Active()) {
    if (a.state != detection::AlertState::kFiring) continue;
    const double unseen = detection::AlertTracker::UnseenFor(a, now);
    auto stored = stored_unseen_.find(a.key);
    if (stored != stored_unseen_.end() && stored->second == unseen) continue;
    history_->alerts().Put(ToStored(a, now));
    stored_unseen_[a.key] = unseen;
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
      // On a MIG GPU instance its runway is the instance's: the summary names it.
      const std::string instance = MigInstanceOf(t.last.mig_devices, pt->last_snapshot) != nullptr
                                       ? fmt::format(" (MIG GPU instance {})", *pt->last_snapshot.gpu_instance_id)
                                       : "";
      std::string summary =
          fmt::format("PID {} on GPU {}{} leaks {}", pid, key, instance, FormatRate(*pv.leak_rate_bps));
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
  std::map<std::string, size_t> from_findings;  // alert key -> its condition in `out`
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
    // Findings of one alert (orphaned memory on two MIG instances of one GPU): one alert that says
    // each, at the worst severity, not the first alone.
    auto [at, first] = from_findings.emplace(detection::AlertKey(c), out.size());
    if (!first) {
      detection::AlertCondition& kept = out[at->second];
      kept.severity = std::max(kept.severity, c.severity);
      kept.annotations["summary"] += " Also: " + c.annotations["summary"];
      if (const std::string& d = c.annotations["description"];
          !d.empty() && kept.annotations["description"].find(d) == std::string::npos) {
        kept.annotations["description"] += kept.annotations["description"].empty() ? d : " Also: " + d;
      }
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace vw::cli
