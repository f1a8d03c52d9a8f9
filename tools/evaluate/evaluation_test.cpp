#include "evaluation.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/units.h"
#include "report.h"
#include "trace_generator.h"

namespace vw::evaluate {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

RunOptions SmallRun(int traces) {
  RunOptions run;
  run.traces = traces;
  run.threads = 2;
  run.generator.seed = 7;
  run.generator.max_hours = 3;
  run.generator.min_interval_s = 2;
  return run;
}

Trace FlatTrace(double hours, double interval_s) {
  Trace t;
  t.label.interval_s = interval_s;
  t.label.total_bytes = 40960 * kMiB;
  const auto n = static_cast<size_t>(hours * 3600 / interval_s) + 1;
  t.label.duration_s = static_cast<double>(n - 1) * interval_s;
  t.used_mib.assign(n, 20000);
  return t;
}

TEST(Evaluation, AssessesAtEveryStepAndAtTheEnd) {
  const Trace healthy = FlatTrace(3, 5);  // 10800 s
  EvalOptions options;
  // Every 10 minutes from 600 s to 10200 s (17) and at the last sample.
  EXPECT_EQ(EvaluateTrace(healthy, options).assessments, 18u);

  Trace leak = FlatTrace(3, 5);
  leak.label.leak = true;
  leak.label.leak_start_s = 1750;
  leak.label.leak_rate_bps = 100 * kMiB / 3600;
  // Every 5 minutes (35), the end, and start + 30 m / 1 h / 2 h, which fall between steps.
  EXPECT_EQ(EvaluateTrace(leak, options).assessments, 39u);
}

TEST(Evaluation, FlatTraceIsNeverALeakForVramwatchOrTheTrendRules) {
  const TraceResult r = EvaluateTrace(FlatTrace(4, 2), EvalOptions{});
  EXPECT_NE(r.end_verdict, "leak");
  for (size_t d = 0; d < kDetectorCount; ++d) {
    EXPECT_FALSE(r.outcome[d].alarmed_any) << DetectorName(d);
    EXPECT_EQ(r.outcome[d].episodes, 0) << DetectorName(d);
  }
}

TEST(Evaluation, StaircaseWhoseGrowthRunsBelowTheRateFloorIsNotFlagged) {
  // Seed 43, trace 219 of `vw-evaluate`: an allocator staircase still stepping seven hours in. Its
  // last three hours passed every window test at Sen's slope 38 MiB/h, but the growth fitted from
  // where it began ran at 35 MiB/h, below the floor a leak must reach; it used to be flagged from
  // 7h 10m to 7h 30m.
  const Trace t = TraceGenerator({.seed = 43}).Generate(219);
  ASSERT_EQ(t.label.shape, Shape::kWarmupStaircase);
  std::string at_7h20m;  // the evidence at the check that used to alarm
  const TraceResult r = EvaluateTrace(t, EvalOptions{}, [&](double at, const detection::Assessment& a) {
    if (std::abs(at - (7 * 3600 + 20 * 60)) < 1)
      for (const std::string& e : a.evidence) at_7h20m += e + "\n";
  });
  EXPECT_FALSE(r.outcome[0].alarmed_any) << DetectorName(0);
  EXPECT_NE(r.end_verdict, "leak");
  EXPECT_NE(at_7h20m.find("runs at only 35 MiB/h"), std::string::npos) << at_7h20m;
  EXPECT_NE(at_7h20m.find("below the 38 MiB/h a leak verdict needs"), std::string::npos) << at_7h20m;
}

TEST(Evaluation, StaticRuleFlagsEveryPreallocatedPool) {
  auto results = RunEvaluation(SmallRun(24));
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  int pools = 0;
  for (const TraceResult& r : *results) {
    if (r.label.shape != Shape::kPreallocated) continue;
    ++pools;
    EXPECT_TRUE(r.outcome[kFirstBaseline].alarmed_any) << "trace " << r.label.id;
  }
  EXPECT_EQ(pools, 2);
}

// The 48 traces of SmallRun(48) under the default options, evaluated once for the tests that
// compare vramwatch's own columns on them.
const std::vector<TraceResult>& SmallCorpus() {
  static const std::vector<TraceResult> results = [] {
    auto r = RunEvaluation(SmallRun(48));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<TraceResult>{};
  }();
  return results;
}

// Two detectors' outcomes on one trace are the same in every respect the report reads.
void ExpectSameOutcome(const DetectorOutcome& a, const DetectorOutcome& b, int id) {
  EXPECT_EQ(a.alarmed_any, b.alarmed_any) << id;
  EXPECT_EQ(a.episodes, b.episodes) << id;
  EXPECT_EQ(a.alarm_at_end, b.alarm_at_end) << id;
  EXPECT_EQ(a.alarm_before_leak, b.alarm_before_leak) << id;
  EXPECT_EQ(a.delay_s, b.delay_s) << id;
}

// vramwatch_alert is vramwatch's verdicts through the daemon's alert tracker: it fires only where
// the leak verdict held at every check for alert_for_s, so never before vramwatch, never more
// often, and at least alert_for_s after a first leak verdict that came after the leak began. With
// a for: of zero it is vramwatch itself.
TEST(Evaluation, TheLeakAlertFiresOnceTheVerdictHeldForItsFor) {
  const std::vector<TraceResult>& results = SmallCorpus();
  ASSERT_EQ(results.size(), 48u);
  RunOptions run = SmallRun(48);
  int delayed = 0;
  for (const TraceResult& r : results) {
    const DetectorOutcome& vw = r.outcome[0];
    const DetectorOutcome& alert = r.outcome[kAlertDetector];
    EXPECT_LE(alert.episodes, vw.episodes) << r.label.id;
    EXPECT_TRUE(!alert.alarmed_any || vw.alarmed_any) << r.label.id;
    EXPECT_TRUE(!alert.alarm_at_end || vw.alarm_at_end) << r.label.id;
    if (alert.delay_s && !vw.alarm_before_leak) {
      ASSERT_TRUE(vw.delay_s) << r.label.id;
      EXPECT_GE(*alert.delay_s, *vw.delay_s + run.eval.alert_for_s) << r.label.id;
      ++delayed;
    }
  }
  EXPECT_GT(delayed, 3);
  run.eval.alert_for_s = 0;
  auto at_once = RunEvaluation(run);
  ASSERT_TRUE(at_once.ok());
  for (const TraceResult& r : *at_once) ExpectSameOutcome(r.outcome[kAlertDetector], r.outcome[0], r.label.id);
}

// vramwatch_critical is the leak alert while its check's pessimistic runway is under
// critical_runway_s, as watch grades it: never where the alert is silent, and with a runway limit
// beyond every runway it is the alert itself; with none (0) it never fires.
TEST(Evaluation, TheCriticalAlertIsTheLeakAlertWhileTheRunwayIsShort) {
  const std::vector<TraceResult>& results = SmallCorpus();
  ASSERT_EQ(results.size(), 48u);
  RunOptions run = SmallRun(48);
  int quieter = 0;
  for (const TraceResult& r : results) {
    const DetectorOutcome& alert = r.outcome[kAlertDetector];
    const DetectorOutcome& critical = r.outcome[kCriticalDetector];
    EXPECT_TRUE(!critical.alarmed_any || alert.alarmed_any) << r.label.id;
    EXPECT_TRUE(!critical.alarm_at_end || alert.alarm_at_end) << r.label.id;
    if (critical.delay_s) {
      ASSERT_TRUE(alert.delay_s) << r.label.id;
      EXPECT_GE(*critical.delay_s, *alert.delay_s) << r.label.id;
    }
    if (alert.alarm_at_end && !critical.alarm_at_end) ++quieter;
  }
  EXPECT_GT(quieter, 0);  // some leaks of this corpus have a day or more left at their end
  run.eval.critical_runway_s = 1e12;
  auto always = RunEvaluation(run);
  ASSERT_TRUE(always.ok());
  for (const TraceResult& r : *always)
    ExpectSameOutcome(r.outcome[kCriticalDetector], r.outcome[kAlertDetector], r.label.id);
  run.eval.critical_runway_s = 0;
  auto never = RunEvaluation(run);
  ASSERT_TRUE(never.ok());
  for (const TraceResult& r : *never) EXPECT_FALSE(r.outcome[kCriticalDetector].alarmed_any) << r.label.id;
}

// Seed 25's trace 363 (docs/detection.md, Known limits): a healthy allocator staircase that rose
// at about 40 MiB/h for five hours on a 94 GiB card, called a leak for long enough that its leak
// alert fires, with 38 days or more left: a warning, never the critical alert.
TEST(Evaluation, AStaircaseCalledASlowLeakRaisesAWarningNotACriticalAlert) {
  const Trace t = TraceGenerator({.seed = 25}).Generate(363);
  ASSERT_EQ(t.label.shape, Shape::kWarmupStaircase);
  EvalOptions every5;
  every5.healthy_step_s = 300;
  const TraceResult r = EvaluateTrace(t, every5);
  EXPECT_TRUE(r.outcome[kAlertDetector].alarmed_any);
  EXPECT_FALSE(r.outcome[kCriticalDetector].alarmed_any);
}

// Seed 872's trace 786 (docs/detection.md, Known limits): a healthy serving load whose cycle-free
// floor rose 527 MiB over four hours and came back, a leak at one 5-minute check (5h 55m) and, at
// 1-minute checks, at two. Its leak alert, which needs ten minutes of leak verdicts, never fires.
TEST(Evaluation, AServingLoadsLeakVerdictAtOneCheckRaisesNoAlert) {
  const Trace t = TraceGenerator({.seed = 872}).Generate(786);
  ASSERT_EQ(t.label.shape, Shape::kServing);
  for (double step : {300.0, 60.0}) {
    EvalOptions o;
    o.healthy_step_s = step;
    const TraceResult r = EvaluateTrace(t, o);
    EXPECT_TRUE(r.outcome[0].alarmed_any) << step;
    EXPECT_FALSE(r.outcome[kAlertDetector].alarmed_any) << step;
  }
}

TEST(Evaluation, ShapesPickTheirTracesAndKeepTheirIds) {
  RunOptions run = SmallRun(24);
  run.shapes = {Shape::kLeakUnderServing, Shape::kServing};
  auto results = RunEvaluation(run);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<int> ids;
  for (const TraceResult& r : *results) {
    ids.push_back(r.label.id);
    EXPECT_EQ(r.label.shape, AllShapes()[static_cast<size_t>(r.label.id) % AllShapes().size()]);
  }
  EXPECT_EQ(ids, (std::vector<int>{6, 11, 18, 23}));
  // The same traces as in the whole corpus.
  auto all = RunEvaluation(SmallRun(24));
  ASSERT_TRUE(all.ok());
  for (const TraceResult& r : *results)
    EXPECT_EQ(r.outcome[0].delay_s, (*all)[static_cast<size_t>(r.label.id)].outcome[0].delay_s) << r.label.id;
  ReportInfo info;
  info.shapes = {"serving", "leak_under_serving"};
  EXPECT_NE(FormatReport(*results, run.eval, info).find("only the traces of these shapes: serving, leak_under_serving"),
            std::string::npos);
}

TEST(Evaluation, ResultsDoNotDependOnTheThreadCount) {
  RunOptions one = SmallRun(12);
  one.threads = 1;
  RunOptions two = SmallRun(12);
  auto a = RunEvaluation(one);
  auto b = RunEvaluation(two);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 12u);
  ASSERT_EQ(b->size(), 12u);
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].label.id, static_cast<int>(i));
    EXPECT_EQ((*a)[i].end_verdict, (*b)[i].end_verdict) << i;
    EXPECT_EQ((*a)[i].rate_bps, (*b)[i].rate_bps) << i;
    for (size_t d = 0; d < kDetectorCount; ++d) {
      EXPECT_EQ((*a)[i].outcome[d].delay_s, (*b)[i].outcome[d].delay_s) << i << " " << DetectorName(d);
      EXPECT_EQ((*a)[i].outcome[d].episodes, (*b)[i].outcome[d].episodes) << i << " " << DetectorName(d);
    }
  }
}

TEST(Evaluation, SmallEndToEndRunReportsEveryColumnAndRow) {
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("vw_evaluation_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const std::string dir = tmp.string();
  RunOptions run = SmallRun(40);
  run.write_csv_dir = dir;
  auto results = RunEvaluation(run);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 40u);
  for (const TraceResult& r : *results) {
    for (const DetectorOutcome& o : r.outcome) {
      if (!r.label.leak) {
        EXPECT_FALSE(o.delay_s.has_value());
        EXPECT_FALSE(o.alarm_before_leak);
      } else if (o.delay_s) {
        EXPECT_GE(*o.delay_s, 0);
        EXPECT_LE(*o.delay_s, r.label.duration_s - *r.label.leak_start_s + 1e-6);
      }
      EXPECT_EQ(o.alarmed_any, o.episodes > 0);
    }
    // The slowest assessment is one of them: no more than their sum, no less than their mean.
    ASSERT_GT(r.assessments, 0u);
    EXPECT_LE(r.assess_max_cpu_seconds, r.assess_cpu_seconds);
    EXPECT_GE(r.assess_max_cpu_seconds * static_cast<double>(r.assessments), r.assess_cpu_seconds * (1 - 1e-12));
    EXPECT_LE(r.assessments_over_goal, r.assessments);
    EXPECT_EQ(r.assessments_over_goal > 0, r.assess_max_cpu_seconds > kAssessGoalSeconds);
  }

  const std::string report = FormatReport(*results, run.eval, {.seed = 7, .threads = 2, .wall_seconds = 1});
  EXPECT_TRUE(std::regex_search(
      report, std::regex(R"(Assess \d+ us per call \(\d+ calls; the slowest \d+ us, \d+ over 1 ms\))")))
      << report;
  for (size_t d = 0; d < kDetectorCount; ++d) EXPECT_NE(report.find(DetectorName(d)), std::string::npos);
  for (const char* row : {"Recall at the end of the trace",
                          "Recall within 30m of the leak start",
                          "Recall within 1h of the leak start",
                          "Recall within 2h of the leak start",
                          "<40 MiB/h",
                          "40-100 MiB/h",
                          "100-500 MiB/h",
                          "500-2000 MiB/h",
                          ">=2000 MiB/h",
                          "all rates",
                          ">=40 MiB/h, ran >=2h: at end",
                          ">=500 MiB/h: within 1h",
                          "  not under a serving load",
                          "delay p50",
                          "delay p90",
                          "alarm episodes per 1000 GPU-hours",
                          "healthy traces flagged",
                          "leak traces alarmed before the leak began",
                          "rate error median",
                          "rate error p90",
                          "CI holds the true rate",
                          "warned >=30m before full",
                          "lead time p50 (those warned)"}) {
    EXPECT_NE(report.find(row), std::string::npos) << "missing row: " << row << "\n" << report;
  }
  for (Shape s : AllShapes()) EXPECT_NE(report.find(ShapeName(s)), std::string::npos) << ShapeName(s);
  // The first goal's leaks not under a serving load, counted here.
  size_t not_serving = 0;
  for (const TraceResult& r : *results) {
    const double rate_mib_h = r.label.leak_rate_bps * 3600 / kMiB;
    const double ran_s = r.label.leak ? r.label.duration_s - *r.label.leak_start_s : 0;
    not_serving += r.label.leak && rate_mib_h >= 40 && ran_s >= 7200 && r.label.shape != Shape::kLeakUnderServing;
  }
  EXPECT_NE(report.find(fmt::format("  not under a serving load   n={} ", not_serving)), std::string::npos) << report;

  // The written traces and labels, and the per-trace results file.
  const auto labels = ReadLines(dir + "/labels.csv");
  ASSERT_EQ(labels.size(), 41u);
  EXPECT_EQ(labels[1].rfind("trace_00000.csv,0,healthy,plateau,", 0), 0u) << labels[1];
  const auto first = ReadLines(dir + "/trace_00000.csv");
  ASSERT_EQ(first.size(), (*results)[0].samples + 1);
  EXPECT_EQ(first[0], "timestamp, index, memory.used [MiB], memory.total [MiB]");
  ASSERT_TRUE(WriteResultsCsv(*results, dir + "/results.csv").ok());
  const auto rows = ReadLines(dir + "/results.csv");
  ASSERT_EQ(rows.size(), 41u);
  for (size_t d = 0; d < kDetectorCount; ++d) {
    EXPECT_NE(rows[0].find(std::string(DetectorName(d)) + "_delay_s"), std::string::npos);
  }
  EXPECT_TRUE(rows[0].ends_with(",vramwatch_assess_cpu_ms,vramwatch_assess_max_cpu_ms,vramwatch_assessments_over_1ms"))
      << rows[0];
  const auto trailing = [](const std::string& row) {  // the last comma-separated field
    return row.substr(row.rfind(',') + 1);
  };
  EXPECT_EQ(trailing(rows[1]), std::to_string((*results)[0].assessments_over_goal));
  std::filesystem::remove_all(tmp);
}

// The rows of ExplainTrace's text that show one assessment ("  2h 30m  settling  rate ...").
std::vector<std::string> AssessmentRows(const std::string& text) {
  static const std::regex row(R"(^ +[0-9dhms ]+ {2}[a-z_]+ +rate \S+ \[\S+ \.\. \S+\] MiB/h.*)");
  std::vector<std::string> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, row)) rows.push_back(line);
  return rows;
}

TEST(Evaluation, ExplainListsEveryAssessmentAndEveryDetector) {
  const Trace t = TraceGenerator({.seed = 7, .max_hours = 2, .min_interval_s = 2}).Generate(7);
  ASSERT_TRUE(t.label.leak);
  const std::string text = ExplainTrace(t, EvalOptions{});
  const TraceResult r = EvaluateTrace(t, EvalOptions{});
  EXPECT_EQ(AssessmentRows(text).size(), r.assessments) << text;
  EXPECT_NE(text.find("true leak: "), std::string::npos) << text;
  // Why, at the first assessment (too little data) and at each change of verdict.
  EXPECT_NE(text.find("insufficient_data rate - [- .. -] MiB/h\n             | The samples span only "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("warmup            rate - [- .. -] MiB/h\n             | The floor settled at "),
            std::string::npos)
      << text;
  for (size_t d = 0; d < kDetectorCount; ++d) EXPECT_NE(text.find(DetectorName(d)), std::string::npos);
}

TEST(Evaluation, ExplainShowsARiseWorthWatchingWithTheHeadroomLeft) {
  // Seed 11, trace 107 of `vw-evaluate`: 1368 MiB/h for 2.2 hours under a 17-minute cycle on a
  // 32 GiB card, too early for the young-job rules: the assessments carry the note instead.
  const Trace t = TraceGenerator({.seed = 11}).Generate(107);
  ASSERT_EQ(t.label.shape, Shape::kLeakUnderServing);
  EvalOptions every_five_minutes;
  every_five_minutes.healthy_step_s = 300;  // as the README's run
  const std::string text = ExplainTrace(t, every_five_minutes);
  size_t noted = 0;
  for (const std::string& row : AssessmentRows(text)) {
    const size_t at = row.find(" (watch ");
    if (at == std::string::npos) continue;
    ++noted;
    // The rate worth watching, then the headroom above the recent peak, within the card.
    const std::regex tail(R"( \(watch ([0-9.]+) MiB/h, headroom (-?[0-9]+) MiB\))");
    std::smatch m;
    const std::string rest = row.substr(at);
    ASSERT_TRUE(std::regex_match(rest, m, tail)) << row;
    EXPECT_GT(std::stod(m[1].str()), 38) << row;
    EXPECT_LT(std::stod(m[2].str()), t.label.total_bytes / (1024.0 * 1024.0)) << row;
  }
  EXPECT_GT(noted, 0u) << text;
  EXPECT_NE(text.find("Worth watching: "), std::string::npos) << text;
}

// Healthy traces assessed every 5 minutes (the evaluation's finer grid).
EvalOptions EveryFiveMinutes() {
  EvalOptions o;
  o.healthy_step_s = 300;
  return o;
}

// A trace of the corpus, by seed and id.
struct CorpusCase {
  uint64_t seed;
  int id;
};

// The shape of a healthy trace that a knob now keeps from being flagged: for each case, the trace
// has `shape`, raises no alarm under `kept` and raises one under `moved` (the same options with
// that knob moved back, or off).
void ExpectFlaggedOnlyWithTheKnobMoved(std::initializer_list<CorpusCase> cases, Shape shape, const EvalOptions& kept,
                                       const EvalOptions& moved) {
  for (const CorpusCase& c : cases) {
    SCOPED_TRACE(fmt::format("seed {} trace {}", c.seed, c.id));
    const Trace t = TraceGenerator({.seed = c.seed}).Generate(c.id);
    ASSERT_EQ(t.label.shape, shape);
    EXPECT_FALSE(EvaluateTrace(t, kept).outcome[0].alarmed_any);
    EXPECT_TRUE(EvaluateTrace(t, moved).outcome[0].alarmed_any);
  }
}

// Evaluates `t`, keeping its last assessment and that assessment's evidence, a sentence a line.
struct LastCheck {
  TraceResult result;
  detection::Assessment last;
  std::string evidence;
};
LastCheck EvaluateKeepingTheLast(const Trace& t, const EvalOptions& o) {
  LastCheck c;
  c.result = EvaluateTrace(t, o, [&](double, const detection::Assessment& a) { c.last = a; });
  for (const std::string& e : c.last.evidence) c.evidence += e + "\n";
  return c;
}

// A leak under a serving load whose last check fell on a rise the keeps-going tests could not yet
// tell from a spike (seed 22, trace 443 of the corpus): held by its lows, which rose since the data
// that found it; without the hold the last check is not a leak. Its verdicts alternate between leak
// and settling every 5 minutes at the end, so with swing_persist_seconds the data the hold reads
// (30 minutes back) is no leak 10 minutes before that either, and the end is not a leak: the hold
// is shown without that rule. With the window from where the growth began on the cycle-free floor
// (the default) the end is a leak on that floor, so that window is off here.
TEST(Evaluation, ALeakUnderAServingLoadIsHeldAtTheEndByItsLows) {
  const Trace t = TraceGenerator({.seed = 22}).Generate(443);
  ASSERT_EQ(t.label.shape, Shape::kLeakUnderServing);
  EvalOptions no_onset;
  no_onset.engine.onset_alpha = 0;
  EvalOptions at_once = no_onset;
  at_once.engine.swing_persist_seconds = 0;
  const LastCheck held = EvaluateKeepingTheLast(t, at_once);
  ASSERT_EQ(held.last.verdict, detection::Verdict::kLeak);
  EXPECT_NE(held.evidence.find("but since then its lowest floor ("), std::string::npos) << held.evidence;
  EvalOptions no_hold = at_once;
  no_hold.engine.hold_seconds = 0;
  EXPECT_FALSE(EvaluateTrace(t, no_hold).outcome[0].alarm_at_end);
  EXPECT_FALSE(EvaluateTrace(t, no_onset).outcome[0].alarm_at_end);
  const LastCheck found = EvaluateKeepingTheLast(t, EvalOptions{});
  ASSERT_EQ(found.last.verdict, detection::Verdict::kLeak) << found.evidence;
  EXPECT_NE(found.evidence.find("means of the cycle-free floor"), std::string::npos) << found.evidence;
}

// A healthy serving load whose floor wanders for hours (seed 11, trace 78 of the corpus), assessed
// every 5 minutes: at 10⁻² its floor's 6-hour window passed at 6h 35m (p = 0.006); the floor of a
// swinging load is tested at oscillating_floor_alpha. (The confirmation on the cycle-free floor at
// one-sided 1 % ends it as well; at the 5 % it had then, it did not.)
TEST(Evaluation, AServingLoadsWanderingFloorIsNotALeak) {
  const Trace t = TraceGenerator({.seed = 11}).Generate(78);
  ASSERT_EQ(t.label.shape, Shape::kServing);
  const EvalOptions every5 = EveryFiveMinutes();
  EXPECT_FALSE(EvaluateTrace(t, every5).outcome[0].alarmed_any);
  EvalOptions lax = every5;
  lax.engine.oscillating_confirm_z = 1.645;
  lax.engine.swing_persist_seconds = 0;  // which also ends it
  EXPECT_FALSE(EvaluateTrace(t, lax).outcome[0].alarmed_any);
  lax.engine.oscillating_floor_alpha = lax.engine.alpha;
  EXPECT_TRUE(EvaluateTrace(t, lax).outcome[0].alarmed_any);
}

// A healthy serving load (seed 113, trace 234) whose 1-minute floor rose 2.2 GiB over 6 hours
// (Mann–Kendall z = 4.6 at 6h 25m) while its 12.6-minute cycle, removed, shows no trend (z = 1.5):
// the floor's leak is not confirmed, and the evidence says why.
TEST(Evaluation, ASwingingLoadsFloorLeakNeedsItsCycleFreeFloorToRise) {
  const Trace t = TraceGenerator({.seed = 113}).Generate(234);
  ASSERT_EQ(t.label.shape, Shape::kServing);
  const EvalOptions every5 = EveryFiveMinutes();
  bool explained = false;
  const TraceResult r = EvaluateTrace(t, every5, [&](double, const detection::Assessment& a) {
    for (const std::string& e : a.evidence)
      explained = explained || e.find("the cycle as a whole stayed put") != std::string::npos;
  });
  EXPECT_FALSE(r.outcome[0].alarmed_any);
  EXPECT_TRUE(explained);
  EvalOptions unchecked = every5;
  unchecked.engine.oscillating_confirm_z = 0;
  EXPECT_TRUE(EvaluateTrace(t, unchecked).outcome[0].alarmed_any);
}

// A healthy serving load of a fresh seed (seed 100, trace 990: a 6 GiB cycle every 13 minutes on a
// 32 GiB card) whose 1-minute floor rose 264 MiB over 10h 24m (Mann–Kendall z = 3.6) with its
// cycle-free floor rising at z = 2.9 and 2.6 at two checks 10 minutes apart: confirmed at one-sided
// 1 % it was a leak at 10h 45m; at 0.1 %, the floor's own level, it is not. There the reading
// figures of its thirds (the floor's levels at the thirds' ends) fell in the last third while the
// medians the test read rose in each: the sentence that says it kept rising names the latter.
TEST(Evaluation, ASwingingLoadsFloorLeakIsConfirmedAtItsOwnLevel) {
  const Trace t = TraceGenerator({.seed = 100}).Generate(990);
  ASSERT_EQ(t.label.shape, Shape::kServing);
  const EvalOptions every5 = EveryFiveMinutes();
  EXPECT_FALSE(EvaluateTrace(t, every5).outcome[0].alarmed_any);
  EvalOptions one_percent = every5;
  one_percent.engine.oscillating_confirm_z = 2.326;
  std::vector<std::string> thirds;
  const TraceResult r = EvaluateTrace(t, one_percent, [&](double, const detection::Assessment& a) {
    for (const std::string& e : a.evidence)
      if (e.find("kept rising in every third") != std::string::npos) thirds.push_back(e);
  });
  EXPECT_TRUE(r.outcome[0].alarmed_any);
  ASSERT_FALSE(thirds.empty());
  for (const std::string& e : thirds) {
    const std::string figures = e.substr(e.find(": ") + 2);
    EXPECT_EQ(figures.find('-'), std::string::npos) << e;
    EXPECT_EQ(std::count(figures.begin(), figures.end(), '+'), 3) << e;
  }
}

// Three healthy serving loads of fresh seeds whose cycle-free block means rose for hours at about the
// test's level (seed 526 trace 222 and seed 556 trace 774 over about ten hours at z 4.4–4.7, seed
// 592 trace 1110 by 5 GiB over three hours at z 4.5): batch levels that ran high for a while. Their
// cycle-free lows (the lowest of each 30 minutes) did not rise with the means, and a leak's do: with
// the lows asked to rise too none is flagged, and each says why; without it each is.
TEST(Evaluation, ASwingingLoadsCycleFreeRiseMustLiftItsLowsToo) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions means_only = every5;
  means_only.engine.oscillating_lows_z = 0;
  means_only.engine.oscillating_pre_rise_share = 0;  // which alone ends 592's, not the other two
  for (const auto& [seed, id] : {std::pair{526, 222}, {556, 774}, {592, 1110}}) {
    const Trace t = TraceGenerator({.seed = static_cast<uint64_t>(seed)}).Generate(id);
    ASSERT_EQ(t.label.shape, Shape::kServing) << seed << "/" << id;
    bool said = false;
    const TraceResult r = EvaluateTrace(t, every5, [&](double, const detection::Assessment& a) {
      for (const std::string& e : a.evidence)
        if (e.find("but its lowest over each 30m 0s did not") != std::string::npos) said = true;
    });
    EXPECT_FALSE(r.outcome[0].alarmed_any) << seed << "/" << id;
    EXPECT_TRUE(said) << seed << "/" << id;
    EXPECT_TRUE(EvaluateTrace(t, means_only).outcome[0].alarmed_any) << seed << "/" << id;
  }
}

// A healthy serving load of a fresh seed (684/114: a 41-minute cycle of 6.5 GiB) whose batch levels
// wandered down for five hours and came back: its cycle-free block means rose 3.2 GiB over the last
// 5h 47m at z 4.4 with the lows rising too, and ended only about half of that above where they stood
// over the hours before. A leak only adds: with the window's end asked to stand above that earlier
// level by 60 % of its rise the load is not flagged and says why; without it it is.
TEST(Evaluation, ASwingingLoadsCycleFreeRiseMustStandAboveTheLevelBeforeIt) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions no_before = every5;
  no_before.engine.oscillating_pre_rise_share = 0;
  const Trace t = TraceGenerator({.seed = 684}).Generate(114);
  ASSERT_EQ(t.label.shape, Shape::kServing);
  bool said = false;
  const TraceResult r = EvaluateTrace(t, every5, [&](double, const detection::Assessment& a) {
    for (const std::string& e : a.evidence)
      if (e.find("a load's level coming back from a dip") != std::string::npos) said = true;
  });
  EXPECT_FALSE(r.outcome[0].alarmed_any);
  EXPECT_TRUE(said);
  EXPECT_TRUE(EvaluateTrace(t, no_before).outcome[0].alarmed_any);
}

// Two healthy serving loads of fresh seeds whose swings lifted the floor for hours: seed 151's trace
// 630 (a 12-minute cycle of 17 GiB on a 94 GiB card) passed on its 1-minute floor over 7h 37m and
// its cycle-free floor rose at z = 2.1; seed 154's trace 30 passed on its 15-minute lower envelope
// over 8 hours, which was not checked against its cycle at all (z = 1.8 there). Confirmed at z 1.645
// (one-sided 5 %), both were called leaks; at 2.326 (1 %), on the envelope too, neither was, nor
// is either at the 0.1 % of the default.
TEST(Evaluation, ASwingingLoadsGrowthIsConfirmedOnItsFloorAndItsEnvelope) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions five_percent = every5;
  five_percent.engine.oscillating_confirm_z = 1.645;
  five_percent.engine.swing_persist_seconds = 0;  // which ends both as well
  ExpectFlaggedOnlyWithTheKnobMoved({{151, 630}, {154, 30}}, Shape::kServing, every5, five_percent);
}

// Healthy serving loads from seeds never used to set a level (163/954, 168/66, 176/222): each
// passed one of the swinging-load tests at a single 5-minute check (the 1-minute floor with its
// cycle-free floor rising at z 2.8 and 2.6, the cycle-free block means over 4 hours at z 4.9), and
// not on the data up to that check's predecessor. A leak on a swinging floor must hold for
// swing_persist_seconds. (The confirmation on the cycle-free floor was at one-sided 1 % then; at
// 0.1 % it ends the first two as well.)
TEST(Evaluation, ASwingingLoadsLeakMustHoldOnTheDataBeforeTheLastCheck) {
  EvalOptions every5 = EveryFiveMinutes();
  every5.engine.oscillating_confirm_z = 2.326;
  EvalOptions at_once = every5;
  at_once.engine.swing_persist_seconds = 0;
  ExpectFlaggedOnlyWithTheKnobMoved({{163, 954}, {168, 66}, {176, 222}}, Shape::kServing, every5, at_once);
}

// Four allocator staircases from seeds first run after the levels were set, each called a leak
// at some 5-minute check: seed 232 trace 27 (+1.9 GiB over 3h 24m in steps of 200–480 MiB, the
// largest a quarter of it), seed 252 trace 651 (+80 MiB over an hour in 20 MiB steps after the
// floor held flat for an hour), seed 274 trace 15 (+82 MiB over an hour at 2h 45m) and seed 293
// trace 567 (+162 MiB over 3 hours at 6h 20m). Their three largest steps carry most of the rise.
TEST(Evaluation, AStaircaseOfAFewLargeStepsIsNotALeak) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions any_steps = every5;
  any_steps.engine.top_jumps = 0;
  for (const auto& [seed, id] : {std::pair<uint64_t, size_t>{232, 27}, {252, 651}, {274, 15}, {293, 567}}) {
    const Trace t = TraceGenerator({.seed = seed}).Generate(id);
    ASSERT_EQ(t.label.shape, Shape::kWarmupStaircase) << seed << "/" << id;
    std::string at_3h40m;  // seed 232 trace 27's first leak check, and its evidence now
    const TraceResult r = EvaluateTrace(t, every5, [&](double at, const detection::Assessment& a) {
      if (std::abs(at - (3 * 3600 + 40 * 60)) < 1)
        for (const std::string& e : a.evidence) at_3h40m += e + "\n";
    });
    EXPECT_FALSE(r.outcome[0].alarmed_any) << seed << "/" << id;
    // Seed 252's floor held flat for less than the hour the flat-stretch rule now asks: it is also
    // held back as a young job's own growth, so it shows the few-steps test only under the 45
    // minutes that rule asked when the test was set.
    EvalOptions any_steps_then = any_steps;
    if (seed == 252) any_steps_then.engine.late_onset_flat_seconds = 2700;
    EXPECT_TRUE(EvaluateTrace(t, any_steps_then).outcome[0].alarmed_any) << seed << "/" << id;
    if (seed == 232) {
      EXPECT_NE(at_3h40m.find("but its 3 largest steps (1.3 GiB together) carry 68% of its rise of +1.9 GiB: an "
                              "allocator's large blocks lift a floor in a few steps, a leak in many"),
                std::string::npos)
          << at_3h40m;
    }
  }
}

// A 91 MiB/h leak in 64 MiB chunks (seed 101, trace 800: one chunk every 42 minutes from 33
// minutes in, 3h 26m long) was missed: four steps in three hours, three of them three quarters of
// the rise, and slower than 100 MiB/h before five settled hours. Equal and evenly spaced, they are
// one buffer per period, and it is a leak at the end. Two allocator staircases (seed 61 trace 1107,
// seed 82 trace 183) lifted their floors in three large blocks that were within 15 % of each other
// and 1.5 times of each other's gaps by chance: at 5 % (plus the noise) and 1.25 neither is regular.
// Seed 82's blocks (463, 448 and 402 MiB) are equal within what its wandering levels explain, but
// three blocks that spread by 10 % of their height are not enough (regular_chance).
TEST(Evaluation, EqualStepsAtARegularPaceAreALeakAndChanceLikenessIsNot) {
  const Trace leak = TraceGenerator({.seed = 101}).Generate(800);
  ASSERT_EQ(leak.label.shape, Shape::kLeakStaircase);
  const LastCheck found = EvaluateKeepingTheLast(leak, EvalOptions{});
  EXPECT_TRUE(found.result.outcome[0].alarm_at_end) << found.evidence;
  EXPECT_NE(found.evidence.find("equal steps of about 64 MiB, one every 42m"), std::string::npos) << found.evidence;
  EvalOptions unasked;
  unasked.engine.regular_min_step_bytes = 0;
  EXPECT_FALSE(EvaluateTrace(leak, unasked).outcome[0].alarmed_any);

  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions loose = every5;
  loose.engine.regular_size_tolerance = 0.15;
  loose.engine.regular_gap_ratio = 1.5;
  loose.engine.regular_chance = 0;
  ExpectFlaggedOnlyWithTheKnobMoved({{61, 1107}, {82, 183}}, Shape::kWarmupStaircase, every5, loose);
  EvalOptions any_spread = every5;
  any_spread.engine.regular_chance = 0;
  EXPECT_TRUE(EvaluateTrace(TraceGenerator({.seed = 82}).Generate(183), any_spread).outcome[0].alarmed_any);
}

// A 2.6 GiB/h leak that began 3h 24m into a serving job on a 32 GiB card (seed 11, trace 839), a
// 5 GiB cycle every 50 minutes: after two hours no window passed (the 3-hour one starts on the flat
// stretch, the cycle-free block means are too few for 10⁻⁵), and no recent low stood clear of the
// ramp's own earlier lows, but the last two stand 6 deviations above every low before the ramp.
TEST(Evaluation, ALeakThatRampedUnderAServingLoadIsFound) {
  const Trace t = TraceGenerator({.seed = 11}).Generate(839);
  ASSERT_EQ(t.label.shape, Shape::kLeakUnderServing);
  const LastCheck found = EvaluateKeepingTheLast(t, EvalOptions{});
  EXPECT_TRUE(found.result.outcome[0].alarm_at_end) << found.evidence;
  EXPECT_NE(found.evidence.find("has been rising to a level it never reached before"), std::string::npos)
      << found.evidence;
  EvalOptions no_ramp;  // nor the test of steady growth past the swings, which finds it as well
  no_ramp.engine.ramp_max_blocks = 0;
  no_ramp.engine.fill_runway_seconds = 0;
  no_ramp.engine.fill_swings_multiple = 0;
  EXPECT_FALSE(EvaluateTrace(t, no_ramp).outcome[0].alarmed_any);
}

// A settling curve in a young job (seed 41, trace 305) whose halves kept pace (the second at 0.85
// of the first) but whose last third slowed: assessed every 5 minutes it was called a leak at
// 1h 25m; the young-job rule on the thirds ends it.
TEST(Evaluation, AYoungSettlingCurveWhoseLastThirdSlowsIsNotALeak) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions halves_only = every5;
  halves_only.engine.young_third_ratio = 0;
  ExpectFlaggedOnlyWithTheKnobMoved({{41, 305}}, Shape::kSettling, every5, halves_only);
}

// A 193 MiB/h leak that began after the floor held flat for an hour, in a job 2h 30m long (seed
// 11, trace 763): under the young-job rule's rate for its windows, but growth after a flat stretch
// is no settling curve.
TEST(Evaluation, ALeakAfterAFlatHourInAShortJobIsFound) {
  const Trace t = TraceGenerator({.seed = 11}).Generate(763);
  ASSERT_EQ(t.label.shape, Shape::kLeakLinear);
  const LastCheck found = EvaluateKeepingTheLast(t, EvalOptions{});
  EXPECT_TRUE(found.result.outcome[0].alarm_at_end) << found.evidence;
  EXPECT_NE(found.evidence.find("the floor held flat for "), std::string::npos) << found.evidence;
  EvalOptions no_rule;
  no_rule.engine.late_onset_flat_seconds = 0;
  EXPECT_FALSE(EvaluateTrace(t, no_rule).outcome[0].alarm_at_end);
}

// Three allocator staircases of fresh seeds (814 trace 51, 826 trace 159, 868 trace 423) held
// flat for 50–56 minutes after they settled, then stepped up at 100–130 MiB/h for an hour: called
// leaks at one or two checks by the flat-stretch rule when it asked 45 minutes of flat floor, and
// held back as a young job's own growth now that it asks an hour.
TEST(Evaluation, AYoungStaircaseThatHeldFlatUnderAnHourIsHeldBack) {
  const EvalOptions every5 = EveryFiveMinutes();
  EvalOptions three_quarters = every5;
  three_quarters.engine.late_onset_flat_seconds = 2700;
  ExpectFlaggedOnlyWithTheKnobMoved({{814, 51}, {826, 159}, {868, 423}}, Shape::kWarmupStaircase, every5,
                                    three_quarters);
}

// Fast leaks that began 45–60 minutes after the floor settled (seed 811 trace 547, 763 MiB/h;
// seed 812 trace 307, 942 MiB/h): growth at late_onset_fast_bps or more needs only 45 minutes of
// flat floor before it, and both are found within 30 minutes of their start. Asked the hour that
// slower growth needs, the young-job rule holds them back for another 10–15 minutes.
TEST(Evaluation, AFastLeakAfterThreeQuartersOfAnHourFlatIsFoundWithinHalfAnHour) {
  EvalOptions hour;
  hour.engine.late_onset_fast_flat_seconds = 3600;
  for (const auto& [seed, id] : {std::pair<uint64_t, size_t>{811, 547}, {812, 307}}) {
    const Trace t = TraceGenerator({.seed = seed}).Generate(id);
    ASSERT_EQ(t.label.shape, Shape::kLeakLinear) << seed << "/" << id;
    const auto found = EvaluateTrace(t, EvalOptions{}).outcome[0].delay_s;
    ASSERT_TRUE(found.has_value()) << seed << "/" << id;
    EXPECT_LE(*found, 1800) << seed << "/" << id;
    const auto waited = EvaluateTrace(t, hour).outcome[0].delay_s;
    ASSERT_TRUE(waited.has_value()) << seed << "/" << id;
    EXPECT_GT(*waited, 1800) << seed << "/" << id;
  }
}

TEST(Report, WilsonIntervalMatchesTheClosedForm) {
  // 8 of 10 gives [0.490, 0.943]; 0 of 50 gives [0, 0.071].
  const auto [lo, hi] = WilsonInterval(8, 10);
  EXPECT_NEAR(lo, 0.4902, 1e-4);
  EXPECT_NEAR(hi, 0.9433, 1e-4);
  const auto [zlo, zhi] = WilsonInterval(0, 50);
  EXPECT_EQ(zlo, 0);
  EXPECT_NEAR(zhi, 0.0714, 1e-4);
}

// Leaks whose trace ends where the card fills: a lead of 3 h and one of 15 minutes for vramwatch,
// none for the baselines; a leak that does not fill the card is left out.
TEST(Report, LeaksThatFillTheCardReportHowLongBeforeTheyWereWarned) {
  auto leak = [](double duration_s, std::string capped, std::optional<double> vw_delay_s) {
    TraceResult r;
    r.label.leak = true;
    r.label.shape = Shape::kLeakLinear;
    r.label.leak_rate_bps = 1000 * kMiB / 3600;
    r.label.leak_start_s = 0;
    r.label.duration_s = duration_s;
    r.label.capped = std::move(capped);
    r.outcome[0].delay_s = vw_delay_s;
    r.outcome[0].alarmed_any = vw_delay_s.has_value();
    return r;
  };
  const std::vector<TraceResult> results = {leak(4 * 3600, "trace", 3600), leak(2 * 3600, "trace", 6300),
                                            leak(5 * 3600, "", 60)};
  const std::string report = FormatReport(results, EvalOptions{}, {.seed = 1, .threads = 1, .wall_seconds = 1});
  const auto line = [&](const std::string& label) {
    const size_t at = report.find(label);
    EXPECT_NE(at, std::string::npos) << label << "\n" << report;
    return at == std::string::npos ? std::string() : report.substr(at, report.find('\n', at) - at);
  };
  for (const char* label : {"warned >=30m before full", "warned >=2h before full"}) {
    const std::string row = line(label);
    EXPECT_NE(row.find("n=2 "), std::string::npos) << row;
    EXPECT_NE(row.find(" 50.0% "), std::string::npos) << row;  // 3 h of lead, not 15 minutes
    EXPECT_NE(row.find(" 0.0% "), std::string::npos) << row;   // the baselines never fired
  }
  // Median of 3 h and 15 minutes; the baselines warned none.
  const std::string lead = line("lead time p50 (those warned)");
  EXPECT_NE(lead.find(FormatDuration((3 * 3600 + 900) / 2.0)), std::string::npos) << lead;
  EXPECT_NE(lead.find(" - "), std::string::npos) << lead;
  // No leak under a serving load: no rows split by its swings.
  EXPECT_EQ(report.find("batch swings"), std::string::npos) << report;
}

// Leaks under a serving load, placed by what they add in an hour against the range of the load's
// batch swings: only the serving shape, each goal's own leaks, each in its one band.
TEST(Report, ServingLeaksAreSplitByTheirHourlyRiseAgainstTheBatchSwings) {
  auto leak = [](Shape shape, double rate_mib_h, double swing_mib, double ran_s, std::optional<double> vw_delay_s) {
    TraceResult r;
    r.label.leak = true;
    r.label.shape = shape;
    r.label.leak_rate_bps = rate_mib_h * kMiB / 3600;
    r.label.leak_start_s = 0;
    r.label.duration_s = ran_s;
    r.label.load_swing_mib = shape == Shape::kLeakUnderServing ? swing_mib : 0;
    r.outcome[0].delay_s = vw_delay_s;
    r.outcome[0].alarmed_any = vw_delay_s.has_value();
    r.outcome[0].alarm_at_end = vw_delay_s.has_value();
    return r;
  };
  const std::vector<TraceResult> results = {
      leak(Shape::kLeakUnderServing, 100, 1000, 3 * 3600, std::nullopt),  // 0.1 of the swings: missed
      leak(Shape::kLeakUnderServing, 60, 1000, 3 * 3600, 7000),           // 0.06: found late
      leak(Shape::kLeakUnderServing, 2000, 1000, 3 * 3600, 1800),         // 2: found within the hour
      leak(Shape::kLeakUnderServing, 800, 1000, 3 * 3600, 5400),          // 0.8: at the end, not in 1h
      leak(Shape::kLeakUnderServing, 30, 100, 3 * 3600, 600),             // under the goal's 40 MiB/h
      leak(Shape::kLeakLinear, 100, 0, 3 * 3600, 600)};                   // not under a serving load
  const std::string report = FormatReport(results, EvalOptions{}, {.seed = 1, .threads = 1, .wall_seconds = 1});
  const size_t section = report.find("Leaks under a serving load against its batch swings' range");
  ASSERT_NE(section, std::string::npos) << report;
  const size_t within = report.find("... and within 1h", section);
  ASSERT_NE(within, std::string::npos) << report;
  const auto row = [&](size_t from, const std::string& label) {
    const size_t at = report.find("  " + label + " ", from);
    EXPECT_NE(at, std::string::npos) << label << "\n" << report;
    return at == std::string::npos ? std::string() : report.substr(at, report.find('\n', at) - at);
  };
  // At the end: the 0.06 and 0.1 leaks in the lowest band (one found), 0.8 and 2 in theirs.
  EXPECT_NE(row(section, "rise/h < 0.125 x swings").find("n=2 "), std::string::npos);
  EXPECT_NE(row(section, "rise/h < 0.125 x swings").find(" 50.0% "), std::string::npos);
  EXPECT_NE(row(section, "rise/h 0.5-1 x swings").find(" 100.0% "), std::string::npos);
  EXPECT_NE(row(section, "rise/h >= 1 x swings").find("n=1 "), std::string::npos);
  EXPECT_NE(row(section, "rise/h 0.125-0.25 x swings").find("n=0 "), std::string::npos);
  // Within the hour (>= 500 MiB/h only): the 2000 MiB/h leak found in 30 minutes, the 800 not.
  EXPECT_NE(row(within, "rise/h >= 1 x swings").find(" 100.0% "), std::string::npos);
  EXPECT_NE(row(within, "rise/h 0.5-1 x swings").find(" 0.0% "), std::string::npos);
  EXPECT_NE(row(within, "rise/h < 0.125 x swings").find("n=0 "), std::string::npos);
}

TEST(Report, QuantileInterpolatesBetweenRanks) {
  EXPECT_EQ(Quantile({}, 0.5), std::nullopt);
  EXPECT_DOUBLE_EQ(*Quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(*Quantile({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
  EXPECT_DOUBLE_EQ(*Quantile({5}, 0.9), 5);
}

}  // namespace
}  // namespace vw::evaluate
