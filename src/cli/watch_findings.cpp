// WatchPipeline (cli/watch_pipeline.h): check's findings over the sliding window of samples, the
// Xid events they judge (kept per GPU and code, hardware ones stored for this boot), and the one
// nvml_error finding of a host where NVML cannot be used or sees no GPU.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "cli/watch_pipeline.h"
#include "cli/xid_summary.h"
#include "sources/kernel/xid_catalog.h"

namespace vw::cli {

void WatchPipeline::UpdateFindings(const HostSnapshot& snap, bool processes_fresh, bool run_findings) {
  const double now = snap.t;
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
    findings_window_s_ = cfg.window_s;
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
}

void WatchPipeline::IngestNvmlUnavailable(double now, const std::string& hostname, const std::string& error) {
  Finding f;
  f.kind = "nvml_error";
  f.severity = Severity::kCritical;
  f.message = "cannot use NVML: " + error;
  f.action = "check that the NVIDIA driver is loaded (nvidia-smi); --nvml-lib chooses another library";
  IngestHostFinding(now, hostname, std::move(f));
}

void WatchPipeline::IngestNoGpu(double now, const std::string& hostname, const std::string& message) {
  Finding f;
  f.kind = "nvml_error";
  f.severity = Severity::kCritical;
  f.message = message;
  f.action =
      "check that the driver sees the GPUs (nvidia-smi -L) and, in a container, that they are given to it "
      "(NVIDIA_VISIBLE_DEVICES)";
  IngestHostFinding(now, hostname, std::move(f));
}

void WatchPipeline::IngestHostFinding(double now, const std::string& hostname, Finding f) {
  if (started_ == 0) started_ = now;
  last_t_ = std::max(last_t_, now);
  if (!hostname.empty()) hostname_ = hostname;
  findings_ = detection::CheckResult{};
  findings_.worst = f.severity;
  findings_.findings.push_back(std::move(f));
  EvaluateAlerts(now);
  MaybeFlush(now, false);
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
      x.gpu_instance = e.gpu_instance;
      x.compute_instance = e.compute_instance;
      x.line = e.line;
      history_->xids().Keep(x);
    }
    xids_seen_.push_back({e, now});
  }
  auto expired = [&](const SeenXid& x) {
    return !kernel::StaysUntilReset(x.event.xid, x.event.message) && x.seen_t < now - config_.xid_max_age_s;
  };
  xids_seen_.erase(std::remove_if(xids_seen_.begin(), xids_seen_.end(), expired), xids_seen_.end());
  TrimXids();
}

// A burst of one code (a thousand Xid 45 lines after an Xid 79, say) must not push another code's
// event out: a hardware Xid's finding stays until the reboot. So the oldest events go first, but
// never the last of their GPU and code, and each goes into the next kept event of its GPU and code
// (XidEvent::folded), so that the finding's count stays whole. O(n log n) per call.
void WatchPipeline::TrimXids() {
  if (xids_seen_.size() <= config_.max_xid_events) return;
  using Group = std::tuple<std::string, int, bool>;  // PCI address, code, kept until reset
  auto group_of = [](const kernel::XidEvent& e) {
    return Group{e.pci_bus_id, e.xid, kernel::StaysUntilReset(e.xid, e.message)};
  };
  std::map<Group, size_t> later;  // per group, its events not yet passed
  for (const SeenXid& x : xids_seen_) ++later[group_of(x.event)];
  size_t excess = xids_seen_.size() - config_.max_xid_events;
  std::map<Group, uint64_t> carried;  // per group, events dropped since its last kept one
  std::deque<SeenXid> kept;
  for (SeenXid& x : xids_seen_) {
    const Group g = group_of(x.event);
    if (--later[g] > 0 && excess > 0) {
      carried[g] += 1 + x.event.folded;
      --excess;
      continue;
    }
    if (auto c = carried.find(g); c != carried.end()) {
      x.event.folded += c->second;
      carried.erase(c);
    }
    kept.push_back(std::move(x));
  }
  xids_seen_ = std::move(kept);
}

}  // namespace vw::cli
