// WatchPipeline per process: lifecycle records and the facts of holders whose /proc entry is gone.
#include <gtest/gtest.h>

#include <memory>

#include "cli/watch_pipeline.h"
#include "cli/watch_pipeline_testing.h"

namespace vw::cli {
namespace {

using namespace vw::cli::testing;

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

// A holder of a Kubernetes pod whose names were read (--kube-logs): gone from /proc, it keeps them
// in the status and in the dead_holder finding, and its record keeps the pod and its namespace.
TEST(WatchPipelineProcesses, AVanishedHolderKeepsItsPodsNames) {
  StoredPipeline s;
  ASSERT_TRUE(s.p);
  const double t0 = 1'790'000'000;
  ProcessSnapshot alive = Holder(42001, 4096, true);
  alive.info.container_id = std::string(64, 'c');
  alive.info.pod_uid = "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c";
  alive.info.pod_namespace = "ml";
  alive.info.pod_name = "llm-serve-0";
  alive.info.container_name = "vllm";
  auto host = [&](double t, ProcessSnapshot p) {
    GpuSnapshot g = Gpu(0, t, 4096);
    g.processes = {std::move(p)};
    return Host(t, {g});
  };
  s.p->Ingest(host(t0, alive), true, true);
  for (double t = t0 + 1; t <= t0 + 15; t += 1) s.p->Ingest(host(t, Holder(42001, 4096, false)), true, true);
  auto state = s.p->BuildState(t0 + 15);
  const ProcessInfo& shown = state->gpus[0].snapshot.processes.at(0).info;
  EXPECT_EQ(shown.pod_namespace, "ml");
  EXPECT_EQ(shown.pod_name, "llm-serve-0");
  EXPECT_EQ(shown.container_name, "vllm");
  std::string message;
  for (const auto& f : state->findings) {
    if (f.kind == "dead_holder") message = f.message;
  }
  EXPECT_NE(message.find("container vllm, pod ml/llm-serve-0"), std::string::npos) << message;
  s.p->Ingest(Host(t0 + 16, {Gpu(0, t0 + 16, 0)}), true, true);
  s.p->Flush();
  auto records = AllRecords(*s.store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].pod, "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c");
  EXPECT_EQ(records[0].pod_namespace, "ml");
  EXPECT_EQ(records[0].pod_name, "llm-serve-0");
  EXPECT_EQ(records[0].container_name, "vllm");
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

// A process list that could not be read (the call failed for a refresh) does not end the
// processes it lacks: PID 41877 keeps one lifecycle record, its leak verdict, and the GPU's engine
// notes no departure for memory that never fell.
TEST(WatchPipelineProcesses, AListThatCouldNotBeReadEndsNoProcess) {
  StoredPipeline sp;
  ASSERT_TRUE(sp.p);
  const double t0 = 1'790'000'000;
  for (int i = 0; i <= 4 * 60; ++i) {
    const double t = t0 + 60.0 * i;
    const double mib = 20000 + 1024.0 * i / 60;  // 1 GiB/h
    GpuSnapshot g = Gpu(0, t, mib + 500);
    const bool failing = i == 200;  // one refresh (a minute) without its list
    if (failing) {
      g.nvml_errors.push_back({"nvmlDeviceGetComputeRunningProcesses_v3", 999,
                               "nvmlDeviceGetComputeRunningProcesses_v3: Unknown Error", "NVML_ERROR_UNKNOWN"});
      g.errors.push_back("nvmlDeviceGetComputeRunningProcesses_v3: Unknown Error");
    } else {
      g.processes = {Proc(41877, mib, "python3 train.py")};
    }
    sp.p->Ingest(Host(t, {g}), true, false);
  }
  std::vector<storage::ProcessRecord> records = AllRecords(*sp.store);
  ASSERT_EQ(records.size(), 1u) << "the failed refreshes split PID 41877's life in two";
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kRunning);
  auto state = sp.p->BuildState(t0 + 4 * 3600);
  const auto& procs = state->gpus.at(0).process_analysis;
  ASSERT_TRUE(procs.count("41877"));
  EXPECT_EQ(procs.at("41877").verdict, "leak");
  for (const std::string& e : state->gpus.at(0).analysis.evidence) {
    EXPECT_EQ(e.find("left this GPU"), std::string::npos) << e;
  }
}

// When the lists stay incomplete (a list call that keeps failing), a PID missing from them ends
// once it has been missing for twice the grace and a refresh: not for ever.
TEST(WatchPipelineProcesses, APidMissingFromListsThatStayIncompleteEndsAfterAWhile) {
  StoredPipeline sp;
  ASSERT_TRUE(sp.p);
  const double t0 = 1'790'000'000;
  auto at = [&](int second, bool listed) {
    GpuSnapshot g = Gpu(0, t0 + second, 3000);
    if (listed) {
      g.processes = {Proc(41877, 2500, "python3 train.py")};
    } else {
      g.nvml_errors.push_back({"nvmlDeviceGetGraphicsRunningProcesses", 4,
                               "nvmlDeviceGetGraphicsRunningProcesses: Insufficient Permissions",
                               "NVML_ERROR_NO_PERMISSION"});
      g.errors.push_back("nvmlDeviceGetGraphicsRunningProcesses: Insufficient Permissions");
    }
    sp.p->Ingest(Host(t0 + second, {g}), true, false);
  };
  for (int s = 0; s <= 600; s += 5) at(s, true);
  for (int s = 605; s <= 640; s += 5) at(s, false);
  ASSERT_EQ(AllRecords(*sp.store).size(), 1u);
  EXPECT_EQ(AllRecords(*sp.store)[0].end, storage::ProcessEnd::kRunning) << "40 s missing: not known to have left";
  for (int s = 645; s <= 900; s += 5) at(s, false);
  std::vector<storage::ProcessRecord> records = AllRecords(*sp.store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].end, storage::ProcessEnd::kRunning) << "missing for 5 minutes: ended";
  EXPECT_EQ(sp.p->BuildState(t0 + 900)->gpus.at(0).process_analysis.count("41877"), 0u);
}

// A process without enough data for a verdict yet is assessed at every refresh: what the status
// says of it follows its samples, not the once-a-minute cadence of the others.
TEST(WatchPipelineProcesses, ANewProcessIsAssessedAtEachRefreshUntilItHasAVerdict) {
  WatchPipeline p(FastAlerts(), nullptr, {});
  const double t0 = 1'790'000'000;
  std::vector<std::string> evidence;
  for (int i = 0; i <= 10; ++i) {
    GpuSnapshot g = Gpu(0, t0 + i, 1500);
    g.processes = {Proc(4242, 1000 + i, "python3 train.py")};
    p.Ingest(Host(t0 + i, {g}), true, false);
  }
  auto state = p.BuildState(t0 + 10);
  const outputs::SeriesVerdict& v = state->gpus.at(0).process_analysis.at("4242");
  EXPECT_EQ(v.verdict, "insufficient_data");
  std::string all;
  for (const std::string& e : v.evidence) all += e;
  EXPECT_NE(all.find("11 samples"), std::string::npos) << all;
}

// A process leaking on a 10 GiB MIG GPU instance of an 80 GiB card: its runway is the instance's
// room (less the instance's other holder), not the card's; without the MIG devices it would be the
// card's, tens of hours longer.
TEST(WatchPipelineProcesses, AProcessOnAMigInstanceRunsOutOfTheInstanceNotTheCard) {
  auto runway_h = [](bool with_mig) -> std::optional<double> {
    WatchPipeline p(FastAlerts(), nullptr, {});
    const double t0 = 1'790'000'000;
    std::optional<double> tto;
    for (int i = 0; i <= 8 * 60; ++i) {
      const double t = t0 + 60.0 * i;
      const double leaking_mib = 2048 + 600.0 * i / 60 + (i % 3) * 4;  // 600 MiB/h
      GpuSnapshot g = Gpu(0, t, 3000 + 1024 + leaking_mib);
      ProcessSnapshot leaking = Proc(500, leaking_mib, "python3 serve.py");
      ProcessSnapshot other = Proc(501, 1024, "python3 eval.py");
      ProcessSnapshot elsewhere = Proc(502, 3000, "python3 train.py");
      if (with_mig) {
        g.mig_enabled = true;
        leaking.gpu_instance_id = other.gpu_instance_id = 9;
        elsewhere.gpu_instance_id = 2;
        MigDeviceSnapshot big, small;
        big.gpu_instance_id = 2;
        big.memory_total_bytes = static_cast<uint64_t>(40448 * kMiB);
        big.memory_used_bytes = static_cast<uint64_t>(3000 * kMiB);
        small.gpu_instance_id = 9;
        small.memory_total_bytes = static_cast<uint64_t>(9984 * kMiB);
        small.memory_used_bytes = static_cast<uint64_t>((1024 + leaking_mib) * kMiB);
        g.mig_devices = {big, small};
      }
      g.processes = {leaking, other, elsewhere};
      p.Ingest(Host(t, {g}), true, false);
    }
    auto state = p.BuildState(t0 + 8 * 3600);
    const auto& procs = state->gpus.at(0).process_analysis;
    auto it = procs.find("500");
    if (it == procs.end() || it->second.verdict != "leak" || !it->second.time_to_oom_s) return std::nullopt;
    return *it->second.time_to_oom_s / 3600;
  };
  // At the end PID 500 holds 6848 MiB and PID 501 1024 MiB of the instance's 9984 MiB: 2112 MiB
  // left at 600 MiB/h is about 3.5 h.
  std::optional<double> mig = runway_h(true);
  ASSERT_TRUE(mig.has_value()) << "PID 500 should be a leak with a runway";
  EXPECT_GT(*mig, 2.5);
  EXPECT_LT(*mig, 4.5);
  std::optional<double> card = runway_h(false);
  ASSERT_TRUE(card.has_value());
  EXPECT_GT(*card, 50) << "without MIG the room is the card's (80 GiB less the others' 4 GiB)";
}

}  // namespace
}  // namespace vw::cli
