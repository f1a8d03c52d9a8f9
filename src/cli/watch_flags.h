// The flags of `vramwatch watch` as given on the command line (strings, as CLI11 fills them), and
// what they resolve to: durations in seconds, sizes in bytes, the pipeline's WatchConfig and the
// history options. ResolveWatchFlags makes every check a flag gets before the daemon or a replay
// starts, in the order their errors are reported (the first bad flag is the one named).
// Plain data and functions, no state.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "cli/watch_pipeline.h"
#include "core/status.h"
#include "core/units.h"
#include "detection/alerts.h"
#include "detection/leak_engine.h"
#include "storage/history_store.h"

namespace vw::cli {

struct WatchFlags {
  std::string interval = "1s", process_interval = "5s", timeout = "1s", init_timeout = "60s", grace = "10s";
  std::string orphan_threshold = "256MiB";
  std::string raw_retention = "24h", aggregate_retention = "30d", process_retention = "30d";
  std::string leak_for = FormatDurationFlag(detection::kLeakAlertForSeconds), finding_for = "1m",
              critical_runway = FormatDurationFlag(detection::kCriticalRunwaySeconds), duration;
  std::string db, listen = "127.0.0.1:9490", alert_log, webhook, label, nvml_lib, proc_root = "/proc", passwd;
  std::string replay, speed = "max", db_max_size, kernel_log;
  std::string kube_logs;                        // --kube-logs: "" for /var/log, "none" to read no pod names
  std::string external_url;                     // --external-url: the page's address in alerts
  std::string format = "auto", columns, total;  // how --replay reads its file (as analyze does)
  std::optional<std::string> hostname;          // --hostname, when given (cli/host_name.h)
  std::string host;                             // the resolved host name
  bool interval_given = false;                  // --interval on the command line: also the trace's spacing
  std::set<std::string> given;                  // the flags on the command line, long names ("--listen")
  bool quiet = false;
  bool lenient = false;  // --lenient: a --replay file's malformed lines are skipped (counted, shown)
};

// What the flags say, with units applied.
struct WatchSettings {
  // --label, --grace, --orphan-threshold, --critical-runway and the alerts' `for:` durations
  // (--for, --finding-for); the version and the boot id are the caller's to set.
  WatchConfig config;
  storage::HistoryOptions history;   // the --*-retention durations (seconds), --db-max-size (bytes), check_at_open
  double interval_s = 0;             // --interval (at least 0.1 s, live)
  double process_interval_s = 0;     // --process-interval, never shorter than interval_s
  double timeout_s = 0;              // --timeout, greater than 0
  double init_timeout_s = 0;         // --init-timeout (nvmlInit's deadline), at least 1 ms
  std::optional<double> duration_s;  // --duration, when given
};

// How long the daemon's history writes wait for a write lock another program holds (ms): they run
// on the sampling thread (HistoryOptions::write_busy_timeout_ms).
inline constexpr int kHistoryWriteWaitMs = 200;

// Resolves and checks `f` (f.host is not read: the host name is resolved by its own rules).
// Errors name the flag: "--grace: ...", "--interval must be at least 100ms" (live), "--format,
// --columns, --total, --speed and --lenient say how to read a --replay file; they need --replay", and, for a
// flag of the live daemon alone in f.given with --replay, "--listen has no effect with --replay
// (a replay serves no HTTP)", ...
Result<WatchSettings> ResolveWatchFlags(const WatchFlags& f);

// What to say at start when the history file `db` is already larger than --db-max-size `cap_bytes`
// (SQLite cannot cap a file below its size, so it keeps that size and the oldest samples make room
// within it); empty when it is not, or its size cannot be read.
std::string DbOverCapNote(const std::string& db, storage::HistoryStore& store, uint64_t cap_bytes);

// The link back to the daemon that alerts carry (Alertmanager's generatorURL): `external_url`
// (--external-url) when given; else the --listen address `listen_host`:`port` ("[::1]" for IPv6),
// or `hostname` in its place when --listen is a wildcard (0.0.0.0, ::) that names no address.
std::string GeneratorUrl(const std::string& external_url, const std::string& listen_host, int port,
                         const std::string& hostname);

// The end of a `watch` that cannot go on (a bad flag, a file or port it cannot use): prints
// "vramwatch watch: MESSAGE" on stderr and returns kExitUnknown (3).
int WatchFail(const std::string& message);

}  // namespace vw::cli
