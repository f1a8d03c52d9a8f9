// Evaluation: runs vramwatch's LeakEngine and the Prometheus baselines over labelled traces and
// records, per trace, when each of them alarmed.
//
// vramwatch: every sample is fed to a LeakEngine (capacity = memory.total, nothing reserved);
// the engine is assessed at checkpoints of trace time: every healthy_step_s on healthy traces,
// every leak_step_s on leak traces plus exactly leak start + each horizon, and at the last sample.
// An assessment whose verdict is `leak` is an alarm. vramwatch_alert: the same verdicts through the
// daemon's alert tracker (detection::AlertTracker), an alarm once the leak verdict has held at every
// check for alert_for_s, as `watch` raises GpuMemoryLeak. vramwatch_critical: that alert while it is
// critical, as `watch` sends it (the check's pessimistic time to OOM, Assessment::tto_lo_s, under
// critical_runway_s): the page of a leak that ends in an out-of-memory error within the day.
// Baselines: see baselines.h (alarm = firing).
//
// Per detector and trace: alarmed at all, number of alarm episodes (onsets), alarm at the end,
// alarm before the leak began, and the delay from the leak start to the first alarm at or after
// it. For vramwatch also the final verdict and rate interval.
//
// Units: seconds, bytes, bytes/second. Threading: EvaluateTrace is thread-safe; RunEvaluation
// spreads traces over `threads` std::threads (results do not depend on the thread count).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baselines.h"
#include "core/status.h"
#include "detection/alerts.h"
#include "detection/leak_engine.h"
#include "trace_generator.h"

namespace vw::evaluate {

struct EvalOptions {
  double healthy_step_s = 600;                                   // assessment step on healthy traces
  double leak_step_s = 300;                                      // assessment step on leak traces
  std::vector<double> horizons_s = {1800, 3600, 7200};           // recall "within H of the leak start"
  double alert_for_s = detection::kLeakAlertForSeconds;          // for: of vramwatch's leak alert
  double critical_runway_s = detection::kCriticalRunwaySeconds;  // ... critical below this runway
  PromConfig prom;
  detection::EngineConfig engine;
};

struct DetectorOutcome {
  bool alarmed_any = false;        // alarmed at some check (on a healthy trace: a false alarm)
  int episodes = 0;                // alarm onsets (not alarming -> alarming)
  bool alarm_at_end = false;       // alarming at the last check
  bool alarm_before_leak = false;  // leak traces: alarmed before the leak began
  std::optional<double> delay_s;   // leak traces: first alarm at or after the start, minus the start
};

// Index 0 is vramwatch, 1 its leak alert, 2 that alert while critical, 3..6 the baselines in
// kAllBaselines order.
inline constexpr size_t kAlertDetector = 1;
inline constexpr size_t kCriticalDetector = 2;
inline constexpr size_t kFirstBaseline = 3;
inline constexpr size_t kDetectorCount = kFirstBaseline + kBaselineCount;
// "vramwatch", "vramwatch_alert", "vramwatch_critical", "static_90pct", ...
std::string_view DetectorName(size_t detector);

// The goal for one assessment (docs/detection.md, Cost): CPU seconds.
inline constexpr double kAssessGoalSeconds = 1e-3;

struct TraceResult {
  TraceLabel label;
  size_t samples = 0;
  std::array<DetectorOutcome, kDetectorCount> outcome;
  // vramwatch's last assessment.
  std::string end_verdict;
  std::optional<double> rate_bps, rate_lo_bps, rate_hi_bps;
  std::optional<double> load_rise_bps;      // Assessment::load_rise_bps (a swinging load's rise worth watching)
  size_t load_rise_checks_before_leak = 0;  // assessments that carried one, before the leak (all, if healthy)
  size_t assessments = 0;
  double engine_cpu_seconds = 0;      // CPU time of the worker thread in Add + Assess for this trace
  double assess_cpu_seconds = 0;      // the part of it spent in Assess
  double assess_max_cpu_seconds = 0;  // the slowest single Assess
  size_t assessments_over_goal = 0;   // Assess calls that took more than kAssessGoalSeconds
};

// `on_assessment`, when given, sees every vramwatch assessment with its trace time (seconds).
using AssessmentObserver = std::function<void(double t, const detection::Assessment&)>;
TraceResult EvaluateTrace(const Trace& trace, const EvalOptions& options, const AssessmentObserver& on_assessment = {});

// A human account of one trace, for tuning: its label, every vramwatch assessment (time, verdict,
// rate and interval), the final evidence, and when each baseline fired.
std::string ExplainTrace(const Trace& trace, const EvalOptions& options);

struct RunOptions {
  int traces = 1200;
  int threads = 1;
  std::string write_csv_dir;  // empty: do not write the traces
  std::vector<Shape> shapes;  // empty: every trace; else only the traces of these shapes (same ids)
  GeneratorConfig generator;
  EvalOptions eval;
};

// Generates and evaluates traces 0..traces-1 (those of `shapes` only, when given; the results are
// in id order). `progress(done, total)` is called now and then from
// worker threads (may be empty). Fails only when writing the CSV files fails.
Result<std::vector<TraceResult>> RunEvaluation(const RunOptions& options,
                                               const std::function<void(int, int)>& progress = {});

// One row per trace: labels, then per detector alarm/delay columns, then vramwatch's rate.
Status WriteResultsCsv(const std::vector<TraceResult>& results, const std::string& path);

}  // namespace vw::evaluate
