// WatchPipeline::Resume: engines, process records, Xids and alerts carried across a restart.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>

#include "cli/watch_pipeline.h"
#include "cli/watch_pipeline_testing.h"
#include "core/time.h"
#include "outputs/prometheus_text.h"

namespace vw::cli {
namespace {

using namespace vw::cli::testing;

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

// History written while the system clock ran an hour ahead (it was stepped back since): the samples
// dated after the restart are not restored, and the first live samples are judged, not dropped as
// out of time order.
TEST(WatchPipelineResume, SamplesDatedAfterTheRestartAreNotRestored) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now + 3600);  // its last two hours: the one before now and one after it
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  EXPECT_EQ(p.Resume(now), 2u * 361u);  // 10 s samples of the hour up to now, on two GPUs
  // GPU 1 held 30000 MiB; it holds 40000 now: the live samples count.
  for (double t = now + 10; t <= now + 120; t += 10) {
    HostSnapshot snap;
    snap.t = t;
    snap.gpus = {Gpu(0, t, 30000), Gpu(1, t, 40000)};
    p.Ingest(snap, true, false);
  }
  auto state = p.BuildState(now + 120);
  ASSERT_EQ(state->gpus.size(), 2u);
  ASSERT_TRUE(state->gpus[1].analysis.peak_bytes.has_value());
  EXPECT_GE(*state->gpus[1].analysis.peak_bytes, 39000 * kMiB);
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

GpuSnapshot GpuWithBus(unsigned index, double t, double used_mib) {
  GpuSnapshot g = Gpu(index, t, used_mib);
  g.pci_bus_id = index == 0 ? "00000000:3B:00.0" : "00000000:3C:00.0";
  return g;
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

// An Xid on a MIG instance (NVML's events carry it; a kernel log line says "GPU-I:09") still
// names the instance after a restart.
TEST(WatchPipelineResume, AnXidFindingStillNamesItsMigInstanceAfterARestart) {
  TempDb db;
  const double t0 = 1'790'000'000;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    WatchConfig c = FastAlerts();
    c.boot_id = "boot-a";
    WatchPipeline p(c, store->get(), {});
    p.Resume(t0, "node-7");
    p.Ingest(Host(t0, {GpuWithBus(0, t0, 1000), GpuWithBus(1, t0, 1000)}), true, true);
    kernel::KernelLogScan scan = Xid79OnGpu1();
    scan.events[0].gpu_instance = 9;
    scan.events[0].compute_instance = 0;
    p.IngestXids(scan, t0);
    p.Flush();
  }
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchConfig c = FastAlerts();
  c.boot_id = "boot-a";
  WatchPipeline p(c, store->get(), {});
  p.Resume(t0 + 60, "node-7");
  p.Ingest(Host(t0 + 60, {GpuWithBus(0, t0 + 60, 1000), GpuWithBus(1, t0 + 60, 1000)}), true, true);
  auto state = p.BuildState(t0 + 60);
  std::string evidence;
  for (const auto& f : state->findings) {
    if (f.kind == "xid" && f.gpu == "1") evidence = f.message;
  }
  EXPECT_NE(evidence.find("MIG GPU instance 9"), std::string::npos) << evidence;
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

// A daemon in a crash loop: each run sees a restored leak alert's condition gone for a few minutes,
// stores how long, and the next run goes on from there, so the alert resolves once the leak
// verdict has been gone for keep_firing_for in all (each restart used to start the wait again).
TEST(WatchPipelineResume, ARestoredAlertGoneAcrossRestartsResolvesOnceItsKeepFiringForIsSeen) {
  TempDb db;
  const double now = 1'790'000'000;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    (*store)->alerts().Put(LeakAlert("node-7"));  // GPU 0 has no leak verdict after the restarts
    ASSERT_TRUE((*store)->Flush().ok());
  }
  WatchConfig c;
  c.alerts.resend_interval_s = 0;
  c.alerts.restore_wait_s = 22;
  c.alerts.keep_firing_for_by_name["GpuMemoryLeak"] = 600;
  auto run = [&](double start, double seconds, RecordingSink& sink) {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    WatchPipeline p(c, store->get(), {&sink});
    p.Resume(start, "node-7");
    for (double t = start; t <= start + seconds; t += 1) p.Ingest(Host(t, {Gpu(0, t, 20000)}), true, false);
    p.Flush();
  };
  RecordingSink first;
  run(now, 240, first);  // crashes four minutes in
  EXPECT_TRUE(first.events.empty());
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    auto kept = (*store)->alerts().All();
    ASSERT_TRUE(kept.ok());
    ASSERT_EQ(kept->size(), 1u);
    EXPECT_DOUBLE_EQ((*kept)[0].unseen_s, 240) << "the last sample's, written at the stop";
  }
  RecordingSink second;
  run(now + 3600, 240, second);  // an hour down, four more minutes
  EXPECT_TRUE(second.events.empty());
  RecordingSink third;
  run(now + 7200, 240, third);
  ASSERT_EQ(third.events.size(), 1u) << "resolved in the third run: 600 s of looking in all";
  EXPECT_EQ(third.events[0].kind, detection::AlertEventKind::kResolved);
  EXPECT_DOUBLE_EQ(third.events[0].t, now + 7200 + 120);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  auto kept = (*store)->alerts().All();
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->empty());
}

// Restarts every 20 seconds (a crash loop faster than any write interval): each run stores the
// time it looked, so the alert still resolves once 10 minutes of looking add up.
TEST(WatchPipelineResume, ARestoredAlertResolvesInADaemonRestartingEveryTwentySeconds) {
  TempDb db;
  const double now = 1'790'000'000;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    (*store)->alerts().Put(LeakAlert("node-7"));
    ASSERT_TRUE((*store)->Flush().ok());
  }
  WatchConfig c;
  c.alerts.resend_interval_s = 0;
  c.alerts.restore_wait_s = 5;
  c.alerts.keep_firing_for_by_name["GpuMemoryLeak"] = 600;
  int resolved_in = -1;
  for (int run = 0; run < 40 && resolved_in < 0; ++run) {
    const double start = now + run * 100.0;  // 80 s down between runs
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    RecordingSink sink;
    WatchPipeline p(c, store->get(), {&sink});
    p.Resume(start, "node-7");
    for (double t = start; t <= start + 20; t += 1) p.Ingest(Host(t, {Gpu(0, t, 20000)}), true, false);
    p.Flush();
    if (!sink.events.empty()) {
      ASSERT_EQ(sink.events[0].kind, detection::AlertEventKind::kResolved);
      resolved_in = run;
    }
  }
  EXPECT_EQ(resolved_in, 29) << "20 s looked in each run: 600 s in the 30th";
}

}  // namespace
}  // namespace vw::cli
