#include "cli/watch_live.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/proc_flags.h"
#include "cli/sample_schedule.h"
#include "cli/watch_pipeline.h"
#include "core/file_io.h"
#include "core/printable.h"
#include "core/time.h"
#include "outputs/alert_sinks.h"
#include "outputs/http_server.h"
#include "outputs/web_page.h"
#include "sources/kernel/kernel_log_follower.h"
#include "sources/nvml/call_runner.h"
#include "sources/nvml/nvml_source.h"
#include "sources/procfs/holder_join.h"
#include "sources/procfs/kube_names.h"
#include "storage/history_store.h"

namespace vw::cli {
namespace {

double Now() {
  return SteadyWallNow();  // the sample clock: a step of the system clock does not move it
}

// The binding's per-function histograms (bucketed with outputs::NvmlLatencyBuckets()) for /metrics.
std::vector<outputs::NvmlCallStats> NvmlCallStatsOf(std::vector<nvml::CallTiming> timings) {
  std::vector<outputs::NvmlCallStats> out;
  out.reserve(timings.size());
  for (nvml::CallTiming& t : timings) {
    outputs::NvmlCallStats c;
    c.call = std::move(t.call);
    c.bucket_counts = std::move(t.bucket_counts);
    c.count = t.count;
    c.sum_seconds = t.sum_seconds;
    out.push_back(std::move(c));
  }
  return out;
}

// vramwatch_kernel_log_up and the status note: a host blind to Xids must show it, not only say
// so once on stderr. `reason` is why the kernel log is not read (empty while it is); the note
// built from it says where Xid events come from meanwhile (KernelLogNote).
struct KernelLogStatus {
  std::optional<bool> up;  // unset under --kernel-log none
  std::string reason;
};

KernelLogStatus KernelLogStatusOf(const kernel::KernelLogFollower& klog) {
  KernelLogStatus s;
  if (klog.disabled()) {
    s.reason = "kernel log not read (--kernel-log none)";
  } else if (!klog.reading()) {
    s.up = false;
    for (const std::string& note : klog.notes()) s.reason += (s.reason.empty() ? "" : "; ") + note;
  } else {
    s.up = true;
  }
  return s;
}

// The status note for a kernel log not read for `reason`: Xid events come from NVML's event API
// meanwhile for `nvml_cover` ("every GPU", "GPU 0 only (GPU 1: ...)"), or, when empty, there are none.
std::string KernelLogNote(const std::string& reason, const std::string& nvml_cover) {
  if (reason.empty()) return {};
  if (!nvml_cover.empty()) {
    return reason + ": Xid events are read from NVML's event API instead, for " + nvml_cover +
           " (code, GPU and MIG instance; no PID or driver text)";
  }
  return reason + ": no Xid events (see the kernel log section of the watch documentation)";
}

// --db: the history the pipeline writes, and the reader /api/v1/history serves from.
struct LiveHistory {
  std::unique_ptr<storage::HistoryStore> store;
  std::shared_ptr<outputs::HistorySource> source;
};

Status OpenLiveHistory(const WatchFlags& f, const storage::HistoryOptions& hopts, LiveHistory* out) {
  if (f.db.empty()) return Status::Ok();
  // A --db that cannot be opened at start (mistyped path, not a database) is a usage error, as
  // for --replay; only a database that fails later pauses history while monitoring goes on.
  auto h = storage::HistoryStore::Open(f.db, hopts);
  if (!h.ok()) return h.status().WithContext("--db");
  out->store = std::move(*h);
  if (std::string n = DbOverCapNote(f.db, *out->store, hopts.db.max_size_bytes); !n.empty()) {
    std::fprintf(stderr, "vramwatch watch: %s\n", Printable(n).c_str());
  }
  auto src = outputs::StoreHistorySource::Open(f.db);
  if (!src.ok()) return src.status().WithContext("--db");
  out->source = std::shared_ptr<outputs::HistorySource>(std::move(*src));
  return Status::Ok();
}

// Where the live daemon's alerts go: log lines on stderr (none under --quiet), the --alert-log
// file, the --webhook Alertmanager.
struct LiveSinks {
  explicit LiveSinks(bool quiet)
      : log([quiet](const std::string& line) {
          if (!quiet) std::fprintf(stderr, "%s\n", Printable(line).c_str());
        }) {
    all.push_back(&log);
  }

  // Opens --alert-log, then starts --webhook (whose alerts link to `generator_url`).
  Status Open(const WatchFlags& f, const std::string& generator_url) {
    if (!f.alert_log.empty()) {
      auto j = outputs::JsonLinesAlertSink::Open(f.alert_log);
      if (!j.ok()) return j.status();
      jsonl = std::move(*j);
      jsonl->set_note(
          [](const std::string& line) { std::fprintf(stderr, "vramwatch watch: %s\n", Printable(line).c_str()); });
      all.push_back(jsonl.get());
    }
    if (!f.webhook.empty()) {
      outputs::WebhookOptions wo;
      wo.url = f.webhook;
      wo.generator_url = generator_url;
      wo.system_clock_step = SystemClockStep;  // Alertmanager keeps to the system clock
      wo.note = [](const std::string& line) { std::fprintf(stderr, "vramwatch watch: %s\n", Printable(line).c_str()); };
      auto w = outputs::WebhookAlertSink::Start(wo);
      if (!w.ok()) return w.status();
      webhook = std::move(*w);
      all.push_back(webhook.get());
    }
    return Status::Ok();
  }

  std::vector<outputs::AlertSink*> all;  // in this order: log, jsonl, webhook
  outputs::LogAlertSink log;
  std::unique_ptr<outputs::JsonLinesAlertSink> jsonl;
  std::unique_ptr<outputs::WebhookAlertSink> webhook;
};

// One turn of the sampling loop at a time: NVML opened when it is not (retried every 10 s while it
// fails), then one sample, with process facts and the kernel log's new Xid lines every
// --process-interval, or the nvml_error finding while there is no NVML; either is published.
class Sampler {
 public:
  Sampler(const WatchFlags& f, const WatchSettings& s, WatchPipeline& pipeline, outputs::StatePublisher& publisher,
          kernel::KernelLogFollower& klog, KernelLogStatus klog_status, procfs::ProcessReader& reader,
          const procfs::ProcFs* kube_logs)
      : host_(f.host),
        quiet_(f.quiet),
        process_interval_s_(s.process_interval_s),
        interval_s_(s.interval_s),
        pipeline_(pipeline),
        publisher_(publisher),
        klog_(klog),
        klog_status_(std::move(klog_status)),
        reader_(reader),
        kube_logs_(kube_logs) {
    // NVML's name for each PID, as `check` and `record` take it: the command of a holder whose
    // /proc/PID/cmdline cannot be read (or is empty); a readable one wins.
    so_.query_process_names = true;
    so_.library_path = nvml::ResolveLibraryPath(f.nvml_lib);
    so_.call_deadline = std::chrono::milliseconds(static_cast<int64_t>(s.timeout_s * 1000));
    so_.init_deadline = std::chrono::milliseconds(static_cast<int64_t>(s.init_timeout_s * 1000));
    so_.call_latency_bounds = outputs::NvmlLatencyBuckets();
  }

  void Tick(double now) {
    if (!nvml_ && now >= next_open_) OpenNvml(now);
    if (nvml_) {
      Sample();
    } else {
      // The nvml_error finding goes through the pipeline, so that it raises its alert like any
      // other critical finding (after --finding-for).
      if (no_gpu_) {
        pipeline_.IngestNoGpu(now, host_, nvml_error_);
      } else {
        pipeline_.IngestNvmlUnavailable(now, host_, nvml_error_);
      }
      publisher_.Publish(pipeline_.BuildState(now));
    }
  }

 private:
  // NVML counts its GPUs when it is initialised, so one that answers with none (check's UNKNOWN:
  // a driver that sees no GPU, a container given none) is closed and opened again every 10 s too.
  void OpenNvml(double now) {
    nvml::NvmlSource::OpenFailure failure;
    auto src = nvml::NvmlSource::Open(so_, &failure);
    if (src.ok() && (*src)->gpu_count() > 0) {
      nvml_ = std::move(*src);
      pipeline_.SetNvmlLibrary(nvml_->library_path(), nvml_->BoundFunctions());
      if (!nvml_error_.empty()) std::fprintf(stderr, "vramwatch watch: NVML available again\n");
      nvml_error_.clear();
      no_gpu_ = false;
      return;
    }
    const bool no_gpu = src.ok();
    if (!no_gpu) pipeline_.CountNvmlError(failure.call, failure.code);
    std::string error;
    if (no_gpu) {
      pipeline_.SetNvmlLibrary((*src)->library_path(), (*src)->BoundFunctions());
      error = nvml::NoGpuMessage((*src)->library_path());
    } else {
      error = src.status().message() + nvml::InitTimeoutHint(src.status());
    }
    if (nvml_error_ != error) {
      if (no_gpu) {
        std::fprintf(stderr, "vramwatch watch: %s (trying again every 10 s)\n", error.c_str());
      } else {
        std::fprintf(stderr, "vramwatch watch: cannot use NVML (retrying every 10 s): %s\n", error.c_str());
      }
    }
    nvml_error_ = std::move(error);
    no_gpu_ = no_gpu;
    next_open_ = now + 10;
  }

  void Sample() {
    const auto call_start = std::chrono::steady_clock::now();
    HostSnapshot snap = nvml_->TakeSnapshot();
    pipeline_.RecordNvmlCall("host_snapshot",
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count());
    pipeline_.SetNvmlCallStats(NvmlCallStatsOf(nvml_->call_timings()));
    snap.t = Now();
    snap.hostname = host_;  // --hostname, NODE_NAME or gethostname(): not the pod name in a pod
    // Due within half a sampling interval (cli/sample_schedule.h), as in `record`.
    const bool fresh = ProcessListDue(snap.t, last_proc_, process_interval_s_, interval_s_);
    if (fresh) {
      procfs::JoinHolders(snap, reader_, start_times_);
      if (kube_logs_ != nullptr) AddKubeNames(snap);
      last_proc_ = snap.t;
    }
    pipeline_.Ingest(snap, fresh, true);
    if (fresh) {
      // After Ingest, so that GPUs seen for the first time in this sample are known; the finding
      // follows on the next process-interval tick.
      // The kernel log is the source over an interval it was read at both ends of; over any other
      // interval NVML's events are (they cover it from its start, where a log that appears is
      // followed from its end), and the log's lines of that tick are dropped when NVML's stood in
      // before it: a log read again after an outage gives the lines NVML already gave.
      // NVML covering some GPUs only: the lines of those GPUs are dropped, the others' kept.
      const bool log_was_read = klog_.reading() && klog_error_.empty();
      const bool nvml_stood_in = nvml_xids_;
      const std::set<std::string> nvml_covered = nvml_covered_buses_;
      auto xids = klog_.ReadNew();
      const bool log_read = xids.ok() && klog_.reading();
      const bool nvml_source = !(log_was_read && log_read);
      if (xids.ok()) {
        kernel::KernelLogScan scan = std::move(*xids);
        if (nvml_source && nvml_stood_in) {
          scan.events.clear();  // the GPU-name map lines stay
        } else if (nvml_source && !nvml_covered.empty()) {
          auto covered = [&](const kernel::XidEvent& e) { return nvml_covered.count(e.pci_bus_id) > 0; };
          scan.events.erase(std::remove_if(scan.events.begin(), scan.events.end(), covered), scan.events.end());
        }
        pipeline_.IngestXids(scan, snap.t);
        if (std::string n = kernel::UnreadableXidNote(scan, klog_.source(), false); !n.empty()) {
          std::fprintf(stderr, "vramwatch watch: kernel log %s\n", Printable(n).c_str());
        }
        if (!klog_error_.empty()) {
          if (!quiet_) std::fprintf(stderr, "vramwatch watch: kernel log: can be read now; Xid events are read\n");
          pipeline_.SetKernelLogSource(klog_.source());
          klog_status_ = {true, ""};
        }
        klog_error_.clear();
      } else if (klog_error_ != xids.status().message()) {
        klog_error_ = xids.status().message();
        std::fprintf(stderr, "vramwatch watch: kernel log: %s\n", klog_error_.c_str());
        klog_status_ = {false, "kernel log: " + klog_error_};
      }
      // While the log is read NVML's events are taken and dropped (its lines say the same, with
      // the PID and the driver's text).
      ReadNvmlXids(snap, nvml_source);
      pipeline_.SetKernelLogStatus(klog_status_.up, KernelLogNote(klog_status_.reason, nvml_xid_cover_));
      pipeline_.SetXidEventsFromNvml(nvml_xids_);
    }
    publisher_.Publish(pipeline_.BuildState(snap.t));
  }

  // The Xid events NVML queued since the last look, fed to the pipeline when `use`. A GPU that
  // cannot deliver them (tried again every tick), or an event set that cannot be read, is said on
  // stderr once (again when it changes); NVML reopened registers again. nvml_xids_: NVML stands in
  // for every GPU; nvml_xid_cover_: for which, in words ("" none).
  void ReadNvmlXids(const HostSnapshot& snap, bool use) {
    const nvml::NvmlSource::XidListening l = nvml_->ListenForXids();
    // Compared without the time a blocked call has waited, which grows every tick.
    std::vector<std::string> problems;
    for (const std::string& p : l.problems) problems.push_back(nvml::WithoutBlockedTime(p));
    if (problems != nvml_xid_problems_) {
      for (size_t i = 0; i < problems.size(); ++i) {
        if (std::find(nvml_xid_problems_.begin(), nvml_xid_problems_.end(), problems[i]) != nvml_xid_problems_.end()) {
          continue;
        }
        if (!quiet_) std::fprintf(stderr, "vramwatch watch: NVML Xid events: %s\n", Printable(l.problems[i]).c_str());
      }
      nvml_xid_problems_ = std::move(problems);
    }
    nvml_xids_ = false;
    nvml_xid_cover_.clear();
    nvml_covered_buses_.clear();
    if (l.gpus.empty()) return;
    // Events read before a failed wait are kept (an Xid 79 read just before the GPU is lost).
    nvml::NvmlSource::XidRead read = nvml_->ReadXidEvents();
    if (!read.status.ok()) {
      if (nvml::WithoutBlockedTime(read.status.message()) != nvml_xid_error_) {
        nvml_xid_error_ = nvml::WithoutBlockedTime(read.status.message());
        std::fprintf(stderr, "vramwatch watch: NVML Xid events: %s\n", Printable(read.status.message()).c_str());
      }
    } else {
      nvml_xid_error_.clear();
      if (use) {
        for (unsigned g : l.gpus) {
          if (g >= snap.gpus.size()) continue;
          if (std::string bus = kernel::NormalizePciBusId(snap.gpus[g].pci_bus_id); !bus.empty()) {
            nvml_covered_buses_.insert(std::move(bus));
          }
        }
        nvml_xids_ = l.gpus.size() == nvml_->gpu_count();
        if (nvml_xids_) {
          nvml_xid_cover_ = "every GPU";
        } else {
          std::vector<std::string> gpus;
          for (unsigned g : l.gpus) gpus.push_back(std::to_string(g));
          nvml_xid_cover_ = (gpus.size() == 1 ? "GPU " : "GPUs ") + fmt::format("{}", fmt::join(gpus, ", ")) +
                            " only (" + fmt::format("{}", fmt::join(l.problems, "; ")) + ")";
        }
      }
    }
    if (!use || read.events.empty()) return;
    kernel::KernelLogScan scan;
    for (const nvml::NvmlSource::XidEvent& e : read.events) {
      if (e.xid == 0 || e.xid > 100000 || e.gpu >= snap.gpus.size()) continue;
      kernel::XidEvent x;
      x.xid = static_cast<int>(e.xid);
      x.pci_bus_id = snap.gpus[e.gpu].pci_bus_id;
      x.gpu_instance = e.gpu_instance;
      x.compute_instance = e.compute_instance;
      x.line = "NVML event: Xid " + std::to_string(e.xid) + " on GPU " + std::to_string(e.gpu);
      scan.events.push_back(std::move(x));
    }
    pipeline_.IngestXids(scan, snap.t);
  }

  // Pod, namespace and container names from the kubelet's log directory (--kube-logs); a directory
  // that cannot be listed is said once on stderr, and again when it changes.
  void AddKubeNames(HostSnapshot& snap) {
    const procfs::KubeNaming k = procfs::NameFromKubeLogs(snap, *kube_logs_);
    if (k.problem != kube_problem_ && !k.problem.empty()) {
      std::fprintf(stderr, "vramwatch watch: pod and container names not read: %s (--kube-logs)\n",
                   Printable(k.problem).c_str());
    }
    kube_problem_ = k.problem;
    if (!k.unnamed_note.empty() && !kube_unnamed_said_) {
      std::fprintf(stderr, "vramwatch watch: %s\n", Printable(k.unnamed_note).c_str());
      kube_unnamed_said_ = true;
    }
  }

  const std::string& host_;
  const bool quiet_;  // --quiet: only errors on stderr
  const double process_interval_s_;
  const double interval_s_;  // --interval (seconds)
  WatchPipeline& pipeline_;
  outputs::StatePublisher& publisher_;
  kernel::KernelLogFollower& klog_;
  KernelLogStatus klog_status_;  // whether the kernel log is read and, when not, why
  procfs::ProcessReader& reader_;
  const procfs::ProcFs* kube_logs_;  // null: no names read
  std::string kube_problem_;
  bool kube_unnamed_said_ = false;  // the note on pods without names is said once
  std::string klog_error_;
  bool nvml_xids_ = false;                      // Xid events of every GPU are taken from NVML's event API now
  std::string nvml_xid_cover_;                  // the GPUs they are taken for, in words ("" none)
  std::set<std::string> nvml_covered_buses_;    // and their PCI addresses (normalised)
  std::vector<std::string> nvml_xid_problems_;  // said on stderr (nvml::WithoutBlockedTime)
  std::string nvml_xid_error_;                  // said on stderr (nvml::WithoutBlockedTime)
  std::map<int64_t, double> start_times_;
  nvml::SourceOptions so_;
  std::unique_ptr<nvml::NvmlSource> nvml_;
  std::string nvml_error_;  // why NVML is not in use: Open's error, or nvml::NoGpuMessage
  bool no_gpu_ = false;     // NVML answered but listed no GPU
  double next_open_ = 0;
  double last_proc_ = -1e300;
};

}  // namespace

std::string BootId(const std::string& proc_root) {
  auto text = ReadWholeFile(proc_root + "/sys/kernel/random/boot_id", 128, "boot id ");
  if (!text.ok()) return {};
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

int RunLive(const WatchFlags& f, const WatchSettings& s, const std::atomic<bool>& stop, std::atomic<bool>& reopen) {
  auto addr = outputs::ParseListenAddress(f.listen);
  if (!addr.ok()) return WatchFail(addr.status().message());
  // Kernel log: only lines added after the start count (the counter is "since the daemon started").
  kernel::KernelLogFollower klog(f.kernel_log);
  // A file that does not exist yet is waited for (a node whose syslog is elsewhere still gets
  // everything but Xids, and shows it); one that cannot be read is a usage error.
  if (Status st = klog.Start(/*wait_for_missing_file=*/true); !st.ok())
    return WatchFail("--kernel-log: " + st.message());
  // The same process-facts flags as check, checked the same way: a missing or empty --proc-root
  // would make every holder look dead, a bad --passwd would name no user.
  if (Status root = CheckProcRootFlag(f.proc_root); !root.ok()) return WatchFail(root.message());
  auto passwd = ResolvePasswd(f.proc_root, f.passwd);
  if (!passwd.ok()) return WatchFail(passwd.status().message());
  auto kube_logs = ResolveKubeLogs(f.kube_logs);
  if (!kube_logs.ok()) return WatchFail(kube_logs.status().message());
  if (!f.quiet) {
    for (const std::string& note : klog.notes()) {
      std::fprintf(stderr, "vramwatch watch: %s\n", Printable(note).c_str());
    }
  }
  const KernelLogStatus klog_status = KernelLogStatusOf(klog);
  LiveHistory history;
  if (Status st = OpenLiveHistory(f, s.history, &history); !st.ok()) return WatchFail(st.message());
  LiveSinks sinks(f.quiet);
  if (Status st = sinks.Open(f, GeneratorUrl(f.external_url, addr->host, addr->port, f.host)); !st.ok())
    return WatchFail(st.message());

  WatchPipeline pipeline(s.config, history.store.get(), sinks.all);
  // Live samples are on the system clock (epoch seconds, UTC): evidence says "since 02:15 UTC",
  // not how long after the daemon started (or the history it resumed from) the growth began.
  pipeline.SetEvidenceTimes(detection::EngineConfig::EvidenceTimes::kUtcClock);
  pipeline.SetKernelLogStatus(klog_status.up, KernelLogNote(klog_status.reason, ""));
  pipeline.SetKernelLogSource(klog.source());
  pipeline.SetSampleInterval(s.interval_s);
  const double start = Now();
  const auto start_steady = std::chrono::steady_clock::now();  // --duration counts from here
  size_t resumed = pipeline.Resume(start, f.host);
  if (resumed > 0 && !f.quiet) {
    std::fprintf(stderr, "vramwatch watch: resumed %zu samples from %s\n", resumed, f.db.c_str());
  }

  outputs::StatePublisher publisher;
  outputs::HttpOptions ho;
  ho.listen = *addr;
  ho.stale_after_s = std::max(30.0, 10 * s.interval_s);
  outputs::HttpServer server(publisher, ho);
  server.SetPageHandler([] { return outputs::WebPageHtml(); });
  if (history.source) server.SetHistorySource(history.source);
  Status started = server.Start();
  if (!started.ok()) return WatchFail(started.message());
  if (!f.quiet) {
    std::fprintf(stderr, "vramwatch watch: serving %s (metrics at /metrics)\n",
                 outputs::HttpUrl(addr->host, server.port()).c_str());
  }

  procfs::DirProcFs fs(f.proc_root);
  procfs::ReaderOptions ro;
  ro.passwd_path = *passwd;
  procfs::ProcessReader reader(fs, ro);
  std::optional<procfs::DirProcFs> kube_fs;
  if (!kube_logs->empty()) kube_fs.emplace(*kube_logs);
  Sampler sampler(f, s, pipeline, publisher, klog, klog_status, reader, kube_fs ? &*kube_fs : nullptr);
  auto tick = std::chrono::steady_clock::now();
  // --duration ends the run at its deadline, not at the first tick after it: the loop wakes at the
  // earlier of the next tick and the deadline (an --interval of 1h with a --duration of 2s stops
  // after 2 s).
  const auto deadline = DeadlineOf(start_steady, s.duration_s);
  auto past_deadline = [&] { return deadline && std::chrono::steady_clock::now() >= *deadline; };
  double step_said = 0;  // the system clock's step last said on stderr (seconds)
  while (!stop && !past_deadline()) {
    const double now = Now();
    if (const std::string note = ClockStepNote(SystemClockStep(), &step_said, "the daemon");
        !note.empty() && !f.quiet) {
      std::fprintf(stderr, "vramwatch watch: %s\n", note.c_str());
    }
    if (reopen.exchange(false) && sinks.jsonl) {
      if (Status st = sinks.jsonl->Reopen(); !st.ok()) {
        std::fprintf(stderr, "vramwatch watch: %s\n", st.message().c_str());
      }
    }
    if (sinks.webhook) {
      pipeline.SetNotificationCounters(sinks.webhook->failed_attempts(), sinks.webhook->dropped_batches());
    }
    sampler.Tick(now);
    tick = NextTick(tick, s.interval_s, std::chrono::steady_clock::now());
    SleepUntilTick(tick, deadline, stop);
  }
  pipeline.Flush();
  server.Stop();
  if (sinks.webhook) sinks.webhook->Drain(5);
  if (!f.quiet)
    std::fprintf(stderr, "vramwatch watch: stopped after %llu samples\n",
                 static_cast<unsigned long long>(pipeline.samples()));
  return 0;
}

}  // namespace vw::cli
