#include "sources/procfs/holder_join.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>

#include "sources/procfs/proc_fixture.h"

namespace vw::procfs {
namespace {

namespace fs = std::filesystem;

struct Tree {
  explicit Tree(const std::string& name)
      : root(fs::temp_directory_path() / ("vw-join-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(root);
  }
  ~Tree() { fs::remove_all(root); }
  fs::path root;
};

HostSnapshot TwoGpus(std::vector<int64_t> pids_on_gpu0) {
  HostSnapshot h;
  for (unsigned i = 0; i < 2; ++i) {
    GpuSnapshot g;
    g.index = i;
    g.minor = i;
    h.gpus.push_back(g);
  }
  for (int64_t pid : pids_on_gpu0) {
    ProcessSnapshot p;
    p.pid = pid;
    p.used_bytes = 1 << 20;
    h.gpus[0].processes.push_back(p);
  }
  return h;
}

TEST(JoinHolders, FillsListedPidsAndAddsFdOnlyHoldersToTheirGpu) {
  Tree t("fill");
  FakeProcess listed;
  listed.pid = 100;
  listed.state = 'R';
  listed.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0"};
  FakeProcess hidden;
  hidden.pid = 200;
  hidden.argv = {"forgotten", "worker"};
  hidden.fd_targets = {"/dev/nvidia1", "/dev/nvidia0"};
  FakeProcess ctl;
  ctl.pid = 300;
  ctl.fd_targets = {"/dev/nvidiactl"};
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {listed, hidden, ctl}).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  o.passwd_path = (t.root / "passwd").string();
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({100, 999});
  std::map<int64_t, double> starts;
  JoinResult r = JoinHolders(h, reader, starts);
  ASSERT_EQ(h.gpus[0].processes.size(), 3u);
  EXPECT_EQ(h.gpus[0].processes[0].info.state, ProcState::kRunning);
  EXPECT_EQ(h.gpus[0].processes[1].info.state, ProcState::kGone);
  EXPECT_EQ(h.gpus[0].processes[2].pid, 200);
  EXPECT_FALSE(h.gpus[0].processes[2].listed_by_nvml);
  EXPECT_FALSE(h.gpus[0].processes[2].used_bytes.has_value());
  EXPECT_EQ(h.gpus[0].processes[2].info.command, "forgotten worker");
  ASSERT_EQ(h.gpus[1].processes.size(), 1u);
  EXPECT_EQ(h.gpus[1].processes[0].pid, 200);
  EXPECT_EQ(r.control_only, std::vector<int64_t>({300}));
  EXPECT_TRUE(h.host_pids_visible);
  EXPECT_EQ(starts.count(100), 1u);
}

// The fd directories that could not be read are counted on the snapshot itself, so the findings of
// check and watch alike know that a holder may be missing.
TEST(JoinHolders, CountsUnreadableFdDirectoriesOnTheSnapshot) {
  Tree t("fdunreadable");
  FakeProcess other;
  other.pid = 200;
  other.fd_targets = {"/dev/nvidia0"};
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {other}).ok());
  DirProcFs real(t.root.string());
  FaultInjectingProcFs pfs(real);
  pfs.Fail("200/fd", FromErrno(EACCES, "opendir 200/fd"));
  ReaderOptions o;
  o.self_pid = 1;
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({});
  std::map<int64_t, double> starts;
  JoinHolders(h, reader, starts);
  EXPECT_EQ(h.holder_scan.dirs_unreadable, 1u);
  EXPECT_TRUE(h.gpus[0].processes.empty());
}

// NVML names a PID on the GPU that lists it; its fd-only row on another GPU takes that name, so
// CommandOf() is the same for the PID everywhere. A PID NVML lists nowhere keeps no name.
TEST(JoinHolders, FdOnlyRowsTakeNvmlsNameForThePidFromAnotherGpu) {
  Tree t("names");
  FakeProcess trainer;
  trainer.pid = 100;
  trainer.fd_targets = {"/dev/nvidia0", "/dev/nvidia1"};
  FakeProcess stray;
  stray.pid = 200;
  stray.fd_targets = {"/dev/nvidia1"};
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {trainer, stray}).ok());
  fs::remove(t.root / "100" / "cmdline");
  fs::remove(t.root / "200" / "cmdline");
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  o.passwd_path = (t.root / "passwd").string();
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({100});
  h.gpus[0].processes[0].nvml_name = "trainer-7";
  std::map<int64_t, double> starts;
  JoinHolders(h, reader, starts);
  ASSERT_EQ(h.gpus[1].processes.size(), 2u);
  EXPECT_EQ(h.gpus[1].processes[0].pid, 100);
  EXPECT_FALSE(h.gpus[1].processes[0].listed_by_nvml);
  EXPECT_EQ(CommandOf(h.gpus[1].processes[0]), "trainer-7");
  EXPECT_EQ(CommandOf(h.gpus[0].processes[0]), "trainer-7");
  EXPECT_EQ(h.gpus[1].processes[1].pid, 200);
  EXPECT_EQ(CommandOf(h.gpus[1].processes[1]), "");
}

TEST(JoinHolders, MissingPidsInsideAContainerNamespaceMakeHostPidsInvisible) {
  Tree t("blind");
  FixtureOptions fo;
  fo.pid1_sched = "sh (81000, #threads: 1)\n";
  fo.kthreadd = false;
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {}, fo).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({4001, 4002});
  std::map<int64_t, double> starts;
  JoinResult r = JoinHolders(h, reader, starts);
  EXPECT_FALSE(h.host_pids_visible);
  EXPECT_TRUE(r.hints.in_pid_namespace);
  // Not found here is not gone: the listed PIDs' state is unknown, and says why.
  for (const auto& p : h.gpus[0].processes) {
    EXPECT_EQ(p.info.state, ProcState::kUnknown) << p.pid;
    EXPECT_NE(std::find(p.info.unreadable.begin(), p.info.unreadable.end(),
                        "state: host PID not visible in this PID namespace"),
              p.info.unreadable.end())
        << p.pid;
  }
}

// With no PID listed by NVML (every holder gone), another PID namespace still hides the host's
// processes from the fd scan: "nothing holds it" cannot be said (it was, with a GPU reset as the
// next step).
TEST(JoinHolders, InsideAContainerNamespaceHostPidsAreInvisibleAlsoWithNoPidListed) {
  Tree t("blind-empty");
  FixtureOptions fo;
  fo.pid1_sched = "sh (81000, #threads: 1)\n";
  fo.kthreadd = false;
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {}, fo).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({});
  std::map<int64_t, double> starts;
  JoinResult r = JoinHolders(h, reader, starts);
  EXPECT_TRUE(r.hints.in_pid_namespace);
  EXPECT_FALSE(h.host_pids_visible);
}

// hidepid=invisible, vramwatch not root: the listed PIDs of other users are not in /proc (neither
// is kthreadd, PID 2, which is root's): they are not called gone, nor is this taken for another PID
// namespace; the host says why (HostSnapshot::holder_scan, a note of the findings).
TEST(JoinHolders, UnderHidepidListedPidsNotFoundAreUnknownAndTheHostSaysWhy) {
  Tree t("hidepid");
  FixtureOptions fo;
  fo.kthreadd = false;  // root's, so hidden too
  fo.mountinfo = "23 1 0:22 / " + t.root.string() + " rw - proc proc rw,hidepid=invisible\n";
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {}, fo).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  o.euid = 1000;
  o.groups = std::vector<uint32_t>{1000};
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({4001});
  std::map<int64_t, double> starts;
  JoinResult r = JoinHolders(h, reader, starts);
  EXPECT_TRUE(h.host_pids_visible) << r.hints.evidence;
  EXPECT_EQ(h.gpus[0].processes[0].info.state, ProcState::kUnknown);
  EXPECT_NE(h.holder_scan.pids_hidden.find("hidepid=invisible"), std::string::npos) << h.holder_scan.pids_hidden;
}

// Inside a container, a process here that has the number of a host PID NVML lists is a stranger:
// it is not taken for the holder (its user and command not shown), and the other listed PID is not
// called dead.
TEST(JoinHolders, AContainerProcessWithTheNumberOfAHostPidIsNotTheHolder) {
  Tree t("collide");
  FixtureOptions fo;
  fo.pid1_sched = "sleep (812345, #threads: 1)\n";
  fo.kthreadd = false;
  FakeProcess mine;
  mine.pid = 4001;
  mine.argv = {"python3", "mine.py"};
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {mine}, fo).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  ProcessReader reader(pfs, o);
  HostSnapshot h = TwoGpus({4001, 812399});
  std::map<int64_t, double> starts;
  JoinHolders(h, reader, starts);
  EXPECT_FALSE(h.host_pids_visible);
  for (const auto& p : h.gpus[0].processes) {
    if (!p.listed_by_nvml) continue;
    EXPECT_EQ(p.info.state, ProcState::kUnknown) << p.pid;
    EXPECT_EQ(p.info.command, "") << p.pid;
    EXPECT_EQ(p.info.user, "") << p.pid;
  }
}

// Serves /proc/PID/stat from a script: the Nth read of a PID's stat returns the Nth state.
class ScriptedStatFs : public ProcFs {
 public:
  ScriptedStatFs(const ProcFs& inner, std::map<int64_t, std::string> states) : inner_(inner), states_(states) {}
  Result<std::string> ReadFile(const std::string& rel) const override {
    for (auto& [pid, seq] : states_) {
      if (rel == std::to_string(pid) + "/stat") {
        size_t& n = reads_[pid];
        FakeProcess p;
        p.pid = pid;
        p.state = seq[std::min(n, seq.size() - 1)];
        ++n;
        return FormatStatLine(p);
      }
    }
    return inner_.ReadFile(rel);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) const override { return inner_.ListDir(rel); }
  Result<std::string> ReadLink(const std::string& rel) const override { return inner_.ReadLink(rel); }
  Result<FileKind> Stat(const std::string& rel) const override { return inner_.Stat(rel); }
  std::string Describe(const std::string& rel) const override { return inner_.Describe(rel); }

 private:
  const ProcFs& inner_;
  std::map<int64_t, std::string> states_;
  mutable std::map<int64_t, size_t> reads_;
};

TEST(RecheckDiskSleep, BriefDStateIsNotKeptButPersistentDStateIs) {
  Tree t("recheck");
  FakeProcess a;
  a.pid = 100;
  FakeProcess b;
  b.pid = 200;
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {a, b}).ok());
  DirProcFs real(t.root.string());
  ScriptedStatFs fs(real, {{100, "DDS"}, {200, "DDDDDD"}});
  ReaderOptions o;
  o.self_pid = 1;
  ProcessReader reader(fs, o);
  HostSnapshot h = TwoGpus({100, 200});
  std::map<int64_t, double> starts;
  JoinHolders(h, reader, starts);
  ASSERT_EQ(h.gpus[0].processes[0].info.state, ProcState::kDiskSleep);
  ASSERT_EQ(h.gpus[0].processes[1].info.state, ProcState::kDiskSleep);
  std::vector<int64_t> left = RecheckDiskSleep(h, reader, 4, 0.001);
  EXPECT_EQ(left, std::vector<int64_t>({100}));
  EXPECT_EQ(h.gpus[0].processes[0].info.state, ProcState::kSleeping);
  EXPECT_EQ(h.gpus[0].processes[1].info.state, ProcState::kDiskSleep);
}

// check --window: a holder that dies (or whose PID is taken by another process) inside the window
// keeps what was read for it while alive, so its dead_holder finding names whom the memory was for.
TEST(KeepFactsOfVanishedHolders, AHolderGoneWithinTheWindowKeepsItsLastLiveFacts) {
  Tree t("vanished");
  FakeProcess trainer;
  trainer.pid = 100;
  trainer.argv = {"python3", "train.py"};
  trainer.cgroup = "0::/system.slice/slurmstepd.scope/job_5512/step_0/user/task_0\n";
  FakeProcess server;
  server.pid = 200;
  server.argv = {"python3", "serve.py"};
  server.cgroup =
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_0000_1111_2222_"
      "333344445555.slice/cri-containerd-" +
      std::string(64, 'e') + ".scope\n";
  server.nspid = {200, 7};
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {trainer, server}).ok());
  DirProcFs pfs(t.root.string());
  ReaderOptions o;
  o.self_pid = 1;
  o.passwd_path = (t.root / "passwd").string();
  ProcessReader reader(pfs, o);
  std::map<int64_t, double> starts;
  std::map<int64_t, ProcessInfo> known;

  HostSnapshot first = TwoGpus({100, 200});
  JoinHolders(first, reader, starts);
  KeepFactsOfVanishedHolders(first, known);
  ASSERT_TRUE(first.gpus[0].processes[0].info.alive);

  // 100 exits and is reaped; 200's PID now belongs to another process (another start time).
  FakeProcess other;
  other.pid = 200;
  other.argv = {"bash"};
  other.starttime_ticks = 99999;
  fs::remove_all(t.root);
  ASSERT_TRUE(WriteProcFixture(t.root.string(), {other}).ok());
  HostSnapshot second = TwoGpus({100, 200});
  JoinHolders(second, reader, starts);
  KeepFactsOfVanishedHolders(second, known);

  const ProcessInfo& gone = second.gpus[0].processes[0].info;
  EXPECT_FALSE(gone.alive);
  EXPECT_EQ(gone.state, ProcState::kGone);
  EXPECT_EQ(gone.command, "python3 train.py");
  EXPECT_EQ(gone.user, "alice");
  EXPECT_EQ(gone.slurm_job, "5512");
  const ProcessInfo& reused = second.gpus[0].processes[1].info;
  EXPECT_FALSE(reused.alive);
  EXPECT_EQ(reused.state, ProcState::kGone);
  EXPECT_EQ(reused.command, "python3 serve.py");  // not the new owner's "bash"
  EXPECT_EQ(reused.container_id, std::string(64, 'e'));
  EXPECT_EQ(reused.pod_uid, "0a1b2c3d-0000-1111-2222-333344445555");
  EXPECT_EQ(reused.container_pid, 7);
  EXPECT_NE(std::find(reused.unreadable.begin(), reused.unreadable.end(), "pid reused: start time changed"),
            reused.unreadable.end());

  // A PID never seen alive in the window has nothing to keep.
  HostSnapshot third = TwoGpus({300});
  JoinHolders(third, reader, starts);
  KeepFactsOfVanishedHolders(third, known);
  EXPECT_EQ(third.gpus[0].processes[0].info.state, ProcState::kGone);
  EXPECT_TRUE(third.gpus[0].processes[0].info.command.empty());
}

}  // namespace
}  // namespace vw::procfs
