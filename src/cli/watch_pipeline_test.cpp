#include "cli/watch_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "core/time.h"
#include "outputs/daemon_status_json.h"
#include "outputs/prometheus_text.h"
#include "sources/kernel/xid_parser.h"

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
// Every lifecycle record `store` holds; a query that fails fails the test (and gives none).
std::vector<storage::ProcessRecord> AllRecords(storage::HistoryStore& store) {
  auto r = store.processes().Query(0, 1e12);
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : std::vector<storage::ProcessRecord>{};
}

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

// History of a GPU that NVML no longer lists (fallen off the bus before a reboot, removed): it is
// not shown, measured or alerted on as a GPU of this host; the GPU that is listed goes on.
TEST(WatchPipelineResume, AStoredGpuThatNvmlNoLongerListsIsNotShown) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);  // GPU 0 leaking, GPU 1 flat
  auto opened = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(opened.ok());
  WatchPipeline p(WatchConfig{}, opened->get(), {});
  p.Resume(now);
  EXPECT_TRUE(p.BuildState(now)->gpus.empty()) << "nothing listed yet";
  HostSnapshot only_gpu1;
  only_gpu1.t = now;
  only_gpu1.gpus = {Gpu(1, now, 30000)};  // GPU 0 is gone
  p.Ingest(only_gpu1, true, false);
  auto state = p.BuildState(now);
  ASSERT_EQ(state->gpus.size(), 1u);
  EXPECT_EQ(state->gpus[0].snapshot.index, 1u);
  EXPECT_TRUE(state->alerts.empty()) << state->alerts[0].name;
  EXPECT_EQ(outputs::RenderPrometheus(*state, now).find("gpu=\"0\""), std::string::npos);
  EXPECT_EQ(p.GpuVerdictLines().size(), 1u);
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

TEST(WatchPipelineResume, AHolderGoneBeforeTheRestartKeepsItsStoredFactsAndRecord) {
  ProcessSnapshot dead = Proc(4242, 9025, "");
  dead.info.alive = false;
  dead.info.state = ProcState::kGone;
  ResumedWithProcess r(9100, dead);
  ASSERT_TRUE(r.pipeline);
  const auto state = r.pipeline->BuildState(r.now);  // held: `shown` refers into it
  const ProcessSnapshot& shown = state->gpus[0].snapshot.processes.at(0);
  EXPECT_EQ(shown.info.command, "python serve.py");
  EXPECT_FALSE(shown.info.alive);
  bool continued = false;
  for (const auto& rec : r.Records()) {
    if (rec.pid != 4242) continue;
    EXPECT_EQ(rec.command, "python serve.py");
    continued |= rec.first_seen_s == r.now - 1 - 7200 && rec.end == storage::ProcessEnd::kRunning;
  }
  EXPECT_TRUE(continued) << "the stored record goes on, no blank second record";
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

// Two hours of GPU 0 flat at 10 GiB: a trainer (PID 4242) holding 8 GiB and a server (PID 4343)
// holding 2 GiB, both recorded as running when the daemon stopped at `end_t`.
void FillTwoHoldersHistory(const std::string& db, double end_t) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (double t = end_t - 7200; t <= end_t; t += 10) {
    const uint64_t jitter = static_cast<uint64_t>(static_cast<int64_t>(t) * 7919 % 13) * 1048576;
    (*store)->Append("gpu:0", t, static_cast<uint64_t>(10240 * kMiB) + jitter);
    (*store)->Append("gpu:0/pid:4242", t, static_cast<uint64_t>(8192 * kMiB));
    (*store)->Append("gpu:0/pid:4343", t, static_cast<uint64_t>(2048 * kMiB) + jitter);
  }
  for (int64_t pid : {4242, 4343}) {
    storage::ProcessRecord r{.gpu = "0",
                             .pid = pid,
                             .first_seen_s = end_t - 7200,
                             .last_seen_s = end_t,
                             .peak_bytes = static_cast<uint64_t>((pid == 4242 ? 8192 : 2060) * kMiB),
                             .command = pid == 4242 ? "python train.py" : "python serve.py"};
    (*store)->processes().Upsert(r);
  }
  ASSERT_TRUE((*store)->Flush().ok());
}

// The daemon was down for ten minutes, during which the trainer exited: the first live sample
// lists only the server, and GPU 0 holds what the server holds (`gpu_used_mib`, more when the
// trainer's memory stayed held). Returns the pipeline's state after a few more samples.
struct RestartAfterADeparture {
  TempDb db;
  const double stopped = 1'790'000'000, now = stopped + 600;
  std::unique_ptr<storage::HistoryStore> store;
  std::shared_ptr<const outputs::DaemonState> state;

  explicit RestartAfterADeparture(double gpu_used_mib, std::optional<ProcessSnapshot> also_listed = std::nullopt) {
    FillTwoHoldersHistory(db.path(), stopped);
    auto opened = storage::HistoryStore::Open(db.path());
    EXPECT_TRUE(opened.ok());
    if (!opened.ok()) return;
    store = std::move(*opened);
    WatchConfig c;
    c.check.grace_s = 2;
    WatchPipeline p(c, store.get(), {});
    p.Resume(now);
    for (double t = now; t <= now + 30; t += 5) {
      GpuSnapshot g = Gpu(0, t, gpu_used_mib);
      ProcessSnapshot server = Proc(4343, 2048, "python serve.py");
      g.processes = {server};
      if (also_listed) g.processes.push_back(*also_listed);
      HostSnapshot snap;
      snap.t = t;
      snap.gpus = {g};
      p.Ingest(snap, true, false);
    }
    p.Flush();
    state = p.BuildState(now + 30);
  }
  std::vector<storage::ProcessRecord> Records() { return AllRecords(*store); }
  std::optional<storage::ProcessEnd> EndOf(int64_t pid) {
    for (const auto& rec : Records()) {
      if (rec.pid == pid) return rec.end;
    }
    return std::nullopt;
  }
};

TEST(WatchPipelineResume, AFallLeftByAProcessThatExitedWhileTheDaemonWasDownIsExplainedByItsDeparture) {
  RestartAfterADeparture r(2048);
  ASSERT_TRUE(r.state);
  ASSERT_EQ(r.state->gpus.size(), 1u);
  const auto& a = r.state->gpus[0].analysis;
  std::string evidence;
  for (const auto& e : a.evidence) evidence += e + "\n";
  // The 8 GiB fall is the trainer leaving, not a restart of the series: the two stored hours
  // are judged net of its memory, so the GPU is on its plateau, not starting over.
  EXPECT_NE(evidence.find("PID 4242 left this GPU between "), std::string::npos) << evidence;
  EXPECT_NE(evidence.find(" holding 8.0 GiB: the fall of "), std::string::npos) << evidence;
  EXPECT_EQ(evidence.find("Memory fell from a floor"), std::string::npos) << evidence;
  EXPECT_EQ(a.verdict, "plateau") << evidence;
  EXPECT_EQ(r.EndOf(4242), storage::ProcessEnd::kExited);
  EXPECT_EQ(r.EndOf(4343), storage::ProcessEnd::kRunning);
}

TEST(WatchPipelineResume, APidReusedWhileTheDaemonWasDownExplainsTheFallOfTheProcessThatHadIt) {
  RestartAfterADeparture r(2048 + 256, Proc(4242, 256, "python other.py"));
  ASSERT_TRUE(r.state);
  std::string evidence;
  for (const auto& e : r.state->gpus[0].analysis.evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("PID 4242 left this GPU between "), std::string::npos) << evidence;
  EXPECT_EQ(evidence.find("Memory fell from a floor"), std::string::npos) << evidence;
  int trainer = 0, other = 0;
  for (const auto& rec : r.Records()) {
    if (rec.pid != 4242) continue;
    if (rec.command == "python train.py" && rec.end == storage::ProcessEnd::kExited) ++trainer;
    if (rec.command == "python other.py" && rec.end == storage::ProcessEnd::kRunning) ++other;
  }
  EXPECT_EQ(trainer, 1);
  EXPECT_EQ(other, 1);
}

TEST(WatchPipelineResume, AProcessGoneWhileTheDaemonWasDownWhoseMemoryStaysHeldIsClosedAsVanished) {
  RestartAfterADeparture r(10240);  // nothing fell: the trainer's 8 GiB are held, unowned
  ASSERT_TRUE(r.state);
  std::string evidence;
  for (const auto& e : r.state->gpus[0].analysis.evidence) evidence += e + "\n";
  EXPECT_EQ(evidence.find("left this GPU"), std::string::npos) << evidence;
  EXPECT_EQ(r.EndOf(4242), storage::ProcessEnd::kVanishedMemoryHeld);
  EXPECT_EQ(r.EndOf(4343), storage::ProcessEnd::kRunning);
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

// An alert's `since` is on the clock the evidence names moments on: UTC live, a replayed trace's
// wall clock as written, and offsets from the start of a trace without a clock (not 1970 dates).
TEST(WatchPipelineAlerts, AlertSinceIsOnTheEvidenceClock) {
  using Times = detection::EngineConfig::EvidenceTimes;
  struct Case {
    Times times;
    double t0;
    std::string since;
  };
  // Each fires 1 s (FastAlerts' --for) after its first tick.
  const std::vector<Case> cases = {
      {Times::kUtcClock, 1'790'000'000, "2026-09-21T14:13:21Z"},
      {Times::kWallClock, 1'790'000'000, "2026-09-21T14:13:21"},
      {Times::kTraceTime, 7310, "t+2h 1m 51s"},
  };
  for (const Case& c : cases) {
    RecordingSink sink;
    WatchPipeline p(FastAlerts(), nullptr, {&sink});
    p.SetEvidenceTimes(c.times);
    for (double t = c.t0; t <= c.t0 + 2; t += 0.5) p.IngestNvmlUnavailable(t, "node-7", "NVML gone");
    auto state = p.BuildState(c.t0 + 2);
    ASSERT_EQ(state->alerts.size(), 1u);
    EXPECT_EQ(state->alerts[0].since, c.since) << static_cast<int>(c.times);
  }
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

// Routing keys: GpuXidError is one alert per GPU and Xid code, with `xid` and `uuid` and no `pid`;
// the same code logged again for another PID keeps that alert (no resolve, no second one).
TEST(WatchPipelineAlerts, XidAlertIsOnePerGpuAndCodeWithXidAndUuidLabels) {
  RecordingSink sink;
  WatchPipeline p(FastAlerts(), nullptr, {&sink});
  const double t0 = 1'790'000'000;
  auto tick = [&](double t) {
    HostSnapshot snap;
    snap.t = t;
    snap.hostname = "node-7";
    GpuSnapshot g0 = Gpu(0, t, 1000), g1 = Gpu(1, t, 1000);
    g0.pci_bus_id = "00000000:3B:00.0";
    g1.pci_bus_id = "00000000:3C:00.0";
    snap.gpus = {g0, g1};
    p.Ingest(snap, true, false);
  };
  tick(t0);
  p.IngestXids(kernel::ScanKernelLog("[ 10.0] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen "
                                     "off the bus.\n"),
               t0);
  for (double t = t0 + 0.5; t <= t0 + 3; t += 0.5) tick(t);
  p.IngestXids(kernel::ScanKernelLog("[ 11.0] NVRM: Xid (PCI:0000:3c:00): 79, pid=5100, name=python3, GPU has fallen "
                                     "off the bus.\n"),
               t0 + 3);
  for (double t = t0 + 3.5; t <= t0 + 6; t += 0.5) tick(t);
  int firing = 0, resolved = 0;
  for (const auto& e : sink.events) {
    if (e.alert.condition.name != "GpuXidError") continue;
    if (e.kind == detection::AlertEventKind::kResolved) ++resolved;
    if (e.kind != detection::AlertEventKind::kFiring) continue;
    ++firing;
    const std::map<std::string, std::string> want{
        {"gpu", "1"}, {"hostname", "node-7"}, {"uuid", "GPU-1"}, {"xid", "79"}};
    EXPECT_EQ(e.alert.condition.labels, want);
  }
  EXPECT_EQ(firing, 1);
  EXPECT_EQ(resolved, 0);
}

// Every daemon alert about a known GPU carries its uuid, finding alerts as well as GPU alerts.
TEST(WatchPipelineAlerts, FindingAlertsCarryTheGpuUuid) {
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
  size_t checked = 0;
  for (const auto& e : sink.events) {
    if (e.kind != detection::AlertEventKind::kFiring) continue;
    ++checked;
    auto uuid = e.alert.condition.labels.find("uuid");
    ASSERT_NE(uuid, e.alert.condition.labels.end()) << e.alert.key;
    EXPECT_EQ(uuid->second, "GPU-1") << e.alert.key;
  }
  EXPECT_GE(checked, 2u);  // GpuNvmlError and GpuStale
}

}  // namespace
}  // namespace vw::cli

namespace vw::cli {
namespace {

GpuSnapshot GpuWithBus(unsigned index, double t, double used_mib) {
  GpuSnapshot g = Gpu(index, t, used_mib);
  g.pci_bus_id = index == 0 ? "00000000:3B:00.0" : "00000000:3C:00.0";
  return g;
}

HostSnapshot Host(double t, std::vector<GpuSnapshot> gpus) {
  HostSnapshot s;
  s.t = t;
  s.hostname = "node-7";
  s.gpus = std::move(gpus);
  return s;
}

kernel::KernelLogScan Xid79OnGpu1() {
  kernel::KernelLogScan scan;
  kernel::XidEvent e;
  e.xid = 79;
  e.pci_bus_id = "00000000:3C:00.0";
  e.pid = 5200;
  e.process_name = "python3";
  e.message = "GPU has fallen off the bus.";
  e.line = "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.";
  scan.events.push_back(e);
  return scan;
}

bool Resolved(const RecordingSink& sink, const std::string& name) {
  for (const auto& e : sink.events) {
    if (e.kind == detection::AlertEventKind::kResolved && e.alert.condition.name == name) return true;
  }
  return false;
}

// A daemon that saw a hardware Xid on GPU 1 until its alert fired, stopped, on `db`.
void RunUntilXidAlertFires(const std::string& db, double t0, const std::string& boot) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchConfig c = FastAlerts();
  c.boot_id = boot;
  WatchPipeline p(c, store->get(), {&sink});
  p.Resume(t0, "node-7");
  p.Ingest(Host(t0, {GpuWithBus(0, t0, 1000), GpuWithBus(1, t0, 1000)}), true, true);
  p.IngestXids(Xid79OnGpu1(), t0);
  for (double t = t0 + 0.5; t <= t0 + 3; t += 0.5) {
    p.Ingest(Host(t, {GpuWithBus(0, t, 1000), GpuWithBus(1, t, 1000)}), true, true);
  }
  ASSERT_TRUE(sink.Fired("GpuXidError", "1"));
  p.Flush();
}

TEST(WatchPipelineResume, AHardwareXidFindingItsAlertAndItsCountSurviveARestart) {
  TempDb db;
  const double t0 = 1'790'000'000;
  RunUntilXidAlertFires(db.path(), t0, "boot-a");
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchConfig c = FastAlerts();
  c.boot_id = "boot-a";
  WatchPipeline p(c, store->get(), {&sink});
  p.Resume(t0 + 60, "node-7");
  // The kernel log's old content is not read again; the stored event keeps the finding.
  for (double t = t0 + 60; t <= t0 + 65; t += 0.5) {
    p.Ingest(Host(t, {GpuWithBus(0, t, 1000), GpuWithBus(1, t, 1000)}), true, true);
  }
  EXPECT_FALSE(Resolved(sink, "GpuXidError"));
  EXPECT_FALSE(sink.Fired("GpuXidError", "1")) << "restored without a new notice";
  auto state = p.BuildState(t0 + 65);
  bool finding = false;
  for (const auto& f : state->findings) finding |= f.kind == "xid" && f.gpu == "1" && f.severity == Severity::kCritical;
  EXPECT_TRUE(finding);
  ASSERT_EQ(state->gpus.size(), 2u);
  EXPECT_EQ(state->gpus[1].xid_events.at(79), 1u);
  EXPECT_TRUE(state->gpus[0].xid_events.empty());
  ASSERT_EQ(state->alerts.size(), 1u);
  EXPECT_EQ(state->alerts[0].name, "GpuXidError");
  EXPECT_EQ(state->alerts[0].state, "firing");
}

TEST(WatchPipelineResume, AfterARebootTheStoredXidsAreForgottenAndTheAlertResolves) {
  TempDb db;
  const double t0 = 1'790'000'000;
  RunUntilXidAlertFires(db.path(), t0, "boot-a");
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchConfig c = FastAlerts();
  c.boot_id = "boot-b";
  WatchPipeline p(c, store->get(), {&sink});
  p.Resume(t0 + 600, "node-7");
  for (double t = t0 + 600; t <= t0 + 602; t += 0.5) {
    p.Ingest(Host(t, {GpuWithBus(0, t, 1000), GpuWithBus(1, t, 1000)}), true, true);
  }
  EXPECT_TRUE(Resolved(sink, "GpuXidError"));
  EXPECT_TRUE(p.BuildState(t0 + 602)->gpus[1].xid_events.empty());
  auto old = (*store)->xids().Load("boot-a");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->counts.empty());
}

storage::StoredAlert LeakAlert(const std::string& host) {
  storage::StoredAlert a;
  a.name = "GpuMemoryLeak";
  a.labels = {{"gpu", "0"}, {"hostname", host}, {"uuid", "GPU-0"}};
  a.key = "GpuMemoryLeak{gpu=0,hostname=" + host + ",uuid=GPU-0}";
  a.annotations = {{"summary", "GPU 0 leaks"}};
  a.severity = static_cast<int>(Severity::kWarning);  // days of runway
  a.active_since = 1'789'999'000;
  a.fired_at = 1'789'999'600;
  return a;
}

TEST(WatchPipelineResume, StoredAlertsOfAnotherHostAreDroppedWithoutANotificationAndOwnOnesContinue) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);  // GPU 0 grows 1 GiB/h: the leak goes on
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    (*store)->alerts().Put(LeakAlert(""));  // from a replay that knew no host name
    (*store)->alerts().Put(LeakAlert("node-7"));
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchConfig c;
  c.alerts.for_by_name["GpuMemoryLeak"] = 600;
  WatchPipeline p(c, store->get(), {&sink});
  p.Resume(now, "node-7");
  for (double t = now; t <= now + 20; t += 1) {
    const double mib = 20000 + 1024 * (t - now + 7201) / 3600;
    p.Ingest(Host(t, {Gpu(0, t, mib), Gpu(1, t, 30000)}), true, false);
  }
  // No resolve for the other host's alert, no new firing for ours (its re-announcements go on).
  for (const auto& e : sink.events) {
    EXPECT_EQ(e.kind, detection::AlertEventKind::kResend) << e.alert.key;
    EXPECT_EQ(e.alert.key, "GpuMemoryLeak{gpu=0,hostname=node-7,uuid=GPU-0}");
  }
  auto state = p.BuildState(now + 20);
  ASSERT_EQ(state->alerts.size(), 1u);
  EXPECT_EQ(state->alerts[0].state, "firing");
  // A firing alert's "since" is when it fired, not when it went pending.
  EXPECT_EQ(state->alerts[0].since, FormatIso8601(1'789'999'600, true));
  p.Flush();
  auto kept = (*store)->alerts().All();
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].labels.at("hostname"), "node-7");
}

ProcessSnapshot Holder(int64_t pid, double used_mib, bool alive) {
  ProcessSnapshot p;
  p.pid = pid;
  p.used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  p.compute = true;
  p.info.alive = alive;
  p.info.state = alive ? ProcState::kRunning : ProcState::kGone;
  if (alive) {
    p.info.uid = 1001;
    p.info.user = "bob";
    p.info.command = "python3 eval.py --shard 3";
    p.info.slurm_job = "5512";
  }
  return p;
}

// A live process that has /dev/nvidiaN open but that NVML does not list there (no memory known).
ProcessSnapshot DeviceFileOnly(int64_t pid) {
  ProcessSnapshot p = Holder(pid, 0, true);
  p.listed_by_nvml = false;
  p.used_bytes.reset();
  return p;
}

// A pipeline writing to a fresh history database.
struct StoredPipeline {
  TempDb db;
  std::unique_ptr<storage::HistoryStore> store;
  std::unique_ptr<WatchPipeline> p;
  StoredPipeline() {
    auto opened = storage::HistoryStore::Open(db.path());
    EXPECT_TRUE(opened.ok());
    if (!opened.ok()) return;
    store = std::move(*opened);
    p = std::make_unique<WatchPipeline>(FastAlerts(), store.get(), std::vector<outputs::AlertSink*>{});
  }
};

TEST(WatchPipelineProcesses, AHolderWhoseProcEntryVanishedKeepsItsLastKnownFactsAndClosesAsVanished) {
  TempDb db;
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  RecordingSink sink;
  WatchConfig c = FastAlerts();
  c.check.grace_s = 2;  // gone for 3 s before NVML lets go: longer than a lazy reclaim
  WatchPipeline p(c, store->get(), {&sink});
  const double t0 = 1'790'000'000;
  auto host = [&](double t, std::vector<ProcessSnapshot> procs) {
    GpuSnapshot g = Gpu(0, t, 8192);
    g.processes = std::move(procs);
    return Host(t, {g});
  };
  p.Ingest(host(t0, {Holder(41990, 8192, true)}), true, true);
  for (double t = t0 + 1; t <= t0 + 4; t += 1) p.Ingest(host(t, {Holder(41990, 8192, false)}), true, true);
  auto state = p.BuildState(t0 + 4);
  const ProcessSnapshot& shown = state->gpus[0].snapshot.processes.at(0);
  EXPECT_EQ(shown.info.user, "bob");
  EXPECT_EQ(shown.info.command, "python3 eval.py --shard 3");
  EXPECT_EQ(shown.info.slurm_job, "5512");
  EXPECT_FALSE(shown.info.alive);
  EXPECT_EQ(shown.info.state, ProcState::kGone);
  std::string message;
  for (const auto& f : state->findings) {
    if (f.kind == "dead_holder") message = f.message;
  }
  EXPECT_NE(message.find("PID 41990 (Slurm job 5512, user bob)"), std::string::npos) << message;
  EXPECT_TRUE(sink.Fired("GpuDeadHolder", "0"));
  // NVML stops listing it: the record keeps who it was and says how it ended.
  p.Ingest(host(t0 + 5, {}), true, true);
  p.Flush();
  auto records = AllRecords(**store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kVanishedMemoryHeld);
  EXPECT_EQ(records[0].command, "python3 eval.py --shard 3");
  EXPECT_EQ(records[0].user, "bob");
  EXPECT_EQ(records[0].slurm_job, "5512");
}

TEST(WatchPipelineProcesses, AHolderNvmlDropsWithinTheGraceAfterItsExitIsRecordedAsExited) {
  TempDb db;
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchConfig c = FastAlerts();
  c.check.grace_s = 10;
  WatchPipeline p(c, store->get(), {});
  const double t0 = 1'790'000'000;
  GpuSnapshot alive = Gpu(0, t0, 8192), gone = Gpu(0, t0 + 1, 8192), after = Gpu(0, t0 + 2, 0);
  alive.processes = {Holder(41990, 8192, true)};
  gone.processes = {Holder(41990, 8192, false)};
  p.Ingest(Host(t0, {alive}), true, true);
  p.Ingest(Host(t0 + 1, {gone}), true, true);
  p.Ingest(Host(t0 + 2, {after}), true, true);
  p.Flush();
  auto records = AllRecords(**store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kExited);
  EXPECT_EQ(records[0].user, "bob");
}

// CUDA opens every visible GPU's device file: a job computing on GPU 0 holds /dev/nvidia1 too.
// It is a finding on GPU 1 (unlisted_holder) but has no life there: no lifecycle record on GPU 1,
// while it is there nor after it leaves.
TEST(WatchPipelineProcesses, AProcessWithOnlyTheDeviceFileOpenGetsNoLifecycleRecordOnThatGpu) {
  StoredPipeline sp;
  ASSERT_TRUE(sp.p);
  WatchPipeline& p = *sp.p;
  const double t0 = 1'790'000'000;
  ProcessSnapshot fd_only = DeviceFileOnly(41877);
  fd_only.compute = false;
  auto host = [&](double t, bool with_job) {
    GpuSnapshot g0 = Gpu(0, t, with_job ? 8192 : 0), g1 = Gpu(1, t, 0);
    g0.minor = 0;
    g1.minor = 1;
    if (with_job) {
      g0.processes = {Holder(41877, 8192, true)};
      g1.processes = {fd_only};
    }
    return Host(t, {g0, g1});
  };
  for (double t = t0; t <= t0 + 3; t += 1) p.Ingest(host(t, true), true, true);
  bool unlisted = false;
  auto state = p.BuildState(t0 + 3);
  for (const auto& f : state->findings) {
    if (f.kind == "unlisted_holder" && f.gpu == "1" && f.pid == 41877) unlisted = true;
  }
  EXPECT_TRUE(unlisted) << "the device file holder still reaches the findings";
  p.Flush();
  auto records = AllRecords(*sp.store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].gpu, "0");
  EXPECT_EQ(records[0].pid, 41877);
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kRunning);
  // The job ends: its record on GPU 0 closes, and none appears on GPU 1.
  p.Ingest(host(t0 + 4, false), true, true);
  p.Flush();
  records = AllRecords(*sp.store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].gpu, "0");
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kExited);
}

// A PID NVML lists on a GPU only after it had the device file open there: its life on that GPU
// (first seen) starts when NVML lists it.
TEST(WatchPipelineProcesses, ALifeOnAGpuStartsWhenNvmlFirstListsThePid) {
  StoredPipeline sp;
  ASSERT_TRUE(sp.p);
  WatchPipeline& p = *sp.p;
  const double t0 = 1'790'000'000;
  const ProcessSnapshot opened = DeviceFileOnly(41877);
  GpuSnapshot before = Gpu(0, t0, 0), after = Gpu(0, t0 + 5, 2048);
  before.processes = {opened};
  after.processes = {Holder(41877, 2048, true)};
  p.Ingest(Host(t0, {before}), true, true);
  p.Ingest(Host(t0 + 5, {after}), true, true);
  p.Flush();
  auto records = AllRecords(*sp.store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].first_seen_s, t0 + 5);
  EXPECT_EQ(records[0].peak_bytes, static_cast<uint64_t>(2048 * kMiB));
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

// Orphaned memory beside a live holder, with the daemon's defaults (--grace 10s, process facts
// every 5 s, --finding-for 1m) and sample times a few milliseconds off the 5 s grid, as a live
// clock gives them: the findings' window spans at least the grace on every tick once it can, so
// the finding stays critical and GpuOrphanedMemory fires (a window of the last grace + 1 s spanned
// 10 s give or take the jitter, and the finding flipped to a warning whenever it fell short).
TEST(WatchPipelineAlerts, OrphanedMemoryBesideALiveHolderFiresWhenSampleTimesJitterAroundTheGrace) {
  RecordingSink sink;
  WatchConfig config;
  config.alerts.default_for_s = 60;  // --finding-for's default
  ASSERT_EQ(config.check.grace_s, 10);
  WatchPipeline p(config, nullptr, {&sink});
  const double t0 = 1'790'000'000;
  const double jitter_s[] = {0.004, 0.001, -0.003, 0.002, -0.004, 0.003};
  size_t critical_ticks = 0, judged_ticks = 0;
  for (int k = 0; k <= 30; ++k) {
    const double t = t0 + 5 * k + jitter_s[k % 6];
    const double orphaned_mib = k >= 5 ? 5000 : 0;  // from t0 + 25 s
    HostSnapshot snap;
    snap.t = t;
    snap.gpus = {Gpu(0, t, 20000 + orphaned_mib)};
    snap.gpus[0].processes = {Proc(100, 20000, "python train.py")};
    p.Ingest(snap, true, true);
    if (k < 5 + 3) continue;  // the orphan has been seen for longer than the grace
    ++judged_ticks;
    auto state = p.BuildState(t);
    for (const Finding& f : state->findings) {
      if (f.kind == "orphaned_memory" && f.severity == Severity::kCritical) ++critical_ticks;
    }
  }
  EXPECT_EQ(critical_ticks, judged_ticks);
  EXPECT_TRUE(sink.Fired("GpuOrphanedMemory", "0"));
  EXPECT_FALSE(Resolved(sink, "GpuOrphanedMemory"));
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
