// WatchPipeline: the live pipeline of `vramwatch watch` (and of `watch --replay`): host samples in,
// then per GPU and per process leak engines (a process series is one PID's life: it starts when the
// PID appears and ends when it goes), findings over a sliding window (check's rules), alerts with
// `for:` persistence, history and process lifecycle records in SQLite, learned per-workload
// baselines, and the DaemonState that /metrics, /api/v1/status and the page render.
//
// Time is whatever clock the samples carry (wall clock live, trace time under --replay), seconds.
// Assessments run every assess_interval_s of that time (GPU series) and every
// process_assess_interval_s (process series), so the cost per sample stays small.
// Threading: one thread (the sampler). BuildState() returns an immutable copy for other threads.
//
// The class is implemented in one file per concern: watch_pipeline.cpp (samples in, GPU
// assessments, baselines, history flushes), watch_resume.cpp (Resume), watch_processes.cpp (process
// series and lifecycle records), watch_findings.cpp (the findings window, Xids, NVML unavailable),
// watch_alerts.cpp (alert conditions and their changes) and watch_state.cpp (BuildState and the
// --replay verdict lines).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "detection/alerts.h"
#include "detection/findings.h"
#include "detection/leak_engine.h"
#include "outputs/alert_sinks.h"
#include "outputs/daemon_state.h"
#include "sources/kernel/xid_parser.h"
#include "storage/history_store.h"

namespace vw::cli {

struct WatchConfig {
  detection::EngineConfig engine;
  detection::CheckConfig check;  // findings thresholds; window_s is set from the sample window
  detection::AlertConfig alerts;
  double assess_interval_s = 10;                                 // GPU series
  double process_assess_interval_s = 60;                         // process series
  double stale_alert_s = 60;                                     // sample age that raises GpuStale
  double critical_runway_s = detection::kCriticalRunwaySeconds;  // leak alert is critical below this pessimistic runway
  double flush_interval_s = 5;                                   // history batch period
  double retention_interval_s = 600;
  double resume_s = 12 * 3600;       // history re-fed to the engines after a restart
  double baseline_interval_s = 600;  // at most one baseline update per workload per this
  double xid_max_age_s = 24 * 3600;  // non-hardware Xids stop raising the finding this long after seen
  // Xid events kept for findings: past it the oldest go first, but never the newest of its GPU and
  // code, and each one that goes is still counted (TrimXids).
  size_t max_xid_events = 1000;
  std::string label;  // --label: the workload key for baselines
  // --replay: samples come from a file. A record without the GPU's used memory (a pmon file) still
  // counts as an answer: its processes are judged, and the GPU is never stale for lack of it.
  bool replay = false;
  std::string version;
  // The host's boot id (/proc/sys/kernel/random/boot_id; empty when unknown): stored Xid events
  // of another boot are forgotten at Resume (a reboot resets the GPUs).
  std::string boot_id;
};

// What the daemon publishes of one engine assessment (every field the renderers read).
outputs::SeriesVerdict SeriesVerdictOf(const detection::Assessment& a);

class WatchPipeline {
 public:
  WatchPipeline(WatchConfig config, storage::HistoryStore* history, std::vector<outputs::AlertSink*> sinks);

  // Re-feeds the GPU engines with the stored samples of the last resume_s before `now`, and loads
  // baselines, firing alerts and the lifecycle records of processes still marked running. Such a
  // process, when the first process refresh of its GPU lists its PID with the same command line,
  // goes on with its record (first seen, peak) and its engine re-fed from its stored series;
  // one that is not listed then ended while the daemon was down and its record is closed as
  // exited at its last sighting (vanished_memory_held when the memory its stored series last
  // showed stays held, unowned), and that memory is a departure for its GPU's engine
  // (LeakEngine::NoteDeparture), so the fall it left is explained, not a new segment. The records
  // of a GPU key the first sample does not list at all, and those of a key where another card now
  // answers, are closed as exited at their last sighting.
  // Firing alerts whose `hostname` label is not `hostname` (written by
  // a --replay of another host's recording, or under another name) are dropped without a
  // notification, with a note on stderr. The Xid counts and hardware Xid events stored for this
  // boot (config.boot_id) are restored, so a hardware Xid finding and its alert go on.
  // Returns the number of GPU samples re-fed.
  // Without `hostname` every stored alert is restored.
  size_t Resume(double now, const std::optional<std::string>& hostname = std::nullopt);

  // One look at the host. `processes_fresh`: the process lists and their /proc facts were read
  // in this sample (else the previous ones are kept). A holder NVML still lists whose /proc entry
  // is gone keeps the facts last read for it (command, user, container, pod, Slurm job) in the
  // findings, the metrics and its lifecycle record, which closes as vanished_memory_held. `run_findings`: evaluate
  // check's rules (not under --replay, where there is no live /proc: there only the xid rule runs, once Xid events were
  // fed through IngestXids).
  void Ingest(const HostSnapshot& snap, bool processes_fresh, bool run_findings);

  // Xid events the kernel log gained since the previous call: counted per GPU and code
  // (vramwatch_xid_events_total; events naming no known GPU are not counted), all of them in the
  // status document's host.xid_events, and kept for check's
  // xid finding, hardware codes until the daemon stops, the others for xid_max_age_s after they
  // were seen (`now`, seconds).
  void IngestXids(const kernel::KernelLogScan& scan, double now);

  // NVML could not be loaded or initialised at `now` (seconds), so there is no sample: the findings
  // become one critical nvml_error (no GPU) saying `error`, which raises its alert (GpuNvmlError)
  // like any critical finding. The next Ingest with run_findings replaces it.
  void IngestNvmlUnavailable(double now, const std::string& hostname, const std::string& error);
  // NVML answered at `now` (seconds) but lists no GPU: the findings become one critical nvml_error
  // (no GPU) saying `message` (nvml::NoGpuMessage, check's UNKNOWN), with its alert (GpuNvmlError)
  // as for IngestNvmlUnavailable. The next Ingest with run_findings replaces it.
  void IngestNoGpu(double now, const std::string& hostname, const std::string& message);

  // NVML could not be loaded or initialised: one more vramwatch_nvml_errors_total{call,code}. `call`
  // is the NVML function that failed ("nvmlInit_v2"), or "unknown" for a failure that is no call
  // (the library cannot be loaded); `code` its token (nvml_return_names.h: "timeout",
  // "NVML_ERROR_DRIVER_NOT_LOADED"), or "other".
  void CountNvmlError(const std::string& call, const std::string& code);
  // One timed NVML call (or group of calls), `seconds` of wall time, into the histogram that
  // vramwatch_nvml_call_duration_seconds{call} renders.
  void RecordNvmlCall(const std::string& call, double seconds);
  // Histograms kept elsewhere (the NVML binding's, per function; bucket bounds
  // outputs::NvmlLatencyBuckets()): each replaces the one of the same call name.
  void SetNvmlCallStats(std::vector<outputs::NvmlCallStats> calls);
  // How the leak engines' evidence names moments (detection::EngineConfig::evidence_times): clock
  // times for samples on an epoch clock, offsets from the series' start for a trace without one.
  // Engines take it when they are made: call it before the first Ingest or Resume.
  void SetEvidenceTimes(detection::EngineConfig::EvidenceTimes style) { config_.engine.evidence_times = style; }
  // The NVML library in use (its path and the versioned calls bound in it), for the status
  // document's host block, as `check` reports them.
  void SetNvmlLibrary(std::string path, std::vector<std::string> functions) {
    nvml_library_ = std::move(path);
    nvml_functions_ = std::move(functions);
  }
  // What the Xid events are read from ("/dev/kmsg", "dmesg", a file; empty when nothing is).
  void SetKernelLogSource(std::string source) { kernel_log_source_ = std::move(source); }
  // Whether Xid events are taken from NVML's event API (outputs::DaemonState::xid_events_from_nvml).
  void SetXidEventsFromNvml(bool on) { xid_events_from_nvml_ = on; }
  // The live daemon's --interval (outputs::DaemonState::sample_interval_s).
  void SetSampleInterval(double seconds) { sample_interval_s_ = seconds; }
  // Whether Xid events can be read (outputs::DaemonState::kernel_log_up) and, when not, why.
  void SetKernelLogStatus(std::optional<bool> up, std::string note) {
    kernel_log_up_ = up;
    kernel_log_note_ = std::move(note);
  }

  // Webhook delivery counters (outputs::WebhookAlertSink) for the next BuildState.
  void SetNotificationCounters(uint64_t failed, uint64_t dropped) {
    notifications_failed_ = failed;
    notifications_dropped_ = dropped;
  }

  // Writes pending history now (also done every flush_interval_s by Ingest).
  void Flush();

  std::shared_ptr<const outputs::DaemonState> BuildState(double now) const;
  // "GPU 0: leak, 512 MiB/h, out of memory in 9h 12m; Xid 13 x2, 79 x1" (Xid counts when any)
  std::vector<std::string> GpuVerdictLines() const;
  uint64_t samples() const { return samples_; }
  bool history_paused() const { return history_paused_; }
  const std::string& last_history_error() const { return history_error_; }

 private:
  struct ProcTrack {
    detection::LeakEngine engine;
    double first_seen = 0, last_seen = 0;
    uint64_t peak = 0, last = 0;
    ProcessSnapshot last_snapshot;
    std::optional<double> gone_since;  // first refresh that listed it with its /proc entry gone
    // NVML has listed it on this GPU (or it held memory here): only then has it a lifecycle
    // record, whose first_seen is that refresh. A PID seen only through /dev/nvidiaN has none.
    bool on_gpu = false;
    outputs::SeriesVerdict verdict;
    explicit ProcTrack(const detection::EngineConfig& c) : engine(c) {}
  };
  struct GpuTrack {
    detection::LeakEngine engine;
    GpuSnapshot last;  // latest snapshot (processes from the latest refresh)
    std::optional<double> last_ok_t;
    // The latest live sample that listed this GPU read its memory (a good sample, as last_ok_t):
    // false while its calls hang or fail, it is lost, or it has not answered yet.
    bool answered = false;
    std::optional<double> first_seen_t;  // first live sample that listed this GPU (answered or not)
    // Used memory less the listed processes' at the latest process refresh (bytes; unset when it
    // could not be computed): both read together, never the used memory of a later sample less
    // a list seconds old (a growing process would show memory nobody owns).
    std::optional<uint64_t> unattributed;
    // On a MIG GPU, the same per GPU instance (instance used less its listed processes', bytes), by
    // GPU instance id, for the instances where it could be computed (detection::MigInstances).
    std::map<unsigned, uint64_t> mig_unattributed;
    double last_assess_t = -1e300;
    double last_proc_assess_t = -1e300;
    double last_baseline_t = -1e300;
    outputs::SeriesVerdict verdict;
    std::map<int64_t, std::unique_ptr<ProcTrack>> procs;
    std::map<unsigned, uint64_t> xids;
    // Holders that left the list recently: their record is revised if their memory stays held
    // once the lazy-reclaim grace has passed (value: when it left).
    std::vector<std::pair<storage::ProcessRecord, uint64_t>> recently_ended;  // (record, its last bytes)
    std::string card;  // UUID of the card the engine's samples are of (CheckIdentity); empty: none yet
    explicit GpuTrack(const detection::EngineConfig& c) : engine(c) {}
  };

  GpuTrack& Track(const GpuSnapshot& g);
  // A process of GPU `key` first listed since the start: resumed from its stored record and
  // series when Resume() loaded one for the same PID and command. A PID now run by another
  // command: the stored one ended while the daemon was down (EndedWhileDown).
  void ResumeProcess(const std::string& key, GpuTrack& t, int64_t pid, const ProcessSnapshot& p, ProcTrack& pt,
                     double now);
  // After the first process refresh of GPU `key` (at `now`, seconds): stored running records it
  // did not list ended while the daemon was down. Each is closed as exited at its last sighting,
  // and the memory its stored series last showed is a departure for the GPU's engine, so the fall
  // it left in the GPU's series is explained, not a new segment.
  void CloseUnresumed(const std::string& key, GpuTrack& t, double now);
  // Closes the resumed records of GPU `key` as exited at their last sighting, noting no departure:
  // they ran on a card that is no longer at the key (CheckIdentity), or that NVML no longer lists.
  void CloseResumedAsExited(const std::string& key);
  // After a sample `snap` that lists GPUs: the resumed records of a GPU key it does not list (a
  // card that fell off the bus, or the cards renumbered without it) are closed as exited at their
  // last sighting (CloseResumedAsExited); no process refresh of that key will come to close them.
  void CloseResumedOfUnlistedGpus(const HostSnapshot& snap);
  // Closes the stored record `r` of a process of GPU `key` that ended while the daemon was down,
  // and notes its departure (its last stored memory) for the GPU's engine at `now`.
  void EndedWhileDown(const std::string& key, GpuTrack& t, storage::ProcessRecord r, double now);
  // The last memory (bytes) stored for the process of record `r` on GPU `key`, within resume_s of
  // its last sighting; unset when none was stored.
  std::optional<uint64_t> LastStoredBytes(const std::string& key, const storage::ProcessRecord& r);
  void AssessGpu(const std::string& key, GpuTrack& t, double now);
  void RefreshProcesses(const std::string& key, GpuTrack& t, const GpuSnapshot& g, double now);
  void EndProcess(const std::string& key, GpuTrack& t, int64_t pid, ProcTrack& p, const GpuSnapshot& g);
  void ReviseEnded(GpuTrack& t, const GpuSnapshot& g, double now);
  std::string WorkloadKey(const GpuSnapshot& g) const;
  // Copies `in` to `*out` with the last known /proc facts of listed holders whose entry is gone;
  // false (and `*out` untouched) when there is none.
  bool KeepVanishedFacts(const HostSnapshot& in, HostSnapshot* out) const;
  // Resume(): the Xid counts and hardware events stored for this boot.
  void ResumeXids();
  // Before an answered sample `g` of GPU `key` (at `now`, seconds) is taken: a GPU key is an NVML
  // index, not a card. When another card (UUID) answers at the key than the one this run saw
  // there or, at its first answer, than the one history recorded there (a card replaced, or the
  // cards renumbered after one fell off the bus), the key's engine, verdict and ended holders
  // start anew and its resumed process records are closed as exited (they ran on the other card,
  // so their memory is no departure from this one). Records the card seen at the key in history.
  // The GPUs the status and a replay's closing lines show, in index order ("GPU 2" before
  // "GPU 10"), with their keys: those a live sample has listed.
  std::vector<std::pair<const std::string*, const GpuTrack*>> ShownGpus() const;
  void CheckIdentity(const std::string& key, GpuTrack& t, const GpuSnapshot& g, double now);
  // Ingest()'s findings for the sample `snap` (its time snap.t, seconds): with `run_findings` and
  // fresh process facts, check's rules over the window of such samples; without `run_findings`
  // (--replay), once Xid events were seen, the xid rule alone; otherwise they stay as they were.
  void UpdateFindings(const HostSnapshot& snap, bool processes_fresh, bool run_findings);
  // The findings become `f` alone (a host-wide one: no sample to judge), at `now` (seconds).
  void IngestHostFinding(double now, const std::string& hostname, Finding f);
  std::vector<detection::AlertCondition> Conditions(double now) const;
  // Alert conditions of `now` into the tracker; changes go to the sinks and the stored alert state.
  void EvaluateAlerts(double now);
  void MaybeFlush(double now, bool force);

  WatchConfig config_;
  storage::HistoryStore* history_;
  std::vector<outputs::AlertSink*> sinks_;
  detection::AlertTracker tracker_;
  // The unseen time (AlertTracker::UnseenFor) last stored for each firing alert, by key: a kept
  // or restored alert's is stored again whenever it changes.
  std::map<std::string, double> stored_unseen_;
  std::map<std::string, GpuTrack> gpus_;  // by GPU key
  // Stored records of processes running before a restart, by (GPU key, PID), until their GPU's
  // first process refresh.
  std::map<std::pair<std::string, int64_t>, storage::ProcessRecord> resumed_procs_;
  // The card history recorded at each GPU key (Resume), updated as cards are seen.
  std::map<std::string, storage::GpuIdentity> gpu_ids_;
  std::map<std::string, storage::Baseline> baselines_;
  // Samples with fresh process facts, for findings: the newest one at least check.grace_s old
  // and all after it (at least two), so the window spans at least the grace once it can.
  std::deque<HostSnapshot> window_;
  detection::CheckResult findings_;
  double findings_window_s_ = 0;  // the span of the samples findings_ judged (seconds)
  std::map<std::pair<std::string, std::string>, uint64_t> nvml_errors_;
  struct SeenXid {
    kernel::XidEvent event;
    double seen_t = 0;
  };
  std::deque<SeenXid> xids_seen_;
  // Brings xids_seen_ down to config_.max_xid_events (see there).
  void TrimXids();
  std::map<std::string, std::string> xid_uuid_by_pci_;
  std::map<std::string, outputs::NvmlCallStats> nvml_calls_;
  std::map<std::string, std::map<unsigned, uint64_t>> resumed_xid_counts_;  // by GPU key, until it is seen
  uint64_t notifications_failed_ = 0, notifications_dropped_ = 0;
  std::string hostname_, driver_version_, nvml_version_;
  std::optional<int> cuda_driver_version_;
  std::string nvml_library_;
  std::vector<std::string> nvml_functions_;
  std::string kernel_log_source_;
  uint64_t xid_events_read_ = 0;  // Xid events IngestXids was given
  bool host_pids_visible_ = true;
  // The fd scan and hidepid facts of the last process tick (HostSnapshot's fields of the same names).
  HolderScan holder_scan_;
  std::optional<bool> kernel_log_up_;
  std::string kernel_log_note_;
  bool xid_events_from_nvml_ = false;
  std::optional<double> sample_interval_s_;
  uint64_t samples_ = 0;
  double started_ = 0;
  double last_t_ = 0;  // latest sample time: the clock for the final flush and retention
  double last_flush_ = -1e300, last_retention_ = -1e300;
  bool history_paused_ = false;
  bool state_unsaved_ = false;  // while paused, the restart state could not be written either (said once)
  std::string history_error_;
  std::string retention_error_;       // the last retention's failure (a status note while it lasts)
  std::string history_file_problem_;  // HistoryStore::FileGoneProblem at the last flush
  bool room_made_said_ = false;       // the size cap made room (HistoryStore::evicted_rows), said once
};

}  // namespace vw::cli
