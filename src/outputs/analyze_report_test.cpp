#include "outputs/analyze_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vw::outputs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A leak of 1 GiB/h seen for 2 h, 10 GiB of headroom left.
AnalyzedSeries Leak(bool has_zone, bool synthetic) {
  AnalyzedSeries s;
  s.source = "run.csv";
  detection::SeriesAnalysis& a = s.analysis;
  a.gpu.key = "0";
  a.has_zone = has_zone;
  a.synthetic_time = synthetic;
  a.total_bytes = 80ull << 30;
  detection::Assessment& as = a.assessment;
  as.verdict = detection::Verdict::kLeak;
  as.samples = 720;
  as.start_t = synthetic ? 0 : 1764189000;  // 2025-11-26 20:30:00 UTC
  as.end_t = as.start_t + 7200;
  as.last_used_bytes = 70.0 * (1 << 30);
  as.rate_bps = (1 << 30) / 3600.0;
  as.leak_start_t = as.start_t + 600;
  as.tto_s = 36000;
  return s;
}

TEST(AnalyzeText, TimesOfAZonedTraceAreMarkedUtcAndWallClockOnesAreNot) {
  AnalyzeReportOptions o;
  const std::string utc = RenderAnalyzeText({Leak(true, false)}, o);
  EXPECT_THAT(utc, HasSubstr("span       2025-11-26 20:30 UTC → 2025-11-26 22:30 UTC"));
  EXPECT_THAT(utc, HasSubstr("(at 2025-11-27 08:30 UTC)"));
  const std::string wall = RenderAnalyzeText({Leak(false, false)}, o);
  EXPECT_THAT(wall, HasSubstr("span       2025-11-26 20:30 → 2025-11-26 22:30 ("));
  EXPECT_THAT(wall, Not(HasSubstr("UTC")));
}

// A newline in a GPU name, a command, a UUID or the source cannot add a line to the report: each
// value's control characters are written out.
TEST(AnalyzeText, ControlCharactersInValuesFromTheFileAreWrittenOut) {
  AnalyzedSeries s = Leak(true, false);
  s.analysis.gpu.name = "NVIDIA H100\n\nStatus: OK (exit 0)";
  s.analysis.gpu.uuid = "GPU-1\x1b[31m";
  s.source = "run\rx.csv";
  AnalyzedSeries p = s;
  p.analysis.pid = 7;
  p.analysis.process_command = "train.py\nGPU 1 (NVIDIA H100) — plateau  [ok]";
  const std::string text = RenderAnalyzeText({s, p}, {});
  EXPECT_THAT(text, Not(HasSubstr("\nStatus: OK")));
  EXPECT_THAT(text, Not(HasSubstr("\nGPU 1 (NVIDIA H100)")));
  EXPECT_THAT(text, Not(HasSubstr("\x1b")));
  EXPECT_THAT(text, Not(HasSubstr("\r")));
  EXPECT_THAT(text, HasSubstr("GPU 0 (NVIDIA H100\\n\\nStatus: OK (exit 0))"));
  EXPECT_THAT(text, HasSubstr("train.py\\nGPU 1"));
  EXPECT_THAT(text, HasSubstr("uuid       GPU-1\\x1b[31m"));
  EXPECT_THAT(text, HasSubstr("source     run\\rx.csv"));
}

TEST(AnalyzeJson, OomAtOnASyntheticClockIsSecondsLikeLeakStart) {
  nlohmann::json doc = RenderAnalyzeJson({Leak(false, true)}, {});
  const nlohmann::json& g = doc["gpus"][0];
  EXPECT_EQ(g["leak_start"], "600.000");
  EXPECT_EQ(g["oom_at"], "43200.000");  // end (7200 s) + 10 h
  EXPECT_EQ(g["clock"], "synthetic");
}

TEST(AnalyzeJson, ByteFiguresAreSignedWholeBytes) {
  // A floor judged net of a departed holder can sit a little under zero: it must read as such,
  // not wrap around to 18 exabytes.
  AnalyzedSeries s = Leak(true, false);
  s.analysis.assessment.floor_bytes = -3.0 * 1048576;
  s.analysis.assessment.peak_bytes = 1.5 * 1048576 * 1024;
  const nlohmann::json doc = RenderAnalyzeJson({s}, {});
  EXPECT_EQ(doc["gpus"][0]["floor_bytes"].get<int64_t>(), -3 * 1048576);
  EXPECT_EQ(doc["gpus"][0]["peak_bytes"].get<int64_t>(), 1610612736);
}

// The leak's next step splits PyTorch's view from the driver's: growth below the framework shows as
// the driver's figure climbing while *reserved* stays flat. Allocated flat alone says nothing about
// it: with allocated flat, reserved (and so the driver's figure) also climbs when the pool fragments.
TEST(AnalyzeReport, FrameworkSplitBlamesMemoryBelowTheFrameworkOnlyWhenReservedIsFlat) {
  const std::string step = RenderAnalyzeJson({Leak(true, false)}, {})["gpus"][0]["next_steps"][1].get<std::string>();
  EXPECT_THAT(step, HasSubstr("torch.cuda.memory_allocated()"));
  EXPECT_THAT(step, HasSubstr("Reserved flat while driver used climbs: memory taken outside PyTorch's allocator"));
  EXPECT_THAT(step, HasSubstr("Allocated flat while reserved rises (reserved − allocated growing): fragmentation"));
  EXPECT_THAT(step, Not(HasSubstr("Allocated flat while driver used climbs")));
}

// A swinging load whose cycle-free floor rose without a leak verdict: the next step says to watch
// it, not that no action is needed or that an allocator is warming up; the JSON carries the rate,
// and null without it.
TEST(AnalyzeReport, ARiseWorthWatchingChangesTheNextStepAndIsInTheJson) {
  AnalyzedSeries s = Leak(true, false);
  detection::Assessment& as = s.analysis.assessment;
  as.rate_bps.reset();
  as.leak_start_t.reset();
  as.tto_s.reset();
  for (detection::Verdict v : {detection::Verdict::kSettling, detection::Verdict::kPlateau}) {
    as.verdict = v;
    as.load_rise_bps.reset();
    EXPECT_TRUE(RenderAnalyzeJson({s}, {})["gpus"][0]["load_rise_bytes_per_second"].is_null());
    EXPECT_THAT(RenderAnalyzeText({s}, {}), Not(HasSubstr("Watch this GPU")));

    as.load_rise_bps = 300 * 1048576.0 / 3600;
    const nlohmann::json doc = RenderAnalyzeJson({s}, {});
    EXPECT_DOUBLE_EQ(doc["gpus"][0]["load_rise_bytes_per_second"].get<double>(), *as.load_rise_bps);
    ASSERT_EQ(doc["gpus"][0]["next_steps"].size(), 1u);
    EXPECT_THAT(doc["gpus"][0]["next_steps"][0].get<std::string>(),
                HasSubstr("Watch this GPU: with the load's cycle removed its memory rose at 300 MiB/h"));
    const std::string text = RenderAnalyzeText({s}, {});
    EXPECT_THAT(text, HasSubstr("Watch this GPU"));
    EXPECT_THAT(text, Not(HasSubstr("No action")));
    EXPECT_THAT(text, Not(HasSubstr("allocator warming up")));
    EXPECT_THAT(text, HasSubstr("[ok]"));  // a note, not an alert: the exit code stays 0
  }
  // A per-process series is watched as a process.
  s.analysis.pid = 4242;
  const std::string step = RenderAnalyzeJson({s}, {})["gpus"][0]["next_steps"][0].get<std::string>();
  EXPECT_THAT(step, HasSubstr("Watch this process: with the load's cycle removed its memory rose at 300 MiB/h"));
  EXPECT_THAT(step, Not(HasSubstr("which process holds")));
}

// Growth held back by the history rules: the next step says when to look again (on the series'
// clock), the JSON carries that time; a settling verdict without it keeps the general advice.
TEST(AnalyzeReport, GrowthHeldBackByTheHistoryRulesSaysWhenToLookAgain) {
  AnalyzedSeries s = Leak(true, false);
  detection::Assessment& as = s.analysis.assessment;
  as.verdict = detection::Verdict::kSettling;
  as.rate_bps.reset();
  as.leak_start_t.reset();
  as.tto_s.reset();
  EXPECT_TRUE(RenderAnalyzeJson({s}, {})["gpus"][0]["held_until"].is_null());
  EXPECT_THAT(RenderAnalyzeText({s}, {}),
              HasSubstr("Wait and look again: the floor rose, but not the way a leak does"));

  as.held_until_t = as.start_t + 5 * 3600;  // 2025-11-26 20:30 UTC + 5 h
  const nlohmann::json doc = RenderAnalyzeJson({s}, {});
  EXPECT_EQ(doc["gpus"][0]["held_until"], "2025-11-27T01:30:00Z");
  const std::string text = RenderAnalyzeText({s}, {});
  EXPECT_THAT(text, HasSubstr("Look again after 2025-11-27 01:30 UTC: the floor grows steadily"));
  EXPECT_THAT(text, Not(HasSubstr("Wait and look again")));
}

// A settling verdict asks for a longer recording: an hour or more after a short one, but longer
// than the recording itself after one of hours (the demo's 5h 59m healthy run).
TEST(AnalyzeReport, SettlingAsksForARecordingLongerThanTheOneAnalysed) {
  AnalyzedSeries s = Leak(true, false);
  detection::Assessment& as = s.analysis.assessment;
  as.verdict = detection::Verdict::kSettling;
  as.rate_bps.reset();
  as.leak_start_t.reset();
  as.tto_s.reset();
  as.end_t = as.start_t + 5 * 3600 + 59 * 60;
  const std::string hours = RenderAnalyzeJson({s}, {})["gpus"][0]["next_steps"][0].get<std::string>();
  EXPECT_THAT(hours, Not(HasSubstr("an hour or more")));
  EXPECT_THAT(hours, HasSubstr("on a recording longer than this one's 5h 59m"));
  as.end_t = as.start_t + 40 * 60;
  const std::string minutes = RenderAnalyzeJson({s}, {})["gpus"][0]["next_steps"][0].get<std::string>();
  EXPECT_THAT(minutes, HasSubstr("on a longer recording (an hour or more)"));
}

TEST(AnalyzeReport, SamplesOutOfOrderAreCountedInTextAndJson) {
  AnalyzedSeries s = Leak(true, false);
  nlohmann::json none = RenderAnalyzeJson({s}, {});
  EXPECT_EQ(none["gpus"][0]["samples_out_of_order"], 0);
  EXPECT_TRUE(none["gpus"][0]["first_out_of_order"].is_null());
  EXPECT_THAT(RenderAnalyzeText({s}, {}), Not(HasSubstr("out of time order")));

  s.analysis.out_of_order = 42;
  s.analysis.first_out_of_order_t = 1764189000 + 60;
  s.analysis.first_out_of_order_after_t = 1764189000 + 3600;
  nlohmann::json doc = RenderAnalyzeJson({s}, {});
  EXPECT_EQ(doc["gpus"][0]["samples_out_of_order"], 42);
  EXPECT_EQ(doc["gpus"][0]["first_out_of_order"], "2025-11-26T20:31:00Z");
  EXPECT_THAT(RenderAnalyzeText({s}, {}),
              HasSubstr("  order      42 sample(s) out of time order were ignored (the first, at 2025-11-26 20:31:00 "
                        "UTC, came after 2025-11-26 21:30:00 UTC)\n"));
}

}  // namespace
}  // namespace vw::outputs
