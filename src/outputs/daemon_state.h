// DaemonState: a plain, self-contained picture of what the daemon knows at one instant, built by the
// sampler thread and published as std::shared_ptr<const DaemonState> (copy-on-publish). Everything
// that renders (/metrics, /api/v1/status, alerts) reads only this: no renderer ever calls NVML.
//
// Every value may be missing (std::optional), and a missing value is never rendered as 0.
// Units: sizes bytes, rates bytes/second, durations seconds, times seconds since the Unix epoch
// (UTC), ratios 0..1.
// Threading: immutable once published; any thread may read it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/finding.h"
#include "core/snapshot.h"

namespace vw::outputs {

// What the leak engine says about a GPU (or process) series right now.
struct SeriesVerdict {
  std::string verdict = "insufficient_data";  // insufficient_data | warmup | settling | plateau | leak
  std::optional<double> leak_rate_bps;        // set for a leak
  std::optional<double> leak_rate_lo_bps, leak_rate_hi_bps;
  std::optional<double> time_to_oom_s;  // set for a leak with known capacity
  std::optional<double> time_to_oom_lo_s, time_to_oom_hi_s;
  std::optional<double> leak_start_t;  // where the sustained growth began (seconds), set for a leak
  std::optional<double> floor_bytes, peak_bytes;
  std::optional<double> baseline_bytes;  // learned plateau of this workload, when known
  // Without a leak verdict: a swinging load's rise worth watching (detection::Assessment::load_rise_bps).
  std::optional<double> load_rise_bps;
  // Settling growth held back by the history rules: when they let it be called a leak
  // (detection::Assessment::held_until_t, seconds).
  std::optional<double> held_until_t;
  std::vector<std::string> evidence;
  std::string summary;  // a leak's own sentences (detection::Assessment::summary); empty otherwise
};

struct GpuState {
  GpuSnapshot snapshot;                        // the latest sample that succeeded (times inside it)
  std::optional<double> last_sample_t;         // when memory was last read successfully
  std::optional<uint64_t> unattributed_bytes;  // used − Σ listed processes (driver view), when known
  // MIG: per GPU instance id, its used memory − Σ the processes listed on it (bytes); only the
  // instances where that could be computed, read with the same process list as unattributed_bytes.
  std::map<unsigned, uint64_t> mig_unattributed_bytes;
  SeriesVerdict analysis;
  std::map<std::string, SeriesVerdict> process_analysis;  // key: PID as text
  // The latest sample could not read this GPU's memory (a call hung past its deadline or failed,
  // the GPU is lost, or it has not answered since the daemon started): vramwatch_gpu_up is 0.
  bool stale = false;
  std::map<unsigned, uint64_t> xid_events;  // Xid code -> count since the daemon started
};

// Latency of one NVML entry point, as a Prometheus histogram.
struct NvmlCallStats {
  std::string call;                     // "nvmlDeviceGetMemoryInfo_v2"
  std::vector<uint64_t> bucket_counts;  // cumulative counts for NvmlLatencyBuckets(), then +Inf
  uint64_t count = 0;
  double sum_seconds = 0;
};

// Upper bounds (seconds) of the NVML latency histogram buckets.
const std::vector<double>& NvmlLatencyBuckets();

// One pending or firing alert, as /api/v1/status lists it.
struct AlertView {
  std::string name;      // "GpuMemoryLeak"
  std::string state;     // "pending" | "firing"
  std::string gpu;       // GPU key, empty for host-wide alerts
  std::string severity;  // "warning" | "critical"
  std::string since;     // when it fired (a pending one: when its condition started holding), AlertTimeText
  std::string summary;
};

struct DaemonState {
  double t = 0;  // when this state was published
  std::string hostname;
  std::string driver_version;
  std::optional<int> cuda_driver_version;   // e.g. 12040; missing until NVML gave it
  std::string nvml_version;                 // nvmlSystemGetNVMLVersion, e.g. "12.550.54.15"; empty until known
  std::string nvml_library;                 // the library NVML was loaded from; empty until it was
  std::vector<std::string> nvml_functions;  // the versioned NVML calls bound in it
  std::string version;                      // vramwatch's own
  bool host_pids_visible = true;
  // The last process tick's fd scan and hidepid facts (HostSnapshot's fields of the same names).
  HolderScan holder_scan;
  // Whether Xid events can be read: true while the kernel log is followed, false when it cannot be
  // read (the daemon is blind to Xids), missing under --kernel-log none (skipped on purpose).
  std::optional<bool> kernel_log_up;
  std::string kernel_log_note;  // why the kernel log is not read; empty while it is
  // Xid events are taken from NVML's event API (code, GPU, MIG instance) because the kernel log is
  // not read (unreadable or --kernel-log none).
  bool xid_events_from_nvml = false;
  // --interval (seconds) of a live daemon: a GPU's sample age rises to it between samples, so
  // staleness is judged against it. Missing under --replay.
  std::optional<double> sample_interval_s;
  // What the Xid events are read from: "/dev/kmsg", "dmesg", the --kernel-log file, or empty
  // when nothing is read.
  std::string kernel_log_source;
  uint64_t xid_events = 0;  // Xid events read from the kernel log since the daemon started
  std::vector<GpuState> gpus;
  std::vector<Finding> findings;
  // What check's rules could not judge over the findings window, and why (CheckResult::notes:
  // a process list NVML could not give, memory NVML does not report, a raised threshold).
  std::vector<std::string> notes;
  double findings_window_s = 0;  // the span of the samples the findings judge (seconds)
  std::vector<AlertView> alerts;
  std::vector<NvmlCallStats> nvml_calls;
  std::map<std::pair<std::string, std::string>, uint64_t> nvml_errors;  // (call, code name) -> count
  // Self-metrics.
  uint64_t samples_total = 0;
  bool history_enabled = false;
  bool history_paused = false;  // the database refused writes (disk full, read-only)
  uint64_t history_dropped_samples = 0;
  uint64_t notifications_failed = 0;   // webhook delivery attempts that failed
  uint64_t notifications_dropped = 0;  // webhook batches never delivered (queue full, retries spent, 4xx)
  double started_t = 0;
};

// The GPU key used in labels, findings and series names: the index as text.
std::string GpuKey(const GpuSnapshot& g);

// Name of a process state as it appears in labels: running, sleeping, disk_sleep, zombie, stopped,
// dead, gone, unknown.
std::string_view ProcStateName(ProcState s);

}  // namespace vw::outputs
