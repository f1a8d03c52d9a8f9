#include "evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/units.h"
#include "detection/alerts.h"

namespace vw::evaluate {
namespace {

// Folds one alarm/no-alarm check at time t into an outcome.
class OutcomeTracker {
 public:
  explicit OutcomeTracker(std::optional<double> leak_start) : leak_start_(leak_start) {}

  void Check(double t, bool alarm) {
    if (alarm) {
      out_.alarmed_any = true;
      if (!last_) ++out_.episodes;
      if (leak_start_) {
        if (t < *leak_start_) {
          out_.alarm_before_leak = true;
        } else if (!out_.delay_s) {
          out_.delay_s = t - *leak_start_;
        }
      }
    }
    last_ = alarm;
  }
  DetectorOutcome Finish() {
    out_.alarm_at_end = last_;
    return out_;
  }

 private:
  std::optional<double> leak_start_;
  DetectorOutcome out_;
  bool last_ = false;
};

std::vector<double> Checkpoints(const TraceLabel& label, const EvalOptions& options) {
  std::vector<double> cps;
  const double step = label.leak ? options.leak_step_s : options.healthy_step_s;
  if (step > 0) {
    for (double t = step; t < label.duration_s; t += step) cps.push_back(t);
  }
  if (label.leak_start_s) {
    for (double h : options.horizons_s) {
      if (*label.leak_start_s + h < label.duration_s) cps.push_back(*label.leak_start_s + h);
    }
  }
  cps.push_back(label.duration_s);
  std::sort(cps.begin(), cps.end());
  cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  return cps;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string OptionalNumber(const std::optional<double>& v, double scale, int decimals) {
  return v ? fmt::format("{:.{}f}", *v * scale, decimals) : "";
}

}  // namespace

std::string_view DetectorName(size_t detector) {
  if (detector == 0) return "vramwatch";
  if (detector == kAlertDetector) return "vramwatch_alert";
  if (detector == kCriticalDetector) return "vramwatch_critical";
  if (detector < kDetectorCount) return BaselineName(kAllBaselines[detector - kFirstBaseline]);
  return "unknown";
}

TraceResult EvaluateTrace(const Trace& trace, const EvalOptions& options, const AssessmentObserver& on_assessment) {
  TraceResult result;
  result.label = trace.label;
  result.samples = trace.used_mib.size();
  const std::optional<double> leak_start = trace.label.leak_start_s;

  // vramwatch: one pass over the samples, assessing at each checkpoint.
  const double started = ThreadCpuSeconds();
  detection::LeakEngine engine(options.engine);
  engine.SetCapacity(trace.label.total_bytes, 0);
  const std::vector<double> cps = Checkpoints(trace.label, options);
  OutcomeTracker vw_tracker(leak_start);
  // The leak alert as the daemon raises it: pending at the first leak verdict, firing once the
  // verdict has held at every check for alert_for_s, dropped at the first check without it.
  detection::AlertTracker alerts({.default_for_s = options.alert_for_s, .resend_interval_s = 0});
  OutcomeTracker alert_tracker(leak_start), critical_tracker(leak_start);
  size_t next_cp = 0;
  detection::Assessment last;
  auto assess = [&](double t) {
    const double assess_started = ThreadCpuSeconds();
    last = engine.Assess();
    const double took = ThreadCpuSeconds() - assess_started;
    result.assess_cpu_seconds += took;
    result.assess_max_cpu_seconds = std::max(result.assess_max_cpu_seconds, took);
    result.assessments_over_goal += took > kAssessGoalSeconds ? 1 : 0;
    ++result.assessments;
    if (last.load_rise_bps && (!leak_start || t < *leak_start)) ++result.load_rise_checks_before_leak;
    const bool leak = last.verdict == detection::Verdict::kLeak;
    vw_tracker.Check(t, leak);
    std::vector<detection::AlertCondition> holding;
    if (leak) holding.push_back({.name = "GpuMemoryLeak"});
    alerts.Evaluate(t, holding);
    const bool firing = alerts.firing_count() > 0;
    alert_tracker.Check(t, firing);
    // Graded as watch grades the alert it sends.
    critical_tracker.Check(t,
                           firing && detection::RunwayIsCritical(last.tto_lo_s, last.tto_s, options.critical_runway_s));
    if (on_assessment) on_assessment(t, last);
  };
  const double dt = trace.label.interval_s;
  for (size_t i = 0; i < trace.used_mib.size(); ++i) {
    const double t = static_cast<double>(i) * dt;
    while (next_cp < cps.size() && cps[next_cp] < t - 1e-9) assess(cps[next_cp++]);
    engine.Add(t, trace.used_mib[i] * kMiB);
  }
  while (next_cp < cps.size()) assess(cps[next_cp++]);
  result.engine_cpu_seconds = ThreadCpuSeconds() - started;
  result.outcome[0] = vw_tracker.Finish();
  result.outcome[kAlertDetector] = alert_tracker.Finish();
  result.outcome[kCriticalDetector] = critical_tracker.Finish();
  result.end_verdict = std::string(detection::VerdictName(last.verdict));
  result.rate_bps = last.rate_bps;
  result.rate_lo_bps = last.rate_lo_bps;
  result.rate_hi_bps = last.rate_hi_bps;
  result.load_rise_bps = last.load_rise_bps;

  // Baselines.
  const std::vector<ScrapedSample> scraped = ScrapeUniform(trace.used_mib, dt, options.prom.scrape_s);
  PromConfig prom = options.prom;
  prom.trend_start_s = std::max(prom.trend_start_s, trace.label.warmup_end_s + prom.range_s);
  const BaselineTimeline timeline = EvaluateBaselines(scraped, trace.label.total_bytes, prom);
  for (size_t r = 0; r < kBaselineCount; ++r) {
    OutcomeTracker tracker(leak_start);
    for (size_t k = 0; k < timeline.eval_t.size(); ++k) tracker.Check(timeline.eval_t[k], timeline.firing[r][k]);
    result.outcome[kFirstBaseline + r] = tracker.Finish();
  }
  return result;
}

std::string ExplainTrace(const Trace& trace, const EvalOptions& options) {
  constexpr double kMiBPerHour = 3600.0 / kMiB;
  const TraceLabel& l = trace.label;
  std::string out =
      fmt::format("trace {}: {} ({}), card {:.0f} MiB, every {:.3f} s for {}, noise {:.1f} MiB, warm-up over at {}\n",
                  l.id, ShapeName(l.shape), l.leak ? "leak" : "healthy", l.total_bytes / kMiB, l.interval_s,
                  FormatDuration(l.duration_s), l.noise_mib, FormatDuration(l.warmup_end_s));
  if (l.leak) {
    out += fmt::format("true leak: {:.1f} MiB/h from {}{}{}\n", l.leak_rate_bps * kMiBPerHour,
                       FormatDuration(*l.leak_start_s),
                       l.leak_chunk_mib > 0 ? fmt::format(" in {:g} MiB chunks", l.leak_chunk_mib) : "",
                       l.capped.empty() ? "" : fmt::format(" (capped: {})", l.capped));
  }
  detection::Assessment final;
  const TraceResult r = EvaluateTrace(trace, options, [&](double t, const detection::Assessment& a) {
    auto rate = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v * kMiBPerHour) : "-"; };
    out += fmt::format("  {:>9}  {:<17} rate {} [{} .. {}] MiB/h", FormatDuration(t), detection::VerdictName(a.verdict),
                       rate(a.rate_bps), rate(a.rate_lo_bps), rate(a.rate_hi_bps));
    // A swinging load's rise worth watching, and the headroom left above the recent peak.
    if (a.load_rise_bps) {
      out += fmt::format(" (watch {} MiB/h", rate(a.load_rise_bps));
      if (a.capacity_bytes && a.peak_bytes) {
        out += fmt::format(", headroom {:.0f} MiB", (*a.capacity_bytes - *a.peak_bytes) / kMiB);
      }
      out += ")";
    }
    out += "\n";
    // Why: printed at the first assessment, whenever the verdict changes, and for a leak whenever its
    // reason changes.
    if (final.evidence.empty() || final.verdict != a.verdict ||
        (a.verdict == detection::Verdict::kLeak && final.evidence != a.evidence)) {
      for (const std::string& e : a.evidence) out += "             | " + e + "\n";
    }
    final = a;
  });
  out += "final evidence:\n";
  for (const std::string& e : final.evidence) out += "  - " + e + "\n";
  if (!final.window_fits.empty()) out += "final windows on the floor:\n";
  for (const detection::TrendFit& w : final.window_fits) {
    out += fmt::format("  {:>9}  slope {:.1f} [{:.1f} .. {:.1f}] MiB/h, z {:.2f}, rise {}, thirds {} / {} / {}: {}\n",
                       FormatDuration(w.window_seconds), w.slope_bps * kMiBPerHour, w.slope_lo_bps * kMiBPerHour,
                       w.slope_hi_bps * kMiBPerHour, w.mk_z, FormatBytes(w.rise_bytes),
                       FormatBytes(w.third_rise_bytes[0]), FormatBytes(w.third_rise_bytes[1]),
                       FormatBytes(w.third_rise_bytes[2]), w.passed ? "passed" : w.failed);
  }
  for (size_t d = 0; d < kDetectorCount; ++d) {
    const DetectorOutcome& o = r.outcome[d];
    out += fmt::format("{:<20} alarmed {} ({} episodes), at end {}, before leak {}, delay {}\n", DetectorName(d),
                       o.alarmed_any ? "yes" : "no", o.episodes, o.alarm_at_end ? "yes" : "no",
                       o.alarm_before_leak ? "yes" : "no", o.delay_s ? FormatDuration(*o.delay_s) : "-");
  }
  return out;
}

Result<std::vector<TraceResult>> RunEvaluation(const RunOptions& options,
                                               const std::function<void(int, int)>& progress) {
  // The ids to evaluate: every trace, or those whose round-robin shape was asked for.
  std::vector<int> ids;
  for (int i = 0; i < options.traces; ++i) {
    const Shape shape = AllShapes()[static_cast<size_t>(i) % AllShapes().size()];
    if (options.shapes.empty() ||
        std::find(options.shapes.begin(), options.shapes.end(), shape) != options.shapes.end())
      ids.push_back(i);
  }
  const int n = static_cast<int>(ids.size());
  std::vector<TraceResult> results(ids.size());
  std::vector<std::string> files(ids.size());
  const TraceGenerator generator(options.generator);
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex error_mu;
  Status error;
  auto worker = [&] {
    for (int k = next++; k < n; k = next++) {
      const auto slot = static_cast<size_t>(k);
      const Trace trace = generator.Generate(ids[slot]);
      if (!options.write_csv_dir.empty()) {
        files[slot] = fmt::format("trace_{:05}.csv", ids[slot]);
        Status s = WriteNvidiaSmiCsv(trace, options.write_csv_dir + "/" + files[slot]);
        if (!s.ok()) {
          std::lock_guard lock(error_mu);
          if (error.ok()) error = s;
        }
      }
      results[slot] = EvaluateTrace(trace, options.eval);
      const int d = ++done;
      if (progress) progress(d, n);
    }
  };
  const int threads = std::clamp(options.threads, 1, std::max(1, n));
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!error.ok()) return error;
  if (!options.write_csv_dir.empty()) {
    std::vector<TraceLabel> labels;
    labels.reserve(results.size());
    for (const TraceResult& r : results) labels.push_back(r.label);
    VW_RETURN_IF_ERROR(WriteLabelsCsv(labels, files, options.write_csv_dir + "/labels.csv"));
  }
  return results;
}

Status WriteResultsCsv(const std::vector<TraceResult>& results, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return FromErrno(errno, "open " + path + " for writing");
  std::string header =
      "id,kind,shape,memory_total_mib,interval_s,duration_s,samples,noise_mib,leak_rate_mib_per_hour,"
      "leak_start_offset_s,leak_chunk_mib,capped,load_cycle_mib,load_cycle_period_s,load_swing_mib";
  for (size_t d = 0; d < kDetectorCount; ++d) {
    const std::string_view name = DetectorName(d);
    header += fmt::format(",{0}_alarmed,{0}_episodes,{0}_alarm_at_end,{0}_alarm_before_leak,{0}_delay_s", name);
  }
  header +=
      ",vramwatch_end_verdict,vramwatch_rate_mib_per_hour,vramwatch_rate_lo_mib_per_hour,"
      "vramwatch_rate_hi_mib_per_hour,vramwatch_load_rise_mib_per_hour,vramwatch_load_rise_checks_before_leak,"
      "vramwatch_assessments,vramwatch_engine_cpu_ms,"
      "vramwatch_assess_cpu_ms,vramwatch_assess_max_cpu_ms,vramwatch_assessments_over_1ms\n";
  std::fputs(header.c_str(), f);
  constexpr double kMiBPerHour = 3600.0 / kMiB;
  for (const TraceResult& r : results) {
    const TraceLabel& l = r.label;
    std::string row = fmt::format(
        "{},{},{},{},{:.3f},{:.3f},{},{:.2f},{},{},{},{},{}", l.id, l.leak ? "leak" : "healthy", ShapeName(l.shape),
        std::llround(l.total_bytes / kMiB), l.interval_s, l.duration_s, r.samples, l.noise_mib,
        l.leak ? fmt::format("{:.3f}", l.leak_rate_bps * kMiBPerHour) : "", OptionalNumber(l.leak_start_s, 1, 3),
        l.leak_chunk_mib > 0 ? fmt::format("{:g}", l.leak_chunk_mib) : "", l.capped, LoadCsvFields(l));
    for (const DetectorOutcome& o : r.outcome) {
      row += fmt::format(",{},{},{},{},{}", o.alarmed_any ? 1 : 0, o.episodes, o.alarm_at_end ? 1 : 0,
                         o.alarm_before_leak ? 1 : 0, OptionalNumber(o.delay_s, 1, 1));
    }
    row += fmt::format(",{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{}\n", r.end_verdict,
                       OptionalNumber(r.rate_bps, kMiBPerHour, 3), OptionalNumber(r.rate_lo_bps, kMiBPerHour, 3),
                       OptionalNumber(r.rate_hi_bps, kMiBPerHour, 3), OptionalNumber(r.load_rise_bps, kMiBPerHour, 3),
                       r.load_rise_checks_before_leak, r.assessments, r.engine_cpu_seconds * 1000.0,
                       r.assess_cpu_seconds * 1000.0, r.assess_max_cpu_seconds * 1000.0, r.assessments_over_goal);
    std::fputs(row.c_str(), f);
  }
  const bool write_failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || write_failed) return Status::IoError("write " + path + " failed");
  return Status::Ok();
}

}  // namespace vw::evaluate
