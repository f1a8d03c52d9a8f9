// WatchPipeline: what it publishes of the samples it takes (the state /metrics and
// /api/v1/status render, the NVML error counters).
#include "cli/watch_pipeline.h"

#include <gtest/gtest.h>

#include <fstream>

#include "cli/watch_pipeline_testing.h"
#include "outputs/daemon_status_json.h"
#include "outputs/prometheus_text.h"

namespace vw::cli {
namespace {

using namespace vw::cli::testing;

// Every figure of an assessment that /metrics, /api/v1/status, the page and the alerts read is
// carried into the published state; a missing one stays missing.
TEST(WatchPipelineState, AnAssessmentIsPublishedWithEveryFigure) {
  detection::Assessment a;
  a.verdict = detection::Verdict::kSettling;
  a.floor_bytes = 1.0e9;
  a.peak_bytes = 2.0e9;
  a.load_rise_bps = 349525.0;
  a.held_until_t = 1790000000.0;
  a.evidence = {"one", "two"};
  outputs::SeriesVerdict v = SeriesVerdictOf(a);
  EXPECT_EQ(v.verdict, "settling");
  EXPECT_EQ(v.floor_bytes, 1.0e9);
  EXPECT_EQ(v.peak_bytes, 2.0e9);
  EXPECT_EQ(v.load_rise_bps, 349525.0);
  EXPECT_EQ(v.held_until_t, 1790000000.0);
  EXPECT_EQ(v.evidence, a.evidence);
  EXPECT_FALSE(v.leak_rate_bps || v.leak_rate_lo_bps || v.leak_rate_hi_bps || v.time_to_oom_s || v.leak_start_t);

  a = detection::Assessment{};
  a.verdict = detection::Verdict::kLeak;
  a.rate_bps = 300.0;
  a.rate_lo_bps = 200.0;
  a.rate_hi_bps = 400.0;
  a.tto_s = 10.0;
  a.tto_lo_s = 5.0;
  a.tto_hi_s = 20.0;
  a.leak_start_t = 7.0;
  a.summary = "Leak: ...";
  v = SeriesVerdictOf(a);
  EXPECT_EQ(v.verdict, "leak");
  EXPECT_EQ(v.leak_rate_bps, 300.0);
  EXPECT_EQ(v.leak_rate_lo_bps, 200.0);
  EXPECT_EQ(v.leak_rate_hi_bps, 400.0);
  EXPECT_EQ(v.time_to_oom_s, 10.0);
  EXPECT_EQ(v.time_to_oom_lo_s, 5.0);
  EXPECT_EQ(v.time_to_oom_hi_s, 20.0);
  EXPECT_EQ(v.leak_start_t, 7.0);
  EXPECT_EQ(v.summary, "Leak: ...");
  EXPECT_FALSE(v.load_rise_bps || v.held_until_t);
}

// Unattributed memory is the used memory less the listed processes' of one process refresh: a
// process growing between refreshes is not memory nobody owns.
TEST(WatchPipelineState, UnattributedMemoryIsReadWithItsProcessList) {
  WatchPipeline p(WatchConfig{}, nullptr, {});
  const double t0 = 1'790'000'000;
  GpuSnapshot fresh = Gpu(0, t0, 1100);
  fresh.processes = {Proc(4242, 1000, "python train.py")};
  HostSnapshot first;
  first.t = t0;
  first.gpus = {fresh};
  p.Ingest(first, true, false);
  EXPECT_EQ(p.BuildState(t0)->gpus[0].unattributed_bytes, static_cast<uint64_t>(100 * kMiB));
  HostSnapshot later;
  later.t = t0 + 1;
  later.gpus = {Gpu(0, t0 + 1, 1600)};  // grew 500 MiB; no new list
  p.Ingest(later, false, false);
  auto state = p.BuildState(t0 + 1);
  EXPECT_EQ(state->gpus[0].unattributed_bytes, static_cast<uint64_t>(100 * kMiB));
  EXPECT_EQ(outputs::StatusJson(*state)["gpus"][0]["memory_unattributed_bytes"], 100 * kMiB);
}

// The status's fd scan is the last process tick's: a tick without a fresh process list (no scan)
// keeps it, so /api/v1/status does not flip to null between process ticks.
TEST(WatchPipelineState, StatusKeepsTheLastProcessTicksFdScan) {
  WatchPipeline p(WatchConfig{}, nullptr, {});
  const double t0 = 1'790'000'000;
  HostSnapshot fresh = Host(t0, {Gpu(0, t0, 1100)});
  fresh.holder_scan.pids_scanned = 300;
  fresh.holder_scan.dirs_unreadable = 3;
  fresh.holder_scan.unreadable_pids = {812, 1001, 1002};
  p.Ingest(fresh, true, false);
  p.Ingest(Host(t0 + 1, {Gpu(0, t0 + 1, 1100)}), false, false);
  auto status = outputs::StatusJson(*p.BuildState(t0 + 1));
  EXPECT_EQ(status["host"]["fd_scan"]["processes_scanned"], 300) << status["host"].dump();
  EXPECT_EQ(status["host"]["fd_scan"]["unreadable"], 3);
  EXPECT_EQ(status["host"]["fd_scan"]["unreadable_pids"], nlohmann::ordered_json::array({812, 1001, 1002}));
}

// The status carries check's notes over the findings window (here: memory NVML does not report,
// so orphaned memory is not judged) and that window's span, as `check --json` does.
TEST(WatchPipelineState, StatusHasChecksNotesAndItsWindow) {
  WatchConfig c;
  c.check.grace_s = 10;
  WatchPipeline p(c, nullptr, {});
  const double t0 = 1'790'000'000;
  for (int i = 0; i <= 20; ++i) {
    GpuSnapshot g = Gpu(0, t0 + i, 3000);
    ProcessSnapshot unknown = Proc(50000, 0, "python serve.py");
    unknown.used_bytes.reset();  // NVML: N/A
    g.processes = {unknown};
    p.Ingest(Host(t0 + i, {g}), true, true);
  }
  auto status = outputs::StatusJson(*p.BuildState(t0 + 20));
  bool noted = false;
  for (const auto& n : status["notes"]) {
    noted = noted || n.get<std::string>().find("orphaned memory not judged") != std::string::npos;
  }
  EXPECT_TRUE(noted) << status["notes"].dump();
  EXPECT_GE(status["window_seconds"].get<double>(), 10.0);
  EXPECT_LE(status["window_seconds"].get<double>(), 11.0);
  EXPECT_EQ(status["samples"], 21) << "the samples since the daemon started";
}

// The closing lines of a replay list the GPUs in index order: GPU 2 before GPU 10.
TEST(WatchPipelineState, VerdictLinesAreInIndexOrder) {
  WatchPipeline p(WatchConfig{}, nullptr, {});
  const double t0 = 1'790'000'000;
  p.Ingest(Host(t0, {Gpu(10, t0, 1000), Gpu(2, t0, 1000)}), true, false);
  std::vector<std::string> lines = p.GpuVerdictLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("GPU 2:", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("GPU 10:", 0), 0u) << lines[1];
}

// A workload's baseline is learned from a plateau a trend test found (30 minutes of settled data
// at least), not from settled data too short for one.
TEST(WatchPipelineState, ABaselineIsLearnedOnlyFromATestedPlateau) {
  WatchConfig c;
  c.baseline_interval_s = 60;
  WatchPipeline p(c, nullptr, {});
  const double t0 = 1'790'000'000;
  auto at = [&](int minute) {
    const double t = t0 + 60.0 * minute;
    GpuSnapshot g = Gpu(0, t, 20000 + (minute % 2) * 8);
    g.processes = {Proc(4242, 19500, "python3 serve.py")};
    p.Ingest(Host(t, {g}), true, false);
    return p.BuildState(t)->gpus.at(0).analysis;
  };
  for (int m = 0; m < 25; ++m) {
    const outputs::SeriesVerdict v = at(m);
    EXPECT_FALSE(v.baseline_bytes.has_value()) << "minute " << m << ": " << v.verdict;
  }
  std::optional<double> learned;
  for (int m = 25; m < 90 && !learned; ++m) learned = at(m).baseline_bytes;
  ASSERT_TRUE(learned.has_value()) << "a tested plateau is learned";
  EXPECT_NEAR(*learned / kMiB, 20000, 16);
}

TEST(WatchPipelineMetrics, NvmlErrorsAreCountedByFunctionAndFixedCodeAndAStaleGpuKeepsThem) {
  WatchPipeline p(FastAlerts(), nullptr, {});
  const double t0 = 1'790'000'000;
  p.Ingest(Host(t0, {Gpu(0, t0, 1000)}), true, true);
  for (int i = 1; i <= 3; ++i) {
    GpuSnapshot hung = Gpu(0, t0 + i, 0);
    hung.memory_used_bytes.reset();
    hung.responsive = false;
    const bool first = i == 1;
    const std::string msg = first ? "nvmlDeviceGetMemoryInfo_v2: no answer within the 500 ms deadline"
                                  : "nvmlDeviceGetMemoryInfo_v2: not called, the previous call "
                                    "nvmlDeviceGetMemoryInfo_v2 is still blocked after 1.0 s";
    hung.errors = {msg};
    hung.nvml_errors = {{"nvmlDeviceGetMemoryInfo_v2", 0, msg, first ? "timeout" : "blocked"}};
    p.Ingest(Host(t0 + i, {hung}), true, true);
  }
  auto state = p.BuildState(t0 + 3);
  using Key = std::pair<std::string, std::string>;
  EXPECT_EQ(state->nvml_errors.size(), 2u);
  EXPECT_EQ(state->nvml_errors.at(Key("nvmlDeviceGetMemoryInfo_v2", "timeout")), 1u);
  EXPECT_EQ(state->nvml_errors.at(Key("nvmlDeviceGetMemoryInfo_v2", "blocked")), 2u);
  ASSERT_EQ(state->gpus[0].snapshot.nvml_errors.size(), 1u);
  EXPECT_EQ(state->gpus[0].snapshot.nvml_errors[0].function, "nvmlDeviceGetMemoryInfo_v2");
}

// A GPU whose memory has never been read (its call fails from the start, or it is lost) is down in
// /metrics and stale in the status, as its GpuStale alert says; one that answered and then failed
// is too, with its sample age; the GPU that answers is up.
TEST(WatchPipelineState, AGpuWhoseMemoryWasNotReadInTheLatestSampleIsStaleAndDown) {
  WatchPipeline p(FastAlerts(), nullptr, {});
  const double t0 = 1'790'000'000;
  auto failing = [](unsigned index, double t) {
    GpuSnapshot g = Gpu(index, t, 0);
    g.memory_used_bytes.reset();
    g.memory_total_bytes.reset();
    g.nvml_errors = {
        {"nvmlDeviceGetMemoryInfo_v2", 999, "nvmlDeviceGetMemoryInfo_v2: Unknown Error", "NVML_ERROR_UNKNOWN"}};
    g.errors = {"nvmlDeviceGetMemoryInfo_v2: Unknown Error"};
    return g;
  };
  for (double t = t0; t <= t0 + 8; t += 1) {
    GpuSnapshot lost = Gpu(2, t, 0);
    lost.memory_used_bytes.reset();
    lost.lost = true;
    // GPU 3 answered once, then its memory call fails.
    p.Ingest(Host(t, {Gpu(0, t, 1000), failing(1, t), lost, t == t0 ? Gpu(3, t, 1000) : failing(3, t)}), true, true);
  }
  auto state = p.BuildState(t0 + 8);
  ASSERT_EQ(state->gpus.size(), 4u);
  EXPECT_FALSE(state->gpus[0].stale);
  EXPECT_TRUE(state->gpus[1].stale);
  EXPECT_TRUE(state->gpus[2].stale);
  EXPECT_TRUE(state->gpus[3].stale);
  const std::string metrics = outputs::RenderPrometheus(*state, t0 + 8);
  for (const char* gpu : {"0", "1", "2", "3"}) {
    const std::string key = std::string("vramwatch_gpu_up{gpu=\"") + gpu + "\"";
    const size_t at = metrics.find(key);
    ASSERT_NE(at, std::string::npos) << metrics;
    const std::string line = metrics.substr(at, metrics.find('\n', at) - at);
    EXPECT_EQ(line.back(), gpu == std::string("0") ? '1' : '0') << line;
  }
  EXPECT_EQ(metrics.find("vramwatch_gpu_sample_age_seconds{gpu=\"1\""), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("vramwatch_gpu_sample_age_seconds{gpu=\"2\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("vramwatch_gpu_sample_age_seconds{gpu=\"3\""), std::string::npos) << metrics;
}

// Retention that fails (the aggregates' pages are damaged) is shown in the status notes while it
// lasts, not only on stderr: the file grows past its retention meanwhile.
TEST(WatchPipelineState, AFailingRetentionIsAStatusNote) {
  TempDb db;
  const double end = 1790000000.0;
  FillHistory(db.path(), end);
  int64_t root = 0;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
    auto st = (*store)->db().Prepare("SELECT rootpage FROM sqlite_master WHERE name = 'minutes'");
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(*st->Step());
    root = st->ColumnInt(0);
  }
  {
    std::fstream f(db.path(), std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(4096, '\x5a');
    f.seekp((root - 1) * 4096);
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    ASSERT_TRUE(f.good());
  }
  storage::HistoryOptions o;
  o.raw_retention_s = 3600;
  auto store = storage::HistoryStore::Open(db.path(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  WatchPipeline p(WatchConfig{}, store->get(), {});
  p.Ingest(Host(end + 10, {Gpu(0, end + 10, 20000)}), false, false);
  auto state = p.BuildState(end + 10);
  bool noted = false;
  for (const std::string& n : state->notes) noted |= n.find("history retention fails") != std::string::npos;
  EXPECT_TRUE(noted) << "no note says that retention fails";
  auto old = (*store)->Raw("gpu:0", 0, end - 3600 - 1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->empty()) << "the raw samples' retention was held back by the aggregates'";
}

}  // namespace
}  // namespace vw::cli
