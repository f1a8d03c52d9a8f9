// `vramwatch watch`: the always-on daemon. One sampling thread owns NVML (every --interval, process
// facts from /proc every --process-interval); the pipeline (cli/watch_pipeline.h) runs the leak
// engines, findings and alerts and writes history; the HTTP server (outputs/http_server.h) only
// renders the state the sampler last published. Xid events: the kernel log lines added since the
// previous process-interval tick (sources/kernel/kernel_log_follower.h). `--replay FILE` feeds a
// recording or a trace in any `analyze` format (not a PyTorch memory log) through the same pipeline and prints alerts
// with the trace's timestamps (without a zone when the trace has none); with `--kernel-log FILE` its Xid lines are fed
// when the trace reaches their time (cli/replay_xids.h). The file is read as analyze reads it, with --format,
// --columns, --total and (given with --replay) --interval as the trace's spacing.
//
// What is fatal and what degrades:
//   port in use / bad --listen        -> exit 3 with the address and the OS reason
//   unreadable --kernel-log FILE      -> exit 3 naming the file (missing, in a directory that exists: waited for,
//                                        no Xids meanwhile; system log unreadable: a note, no Xids)
//   --proc-root missing or empty,
//   unreadable --passwd FILE          -> exit 3 naming the path (cli/proc_flags.h, as check)
//   NVML missing or failing at start,
//   or seeing no GPU                  -> keeps serving (an nvml_error finding and its GpuNvmlError
//                                        alert), retries every 10 s
//   a hung NVML call                  -> that GPU is stale (its samples stop, sample age grows)
//   --db cannot be opened at start,
//   or is corrupt there               -> exit 3 naming the file (corrupt: saying what to do)
//   disk full / read-only database,
//   file size limit (SIGXFSZ ignored),
//   write lock held by another program -> history paused (vramwatch_history_paused 1), resumes by itself
//   --db-max-size reached             -> the oldest samples make room for the newest (a stderr line once)
//   retention failing                 -> a stderr line and a status note; each part runs on its own
//   corrupt database while running    -> history paused, its message says the file is corrupt
//   SIGHUP                            -> the --alert-log file is reopened (logrotate); nothing else
//
// Here: the flags and the run order. The flags' parsing and checks: cli/watch_flags.h; the live
// daemon: cli/watch_live.h; --replay: cli/watch_replay.h.
#include <atomic>
#include <csignal>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/host_name.h"
#include "cli/watch_flags.h"
#include "cli/watch_live.h"
#include "cli/watch_replay.h"

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

}  // namespace

CommandRunner AddWatchCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "watch",
      "The daemon: samples every GPU continuously, keeps history (--db), runs the leak detector live, serves "
      "/metrics, /api/v1/status, /api/v1/history and a web page (--listen), and sends alerts. --replay FILE feeds a "
      "recording through the same pipeline.");
  auto f = std::make_shared<WatchFlags>();
  cmd->add_option("--interval", f->interval,
                  "Device memory sampling interval (at least 100ms); with --replay: the spacing of samples "
                  "in a file without timestamps")
      ->capture_default_str();
  cmd->add_option("--process-interval", f->process_interval, "Process facts (/proc) refresh interval")
      ->capture_default_str();
  cmd->add_option("--timeout", f->timeout,
                  "Deadline of each NVML call; past it the GPU is stale (the sample in which a call hangs, and a "
                  "stop, wait this long once: keep it short)")
      ->capture_default_str();
  cmd->add_option("--init-timeout", f->init_timeout,
                  "Deadline of nvmlInit, which takes seconds (tens on large hosts) when persistence mode is off")
      ->capture_default_str();
  cmd->add_option("--db", f->db, "SQLite history file (WAL); without it nothing is kept across restarts");
  cmd->add_option("--db-max-size", f->db_max_size,
                  "Cap on the history file (e.g. 2GiB; 0 or none: no cap); at it, the oldest samples make room for the "
                  "newest. A file already larger keeps its size (SQLite does not shrink it)");
  cmd->add_option("--raw-retention", f->raw_retention, "How long raw samples are kept")->capture_default_str();
  cmd->add_option("--aggregate-retention", f->aggregate_retention, "How long 1-minute aggregates are kept")
      ->capture_default_str();
  cmd->add_option("--process-retention", f->process_retention, "How long process lifecycle records are kept")
      ->capture_default_str();
  cmd->add_option("--listen", f->listen, "HTTP address (ADDR:PORT)")->capture_default_str();
  cmd->add_option("--external-url", f->external_url,
                  "The page's address as Alertmanager's users reach it, the link each --webhook alert carries "
                  "(default: http://LISTEN-ADDRESS:PORT/, or the host name for a wildcard --listen such as 0.0.0.0)");
  // An empty value would quietly turn the output off (a variable unset in a unit file).
  const CLI::Validator not_empty(
      [](std::string& v) { return v.empty() ? std::string("an empty value; leave the flag out for none") : ""; }, "");
  cmd->add_option("--alert-log", f->alert_log, "Append alert events to this JSON-lines file")->check(not_empty);
  cmd->add_option("--webhook", f->webhook,
                  "Alertmanager base URL for POST /api/v2/alerts: http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH] "
                  "(credentials go as basic auth)")
      ->check(not_empty);
  cmd->add_option("--for", f->leak_for,
                  "How long a leak verdict (a GPU's or a process's) must hold before its alert fires, and be gone "
                  "(10m at least) before a firing one resolves")
      ->capture_default_str();
  cmd->add_option("--finding-for", f->finding_for, "How long a critical finding must hold before its alert fires")
      ->capture_default_str();
  cmd->add_option("--critical-runway", f->critical_runway, "A leak alert is critical below this time to OOM")
      ->capture_default_str();
  cmd->add_option("--label", f->label, "Workload name for the learned baseline (default: container or command)");
  cmd->add_option("--grace", f->grace, "How long memory may lag after a kill (lazy reclaim)")->capture_default_str();
  cmd->add_option("--orphan-threshold", f->orphan_threshold,
                  "Unattributed memory that counts as orphaned, with a unit (512MiB, 1GiB)")
      ->capture_default_str();
  cmd->add_option("--kernel-log", f->kernel_log,
                  "Kernel log file to follow for Xid events; 'none' to skip (default: /dev/kmsg, then dmesg). "
                  "With --replay: a saved log whose Xid lines are fed at their time in the trace (default: none)");
  cmd->add_option("--nvml-lib", f->nvml_lib,
                  "NVML library to load (default: $VRAMWATCH_NVML_LIB, else libnvidia-ml.so.1)");
  cmd->add_option("--proc-root", f->proc_root, "procfs root")->capture_default_str();
  cmd->add_option("--passwd", f->passwd,
                  "passwd file for user names (default: the system's user database; <proc-root>/passwd when the "
                  "root is a fixture)");
  cmd->add_option("--kube-logs", f->kube_logs,
                  "The kubelet's log directory, whose pods/ and containers/ entries name each holder's pod, "
                  "namespace and container; 'none' to skip (default: /var/log; /host/var/log in the DaemonSet)");
  cmd->add_option("--hostname", f->hostname,
                  "Host name for the hostname label, alerts and status (default: $NODE_NAME when set, else the "
                  "system host name)");
  cmd->add_option("--duration", f->duration,
                  "Stop after this long, between two samples if need be (default: run until SIGTERM/SIGINT)");
  cmd->add_option("--replay", f->replay,
                  "Feed this recording (or a trace in any analyze format; a PyTorch memory log has no times) through "
                  "the pipeline")
      // `--replay --lenient FILE` took "--lenient" for the file: say what went wrong instead.
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.size() > 1 && v[0] == '-' && v[1] == '-') {
              return "expected the file to replay right after --replay, got the flag '" + v + "'";
            }
            return {};
          },
          "FILE"));
  cmd->add_option("--speed", f->speed, "Replay speed: a factor (60 = one hour per minute) or 'max'")
      ->capture_default_str();
  cmd->add_option("--format", f->format,
                  "With --replay: input format (auto, query-csv, values, dmon, pmon, smi-table, recording), as "
                  "for analyze")
      ->capture_default_str();
  cmd->add_option("--columns", f->columns,
                  "With --replay: column names of a --query-gpu CSV without a header line, in order");
  cmd->add_option("--total", f->total, "With --replay: card memory size when the file lacks it, e.g. 80GiB");
  cmd->add_flag("--lenient", f->lenient,
                "With --replay: skip malformed lines (they are counted and shown at the end) instead of failing");
  cmd->add_flag("--quiet", f->quiet, "Only errors on stderr");
  return [f, cmd]() -> int {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGPIPE, SIG_IGN);
    // A file size limit (ulimit -f) reached by the history: the write fails (EFBIG) and history
    // pauses, instead of the signal killing the daemon.
    std::signal(SIGXFSZ, SIG_IGN);
    std::signal(SIGHUP, OnHangup);
    f->given = FlagsGiven(*cmd);
    f->interval_given = f->given.count("--interval") > 0;
    auto settings = ResolveWatchFlags(*f);
    if (!settings.ok()) return WatchFail(settings.status().message());
    settings->config.version = VRAMWATCH_VERSION;
    auto host = ResolveHostname(f->hostname);
    if (!host.ok()) return WatchFail(host.status().message());
    f->host = *host;
    if (!f->replay.empty()) return RunReplay(*f, settings->config, settings->history, g_stop);
    settings->config.boot_id = BootId(f->proc_root);  // live only: a replayed log's Xids belong to no boot of this host
    return RunLive(*f, *settings, g_stop, g_reopen);
  };
}

}  // namespace vw::cli
