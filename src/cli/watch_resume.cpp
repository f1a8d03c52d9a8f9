// WatchPipeline (cli/watch_pipeline.h) after a restart: the engines re-fed from the stored
// samples, the baselines, firing alerts and Xids of this boot restored, and the stored lifecycle
// records of processes that were running either resumed (same PID, same command) or closed as
// ended while the daemon was down, with their memory noted as a departure for their GPU's engine;
// and the check that the card answering at a GPU key is the one its history is of.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include "cli/watch_pipeline.h"
#include "outputs/daemon_status_json.h"

namespace vw::cli {

namespace {

// A read of history that failed at a restart: what it would have restored is missing, and says so.
void ReadFailed(const Status& s, const char* what) {
  std::fprintf(stderr, "vramwatch watch: history: %s not restored: %s\n", what, s.ToString().c_str());
}

}  // namespace

size_t WatchPipeline::Resume(double now, const std::optional<std::string>& hostname) {
  if (history_ == nullptr) return 0;
  size_t fed = 0, ahead = 0;  // samples restored; samples dated after `now`, left out
  if (auto all = history_->baselines().All(); all.ok()) {
    for (auto& b : *all) baselines_[b.key] = b;
  } else {
    ReadFailed(all.status(), "baselines");
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
      tracker_.RestoreFiring(c, a.active_since, a.fired_at, a.unseen_s);
      stored_unseen_[a.key] = a.unseen_s;
    }
  } else {
    ReadFailed(firing.status(), "firing alerts");
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
  } else {
    ReadFailed(running.status(), "running process records");
  }
  ResumeXids();
  if (auto ids = history_->gpu_identities().All(); ids.ok()) {
    gpu_ids_ = std::move(*ids);
  } else {
    std::fprintf(stderr, "vramwatch watch: history: %s\n", ids.status().ToString().c_str());
  }
  for (const std::string& e : history_->TakeErrors()) std::fprintf(stderr, "vramwatch watch: %s\n", e.c_str());
  auto names = history_->SeriesNames();
  if (!names.ok()) {
    ReadFailed(names.status(), "samples (the leak detectors start blind)");
    return 0;
  }
  for (const std::string& name : *names) {
    if (name.rfind("gpu:", 0) != 0 || name.find('/') != std::string::npos) continue;
    const std::string key = name.substr(4);
    // Only the samples of the card last recorded at this key: those before it came there were
    // another card's.
    double since = now - config_.resume_s;
    if (auto id = gpu_ids_.find(key); id != gpu_ids_.end()) since = std::max(since, id->second.since_s);
    auto pts = history_->Recent(name, since);
    if (!pts.ok()) ReadFailed(pts.status(), ("samples of " + name).c_str());
    if (!pts.ok() || pts->empty()) continue;
    auto it = gpus_.find(key);
    if (it == gpus_.end()) it = gpus_.emplace(key, GpuTrack(config_.engine)).first;
    for (const auto& p : *pts) {
      // A sample dated after this start was written while the system clock ran ahead (it was
      // stepped back since): fed, it would put every new sample out of order until the clock caught
      // up with it.
      if (p.t > now) {
        ++ahead;
        continue;
      }
      it->second.engine.Add(p.t, static_cast<double>(p.used_bytes));
      ++fed;
    }
  }
  if (ahead > 0) {
    std::fprintf(stderr,
                 "vramwatch watch: history: %zu sample(s) dated after now were not restored (the system clock "
                 "was ahead when they were written)\n",
                 ahead);
  }
  return fed;
}

void WatchPipeline::CheckIdentity(const std::string& key, GpuTrack& t, const GpuSnapshot& g, double now) {
  if (g.uuid.empty() || g.uuid == t.card) return;
  std::string before = t.card;
  auto stored = gpu_ids_.find(key);
  if (before.empty() && stored != gpu_ids_.end()) before = stored->second.uuid;
  t.card = g.uuid;
  if (before == g.uuid) return;
  if (before.empty()) {
    // The first card recorded at this key: whatever history holds there is taken as its own.
    gpu_ids_[key] = storage::GpuIdentity{g.uuid, 0};
    if (history_) history_->gpu_identities().Put(key, gpu_ids_[key]);
    return;
  }
  std::fprintf(stderr,
               "vramwatch watch: GPU %s is now %s (was %s): its leak detector starts anew; the samples kept for "
               "GPU %s before now are the other card's\n",
               key.c_str(), g.uuid.c_str(), before.c_str(), key.c_str());
  t.engine = detection::LeakEngine(config_.engine);
  t.verdict = outputs::SeriesVerdict{};
  t.recently_ended.clear();
  t.last_assess_t = -1e300;
  t.last_baseline_t = -1e300;
  CloseResumedAsExited(key);
  gpu_ids_[key] = storage::GpuIdentity{g.uuid, now};
  if (history_) history_->gpu_identities().Put(key, gpu_ids_[key]);
}

void WatchPipeline::CloseResumedAsExited(const std::string& key) {
  for (auto it = resumed_procs_.lower_bound({key, std::numeric_limits<int64_t>::min()});
       it != resumed_procs_.end() && it->first.first == key;) {
    it->second.end = storage::ProcessEnd::kExited;
    if (history_) history_->processes().Upsert(it->second);
    it = resumed_procs_.erase(it);
  }
}

void WatchPipeline::CloseResumedOfUnlistedGpus(const HostSnapshot& snap) {
  if (snap.gpus.empty()) return;  // NVML answered nothing: no sign of which GPUs are gone
  std::set<std::string> listed;
  for (const GpuSnapshot& g : snap.gpus) listed.insert(detection::GpuKey(g));
  std::set<std::string> gone;
  for (const auto& [at, record] : resumed_procs_) {
    if (listed.count(at.first) == 0) gone.insert(at.first);
  }
  for (const std::string& key : gone) CloseResumedAsExited(key);
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
    seen.event.gpu_instance = x.gpu_instance;
    seen.event.compute_instance = x.compute_instance;
    seen.event.line = x.line;
    xids_seen_.push_back(std::move(seen));
  }
  while (xids_seen_.size() > config_.max_xid_events) xids_seen_.pop_front();
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
  const std::string series = outputs::ProcessSeriesName(key, pid);
  auto pts = history_->Recent(series, std::max(r.first_seen_s, now - config_.resume_s));
  if (!pts.ok()) {
    ReadFailed(pts.status(), ("samples of " + series).c_str());
    return;
  }
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
  if (!pts.ok()) ReadFailed(pts.status(), "the last memory of an ended process");
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

}  // namespace vw::cli
