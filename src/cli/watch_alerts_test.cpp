// WatchPipeline alerts: which conditions raise which alert, with which labels, on which clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cli/watch_pipeline.h"
#include "cli/watch_pipeline_testing.h"
#include "sources/kernel/xid_parser.h"

namespace vw::cli {
namespace {

using namespace vw::cli::testing;

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

// A burst of one code past the kept-event limit (a thousand Xid 45 lines after an Xid 79) does not
// push out the Xid 79: its critical finding and alert stay, and the burst's count stays whole.
TEST(WatchPipelineAlerts, AnXidBurstPastTheKeptLimitKeepsTheHardwareXidAndCountsEveryEvent) {
  RecordingSink sink;
  WatchConfig config = FastAlerts();
  config.max_xid_events = 10;
  WatchPipeline p(config, nullptr, {&sink});
  const double t0 = 1'790'000'000;
  auto tick = [&](double t) {
    HostSnapshot snap;
    snap.t = t;
    GpuSnapshot g0 = Gpu(0, t, 1000);
    g0.pci_bus_id = "00000000:3B:00.0";
    snap.gpus = {g0};
    p.Ingest(snap, true, false);
  };
  tick(t0);
  p.IngestXids(kernel::ScanKernelLog("[ 10.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=5200, name=python3, GPU has fallen "
                                     "off the bus.\n"),
               t0);
  for (double t = t0 + 0.5; t <= t0 + 3; t += 0.5) tick(t);
  std::string burst;
  for (int i = 0; i < 25; ++i) burst += "[ 11.0] NVRM: Xid (PCI:0000:3b:00): 45, pid=5200, name=python3, Ch 00000003\n";
  p.IngestXids(kernel::ScanKernelLog(burst), t0 + 3);
  p.IngestXids(kernel::ScanKernelLog(burst), t0 + 3.5);
  for (double t = t0 + 3.5; t <= t0 + 6; t += 0.5) tick(t);
  const auto state = p.BuildState(t0 + 6);
  std::vector<std::string> xids;
  for (const Finding& f : state->findings) {
    if (f.kind == "xid") xids.push_back(f.message);
  }
  ASSERT_EQ(xids.size(), 2u);
  std::sort(xids.begin(), xids.end());
  EXPECT_NE(xids[0].find("Xid 45"), std::string::npos) << xids[0];
  EXPECT_NE(xids[0].find(": 50 times"), std::string::npos) << xids[0];
  EXPECT_NE(xids[1].find("Xid 79"), std::string::npos) << xids[1];
  EXPECT_TRUE(sink.Fired("GpuXidError", "0"));
  for (const auto& e : sink.events) EXPECT_NE(e.kind, detection::AlertEventKind::kResolved) << e.alert.key;
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

// Orphaned memory on two MIG instances of one GPU: one GpuOrphanedMemory alert (its labels are the
// GPU's), whose summary names both instances, not the first alone.
TEST(WatchPipelineAlerts, OrphanedMemoryOnTwoMigInstancesOfOneGpuIsOneAlertNamingBoth) {
  RecordingSink sink;
  WatchPipeline p(FastAlerts(), nullptr, {&sink});
  const double t0 = 1'790'000'000;
  for (double t = t0; t <= t0 + 6; t += 0.5) {
    HostSnapshot snap;
    snap.t = t;
    GpuSnapshot g = Gpu(0, t, 3072);
    g.mig_enabled = true;
    for (unsigned gi : {1u, 2u}) {
      MigDeviceSnapshot m;
      m.gpu_instance_id = gi;
      m.compute_instance_id = 0;
      m.uuid = "MIG-" + std::to_string(gi);
      m.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
      m.memory_total_bytes = static_cast<uint64_t>(40448 * kMiB);
      m.memory_used_bytes = static_cast<uint64_t>(gi * 1024 * kMiB);
      g.mig_devices.push_back(m);
    }
    snap.gpus = {g};
    p.Ingest(snap, true, true);
  }
  std::vector<std::string> fired;
  for (const auto& e : sink.events) {
    if (e.alert.condition.name == "GpuOrphanedMemory" && e.kind == detection::AlertEventKind::kFiring) {
      fired.push_back(e.alert.condition.annotations.at("summary"));
    }
  }
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_NE(fired[0].find("MIG GPU instance 1 "), std::string::npos) << fired[0];
  EXPECT_NE(fired[0].find("MIG GPU instance 2 "), std::string::npos) << fired[0];
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

// A steady leak from the start of a job, beside a flat 30 GiB server, that stops after four
// hours: the alert fires once, and resolves once, only after the leak verdict has been gone for
// its keep_firing_for (as `watch` sets it: 10 minutes).
TEST(WatchPipelineAlerts, ALeakAlertResolvesOnceTheLeakVerdictHasBeenGoneForItsKeepFiringFor) {
  RecordingSink sink;
  WatchConfig config = FastAlerts();
  config.alerts.for_by_name["GpuMemoryLeak"] = detection::kLeakAlertForSeconds;
  config.alerts.for_by_name["GpuProcessMemoryLeak"] = detection::kLeakAlertForSeconds;
  config.alerts.keep_firing_for_by_name["GpuMemoryLeak"] = detection::kLeakAlertForSeconds;
  WatchPipeline p(config, nullptr, {&sink});
  const double t0 = 1'790'000'000;
  const double leak_end = t0 + 4 * 3600, end = leak_end + 4 * 3600;
  std::vector<std::string> verdicts;
  double last_leak = 0;
  for (double t = t0; t <= end; t += 10) {
    const double grown = 1024 * (std::min(t, leak_end) - t0) / 3600;
    HostSnapshot snap;
    snap.t = t;
    snap.gpus = {Gpu(0, t, 500 + 30720 + 5120 + grown)};
    snap.gpus[0].processes = {Proc(100, 30720, "python3 serve.py"), Proc(200, 5120 + grown, "python3 leaky.py")};
    p.Ingest(snap, true, false);
    const std::string v = p.BuildState(t)->gpus[0].analysis.verdict;
    if (verdicts.empty() || verdicts.back().substr(0, verdicts.back().find('@')) != v) {
      verdicts.push_back(v + "@" + std::to_string(static_cast<int>(t - t0) / 60) + "m");
    }
    if (v == "leak") last_leak = t;
  }
  size_t fired = 0, resolved = 0;
  for (const auto& e : sink.events) {
    if (e.alert.condition.name != "GpuMemoryLeak") continue;
    fired += e.kind == detection::AlertEventKind::kFiring ? 1 : 0;
    if (e.kind == detection::AlertEventKind::kResolved) {
      ++resolved;
      EXPECT_GE(e.t, last_leak + detection::kLeakAlertForSeconds)
          << "resolved before the leak verdict had been gone for --for";
    }
  }
  std::string seen;
  for (const auto& v : verdicts) seen += v + " ";
  EXPECT_EQ(fired, 1u) << seen;
  EXPECT_EQ(resolved, 1u) << seen;
}

}  // namespace
}  // namespace vw::cli
