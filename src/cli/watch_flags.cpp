#include "cli/watch_flags.h"

#include <algorithm>
#include <cstdio>

#include "core/exit_codes.h"
#include "core/printable.h"
#include "outputs/http_server.h"

namespace vw::cli {
namespace {

// Flags of the live daemon alone: with --replay they would do nothing, so one given there is a
// usage error. Not here: --db, --db-max-size and the retentions (the replay's history), --grace
// and --orphan-threshold (its process records), --for, --finding-for, --critical-runway, --label,
// --hostname, --kernel-log, --alert-log, --interval (a file's spacing) and --quiet.
struct LiveOnlyFlag {
  const char* flag;
  const char* why;
};
constexpr LiveOnlyFlag kLiveOnlyFlags[] = {
    {"--listen", "a replay serves no HTTP"},
    {"--webhook", "a replay sends no webhook; its alerts go to stdout and --alert-log"},
    {"--external-url", "a replay sends no webhook, whose alerts link to it"},
    {"--duration", "a replay ends with its file; SIGINT or SIGTERM end it sooner"},
    {"--process-interval", "a replay takes the process lists its file carries"},
    {"--timeout", "a replay calls no NVML"},
    {"--init-timeout", "a replay calls no NVML"},
    {"--nvml-lib", "a replay calls no NVML"},
    {"--proc-root", "a replay reads no /proc"},
    {"--passwd", "a replay reads no /proc, so names no user"},
    {"--kube-logs", "a replay reads no pod names"},
};

}  // namespace

Result<WatchSettings> ResolveWatchFlags(const WatchFlags& f) {
  WatchSettings s;
  WatchConfig& config = s.config;
  storage::HistoryOptions& hopts = s.history;
  config.label = f.label;
  double leak_for = 0, finding_for = 0;
  struct {
    const char* flag;
    const std::string& text;
    double* out;
  } durations[] = {{"--interval", f.interval, &s.interval_s},
                   {"--process-interval", f.process_interval, &s.process_interval_s},
                   {"--timeout", f.timeout, &s.timeout_s},
                   {"--init-timeout", f.init_timeout, &s.init_timeout_s},
                   {"--grace", f.grace, &config.check.grace_s},
                   {"--raw-retention", f.raw_retention, &hopts.raw_retention_s},
                   {"--aggregate-retention", f.aggregate_retention, &hopts.aggregate_retention_s},
                   {"--process-retention", f.process_retention, &hopts.process_retention_s},
                   {"--for", f.leak_for, &leak_for},
                   {"--finding-for", f.finding_for, &finding_for},
                   {"--critical-runway", f.critical_runway, &config.critical_runway_s}};
  for (auto& d : durations) {
    auto v = ParseDuration(d.text);
    if (!v.ok()) return v.status().WithContext(d.flag);
    *d.out = *v;
  }
  if (!f.duration.empty()) {
    auto v = ParseDuration(f.duration);
    if (!v.ok()) return v.status().WithContext("--duration");
    if (*v <= 0)
      return Status::InvalidArgument("--duration: must be above 0 (leave it out to run until SIGINT/SIGTERM)");
    s.duration_s = *v;
  }
  if (!f.replay.empty()) {
    for (const LiveOnlyFlag& l : kLiveOnlyFlags) {
      if (f.given.count(l.flag) > 0) {
        return Status::InvalidArgument(std::string(l.flag) + " has no effect with --replay (" + l.why +
                                       "); leave it out");
      }
    }
  }
  if (!f.external_url.empty()) {
    if (f.external_url.rfind("http://", 0) != 0 && f.external_url.rfind("https://", 0) != 0) {
      return Status::InvalidArgument("--external-url: expected an http:// or https:// URL, got '" + f.external_url +
                                     "'");
    }
    if (f.replay.empty() && f.webhook.empty()) {
      return Status::InvalidArgument(
          "--external-url is the link the --webhook alerts carry; it has no effect without --webhook");
    }
  }
  if (f.replay.empty() && s.interval_s < 0.1) return Status::InvalidArgument("--interval must be at least 100ms");
  const bool trace_flag_given = f.given.count("--format") || f.given.count("--columns") || f.given.count("--total") ||
                                f.given.count("--speed") || f.given.count("--lenient");
  if (f.replay.empty() && (trace_flag_given || f.format != "auto" || !f.columns.empty() || !f.total.empty() ||
                           f.speed != "max" || f.lenient)) {
    return Status::InvalidArgument(
        "--format, --columns, --total, --speed and --lenient say how to read a --replay file; they need --replay");
  }
  if (s.process_interval_s < s.interval_s) s.process_interval_s = s.interval_s;
  if (s.timeout_s <= 0) return Status::InvalidArgument("--timeout must be greater than 0");
  if (s.init_timeout_s < 0.001) return Status::InvalidArgument("--init-timeout must be at least 1ms");
  auto size = ParseSize(f.orphan_threshold, SizeUnits::kGpuMemory);
  if (!size.ok()) return size.status().WithContext("--orphan-threshold");
  config.check.orphan_threshold_bytes = *size;
  config.check.orphan_large_bytes = std::max<uint64_t>(config.check.orphan_large_bytes, *size);
  config.alerts.default_for_s = finding_for;
  config.alerts.for_by_name["GpuMemoryLeak"] = leak_for;
  config.alerts.for_by_name["GpuProcessMemoryLeak"] = leak_for;
  config.alerts.for_by_name["GpuStale"] = 0;
  // A leak alert outlasts a verdict that flickers: it resolves once the leak verdict has been
  // gone for 10 minutes, or for --for when that is longer.
  const double keep = std::max(leak_for, detection::kLeakAlertForSeconds);
  config.alerts.keep_firing_for_by_name["GpuMemoryLeak"] = keep;
  config.alerts.keep_firing_for_by_name["GpuProcessMemoryLeak"] = keep;
  // After a restart a finding is found again once its grace (orphaned memory) and a process refresh
  // or two have passed: a restored alert waits that long before it resolves.
  config.alerts.restore_wait_s = config.check.grace_s + 2 * s.process_interval_s + 2 * s.interval_s;
  // A corrupt --db is refused at start (exit 3), live or replayed, before anything is written to it.
  hopts.check_at_open = true;
  hopts.exclusive = true;  // one daemon per --db
  // A cap below what the retentions keep holds the newest samples (HistoryStore::Flush).
  hopts.make_room_at_cap = true;
  // The writes run on the sampling thread: a lock another program holds pauses history, not sampling.
  hopts.write_busy_timeout_ms = kHistoryWriteWaitMs;
  if (f.given.count("--db") > 0 && f.db.empty()) {
    return Status::InvalidArgument("--db: an empty file name (leave --db out to keep no history)");
  }
  if (!f.db_max_size.empty()) {
    auto cap = ParseSize(f.db_max_size);
    if (!cap.ok()) return cap.status().WithContext("--db-max-size");
    hopts.db.max_size_bytes = *cap;
  }
  return s;
}

std::string DbOverCapNote(const std::string& db, storage::HistoryStore& store, uint64_t cap_bytes) {
  if (cap_bytes == 0) return {};
  auto size = store.db().SizeBytes();
  if (!size.ok() || *size <= cap_bytes) return {};
  const std::string shown = FormatBytes(static_cast<double>(*size));
  return "--db-max-size " + FormatBytes(static_cast<double>(cap_bytes)) + " is below the size of " + db + " (" + shown +
         "): SQLite does not shrink a file, so it stays at " + shown +
         " and the oldest samples make room within it. To make it smaller, stop the daemon and start on a new file "
         "(or run `sqlite3 " +
         db + " 'VACUUM'` once retention has freed room in it)";
}

std::string GeneratorUrl(const std::string& external_url, const std::string& listen_host, int port,
                         const std::string& hostname) {
  if (!external_url.empty()) return external_url;
  const bool wildcard = listen_host.empty() || listen_host == "0.0.0.0" || listen_host == "::";
  return outputs::HttpUrl(wildcard ? hostname : listen_host, port);
}

int WatchFail(const std::string& message) {
  std::fprintf(stderr, "vramwatch watch: %s\n", PrintableLines(message).c_str());
  return kExitUnknown;
}

}  // namespace vw::cli
