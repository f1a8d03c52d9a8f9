#include "cli/watch_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace vw::cli {
namespace {

constexpr double kMiB = 1048576.0;

GpuSnapshot Gpu(unsigned index, double t, double used_mib) {
  GpuSnapshot g;
  g.t = t;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.memory_total_bytes = static_cast<uint64_t>(81559 * kMiB);
  g.memory_reserved_bytes = static_cast<uint64_t>(479 * kMiB);
  g.memory_used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  return g;
}

class TempDb {
 public:
  TempDb() {
    char tmpl[] = "/tmp/vw-pipeline-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDb() { std::filesystem::remove_all(dir_); }
  std::string path() const { return dir_ + "/history.db"; }

 private:
  std::string dir_;
};

// Two hours of GPU 0 growing 1 GiB/h and GPU 1 flat, stored as a daemon would have stored them.
void FillHistory(const std::string& db, double end_t) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (double t = end_t - 7200; t <= end_t; t += 10) {
    (*store)->Append("gpu:0", t, static_cast<uint64_t>((20000 + 1024 * (t - end_t + 7200) / 3600) * kMiB));
    (*store)->Append("gpu:1", t, static_cast<uint64_t>(30000 * kMiB));
  }
  ASSERT_TRUE((*store)->Flush().ok());
}

std::string VerdictOf(const outputs::DaemonState& s, unsigned index) {
  for (const auto& g : s.gpus) {
    if (g.snapshot.index == index) return g.analysis.verdict;
  }
  return "absent";
}

TEST(WatchPipelineResume, EnginesResumedFromHistoryJudgeTheFirstLiveSample) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  EXPECT_EQ(p.Resume(now), 2u * 721u);
  HostSnapshot snap;
  snap.t = now;
  snap.gpus = {Gpu(0, now, 20000 + 2048), Gpu(1, now, 30000)};
  p.Ingest(snap, true, false);
  auto state = p.BuildState(now);
  EXPECT_EQ(VerdictOf(*state, 0), "leak");
  EXPECT_EQ(VerdictOf(*state, 1), "plateau");
  ASSERT_EQ(state->alerts.size(), 1u);
  EXPECT_EQ(state->alerts[0].name, "GpuMemoryLeak");
  EXPECT_EQ(state->alerts[0].gpu, "0");
  EXPECT_EQ(state->alerts[0].state, "pending");  // --for starts now, not in the stored past
}

TEST(WatchPipelineResume, OnlyTheResumeWindowIsRefed) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchConfig c;
  c.resume_s = 600;  // too little to judge: the engine starts (almost) blind
  WatchPipeline p(c, store->get(), {});
  EXPECT_EQ(p.Resume(now), 2u * 60u);
  HostSnapshot snap;
  snap.t = now;
  snap.gpus = {Gpu(0, now, 20000 + 2048), Gpu(1, now, 30000)};
  p.Ingest(snap, true, false);
  EXPECT_EQ(VerdictOf(*p.BuildState(now), 0), "insufficient_data");
}

// A serving process leaking 512 MiB/h for two hours, and one that was running when the daemon
// stopped and is gone now; both stored as a daemon would have stored them.
void FillProcessHistory(const std::string& db, double end_t) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (double t = end_t - 7200; t <= end_t; t += 10)
    (*store)->Append("gpu:0/pid:4242", t, static_cast<uint64_t>((8000 + 512 * (t - end_t + 7200) / 3600) * kMiB));
  storage::ProcessRecord serving{.gpu = "0",
                                 .pid = 4242,
                                 .first_seen_s = end_t - 7200,
                                 .last_seen_s = end_t,
                                 .peak_bytes = static_cast<uint64_t>(9024 * kMiB),
                                 .command = "python serve.py"};
  storage::ProcessRecord gone{.gpu = "0",
                              .pid = 999,
                              .first_seen_s = end_t - 3600,
                              .last_seen_s = end_t - 60,
                              .peak_bytes = static_cast<uint64_t>(100 * kMiB),
                              .command = "python probe.py"};
  (*store)->processes().Upsert(serving);
  (*store)->processes().Upsert(gone);
  ASSERT_TRUE((*store)->Flush().ok());
}

ProcessSnapshot Proc(int64_t pid, double used_mib, std::string command) {
  ProcessSnapshot p;
  p.pid = pid;
  p.compute = true;
  p.used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  p.info.alive = true;
  p.info.command = std::move(command);
  return p;
}

// A pipeline resumed from FillProcessHistory's database whose first live sample lists `listed`
// on GPU 0 (holding `gpu_used_mib` in all), flushed.
struct ResumedWithProcess {
  TempDb db;
  const double now = 1'790'000'000;
  std::unique_ptr<storage::HistoryStore> store;
  std::unique_ptr<WatchPipeline> pipeline;

  ResumedWithProcess(double gpu_used_mib, const ProcessSnapshot& listed) {
    FillProcessHistory(db.path(), now - 1);
    auto opened = storage::HistoryStore::Open(db.path());
    EXPECT_TRUE(opened.ok());
    if (!opened.ok()) return;
    store = std::move(*opened);
    pipeline = std::make_unique<WatchPipeline>(WatchConfig{}, store.get(), std::vector<outputs::AlertSink*>{});
    pipeline->Resume(now);
    HostSnapshot snap;
    snap.t = now;
    snap.gpus = {Gpu(0, now, gpu_used_mib)};
    snap.gpus[0].processes = {listed};
    pipeline->Ingest(snap, true, false);
    pipeline->Flush();
  }
  std::vector<storage::ProcessRecord> Records() {
    auto r = store->processes().Query(now - 86400, now + 1);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<storage::ProcessRecord>{};
  }
};

TEST(WatchPipelineResume, ARunningProcessKeepsItsRecordAndItsEngineAndAVanishedOneIsClosed) {
  ResumedWithProcess r(9100, Proc(4242, 9025, "python serve.py"));
  ASSERT_TRUE(r.pipeline);
  auto state = r.pipeline->BuildState(r.now);
  ASSERT_EQ(state->gpus.size(), 1u);
  const auto& procs = state->gpus[0].process_analysis;
  ASSERT_EQ(procs.count("4242"), 1u);
  EXPECT_EQ(procs.at("4242").verdict, "leak");  // judged on two stored hours, not from scratch
  ASSERT_TRUE(procs.at("4242").leak_rate_bps.has_value());
  EXPECT_NEAR(*procs.at("4242").leak_rate_bps * 3600 / kMiB, 512, 512 * 0.1);

  auto records = r.Records();
  ASSERT_EQ(records.size(), 2u);  // one record per process: the restart made no second one
  for (const auto& rec : records) {
    if (rec.pid == 4242) {
      EXPECT_EQ(rec.first_seen_s, r.now - 1 - 7200);
      EXPECT_EQ(rec.last_seen_s, r.now);
      EXPECT_EQ(rec.end, storage::ProcessEnd::kRunning);
    } else {
      EXPECT_EQ(rec.pid, 999);
      EXPECT_EQ(rec.last_seen_s, r.now - 1 - 60);  // its last sighting, not the restart
      EXPECT_EQ(rec.end, storage::ProcessEnd::kExited);
    }
  }
}

TEST(WatchPipelineResume, APidReusedByAnotherCommandStartsANewRecord) {
  ResumedWithProcess r(2000, Proc(4242, 1500, "python other.py"));
  ASSERT_TRUE(r.pipeline);
  EXPECT_EQ(r.pipeline->BuildState(r.now)->gpus[0].process_analysis.at("4242").verdict, "insufficient_data");
  auto records = r.Records();
  ASSERT_EQ(records.size(), 3u);
  int running = 0;
  for (const auto& rec : records) {
    if (rec.end != storage::ProcessEnd::kRunning) continue;
    ++running;
    EXPECT_EQ(rec.command, "python other.py");
    EXPECT_EQ(rec.first_seen_s, r.now);
  }
  EXPECT_EQ(running, 1);
}

TEST(WatchPipelineResume, WithoutHistoryNothingIsResumed) {
  WatchPipeline p(WatchConfig{}, nullptr, {});
  EXPECT_EQ(p.Resume(1'790'000'000), 0u);
}

// Records every alert event the pipeline sends.
struct RecordingSink : outputs::AlertSink {
  std::vector<detection::AlertEvent> events;
  void Send(const std::vector<detection::AlertEvent>& e) override { events.insert(events.end(), e.begin(), e.end()); }
  bool Fired(const std::string& name, const std::string& gpu) const {
    for (const auto& e : events) {
      auto g = e.alert.condition.labels.find("gpu");
      if (e.kind == detection::AlertEventKind::kFiring && e.alert.condition.name == name &&
          g != e.alert.condition.labels.end() && g->second == gpu) {
        return true;
      }
    }
    return false;
  }
};

WatchConfig FastAlerts() {
  WatchConfig c;
  c.alerts.default_for_s = 1;
  c.alerts.for_by_name["GpuStale"] = 0;
  c.stale_alert_s = 5;
  return c;
}

TEST(WatchPipelineAlerts, NvmlThatCannotBeLoadedRaisesTheNvmlErrorAlertAndItResolvesWhenNvmlAnswers) {
  RecordingSink sink;
  WatchPipeline p(FastAlerts(), nullptr, {&sink});
  const double t0 = 1'790'000'000;
  for (double t = t0; t <= t0 + 2; t += 0.5) p.IngestNvmlUnavailable(t, "node-7", "dlopen libnvidia-ml.so.1: gone");
  EXPECT_TRUE(sink.Fired("GpuNvmlError", "")) << sink.events.size();
  auto state = p.BuildState(t0 + 2);
  ASSERT_EQ(state->findings.size(), 1u);
  EXPECT_EQ(state->findings[0].kind, "nvml_error");
  EXPECT_EQ(state->findings[0].severity, Severity::kCritical);
  EXPECT_NE(state->findings[0].message.find("libnvidia-ml.so.1"), std::string::npos);
  ASSERT_EQ(state->alerts.size(), 1u);
  EXPECT_EQ(state->alerts[0].name, "GpuNvmlError");
  EXPECT_EQ(state->hostname, "node-7");
  // NVML answers again: the finding and the alert go.
  HostSnapshot snap;
  snap.t = t0 + 3;
  snap.gpus = {Gpu(0, snap.t, 0)};
  p.Ingest(snap, true, true);
  EXPECT_TRUE(p.BuildState(snap.t)->findings.empty());
  EXPECT_TRUE(p.BuildState(snap.t)->alerts.empty());
}

TEST(WatchPipelineAlerts, GpuThatNeverAnsweredRaisesTheNvmlErrorAndStaleAlertsWhileTheOtherGpuDoesNot) {
  RecordingSink sink;
  WatchPipeline p(FastAlerts(), nullptr, {&sink});
  const double t0 = 1'790'000'000;
  for (double t = t0; t <= t0 + 8; t += 0.5) {
    HostSnapshot snap;
    snap.t = t;
    GpuSnapshot hung = Gpu(1, t, 0);
    hung.memory_used_bytes.reset();
    hung.memory_total_bytes.reset();
    hung.responsive = false;
    hung.errors = {"nvmlDeviceGetMemoryInfo_v2: no answer within the 500 ms deadline"};
    snap.gpus = {Gpu(0, t, 1000), hung};
    p.Ingest(snap, true, true);
  }
  EXPECT_TRUE(sink.Fired("GpuNvmlError", "1"));
  EXPECT_TRUE(sink.Fired("GpuStale", "1"));
  EXPECT_FALSE(sink.Fired("GpuStale", "0"));
  EXPECT_FALSE(sink.Fired("GpuNvmlError", "0"));
  for (const auto& e : sink.events) {
    if (e.alert.condition.name != "GpuStale") continue;
    EXPECT_NE(e.alert.condition.annotations.at("summary").find("since it was first listed"), std::string::npos)
        << e.alert.condition.annotations.at("summary");
  }
}

TEST(WatchPipelineAlerts, GpusKnownOnlyFromHistoryAreNotStale) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchPipeline p(FastAlerts(), store->get(), {&sink});
  p.Resume(now);
  for (double t = now; t <= now + 8; t += 1) {
    HostSnapshot snap;
    snap.t = t;
    snap.gpus = {Gpu(0, t, 22000)};  // GPU 1 of the history is not on this host any more
    p.Ingest(snap, true, false);
  }
  EXPECT_FALSE(sink.Fired("GpuStale", "1"));
  EXPECT_FALSE(sink.Fired("GpuStale", "0"));
}

TEST(WatchPipelineAlerts, AProcessLeakHiddenInTheGpuTotalRaisesItsOwnAlert) {
  // PID 100 leaks 1.5 GiB/h while PID 200 gives back as much: the GPU's total stays flat (no
  // GpuMemoryLeak), but PID 100's own series says leak, and that alerts too.
  RecordingSink sink;
  WatchConfig config = FastAlerts();
  config.process_assess_interval_s = 60;
  WatchPipeline p(config, nullptr, {&sink});
  const double t0 = 1'790'000'000;
  const double rate_mib_h = 1536;
  for (double t = t0; t <= t0 + 4 * 3600; t += 10) {
    const double grown = rate_mib_h * (t - t0) / 3600;
    HostSnapshot snap;
    snap.t = t;
    snap.gpus = {Gpu(0, t, 500 + 10000 + 16000)};
    snap.gpus[0].processes = {Proc(100, 10000 + grown, "python train.py"), Proc(200, 16000 - grown, "python cache.py")};
    p.Ingest(snap, true, false);
  }
  const double end = t0 + 4 * 3600;
  EXPECT_FALSE(sink.Fired("GpuMemoryLeak", "0"));
  ASSERT_TRUE(sink.Fired("GpuProcessMemoryLeak", "0"));
  for (const auto& e : sink.events) {
    if (e.alert.condition.name != "GpuProcessMemoryLeak") continue;
    EXPECT_EQ(e.alert.condition.labels.at("pid"), "100");
    EXPECT_EQ(e.alert.condition.labels.at("uuid"), "GPU-0");
    EXPECT_NE(e.alert.condition.annotations.at("summary").find("PID 100 on GPU 0 leaks"), std::string::npos)
        << e.alert.condition.annotations.at("summary");
    EXPECT_NE(e.alert.condition.annotations.at("summary").find("python train.py"), std::string::npos);
  }
  auto state = p.BuildState(end);
  ASSERT_EQ(state->gpus.size(), 1u);
  EXPECT_NE(state->gpus[0].analysis.verdict, "leak");
  const auto& pv = state->gpus[0].process_analysis.at("100");
  ASSERT_EQ(pv.verdict, "leak");
  // Its runway counts what PID 200 and the context hold now: the room is the card's usable
  // capacity less the GPU's whole use, not less PID 100's alone.
  ASSERT_TRUE(pv.time_to_oom_s && pv.leak_rate_bps);
  const double own = (10000 + rate_mib_h * 4) * kMiB;
  const double others = (500 + 10000 + 16000) * kMiB - own;
  const double room = (81559 - 479) * kMiB - others - *pv.peak_bytes;
  EXPECT_NEAR(*pv.time_to_oom_s, room / *pv.leak_rate_bps, 120);
}

}  // namespace
}  // namespace vw::cli
