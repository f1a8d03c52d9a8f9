#include "detection/findings.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace vw::detection {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

ProcessSnapshot Proc(int64_t pid, uint64_t used_mib, ProcState state = ProcState::kSleeping, double sm = 0.5) {
  ProcessSnapshot p;
  p.pid = pid;
  p.compute = true;
  p.used_bytes = used_mib * kMiB;
  p.sm_util_ratio = sm;
  p.info.alive = state != ProcState::kGone;
  p.info.state = state;
  p.info.command = "python3 train.py";
  p.info.cpu_seconds = 10;
  return p;
}

GpuSnapshot Gpu(uint64_t used_mib, std::vector<ProcessSnapshot> procs) {
  GpuSnapshot g;
  g.index = 0;
  g.uuid = "GPU-0000";
  g.minor = 0;
  g.memory_total_bytes = 81559 * kMiB;
  g.memory_reserved_bytes = 479 * kMiB;
  g.memory_used_bytes = used_mib * kMiB;
  g.memory_free_bytes = (81559 - 479 - used_mib) * kMiB;
  g.processes = std::move(procs);
  return g;
}

HostSnapshot Host(double t, std::vector<GpuSnapshot> gpus) {
  HostSnapshot h;
  h.t = t;
  h.gpus = std::move(gpus);
  return h;
}

const Finding* Find(const CheckResult& r, const std::string& kind) {
  for (const auto& f : r.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

CheckResult OneShot(GpuSnapshot g, CheckConfig c = {}) {
  CheckInput in;
  in.samples.push_back(Host(100, {std::move(g)}));
  return EvaluateCheck(in, c);
}

TEST(Findings, HealthyGpuWithSmallUnattributedRemainderIsOk) {
  CheckResult r = OneShot(Gpu(10260, {Proc(10, 10240)}));
  EXPECT_EQ(r.worst, Severity::kOk);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const std::string& n) { return n.find("idle_holder not judged") != std::string::npos; }));
}

TEST(Findings, OneShotOrphanIsWarningWhenSmallOrHeldAndCriticalWhenLargeAndUnheld) {
  CheckResult small = OneShot(Gpu(10240 + 512, {Proc(10, 10240)}));
  const Finding* f = Find(small, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(*f->bytes, 512 * kMiB);
  EXPECT_NE(f->message.find("lazy reclaim"), std::string::npos);

  CheckResult large = OneShot(Gpu(12288, {}));
  f = Find(large, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->action.find("GPU reset"), std::string::npos);
  EXPECT_EQ(large.worst, Severity::kCritical);

  ProcessSnapshot holder = Proc(77, 0);
  holder.listed_by_nvml = false;
  holder.used_bytes.reset();
  CheckResult held = OneShot(Gpu(12288, {holder}));
  f = Find(held, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("77"), std::string::npos);
  const Finding* u = Find(held, "unlisted_holder");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->severity, Severity::kWarning);
}

// "Nothing holds it, only a GPU reset" needs the fd scan to have seen every process: where fd
// directories could not be read, other users' processes are hidden (hidepid), or NVML gives no
// minor number for the GPU, a holder may be unseen. Then it is a warning that says what could not
// be read, and the step is to find the holder, not a reset.
TEST(Findings, OrphanWithNoHolderInSightIsAWarningWhenTheFdScanCouldNotSeeEverything) {
  auto expect_unsure = [](const CheckResult& r, const std::string& why) {
    const Finding* f = Find(r, "orphaned_memory");
    ASSERT_NE(f, nullptr) << why;
    EXPECT_EQ(f->severity, Severity::kWarning) << why;
    EXPECT_NE(f->message.find(why), std::string::npos) << f->message;
    EXPECT_EQ(f->action.find("only a GPU reset"), std::string::npos) << f->action;
    EXPECT_NE(f->action.find("Find the holder first"), std::string::npos) << f->action;
  };
  CheckInput in;
  in.samples.push_back(Host(100, {Gpu(12288, {})}));
  in.samples[0].holder_scan.dirs_unreadable = 3;
  expect_unsure(EvaluateCheck(in, {}), "the open files of 3 processes could not be read");
  in.samples[0].holder_scan.dirs_unreadable = 0;
  in.samples[0].holder_scan.pids_hidden = "/proc is mounted with hidepid=2 ...";
  expect_unsure(EvaluateCheck(in, {}), "other users' processes are hidden from vramwatch (hidepid)");
  in.samples[0].holder_scan.pids_hidden.clear();
  in.samples[0].gpus[0].minor.reset();
  expect_unsure(EvaluateCheck(in, {}), "NVML gives no minor number for this GPU");

  // With a window past grace: persistent, but still not "nothing holds it".
  CheckConfig c;
  c.window_s = 20;
  CheckInput w;
  w.samples.push_back(Host(0, {Gpu(12288, {})}));
  w.samples.push_back(Host(20, {Gpu(12288, {})}));
  w.samples[1].holder_scan.dirs_unreadable = 2;
  expect_unsure(EvaluateCheck(w, c), "the open files of 2 processes could not be read");
  w.samples[1].holder_scan.dirs_unreadable = 0;
  // The PIDs the scan could not read are named, the first few of them.
  w.samples[1].holder_scan.dirs_unreadable = 12;
  w.samples[1].holder_scan.unreadable_pids = {812, 1001, 1002, 1003, 1004, 1005, 1006, 1007};
  expect_unsure(EvaluateCheck(w, c),
                "the open files of 12 processes could not be read (PIDs 812, 1001, 1002, 1003, 1004, 1005, 1006, "
                "1007, and 4 more)");
  w.samples[1].holder_scan.dirs_unreadable = 1;
  w.samples[1].holder_scan.unreadable_pids = {812};
  expect_unsure(EvaluateCheck(w, c), "the open files of 1 process could not be read (PID 812)");
  w.samples[1].holder_scan.dirs_unreadable = 0;
  w.samples[1].holder_scan.unreadable_pids.clear();
  EXPECT_EQ(Find(EvaluateCheck(w, c), "orphaned_memory")->severity, Severity::kCritical);
}

TEST(Findings, ThresholdFlagIsRespected) {
  CheckConfig c;
  c.orphan_threshold_bytes = 1024 * kMiB;
  EXPECT_EQ(Find(OneShot(Gpu(10240 + 512, {Proc(10, 10240)}), c), "orphaned_memory"), nullptr);
}

// A threshold of 0 counts any unattributed memory, not none: a GPU whose listed processes hold
// all its used memory has no orphaned memory (0 B ≥ 0 raised a warning on every healthy GPU).
TEST(Findings, ZeroThresholdCountsAnyUnattributedMemoryButNotNone) {
  CheckConfig c;
  c.orphan_threshold_bytes = 0;
  EXPECT_EQ(Find(OneShot(Gpu(10240, {Proc(10, 10240)}), c), "orphaned_memory"), nullptr);
  const CheckResult one_mib = OneShot(Gpu(10241, {Proc(10, 10240)}), c);
  const Finding* f = Find(one_mib, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("1 MiB"), std::string::npos) << f->message;
}

// On a node of twelve GPUs, findings of one severity are listed by GPU in index order.
TEST(Findings, AreOrderedByGpuIndexNotAsText) {
  std::vector<GpuSnapshot> gpus;
  for (int i : {11, 10, 2, 1}) {
    GpuSnapshot g = Gpu(10240 + 2048, {Proc(100 + i, 10240)});
    g.index = i;
    g.minor = i;
    g.uuid = "GPU-" + std::to_string(i);
    gpus.push_back(g);
  }
  CheckInput in;
  in.samples.push_back(Host(100, std::move(gpus)));
  const CheckResult r = EvaluateCheck(in, {});
  std::vector<std::string> order;
  for (const Finding& f : r.findings)
    if (f.kind == "orphaned_memory") order.push_back(f.gpu);
  EXPECT_EQ(order, (std::vector<std::string>{"1", "2", "10", "11"}));
}

TEST(Findings, OlderDriverWithoutReservedRaisesTheThreshold) {
  GpuSnapshot g = Gpu(10240 + 479, {Proc(10, 10240)});
  g.memory_reserved_bytes.reset();
  CheckResult r = OneShot(g);
  EXPECT_EQ(Find(r, "orphaned_memory"), nullptr);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const std::string& n) { return n.find("reserved") != std::string::npos; }));
}

TEST(Findings, ListedProcessesHoldingMoreThanUsedIsANoteNotASilentZero) {
  const auto overcounted = [](const CheckResult& r) {
    return std::any_of(r.notes.begin(), r.notes.end(),
                       [](const std::string& n) { return n.find("hold 2.0 GiB more than") != std::string::npos; });
  };
  const CheckResult over = OneShot(Gpu(10240, {Proc(10, 8192), Proc(11, 4096)}));
  EXPECT_TRUE(overcounted(over));
  EXPECT_EQ(Find(over, "orphaned_memory"), nullptr);
  // A few MiB over (one process grew between the two reads) is below the threshold: no note.
  const CheckResult close = OneShot(Gpu(10240, {Proc(10, 8192), Proc(11, 2050)}));
  EXPECT_FALSE(std::any_of(close.notes.begin(), close.notes.end(),
                           [](const std::string& n) { return n.find("more than the device") != std::string::npos; }));
}

TEST(Findings, UnknownProcessMemoryMeansOrphansAreNotJudged) {
  ProcessSnapshot p = Proc(10, 0);
  p.used_bytes.reset();
  CheckResult r = OneShot(Gpu(20000, {p}));
  EXPECT_EQ(Find(r, "orphaned_memory"), nullptr);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const std::string& n) { return n.find("N/A") != std::string::npos; }));
}

// A MIG GPU with GPU instances 1 (one process, `used_mib` its memory; none: N/A) and 2 (one 1 GiB
// process), the instances using `used1_mib` and `used2_mib`.
GpuSnapshot MigGpu(std::optional<uint64_t> used_mib, uint64_t used1_mib, uint64_t used2_mib) {
  ProcessSnapshot a = Proc(10, used_mib.value_or(0));
  if (!used_mib) a.used_bytes.reset();
  a.gpu_instance_id = 1;
  ProcessSnapshot b = Proc(20, 1024);
  b.gpu_instance_id = 2;
  GpuSnapshot g = Gpu(used1_mib + used2_mib, {a, b});
  g.mig_enabled = true;
  for (unsigned gi : {1u, 2u}) {
    MigDeviceSnapshot m;
    m.gpu_instance_id = gi;
    m.compute_instance_id = 0;
    m.index = gi - 1;
    m.uuid = "MIG-" + std::to_string(gi);
    m.name = gi == 1 ? "NVIDIA H100 80GB HBM3 MIG 3g.40gb" : "NVIDIA H100 80GB HBM3 MIG 2g.20gb";
    m.memory_total_bytes = (gi == 1 ? 40448 : 20096) * kMiB;
    m.memory_used_bytes = (gi == 1 ? used1_mib : used2_mib) * kMiB;
    g.mig_devices.push_back(m);
  }
  return g;
}

// On a MIG GPU each GPU instance is judged on its own memory: a process whose memory NVML does not
// report (N/A) on instance 1 does not hide the memory no process owns on instance 2.
TEST(Findings, MigOrphanOnOneInstanceIsFoundDespiteAnUnknownProcessOnAnother) {
  CheckResult r = OneShot(MigGpu(std::nullopt, 5000, 1024 + 4096));
  const Finding* f = Find(r, "orphaned_memory");
  ASSERT_NE(f, nullptr) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f->bytes, 4096 * kMiB);
  EXPECT_NE(f->message.find("MIG GPU instance 2 (2g.20gb, MIG-2)"), std::string::npos) << f->message;
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("not judged on MIG GPU instance 1") != std::string::npos && n.find("N/A") != std::string::npos;
  })) << r.notes.size();
  // Nothing unowned on either instance: no finding, though the card-level sum would be unknown.
  EXPECT_EQ(Find(OneShot(MigGpu(std::nullopt, 5000, 1024 + 10)), "orphaned_memory"), nullptr);
  // Every process's memory known and every instance's memory owned: nothing to report either.
  EXPECT_EQ(Find(OneShot(MigGpu(5000, 5000, 1024)), "orphaned_memory"), nullptr);
}

// Memory no process owns in one MIG GPU instance: the step names the instance and frees it without
// disturbing the other instances' tenants (stop the instance's own process, destroy and recreate
// the instance); a full GPU reset only once every instance is idle, and no other tenant to stop.
TEST(Findings, MigOrphanActionRecreatesItsInstanceNotTheWholeGpu) {
  CheckResult r = OneShot(MigGpu(5000, 5000, 1024 + 4096));
  const Finding* f = Find(r, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("MIG GPU instance 2 (2g.20gb, MIG-2) of GPU 0"), std::string::npos) << f->message;
  const std::string& a = f->action;
  EXPECT_NE(a.find("stop PID 20 on this instance"), std::string::npos) << a;
  EXPECT_EQ(a.find("10"), std::string::npos) << "the other instance's process is another tenant: " << a;
  EXPECT_NE(a.find("`nvidia-smi mig -dci -gi 2 -i 0`"), std::string::npos) << a;
  EXPECT_NE(a.find("`nvidia-smi mig -dgi -gi 2 -i 0`"), std::string::npos) << a;
  EXPECT_NE(a.find("`nvidia-smi mig -cgi 2g.20gb -C -i 0`"), std::string::npos) << a;
  EXPECT_NE(a.find("only once every GPU instance is idle"), std::string::npos) << a;
  EXPECT_LT(a.find("-dgi"), a.find("--gpu-reset")) << a;
}

TEST(Findings, WindowedOrphanIsCriticalOnlyWhenItPersistsPastGrace) {
  CheckConfig c;
  c.window_s = 30;
  CheckInput persistent;
  for (int t = 0; t <= 30; t += 10) persistent.samples.push_back(Host(t, {Gpu(2048, {})}));
  const Finding* f = nullptr;
  CheckResult r = EvaluateCheck(persistent, c);
  f = Find(r, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);

  CheckInput reclaiming;  // freshly killed: the memory shows up only in the last sample
  reclaiming.samples.push_back(Host(0, {Gpu(0, {})}));
  reclaiming.samples.push_back(Host(15, {Gpu(0, {})}));
  reclaiming.samples.push_back(Host(30, {Gpu(2048, {})}));
  r = EvaluateCheck(reclaiming, c);
  f = Find(r, "orphaned_memory");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);

  CheckConfig long_grace = c;
  long_grace.grace_s = 60;  // window shorter than grace: judged like a one-shot check
  r = EvaluateCheck(persistent, long_grace);
  ASSERT_NE(Find(r, "orphaned_memory"), nullptr);
  EXPECT_EQ(Find(r, "orphaned_memory")->severity, Severity::kCritical);  // 2 GiB, nobody holds it
}

TEST(Findings, DeadZombieAndStuckHoldersAreCritical) {
  ProcessSnapshot dead = Proc(100, 1024, ProcState::kGone);
  ProcessSnapshot zombie = Proc(101, 2048, ProcState::kZombie);
  ProcessSnapshot stuck = Proc(102, 4096, ProcState::kDiskSleep);
  stuck.info.container_pid = 7;
  stuck.info.container_id = std::string(64, 'c');
  CheckResult r = OneShot(Gpu(1024 + 2048 + 4096, {dead, zombie, stuck}));
  ASSERT_NE(Find(r, "dead_holder"), nullptr);
  EXPECT_EQ(Find(r, "dead_holder")->severity, Severity::kCritical);
  EXPECT_EQ(*Find(r, "dead_holder")->pid, 100);
  ASSERT_NE(Find(r, "zombie_holder"), nullptr);
  EXPECT_NE(Find(r, "zombie_holder")->action.find("find its parent (`ps -o ppid= -p 101`)"), std::string::npos);
  const Finding* s = Find(r, "stuck_holder");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->severity, Severity::kCritical);
  EXPECT_NE(s->action.find("kill -TERM 102"), std::string::npos);
  EXPECT_NE(s->action.find("PID 7"), std::string::npos);  // container-side PID named too
  EXPECT_NE(s->action.find("docker exec cccccccccccc kill -TERM 7"), std::string::npos);
  EXPECT_EQ(r.findings.front().severity, Severity::kCritical);
}

// A container PID is killed with the client of the runtime the cgroup path names: crictl for
// containerd and CRI-O (and a bare ID in a pod), podman for podman, docker for Docker.
TEST(Findings, TheKillHintForAContainerUsesItsRuntimesClient) {
  auto action_for = [](const std::string& runtime, const std::string& pod_uid) {
    ProcessSnapshot stuck = Proc(102, 4096, ProcState::kDiskSleep);
    stuck.info.container_pid = 60;
    stuck.info.container_id = std::string(64, 'c');
    stuck.info.container_runtime = runtime;
    stuck.info.pod_uid = pod_uid;
    const CheckResult r = OneShot(Gpu(4096, {stuck}));
    const Finding* s = Find(r, "stuck_holder");
    return s == nullptr ? std::string() : s->action;
  };
  const std::string pod = "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c";
  EXPECT_NE(action_for("crio", pod).find("`crictl exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("containerd", "").find("`crictl exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("", pod).find("`crictl exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("podman", "").find("`podman exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("nerdctl", "").find("`nerdctl exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("docker", "").find("`docker exec cccccccccccc kill -TERM 60`"), std::string::npos);
  EXPECT_NE(action_for("", "").find("`docker exec cccccccccccc kill -TERM 60`"), std::string::npos);
}

// A zombie's step names its parent, the process that must reap it, by PID and command; a zombie
// whose parent is PID 1 is not reaped for want of a parent, and the step does not say to end init.
TEST(Findings, AZombiesStepNamesItsParent) {
  ProcessSnapshot zombie = Proc(7001, 2048, ProcState::kZombie);
  zombie.info.ppid = 4000;
  zombie.info.parent_command = "python3 launcher.py --workers 8";
  const CheckResult r = OneShot(Gpu(2048, {zombie}));
  const Finding* z = Find(r, "zombie_holder");
  ASSERT_NE(z, nullptr);
  EXPECT_NE(z->action.find("end its parent, PID 4000 `python3 launcher.py --workers 8`, with SIGTERM (`kill -TERM "
                           "4000`) so it is reaped."),
            std::string::npos)
      << z->action;
  zombie.info.ppid = 1;
  zombie.info.parent_command = "/sbin/init";
  const CheckResult init = OneShot(Gpu(2048, {zombie}));
  const Finding* i = Find(init, "zombie_holder");
  ASSERT_NE(i, nullptr);
  EXPECT_NE(i->action.find("its parent is PID 1, which reaps it once every thread of it has exited"), std::string::npos)
      << i->action;
  EXPECT_EQ(i->action.find("kill -TERM 1`"), std::string::npos) << i->action;
  // A long parent command is cut at 77 bytes, between characters: after 76 bytes of ASCII, the
  // 77th is the first of an "é" (2 bytes), which is left out whole.
  zombie.info.ppid = 4000;
  zombie.info.parent_command = "python3 " + std::string(68, 'x');
  for (int k = 0; k < 10; ++k) zombie.info.parent_command += "é";
  const CheckResult cut = OneShot(Gpu(2048, {zombie}));
  const Finding* c = Find(cut, "zombie_holder");
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->action.find("`python3 " + std::string(68, 'x') + "...`"), std::string::npos) << c->action;
}

// The classic defunct GPU process: its main thread a zombie, a thread of it stuck in the driver (D).
// It is stuck, not a zombie; its parent cannot reap it, and the step does not say to end the
// parent.
TEST(Findings, ADefunctProcessWithAThreadInTheDriverIsStuckNotAZombie) {
  ProcessSnapshot defunct = Proc(7001, 2048, ProcState::kDiskSleep);
  defunct.info.main_thread_exited = true;
  defunct.info.stuck_tid = 7003;
  defunct.info.ppid = 4000;
  const CheckResult r = OneShot(Gpu(2048, {defunct}));
  EXPECT_EQ(Find(r, "zombie_holder"), nullptr);
  const Finding* s = Find(r, "stuck_holder");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->severity, Severity::kCritical);
  EXPECT_NE(s->message.find("main thread has exited (zombie"), std::string::npos) << s->message;
  EXPECT_NE(s->message.find("thread 7003 is in uninterruptible sleep (D)"), std::string::npos) << s->message;
  EXPECT_NE(s->action.find("Ending its parent does not help"), std::string::npos) << s->action;
  EXPECT_EQ(s->action.find("kill -TERM 4000"), std::string::npos) << s->action;
  EXPECT_NE(s->action.find("kill -TERM 7001"), std::string::npos) << s->action;

  ProcessSnapshot running = Proc(7101, 2048, ProcState::kRunning);
  running.info.main_thread_exited = true;
  const CheckResult alive = OneShot(Gpu(2048, {running}));
  EXPECT_EQ(Find(alive, "zombie_holder"), nullptr);
  EXPECT_EQ(Find(alive, "stuck_holder"), nullptr);
  EXPECT_TRUE(std::any_of(alive.notes.begin(), alive.notes.end(), [](const std::string& n) {
    return n.find("PID 7101: its main thread has exited (zombie) but other threads still run (running)") !=
           std::string::npos;
  })) << alive.notes.size();
}

// A holder of a Kubernetes pod whose names the kubelet's log directory gave: the finding names the
// container and the pod by them.
TEST(Findings, AHolderInANamedPodIsNamedByItsPodAndContainer) {
  ProcessSnapshot zombie = Proc(4310, 2048, ProcState::kZombie);
  zombie.info.container_pid = 12;
  zombie.info.container_id = std::string(64, 'c');
  zombie.info.pod_uid = "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c";
  zombie.info.pod_namespace = "ml";
  zombie.info.pod_name = "llm-serve-0";
  zombie.info.container_name = "vllm";
  CheckResult r = OneShot(Gpu(2048, {zombie}));
  const Finding* z = Find(r, "zombie_holder");
  ASSERT_NE(z, nullptr);
  EXPECT_NE(z->message.find("container vllm, pod ml/llm-serve-0"), std::string::npos) << z->message;
  EXPECT_EQ(z->message.find("6b8e2a1c"), std::string::npos) << z->message;
}

TEST(Findings, StuckHolderInANamedPodIsKilledThroughKubectl) {
  ProcessSnapshot stuck = Proc(102, 4096, ProcState::kDiskSleep);
  stuck.info.container_pid = 7;
  stuck.info.container_id = std::string(64, 'c');
  stuck.info.pod_namespace = "ml";
  stuck.info.pod_name = "llm-serve-0";
  stuck.info.container_name = "vllm";
  CheckResult r = OneShot(Gpu(4096, {stuck}));
  const Finding* s = Find(r, "stuck_holder");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->action.find("`kubectl exec -n ml llm-serve-0 -c vllm -- kill -TERM 7`"), std::string::npos) << s->action;
}

TEST(Findings, DStateInOnlySomeWindowSamplesIsNotStuck) {
  CheckConfig c;
  c.window_s = 20;
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(4096, {Proc(5, 4096, ProcState::kRunning)})}));
  in.samples.push_back(Host(20, {Gpu(4096, {Proc(5, 4096, ProcState::kDiskSleep)})}));
  EXPECT_EQ(Find(EvaluateCheck(in, c), "stuck_holder"), nullptr);
  in.samples[0] = Host(0, {Gpu(4096, {Proc(5, 4096, ProcState::kDiskSleep)})});
  EXPECT_NE(Find(EvaluateCheck(in, c), "stuck_holder"), nullptr);
}

TEST(Findings, NamespaceBlindnessSuppressesDeadHolders) {
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(1024, {Proc(100, 1024, ProcState::kGone)})}));
  in.samples[0].host_pids_visible = false;
  in.pid_namespace_evidence = "PID 1 here is PID 4242 on the host";
  CheckResult r = EvaluateCheck(in, {});
  EXPECT_EQ(Find(r, "dead_holder"), nullptr);
  const Finding* f = Find(r, "pid_namespace_blind");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("4242"), std::string::npos);
  EXPECT_NE(f->action.find("--pid=host"), std::string::npos);
}

// /proc mounted hidepid=invisible, vramwatch not root: a listed holder not found is of unknown
// state (not dead), and the notes say that other users' processes are hidden and what to do.
TEST(Findings, HiddenProcessesAreNotDeadAndANoteSaysWhy) {
  ProcessSnapshot hidden = Proc(100, 1024, ProcState::kUnknown);
  hidden.info.alive = false;
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(1024, {hidden})}));
  in.samples[0].holder_scan.pids_hidden = "/proc is mounted with hidepid=invisible ... Run vramwatch as root";
  CheckResult r = EvaluateCheck(in, {});
  EXPECT_EQ(Find(r, "dead_holder"), nullptr);
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), in.samples[0].holder_scan.pids_hidden), r.notes.end());
}

TEST(Findings, IdleHolderNeedsZeroSmInEverySampleOfTheWindow) {
  CheckConfig c;
  c.window_s = 30;
  CheckInput in;
  for (int t = 0; t <= 30; t += 10)
    in.samples.push_back(Host(t, {Gpu(4096, {Proc(9, 4096, ProcState::kSleeping, 0)})}));
  CheckResult r = EvaluateCheck(in, c);
  const Finding* f = Find(r, "idle_holder");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("no CPU time"), std::string::npos);

  in.samples[1].gpus[0].processes[0].sm_util_ratio = 0.4;
  EXPECT_EQ(Find(EvaluateCheck(in, c), "idle_holder"), nullptr);

  in.samples[1].gpus[0].processes[0].sm_util_ratio.reset();
  r = EvaluateCheck(in, c);
  EXPECT_EQ(Find(r, "idle_holder"), nullptr);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                          [](const std::string& n) { return n.find("no SM sample") != std::string::npos; }));

  CheckInput one;
  one.samples.push_back(in.samples.back());
  one.samples[0].gpus[0].processes[0].sm_util_ratio = 0;
  EXPECT_EQ(Find(EvaluateCheck(one, {}), "idle_holder"), nullptr);  // no window: not judged
}

TEST(Findings, LostAndUnresponsiveGpusAndFailedCalls) {
  GpuSnapshot lost = Gpu(0, {});
  lost.lost = true;
  EXPECT_EQ(Find(OneShot(lost), "gpu_lost")->severity, Severity::kCritical);

  GpuSnapshot hung = Gpu(0, {});
  hung.responsive = false;
  hung.errors = {"nvmlDeviceGetComputeRunningProcesses_v3: deadline of 2 s passed"};
  const CheckResult hung_result = OneShot(hung);  // Find() points into it: keep it alive
  const Finding* f = Find(hung_result, "nvml_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);

  GpuSnapshot failing = Gpu(0, {});
  failing.errors = {"nvmlDeviceGetMemoryInfo_v2: Unknown Error"};
  failing.nvml_errors = {{"nvmlDeviceGetMemoryInfo_v2", 999, "nvmlDeviceGetMemoryInfo_v2: Unknown Error"},
                         {"nvmlDeviceGetBAR1MemoryInfo", 3, "nvmlDeviceGetBAR1MemoryInfo: Not Supported"}};
  CheckResult r = OneShot(failing);
  f = Find(r, "nvml_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->message.find("BAR1"), std::string::npos);
}

TEST(Findings, XidSeverityFollowsItsClass) {
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(0, {})}));
  XidSummary hw;
  hw.gpu = "0";
  hw.xid = 79;
  hw.count = 1;
  hw.klass = XidSummary::Class::kHardware;
  hw.meaning = "GPU has fallen off the bus";
  hw.action = "Rule out hardware: ...";
  XidSummary app = hw;
  app.xid = 31;
  app.klass = XidSummary::Class::kApplication;
  app.pids = {4242};
  XidSummary info = hw;
  info.xid = 45;
  info.klass = XidSummary::Class::kInformational;
  in.xids = {app, info, hw};
  CheckResult r = EvaluateCheck(in, {});
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_NE(r.findings[0].message.find("Xid 79"), std::string::npos);
  EXPECT_EQ(r.findings[1].severity, Severity::kWarning);
  EXPECT_EQ(r.findings[1].pid, 4242);
  EXPECT_EQ(r.findings[2].severity, Severity::kOk);
}

// An Xid finding's text is bounded: the first 8 PIDs and how many more, the last message cut.
TEST(Findings, XidFindingNamesAtMostEightPidsAndCutsALongMessage) {
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(0, {})}));
  XidSummary x;
  x.gpu = "0";
  x.xid = 13;
  x.count = 5000;
  x.klass = XidSummary::Class::kApplication;
  for (int64_t pid = 1000; pid < 6000; ++pid) x.pids.push_back(pid);
  x.last_message = std::string(100000, 'y');
  in.xids = {x};
  CheckResult r = EvaluateCheck(in, {});
  ASSERT_EQ(r.findings.size(), 1u);
  const std::string& m = r.findings[0].message;
  EXPECT_LT(m.size(), 500u) << m.size();
  EXPECT_NE(m.find("PIDs 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007 and 4992 more"), std::string::npos) << m;
  EXPECT_NE(m.find("yyy...\""), std::string::npos) << m.substr(m.size() - 40);
}

}  // namespace
}  // namespace vw::detection

namespace vw::detection {
namespace {

TEST(Findings, OrphansAreNotJudgedWhenTheProcessListFailedOrHung) {
  GpuSnapshot hung = Gpu(4096, {});
  hung.responsive = false;
  hung.errors = {"nvmlDeviceGetComputeRunningProcesses_v3: no answer within the 2 s deadline"};
  CheckResult r = OneShot(hung);
  EXPECT_EQ(Find(r, "orphaned_memory"), nullptr);
  EXPECT_NE(Find(r, "nvml_error"), nullptr);

  GpuSnapshot failed = Gpu(4096, {});
  failed.nvml_errors = {{"nvmlDeviceGetGraphicsRunningProcesses_v3", 999, "x"}};
  r = OneShot(failed);
  EXPECT_EQ(Find(r, "orphaned_memory"), nullptr);
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("process list could not be read") != std::string::npos;
  }));

  GpuSnapshot unsupported = Gpu(4096, {});  // MPS list not supported: the others are complete
  unsupported.nvml_errors = {{"nvmlDeviceGetMPSComputeRunningProcesses_v3", 3, "x"}};
  EXPECT_NE(Find(OneShot(unsupported), "orphaned_memory"), nullptr);

  // A MIG GPU lists its processes per MIG device: when the devices could not be listed, the
  // processes on the ones missed are not orphans.
  for (const char* call : {"nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetMaxMigDeviceCount"}) {
    GpuSnapshot mig = Gpu(4096, {});
    mig.mig_enabled = true;
    mig.nvml_errors = {{call, 999, "x"}};
    EXPECT_FALSE(ProcessListComplete(mig)) << call;
    EXPECT_EQ(Find(OneShot(mig), "orphaned_memory"), nullptr) << call;
    mig.mig_enabled = false;  // not a MIG GPU: the call says nothing of its process list
    EXPECT_TRUE(ProcessListComplete(mig)) << call;
  }
}

}  // namespace
}  // namespace vw::detection

namespace vw::detection {
namespace {

// The orphan's next step names the PIDs to stop first: "PID" for one, "PIDs" for several.
TEST(Findings, OrphanActionSaysPidForOneHolderElsewhereAndPidsForSeveral) {
  struct Case {
    std::vector<int64_t> pids;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{{{10}, ": stop PID 10 first"}, {{10, 11}, ": stop PIDs 10, 11 first"}}) {
    std::vector<ProcessSnapshot> on0, opened;
    for (int64_t pid : c.pids) {
      on0.push_back(Proc(pid, 2048));
      ProcessSnapshot o = Proc(pid, 0);
      o.listed_by_nvml = false;
      o.used_bytes.reset();
      opened.push_back(o);
    }
    GpuSnapshot g0 = Gpu(2048 * c.pids.size(), on0);
    GpuSnapshot g1 = Gpu(2048, opened);
    g1.index = 1;
    g1.uuid = "GPU-1111";
    g1.minor = 1;
    CheckInput in;
    in.samples.push_back(Host(0, {g0, g1}));
    const CheckResult result = EvaluateCheck(in, {});  // held: `orphan` points into it
    const Finding* orphan = Find(result, "orphaned_memory");
    ASSERT_NE(orphan, nullptr) << c.expected;
    EXPECT_NE(orphan->action.find(c.expected), std::string::npos) << orphan->action;
  }
}

// A GPU with hundreds of processes: the orphaned-memory finding names the first few and counts
// the rest, in its message and its next step, instead of burying the page and the alert.
TEST(Findings, OrphanedMemoryOnABusyGpuNamesAFewProcessesAndCountsTheRest) {
  std::vector<ProcessSnapshot> procs;
  for (int64_t pid = 1000; pid < 1200; ++pid) procs.push_back(Proc(pid, 10));
  GpuSnapshot g = Gpu(200 * 10 + 4096, procs);  // 4 GiB nobody owns
  const CheckResult result = OneShot(g);
  const Finding* orphan = Find(result, "orphaned_memory");
  ASSERT_NE(orphan, nullptr);
  EXPECT_NE(orphan->message.find("1007"), std::string::npos) << orphan->message;
  EXPECT_EQ(orphan->message.find("1008"), std::string::npos) << orphan->message;
  EXPECT_NE(orphan->message.find("and 192 more"), std::string::npos) << orphan->message;
  EXPECT_LT(orphan->message.size(), 1000u);
  EXPECT_LT(orphan->action.size(), 1000u) << orphan->action;
}

TEST(Findings, CudaProcessOfAnotherGpuIsNotASuspectForOrphanedMemory) {
  GpuSnapshot g0 = Gpu(4096, {Proc(10, 4096)});
  GpuSnapshot g1 = Gpu(2048, {});
  g1.index = 1;
  g1.uuid = "GPU-1111";
  g1.minor = 1;
  ProcessSnapshot opened = Proc(10, 0);  // the trainer of GPU 0 has /dev/nvidia1 open too
  opened.listed_by_nvml = false;
  opened.used_bytes.reset();
  g1.processes = {opened};
  CheckInput in;
  in.samples.push_back(Host(0, {g0, g1}));
  CheckResult r = EvaluateCheck(in, {});
  const Finding* orphan = Find(r, "orphaned_memory");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->gpu, "1");
  EXPECT_EQ(orphan->severity, Severity::kCritical);  // 2 GiB that nobody suspicious holds
  // Named by PID and command, as the process's own findings name it.
  EXPECT_NE(
      orphan->message.find("Only processes computing on other GPUs have /dev/nvidia1 open (10 `python3 train.py`)"),
      std::string::npos)
      << orphan->message;
  EXPECT_NE(orphan->action.find("stop PID 10 first"), std::string::npos) << orphan->action;  // one PID: singular
  const Finding* unlisted = Find(r, "unlisted_holder");
  ASSERT_NE(unlisted, nullptr);
  EXPECT_EQ(unlisted->severity, Severity::kOk);
  EXPECT_NE(unlisted->message.find("computes on GPU 0"), std::string::npos) << unlisted->message;
  EXPECT_NE(unlisted->message.find("open without a context on GPU 1"), std::string::npos) << unlisted->message;
  // GPU 1's process list could not be read: no claim about its contexts.
  in.samples[0].gpus[1].nvml_errors = {{"nvmlDeviceGetComputeRunningProcesses_v3", 999, "Unknown Error"}};
  const CheckResult unread = EvaluateCheck(in, {});
  const Finding* u = Find(unread, "unlisted_holder");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->severity, Severity::kOk);
  EXPECT_EQ(u->message.find("without a context"), std::string::npos) << u->message;
  EXPECT_NE(u->message.find("NVML's process list of GPU 1 could not be read, so whether it holds a context there is "
                            "unknown); it computes on GPU 0"),
            std::string::npos)
      << u->message;
}

}  // namespace
}  // namespace vw::detection

namespace vw::detection {
namespace {

bool HasNote(const CheckResult& r, const std::string& text) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// A live process NVML lists has the device file open too: the orphan's message must not say that
// nobody does, and a GPU reset needs it stopped first.
TEST(Findings, OrphanBesideALiveListedProcessNamesItAndTheResetStopsIt) {
  const CheckResult r = OneShot(Gpu(15000, {Proc(2101, 10000)}));
  const Finding* orphan = Find(r, "orphaned_memory");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->severity, Severity::kWarning);  // a live listed process: may be lazy reclaim
  EXPECT_EQ(orphan->message.find("No process has"), std::string::npos) << orphan->message;
  EXPECT_NE(orphan->message.find("Apart from the processes NVML lists on this GPU, whose memory is counted (2101 "
                                 "`python3 train.py`), no process has /dev/nvidia0 open"),
            std::string::npos)
      << orphan->message;
  EXPECT_NE(orphan->action.find("stop PID 2101 first"), std::string::npos) << orphan->action;
  EXPECT_EQ(orphan->action.find("Nothing holds it"), std::string::npos) << orphan->action;

  const CheckResult alone = OneShot(Gpu(5000, {}));  // nobody at all: the old words stay
  ASSERT_NE(Find(alone, "orphaned_memory"), nullptr);
  EXPECT_NE(Find(alone, "orphaned_memory")->message.find("No process has /dev/nvidia0 open"), std::string::npos);
  EXPECT_NE(Find(alone, "orphaned_memory")->action.find("Nothing holds it any more"), std::string::npos);
}

// Without the host's PID namespace the fd scan's PIDs are this namespace's and NVML's are the
// host's: an fd holder is not "unlisted", nobody is told to kill it "on the host", and an orphan
// with no holder in sight is not called unheld.
TEST(Findings, NamespaceBlindnessMakesNoClaimAboutFdHolders) {
  ProcessSnapshot listed = Proc(41877, 4096);
  listed.info.alive = false;
  listed.info.state = ProcState::kUnknown;
  ProcessSnapshot local = Proc(7, 0);
  local.listed_by_nvml = false;
  local.used_bytes.reset();
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(4096 + 2048, {listed, local})}));
  in.samples[0].host_pids_visible = false;
  const CheckResult r = EvaluateCheck(in, {});
  const Finding* unlisted = Find(r, "unlisted_holder");
  ASSERT_NE(unlisted, nullptr);
  EXPECT_EQ(unlisted->severity, Severity::kOk);
  EXPECT_NE(unlisted->message.find("cannot be told here"), std::string::npos) << unlisted->message;
  EXPECT_EQ(unlisted->action.find("kill"), std::string::npos) << unlisted->action;
  const Finding* orphan = Find(r, "orphaned_memory");
  ASSERT_NE(orphan, nullptr);
  EXPECT_NE(orphan->message.find("cannot be matched with NVML's host PIDs): 7 `python3 train.py`"), std::string::npos)
      << orphan->message;
  EXPECT_NE(orphan->action.find("--pid=host"), std::string::npos) << orphan->action;

  in.samples[0].gpus[0].processes = {listed};
  in.samples[0].gpus[0].memory_used_bytes = (4096ull + 2048) * kMiB;
  const CheckResult unseen = EvaluateCheck(in, {});
  const Finding* o2 = Find(unseen, "orphaned_memory");
  ASSERT_NE(o2, nullptr);
  EXPECT_EQ(o2->severity, Severity::kWarning);  // 2 GiB, no holder seen: but the host cannot be seen
  EXPECT_NE(o2->message.find("the host's processes cannot be seen"), std::string::npos) << o2->message;
}

// In another PID namespace with every holder gone (NVML lists none): the memory is still not called
// unheld, neither at one look nor over a window (a holder may be on the host), and an idle GPU gets
// a note, not a finding.
TEST(Findings, NamespaceBlindnessWithNothingListedIsANoteAndNeverAnUnheldOrphan) {
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(12288, {})}));
  in.samples[0].host_pids_visible = false;
  in.pid_namespace_evidence = "PID 1 here is PID 81000 on the host (/proc/1/sched)";
  CheckResult one = EvaluateCheck(in, {});
  EXPECT_EQ(Find(one, "pid_namespace_blind"), nullptr);
  const Finding* o = Find(one, "orphaned_memory");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->severity, Severity::kWarning);
  EXPECT_EQ(o->action.find("GPU reset"), std::string::npos) << o->action;
  bool noted = false;
  for (const auto& n : one.notes) noted |= n.find("PID 81000 on the host") != std::string::npos;
  EXPECT_TRUE(noted);

  CheckConfig c;
  c.window_s = 20;
  CheckInput w = in;
  w.samples.push_back(Host(20, {Gpu(12288, {})}));
  w.samples[1].host_pids_visible = false;
  const Finding* ow = Find(EvaluateCheck(w, c), "orphaned_memory");
  ASSERT_NE(ow, nullptr);
  EXPECT_EQ(ow->severity, Severity::kWarning);
  EXPECT_NE(ow->action.find("--pid=host"), std::string::npos) << ow->action;
  // On the host the same window is critical.
  w.samples[0].host_pids_visible = w.samples[1].host_pids_visible = true;
  EXPECT_EQ(Find(EvaluateCheck(w, c), "orphaned_memory")->severity, Severity::kCritical);
}

TEST(Findings, AnFdHolderOfAGpuWhoseListFailedIsNotCalledUnlisted) {
  ProcessSnapshot opened = Proc(2301, 0);
  opened.listed_by_nvml = false;
  opened.used_bytes.reset();
  GpuSnapshot g = Gpu(4096, {opened});
  g.nvml_errors = {{"nvmlDeviceGetComputeRunningProcesses_v3", 999, "x: Unknown Error"}};
  const CheckResult r = OneShot(g);
  const Finding* f = Find(r, "unlisted_holder");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kOk);
  EXPECT_EQ(f->message.find("NVML lists no context"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("could not be read"), std::string::npos) << f->message;
}

TEST(Findings, DStateBeforeTheLastSampleOnlyIsANote) {
  CheckConfig c;
  c.window_s = 20;
  CheckInput in;
  in.samples.push_back(Host(0, {Gpu(4096, {Proc(5, 4096, ProcState::kDiskSleep)})}));
  in.samples.push_back(Host(10, {Gpu(4096, {Proc(5, 4096, ProcState::kDiskSleep)})}));
  in.samples.push_back(Host(20, {Gpu(4096, {Proc(5, 4096, ProcState::kSleeping)})}));
  const CheckResult r = EvaluateCheck(in, c);
  EXPECT_EQ(Find(r, "stuck_holder"), nullptr);
  EXPECT_TRUE(HasNote(r, "PID 5 was in D state in 2 of 3 samples: not stuck"));
  // D at the end too: one note, not two.
  in.samples.back() = Host(20, {Gpu(4096, {Proc(5, 4096, ProcState::kDiskSleep)})});
  in.samples.front() = Host(0, {Gpu(4096, {Proc(5, 4096, ProcState::kSleeping)})});
  const CheckResult end = EvaluateCheck(in, c);
  EXPECT_EQ(std::count_if(end.notes.begin(), end.notes.end(),
                          [](const std::string& n) { return n.find("D state") != std::string::npos; }),
            1);
}

// A GPU lost (GPU_IS_LOST) inside the window that answers at its end is said to have been lost,
// not to have hung: the next step is the GPU or its link, not a stuck call.
TEST(Findings, AGpuLostInsideTheWindowIsSaidToHaveBeenLost) {
  CheckConfig c;
  c.window_s = 30;
  CheckInput in;
  for (int t = 0; t <= 30; t += 10) in.samples.push_back(Host(t, {Gpu(1000, {})}));
  GpuSnapshot& lost = in.samples[1].gpus[0];
  lost.lost = true;
  lost.responsive = false;
  lost.memory_used_bytes.reset();
  lost.errors = {"nvmlDeviceGetMemoryInfo_v2: GPU is lost"};
  lost.nvml_errors = {{"nvmlDeviceGetMemoryInfo_v2", 15, "nvmlDeviceGetMemoryInfo_v2: GPU is lost"}};
  const CheckResult r = EvaluateCheck(in, c);
  const Finding* f = Find(r, "nvml_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("was lost (NVML answered GPU_IS_LOST) in 1 of 4 samples over 30s"), std::string::npos)
      << f->message;
  EXPECT_NE(f->action.find("Xid 79"), std::string::npos) << f->action;
}

// The same failing call on seven MIG slots is one error with its count.
TEST(Findings, TheSameFailedCallIsNamedOnceWithItsCount) {
  GpuSnapshot g = Gpu(0, {});
  const NvmlCallError e{"nvmlDeviceGetMigDeviceHandleByIndex", 999,
                        "nvmlDeviceGetMigDeviceHandleByIndex: Unknown Error"};
  g.nvml_errors = {e, e, e, {"nvmlDeviceGetName", 999, "nvmlDeviceGetName: Unknown Error"}};
  const CheckResult r = OneShot(g);
  const Finding* f = Find(r, "nvml_error");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("NVML calls failed: nvmlDeviceGetMigDeviceHandleByIndex: Unknown Error (3 times), "
                            "nvmlDeviceGetName: Unknown Error."),
            std::string::npos)
      << f->message;
}

// On a GPU in MIG mode NVML gives no process SM use: one note for the GPU, not one per process.
TEST(Findings, IdleHolderOnAMigGpuIsNotJudgedWithOneNoteForTheGpu) {
  CheckConfig c;
  c.window_s = 30;
  CheckInput in;
  for (int t = 0; t <= 30; t += 10) {
    GpuSnapshot g = Gpu(8192, {Proc(9, 4096, ProcState::kSleeping, 0), Proc(10, 4096, ProcState::kSleeping, 0)});
    g.mig_enabled = true;
    for (auto& p : g.processes) p.sm_util_ratio.reset();
    in.samples.push_back(Host(t, {g}));
  }
  const CheckResult r = EvaluateCheck(in, c);
  EXPECT_EQ(Find(r, "idle_holder"), nullptr);
  size_t mig = 0, per_pid = 0;
  for (const std::string& n : r.notes) {
    mig += n.find("idle_holder not judged on GPU 0: NVML gives no per-process SM use on a GPU in MIG mode") !=
           std::string::npos;
    per_pid += n.find("idle_holder not judged for PID") != std::string::npos;
  }
  EXPECT_EQ(mig, 1u);
  EXPECT_EQ(per_pid, 0u);
}

// A GPU that hung inside the window and answers at its end: the check is not a clean OK, and the
// idle rule says why it could not judge the holder.
TEST(Findings, AHangInsideTheWindowIsReportedAfterTheGpuRecovers) {
  CheckConfig c;
  c.window_s = 30;
  CheckInput in;
  for (int t = 0; t <= 30; t += 10)
    in.samples.push_back(Host(t, {Gpu(1000, {Proc(9, 1000, ProcState::kSleeping, 0)})}));
  GpuSnapshot& hung = in.samples[1].gpus[0];
  hung.responsive = false;
  hung.processes.clear();
  hung.memory_used_bytes.reset();
  hung.errors = {"nvmlDeviceGetMemoryInfo_v2: no answer within the 500 ms deadline"};
  const CheckResult r = EvaluateCheck(in, c);
  const Finding* f = Find(r, "nvml_error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("did not answer in 1 of 4 samples over 30s (nvmlDeviceGetMemoryInfo_v2)"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(Find(r, "idle_holder"), nullptr);
  EXPECT_TRUE(HasNote(r, "idle_holder not judged for PID 9 on GPU 0: the process list could not be read in 1 of 4"));
  {  // a call that failed in another sample is counted and named apart from the hang
    CheckInput both = in;
    GpuSnapshot& failing = both.samples[2].gpus[0];
    failing.nvml_errors = {{"nvmlDeviceGetComputeRunningProcesses_v3", 999, "Unknown Error"}};
    const CheckResult rb = EvaluateCheck(both, c);
    const Finding* h = Find(rb, "nvml_error");
    ASSERT_NE(h, nullptr);
    EXPECT_NE(h->message.find("did not answer in 1 of 4 samples over 30s (nvmlDeviceGetMemoryInfo_v2); NVML calls "
                              "failed in 1 other (nvmlDeviceGetComputeRunningProcesses_v3); it answers again"),
              std::string::npos)
        << h->message;
  }

  // A failure that has passed is a warning too; one still failing is reported once, by the last sample.
  hung.responsive = true;
  hung.processes = in.samples[0].gpus[0].processes;
  hung.memory_used_bytes = 1000 * kMiB;
  hung.errors = {"nvmlDeviceGetUtilizationRates: Unknown Error"};
  hung.nvml_errors = {{"nvmlDeviceGetUtilizationRates", 999, "nvmlDeviceGetUtilizationRates: Unknown Error"}};
  const CheckResult failed = EvaluateCheck(in, c);
  ASSERT_NE(Find(failed, "nvml_error"), nullptr);
  EXPECT_NE(Find(failed, "nvml_error")->message.find("failed in 1 of 4 samples"), std::string::npos);
  in.samples.back().gpus[0].errors = hung.errors;
  in.samples.back().gpus[0].nvml_errors = hung.nvml_errors;
  const CheckResult still = EvaluateCheck(in, c);
  EXPECT_EQ(std::count_if(still.findings.begin(), still.findings.end(),
                          [](const Finding& x) { return x.kind == "nvml_error"; }),
            1);
}

// A sample whose process list could not be read inside the window says nothing about orphaned
// memory: it does not turn a persistent orphan into "below in 1 of 3 samples".
TEST(Findings, AnUnreadableSampleInTheWindowDoesNotCountAsBelow) {
  CheckConfig c;
  c.window_s = 20;
  c.grace_s = 10;
  CheckInput in;
  for (int t = 0; t <= 20; t += 10) in.samples.push_back(Host(t, {Gpu(5000, {})}));
  in.samples[1].gpus[0].nvml_errors = {{"nvmlDeviceGetComputeRunningProcesses_v3", 999, "x: Unknown Error"}};
  const CheckResult r = EvaluateCheck(in, c);
  const Finding* orphan = Find(r, "orphaned_memory");
  ASSERT_NE(orphan, nullptr);
  EXPECT_EQ(orphan->severity, Severity::kCritical) << orphan->message;
  EXPECT_NE(orphan->message.find("in every sample that could be read: 2 of 3"), std::string::npos) << orphan->message;
  in.samples[0].gpus[0].nvml_errors = in.samples[1].gpus[0].nvml_errors;  // only the last is readable
  const CheckResult few = EvaluateCheck(in, c);
  ASSERT_NE(Find(few, "orphaned_memory"), nullptr);
  EXPECT_EQ(Find(few, "orphaned_memory")->severity, Severity::kWarning);
  EXPECT_NE(Find(few, "orphaned_memory")->message.find("only 1 of 3 samples"), std::string::npos);
}

TEST(Findings, AGpuWithNoIdentifierIsNamedWithoutEmptyParentheses) {
  GpuSnapshot lost = Gpu(0, {});
  lost.uuid.clear();
  lost.lost = true;
  const CheckResult r = OneShot(lost);
  ASSERT_NE(Find(r, "gpu_lost"), nullptr);
  EXPECT_EQ(Find(r, "gpu_lost")->message.rfind("GPU 0 is lost", 0), 0u) << Find(r, "gpu_lost")->message;
}

}  // namespace
}  // namespace vw::detection
