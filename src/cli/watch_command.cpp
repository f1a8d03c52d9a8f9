// `vramwatch watch`: the always-on daemon. One sampling thread owns NVML (every --interval, process
// facts from /proc every --process-interval); the pipeline (cli/watch_pipeline.h) runs the leak
// engines, findings and alerts and writes history; the HTTP server (outputs/http_server.h) only
// renders the state the sampler last published. Xid events: the kernel log lines added since the
// previous process-interval tick (sources/kernel/kernel_log_follower.h). `--replay FILE` feeds a
// recording or any `analyze` format through the same pipeline and prints alerts with the trace's
// timestamps (without a zone when the trace has none); with `--kernel-log FILE` its Xid lines are
// fed when the trace reaches their time (cli/replay_xids.h). The file is read as analyze reads it,
// with --format, --columns, --total and (given with --replay) --interval as the trace's spacing.
//
// What is fatal and what degrades:
//   port in use / bad --listen        -> exit 3 with the address and the OS reason
//   unreadable --kernel-log FILE      -> exit 3 naming the file (system log unreadable: a note, no Xids)
//   --proc-root missing or empty,
//   unreadable --passwd FILE          -> exit 3 naming the path (cli/proc_flags.h, as check)
//   NVML missing or failing at start  -> keeps serving (an nvml_error finding and its GpuNvmlError
//                                        alert), retries every 10 s
//   a hung NVML call                  -> that GPU is stale (its samples stop, sample age grows)
//   --db cannot be opened at start    -> exit 3 naming the file
//   disk full / read-only database    -> history paused (vramwatch_history_paused 1), resumes by itself
//   SIGHUP                            -> the --alert-log file is reopened (logrotate); nothing else
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/host_name.h"
#include "cli/proc_flags.h"
#include "cli/watch_flags.h"
#include "cli/watch_pipeline.h"
#include "cli/watch_replay.h"
#include "core/exit_codes.h"
#include "core/file_io.h"
#include "core/time.h"
#include "core/units.h"
#include "detection/alerts.h"
#include "detection/leak_engine.h"
#include "outputs/alert_sinks.h"
#include "outputs/http_server.h"
#include "outputs/web_page.h"
#include "sources/kernel/kernel_log_follower.h"
#include "sources/nvml/nvml_source.h"
#include "sources/procfs/holder_join.h"
#include "storage/history_store.h"

namespace vw::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reopen{false};
void OnSignal(int) {
  g_stop = true;
}
void OnHangup(int) {
  g_reopen = true;
}

// The host's boot id under `proc_root` (sys/kernel/random/boot_id), empty when it cannot be read.
std::string BootId(const std::string& proc_root) {
  auto text = ReadWholeFile(proc_root + "/sys/kernel/random/boot_id", 128, "boot id ");
  if (!text.ok()) return {};
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

int RunLive(const WatchFlags& f, const WatchConfig& config, double interval_s, double process_interval_s,
            double timeout_s, std::optional<double> duration_s, const storage::HistoryOptions& hopts) {
  auto addr = outputs::ParseListenAddress(f.listen);
  if (!addr.ok()) return WatchFail(addr.status().message());
  // Kernel log: only lines added after the start count (the counter is "since the daemon started").
  kernel::KernelLogFollower klog(f.kernel_log);
  if (Status s = klog.Start(); !s.ok()) return WatchFail("--kernel-log: " + s.message());
  // The same process-facts flags as check, checked the same way: a missing or empty --proc-root
  // would make every holder look dead, a bad --passwd would name no user.
  if (Status root = CheckProcRootFlag(f.proc_root); !root.ok()) return WatchFail(root.message());
  auto passwd = ResolvePasswd(f.proc_root, f.passwd);
  if (!passwd.ok()) return WatchFail(passwd.status().message());
  if (!f.quiet) {
    for (const std::string& note : klog.notes()) std::fprintf(stderr, "vramwatch watch: %s\n", note.c_str());
  }
  std::string klog_error;
  // vramwatch_kernel_log_up and the status note: a host blind to Xids must show it, not only say
  // so once on stderr.
  std::optional<bool> klog_up;
  std::string klog_note;
  if (klog.disabled()) {
    klog_note = "kernel log not read (--kernel-log none): no Xid events";
  } else if (!klog.reading()) {
    klog_up = false;
    for (const std::string& note : klog.notes()) klog_note += (klog_note.empty() ? "" : "; ") + note;
    klog_note += ": no Xid events (see the kernel log section of the watch documentation)";
  } else {
    klog_up = true;
  }

  std::unique_ptr<storage::HistoryStore> history;
  std::shared_ptr<outputs::HistorySource> history_source;
  if (!f.db.empty()) {
    // A --db that cannot be opened at start (mistyped path, not a database) is a usage error, as
    // for --replay; only a database that fails later pauses history while monitoring goes on.
    auto h = storage::HistoryStore::Open(f.db, hopts);
    if (!h.ok()) return WatchFail("--db: " + h.status().message());
    history = std::move(*h);
    auto src = outputs::StoreHistorySource::Open(f.db);
    if (!src.ok()) return WatchFail("--db: " + src.status().message());
    history_source = std::shared_ptr<outputs::HistorySource>(std::move(*src));
  }

  std::vector<outputs::AlertSink*> sinks;
  outputs::LogAlertSink log([quiet = f.quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
  });
  sinks.push_back(&log);
  std::unique_ptr<outputs::JsonLinesAlertSink> jsonl;
  if (!f.alert_log.empty()) {
    auto j = outputs::JsonLinesAlertSink::Open(f.alert_log);
    if (!j.ok()) return WatchFail(j.status().message());
    jsonl = std::move(*j);
    sinks.push_back(jsonl.get());
  }
  std::unique_ptr<outputs::WebhookAlertSink> webhook;
  if (!f.webhook.empty()) {
    outputs::WebhookOptions wo;
    wo.url = f.webhook;
    wo.generator_url = "http://" + f.host + ":" + std::to_string(addr->port) + "/";
    wo.note = [](const std::string& line) { std::fprintf(stderr, "vramwatch watch: %s\n", line.c_str()); };
    auto w = outputs::WebhookAlertSink::Start(wo);
    if (!w.ok()) return WatchFail(w.status().message());
    webhook = std::move(*w);
    sinks.push_back(webhook.get());
  }

  WatchPipeline pipeline(config, history.get(), sinks);
  // Live samples are on the system clock (epoch seconds, UTC): evidence says "since 02:15 UTC",
  // not how long after the daemon started (or the history it resumed from) the growth began.
  pipeline.SetEvidenceTimes(detection::EngineConfig::EvidenceTimes::kUtcClock);
  pipeline.SetKernelLogStatus(klog_up, klog_note);
  pipeline.SetKernelLogSource(klog.source());
  const double start = Now();
  size_t resumed = pipeline.Resume(start, f.host);
  if (resumed > 0 && !f.quiet) {
    std::fprintf(stderr, "vramwatch watch: resumed %zu samples from %s\n", resumed, f.db.c_str());
  }

  outputs::StatePublisher publisher;
  outputs::HttpOptions ho;
  ho.listen = *addr;
  ho.stale_after_s = std::max(30.0, 10 * interval_s);
  outputs::HttpServer server(publisher, ho);
  server.SetPageHandler([] { return outputs::WebPageHtml(); });
  if (history_source) server.SetHistorySource(history_source);
  Status started = server.Start();
  if (!started.ok()) return WatchFail(started.message());
  if (!f.quiet) {
    std::fprintf(stderr, "vramwatch watch: serving http://%s:%d/ (metrics at /metrics)\n", addr->host.c_str(),
                 server.port());
  }

  procfs::DirProcFs fs(f.proc_root);
  procfs::ReaderOptions ro;
  ro.passwd_path = *passwd;
  procfs::ProcessReader reader(fs, ro);
  std::map<int64_t, double> start_times;

  nvml::SourceOptions so;
  // NVML's name for each PID, as `check` and `record` take it: the command of a holder whose
  // /proc/PID/cmdline cannot be read (or is empty); a readable one wins.
  so.query_process_names = true;
  so.library_path = nvml::ResolveLibraryPath(f.nvml_lib);
  so.call_deadline = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  so.call_latency_bounds = outputs::NvmlLatencyBuckets();
  std::unique_ptr<nvml::NvmlSource> nvml;
  std::string nvml_error;
  double next_open = 0;
  double last_proc = -1e300;
  const std::string& host = f.host;
  auto tick = std::chrono::steady_clock::now();
  while (!g_stop) {
    const double now = Now();
    if (duration_s && now - start >= *duration_s) break;
    if (g_reopen.exchange(false) && jsonl) {
      if (Status s = jsonl->Reopen(); !s.ok()) std::fprintf(stderr, "vramwatch watch: %s\n", s.message().c_str());
    }
    if (webhook) pipeline.SetNotificationCounters(webhook->failed_attempts(), webhook->dropped_batches());
    if (!nvml && now >= next_open) {
      auto src = nvml::NvmlSource::Open(so);
      if (src.ok()) {
        nvml = std::move(*src);
        pipeline.SetNvmlLibrary(nvml->library_path(), nvml->BoundFunctions());
        if (!nvml_error.empty()) std::fprintf(stderr, "vramwatch watch: NVML available again\n");
        nvml_error.clear();
      } else {
        if (nvml_error != src.status().message()) {
          std::fprintf(stderr, "vramwatch watch: cannot use NVML (retrying every 10 s): %s\n",
                       src.status().message().c_str());
        }
        nvml_error = src.status().message();
        next_open = now + 10;
      }
    }
    if (nvml) {
      const auto call_start = std::chrono::steady_clock::now();
      HostSnapshot snap = nvml->TakeSnapshot();
      pipeline.RecordNvmlCall("host_snapshot",
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count());
      pipeline.SetNvmlCallStats(NvmlCallStatsOf(nvml->call_timings()));
      snap.t = Now();
      snap.hostname = host;  // --hostname, NODE_NAME or gethostname(): not the pod name in a pod
      const bool fresh = snap.t - last_proc >= process_interval_s;
      if (fresh) {
        procfs::JoinHolders(snap, reader, start_times);
        last_proc = snap.t;
      }
      pipeline.Ingest(snap, fresh, true);
      if (fresh) {
        // After Ingest, so that GPUs seen for the first time in this sample are known; the finding
        // follows on the next process-interval tick.
        auto xids = klog.ReadNew();
        if (xids.ok()) {
          pipeline.IngestXids(*xids, snap.t);
          if (!klog_error.empty()) pipeline.SetKernelLogStatus(true, "");
          klog_error.clear();
        } else if (klog_error != xids.status().message()) {
          klog_error = xids.status().message();
          std::fprintf(stderr, "vramwatch watch: kernel log: %s\n", klog_error.c_str());
          pipeline.SetKernelLogStatus(false, "kernel log: " + klog_error + ": no Xid events until it can be read");
        }
      }
      publisher.Publish(pipeline.BuildState(snap.t));
    } else {
      // The nvml_error finding goes through the pipeline, so that it raises its alert like any
      // other critical finding (after --finding-for).
      pipeline.IngestNvmlUnavailable(now, host, nvml_error);
      publisher.Publish(pipeline.BuildState(now));
    }
    tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s));
    const auto now_steady = std::chrono::steady_clock::now();
    if (tick < now_steady) tick = now_steady;  // behind: do not try to catch up
    while (!g_stop && std::chrono::steady_clock::now() < tick) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(tick - std::chrono::steady_clock::now(),
                                                                                std::chrono::milliseconds(100)));
    }
  }
  pipeline.Flush();
  server.Stop();
  if (webhook) webhook->Drain(5);
  if (!f.quiet)
    std::fprintf(stderr, "vramwatch watch: stopped after %llu samples\n",
                 static_cast<unsigned long long>(pipeline.samples()));
  return 0;
}

}  // namespace

CommandRunner AddWatchCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "watch",
      "The daemon: samples every GPU continuously, keeps history (--db), runs the leak detector live, serves "
      "/metrics, /api/v1/status, /api/v1/history and a web page (--listen), and sends alerts. --replay FILE feeds a "
      "recording through the same pipeline.");
  auto f = std::make_shared<WatchFlags>();
  CLI::Option* interval_opt =
      cmd->add_option("--interval", f->interval,
                      "Device memory sampling interval (at least 100ms); with --replay: the spacing of samples "
                      "in a file without timestamps")
          ->capture_default_str();
  cmd->add_option("--process-interval", f->process_interval, "Process facts (/proc) refresh interval")
      ->capture_default_str();
  cmd->add_option("--timeout", f->timeout, "Deadline of each NVML call; past it the GPU is stale")
      ->capture_default_str();
  cmd->add_option("--db", f->db, "SQLite history file (WAL); without it nothing is kept across restarts");
  cmd->add_option("--db-max-size", f->db_max_size,
                  "Cap on the history file (e.g. 2GiB); reaching it pauses history like a full disk");
  cmd->add_option("--raw-retention", f->raw_retention, "How long raw samples are kept")->capture_default_str();
  cmd->add_option("--aggregate-retention", f->aggregate_retention, "How long 1-minute aggregates are kept")
      ->capture_default_str();
  cmd->add_option("--process-retention", f->process_retention, "How long process lifecycle records are kept")
      ->capture_default_str();
  cmd->add_option("--listen", f->listen, "HTTP address (ADDR:PORT)")->capture_default_str();
  cmd->add_option("--alert-log", f->alert_log, "Append alert events to this JSON-lines file");
  cmd->add_option("--webhook", f->webhook, "Alertmanager base URL for POST /api/v2/alerts");
  cmd->add_option("--for", f->leak_for,
                  "How long a leak verdict (a GPU's or a process's) must hold before its alert fires")
      ->capture_default_str();
  cmd->add_option("--finding-for", f->finding_for, "How long a critical finding must hold before its alert fires")
      ->capture_default_str();
  cmd->add_option("--critical-runway", f->critical_runway, "A leak alert is critical below this time to OOM")
      ->capture_default_str();
  cmd->add_option("--label", f->label, "Workload name for the learned baseline (default: container or command)");
  cmd->add_option("--grace", f->grace, "How long memory may lag after a kill (lazy reclaim)")->capture_default_str();
  cmd->add_option("--orphan-threshold", f->orphan_threshold, "Unattributed memory that counts as orphaned")
      ->capture_default_str();
  cmd->add_option("--kernel-log", f->kernel_log,
                  "Kernel log file to follow for Xid events; 'none' to skip (default: /dev/kmsg, then dmesg). "
                  "With --replay: a saved log whose Xid lines are fed at their time in the trace (default: none)");
  cmd->add_option("--nvml-lib", f->nvml_lib,
                  "NVML library to load (default: $VRAMWATCH_NVML_LIB, else libnvidia-ml.so.1)");
  cmd->add_option("--proc-root", f->proc_root, "procfs root")->capture_default_str();
  cmd->add_option("--passwd", f->passwd, "passwd file for user names");
  cmd->add_option("--hostname", f->hostname,
                  "Host name for the hostname label, alerts and status (default: $NODE_NAME when set, else the "
                  "system host name)");
  cmd->add_option("--duration", f->duration, "Stop after this long (default: run until SIGTERM/SIGINT)");
  cmd->add_option("--replay", f->replay, "Feed this recording (or any analyze format) through the pipeline");
  cmd->add_option("--speed", f->speed, "Replay speed: a factor (60 = one hour per minute) or 'max'")
      ->capture_default_str();
  cmd->add_option("--format", f->format,
                  "With --replay: input format (auto, query-csv, values, dmon, pmon, smi-table, recording), as "
                  "for analyze")
      ->capture_default_str();
  cmd->add_option("--columns", f->columns,
                  "With --replay: column names of a --query-gpu CSV without a header line, in order");
  cmd->add_option("--total", f->total, "With --replay: card memory size when the file lacks it, e.g. 80GiB");
  cmd->add_flag("--quiet", f->quiet, "Only errors on stderr");
  return [f, interval_opt]() -> int {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGHUP, OnHangup);
    auto settings = ResolveWatchFlags(*f);
    if (!settings.ok()) return WatchFail(settings.status().message());
    WatchConfig& config = settings->config;
    config.version = VRAMWATCH_VERSION;
    f->interval_given = interval_opt->count() > 0;
    auto host = ResolveHostname(f->hostname);
    if (!host.ok()) return WatchFail(host.status().message());
    f->host = *host;
    if (!f->replay.empty()) return RunReplay(*f, config, g_stop);
    config.boot_id = BootId(f->proc_root);  // live only: a replayed log's Xids belong to no boot of this host
    return RunLive(*f, config, settings->interval_s, settings->process_interval_s, settings->timeout_s,
                   settings->duration_s, settings->history);
  };
}

}  // namespace vw::cli
