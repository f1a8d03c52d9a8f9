#include "sources/procfs/process_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <utility>

#include "sources/procfs/proc_fixture.h"
#include "sources/procfs/proc_parsers.h"

namespace vw::procfs {
namespace {

namespace fs = std::filesystem;

class ProcessReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("vw-procfs-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::vector<FakeProcess>& ps, const FixtureOptions& o = {}) {
    ASSERT_TRUE(WriteProcFixture(root_.string(), ps, o).ok());
  }
  ReaderOptions Options() const {
    ReaderOptions o;
    o.passwd_path = (root_ / "passwd").string();
    o.self_pid = 1;
    o.clock_ticks_per_second = 100;
    return o;
  }
  fs::path root_;
};

TEST_F(ProcessReaderTest, ReadsEveryFactOfAContainerisedProcess) {
  FakeProcess p;
  p.pid = 81234;
  p.comm = "pt main (x)";
  p.state = 'D';
  p.uid = 1000;
  p.argv = {"python3", "train.py", "--epochs", "3"};
  p.cgroup = "0::/system.slice/docker-" + std::string(64, 'a') + ".scope\n";
  p.nspid = {81234, 57};
  p.utime_ticks = 1234;
  p.stime_ticks = 66;
  p.starttime_ticks = 500000;
  Write({p});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(81234);
  EXPECT_TRUE(info.alive);
  EXPECT_EQ(info.state, ProcState::kDiskSleep);
  ASSERT_TRUE(info.start_time_s.has_value());
  EXPECT_DOUBLE_EQ(*info.start_time_s, 5000.0);
  ASSERT_TRUE(info.cpu_seconds.has_value());
  EXPECT_DOUBLE_EQ(*info.cpu_seconds, 13.0);
  EXPECT_EQ(info.uid, 1000u);
  EXPECT_EQ(info.user, "alice");
  EXPECT_EQ(info.command, "python3 train.py --epochs 3");
  EXPECT_EQ(info.container_pid, 57);
  EXPECT_EQ(info.container_id, std::string(64, 'a'));
  EXPECT_TRUE(info.unreadable.empty());
}

// A process in a namespace nested inside its container (NSpid host, container, inner): the PID a
// kill inside the container takes is the container's level, not the innermost. The runtime named
// by the cgroup path is kept (the kill hint uses its client).
TEST_F(ProcessReaderTest, TheContainerPidIsTheContainersLevelOfNspidAndTheRuntimeIsKept) {
  FakeProcess p;
  p.pid = 3004;
  p.nspid = {3004, 60, 1};
  p.cgroup = "0::/kubepods.slice/kubepods-besteffort.slice/crio-" + std::string(64, 'c') + ".scope\n";
  FakeProcess podman;
  podman.pid = 3005;
  podman.nspid = {3005, 3005};
  podman.cgroup = "0::/machine.slice/libpod-" + std::string(64, 'd') + ".scope/container\n";
  Write({p, podman});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(3004);
  EXPECT_EQ(info.container_pid, 60);
  EXPECT_EQ(info.container_runtime, "crio");
  ProcessInfo same = reader.Read(3005);
  EXPECT_FALSE(same.container_pid.has_value());  // the same number there: nothing to add
  EXPECT_EQ(same.container_runtime, "podman");
}

// A zombie's parent is read with it (the process that must reap it, which the finding names); a
// process that is no zombie keeps only its parent's PID.
TEST_F(ProcessReaderTest, AZombieKnowsItsParentsCommand) {
  FakeProcess parent;
  parent.pid = 4000;
  parent.argv = {"python3", "launcher.py"};
  FakeProcess zombie;
  zombie.pid = 7001;
  zombie.state = 'Z';
  zombie.ppid = 4000;
  FakeProcess child = zombie;
  child.pid = 7002;
  child.state = 'S';
  Write({parent, zombie, child});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  const ProcessInfo z = reader.Read(7001);
  EXPECT_EQ(z.state, ProcState::kZombie);
  EXPECT_EQ(z.ppid, 4000);
  EXPECT_EQ(z.parent_command, "python3 launcher.py");
  const ProcessInfo c = reader.Read(7002);
  EXPECT_EQ(c.ppid, 4000);
  EXPECT_EQ(c.parent_command, "");
}

// A defunct main thread with live threads (stat field 20 > 1, task/ lists them): the process is
// not a zombie to reap. A thread in D makes it stuck (D), naming that thread; threads that run
// make it alive with their state. Its parent is not read: no one is to reap it.
TEST_F(ProcessReaderTest, AZombieMainThreadWithLiveThreadsTakesTheirState) {
  FakeProcess parent;
  parent.pid = 4000;
  parent.argv = {"python3", "launcher.py"};
  FakeProcess stuck;
  stuck.pid = 7001;
  stuck.state = 'Z';
  stuck.ppid = 4000;
  stuck.thread_states = "SD";
  FakeProcess running = stuck;
  running.pid = 7101;
  running.thread_states = "ZSR";
  FakeProcess zombie = stuck;
  zombie.pid = 7201;
  zombie.thread_states = "";
  Write({parent, stuck, running, zombie});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo s = reader.Read(7001);
  EXPECT_EQ(s.state, ProcState::kDiskSleep);
  EXPECT_TRUE(s.main_thread_exited);
  EXPECT_EQ(s.stuck_tid, 7003);
  EXPECT_EQ(s.parent_command, "");
  ProcessInfo r = reader.Read(7101);
  EXPECT_EQ(r.state, ProcState::kRunning);
  EXPECT_TRUE(r.main_thread_exited);
  EXPECT_FALSE(r.stuck_tid.has_value());
  ProcessInfo z = reader.Read(7201);
  EXPECT_EQ(z.state, ProcState::kZombie);
  EXPECT_FALSE(z.main_thread_exited);
  EXPECT_EQ(z.parent_command, "python3 launcher.py");
}

TEST_F(ProcessReaderTest, VanishedPidIsGoneNotGuessed) {
  Write({});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(4242);
  EXPECT_FALSE(info.alive);
  EXPECT_EQ(info.state, ProcState::kGone);
  EXPECT_FALSE(info.start_time_s.has_value());
  EXPECT_TRUE(info.command.empty());
}

TEST_F(ProcessReaderTest, ReusedPidWithAnotherStartTimeIsGone) {
  FakeProcess p;
  p.pid = 300;
  p.starttime_ticks = 9000;
  Write({p});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  EXPECT_TRUE(reader.Read(300, 90.0).alive);
  ProcessInfo reused = reader.Read(300, 10.0);
  EXPECT_FALSE(reused.alive);
  EXPECT_EQ(reused.state, ProcState::kGone);
}

TEST_F(ProcessReaderTest, PermissionDeniedFilesAreReportedUnreadableAndLeaveFieldsEmpty) {
  FakeProcess p;
  p.pid = 77;
  p.argv = {"secret"};
  Write({p});
  DirProcFs real(root_.string());
  FaultInjectingProcFs fs(real);
  fs.Fail("77/cmdline", FromErrno(EACCES, "open " + real.Describe("77/cmdline")));
  fs.Fail("77/cgroup", FromErrno(EPERM, "open " + real.Describe("77/cgroup")));
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(77);
  EXPECT_TRUE(info.alive);
  EXPECT_EQ(info.command, "");
  ASSERT_EQ(info.unreadable.size(), 2u);
  EXPECT_EQ(info.unreadable[0], "cmdline: permission denied");
  EXPECT_EQ(info.unreadable[1], "cgroup: permission denied");
}

// A file missing under /proc/PID while its stat was read: the process is there, the file is not;
// "vanished" would say the PID is gone.
TEST_F(ProcessReaderTest, AFileMissingUnderALivePidIsMissingNotVanished) {
  FakeProcess p;
  p.pid = 79;
  p.state = 'R';
  Write({p});
  std::filesystem::remove(root_ / "79" / "cmdline");
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(79);
  EXPECT_TRUE(info.alive);
  EXPECT_EQ(info.state, ProcState::kRunning);
  EXPECT_EQ(info.command, "");
  EXPECT_EQ(info.unreadable, std::vector<std::string>({"cmdline: missing"}));
}

// A ProcFs on a fixture that runs `after_first_stat` once, right after the first read of a stat
// file: the process exits, or its PID is taken, while its other files are being read.
class ChangesAfterFirstStat : public ProcFs {
 public:
  ChangesAfterFirstStat(const ProcFs& inner, std::function<void()> change) : inner_(inner), change_(change) {}
  Result<std::string> ReadFile(const std::string& rel) const override {
    auto r = inner_.ReadFile(rel);
    if (change_ && rel.size() > 5 && rel.compare(rel.size() - 5, 5, "/stat") == 0) std::exchange(change_, nullptr)();
    return r;
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) const override { return inner_.ListDir(rel); }
  Result<std::string> ReadLink(const std::string& rel) const override { return inner_.ReadLink(rel); }
  Result<FileKind> Stat(const std::string& rel) const override { return inner_.Stat(rel); }
  std::string Describe(const std::string& rel) const override { return inner_.Describe(rel); }

 private:
  const ProcFs& inner_;
  mutable std::function<void()> change_;
};

TEST_F(ProcessReaderTest, AProcessThatExitsWhileItIsReadIsGoneNotAliveWithMissingFiles) {
  FakeProcess p;
  p.pid = 81;
  p.state = 'R';
  Write({p});
  DirProcFs real(root_.string());
  // Reaped between its stat and its status: its other files are gone with it.
  ChangesAfterFirstStat fs(real, [&] { std::filesystem::remove_all(root_ / "81"); });
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(81);
  EXPECT_FALSE(info.alive);
  EXPECT_EQ(info.state, ProcState::kGone);
  EXPECT_TRUE(info.unreadable.empty()) << ::testing::PrintToString(info.unreadable);
}

TEST_F(ProcessReaderTest, APidTakenByAnotherProcessWhileItIsReadIsGoneWithoutTheNewOnesFacts) {
  FakeProcess p;
  p.pid = 82;
  p.argv = {"python3", "train.py"};
  p.starttime_ticks = 1000;
  Write({p});
  FakeProcess successor = p;
  successor.argv = {"bash"};
  successor.cgroup = "0::/system.slice/docker-" + std::string(64, 'b') + ".scope\n";
  successor.starttime_ticks = 5000;
  DirProcFs real(root_.string());
  ChangesAfterFirstStat fs(real, [&] {
    std::filesystem::remove_all(root_);
    Write({successor});
  });
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(82);
  EXPECT_FALSE(info.alive);
  EXPECT_EQ(info.state, ProcState::kGone);
  EXPECT_EQ(info.command, "");  // not the successor's "bash"
  EXPECT_EQ(info.container_id, "");
  EXPECT_EQ(info.unreadable, std::vector<std::string>({"pid reused: start time changed"}));
}

TEST_F(ProcessReaderTest, UnreadableStatKeepsTheProcessAliveWithUnknownState) {
  FakeProcess p;
  p.pid = 78;
  Write({p});
  DirProcFs real(root_.string());
  FaultInjectingProcFs fs(real);
  fs.Fail("78/stat", FromErrno(EACCES, "open 78/stat"));
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(78);
  EXPECT_TRUE(info.alive);
  EXPECT_EQ(info.state, ProcState::kUnknown);
  EXPECT_FALSE(info.cpu_seconds.has_value());
  ASSERT_FALSE(info.unreadable.empty());
  EXPECT_EQ(info.unreadable[0], "stat: permission denied");
}

TEST_F(ProcessReaderTest, MalformedStatIsAnUnreadableFactNamingTheFile) {
  FakeProcess p;
  p.pid = 79;
  Write({p});
  fs::path stat = root_ / "79" / "stat";
  { std::ofstream(stat) << "79 (x R\n"; }
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  ProcessInfo info = reader.Read(79);
  ASSERT_FALSE(info.unreadable.empty());
  EXPECT_NE(info.unreadable[0].find(stat.string()), std::string::npos) << info.unreadable[0];
}

// A status file without its Uid line (cut short, or garbage) leaves the user null and says so,
// as the documentation promises for any malformed file; before, it was silently null.
TEST_F(ProcessReaderTest, StatusWithoutAUidLineIsUnreadableNotSilentlyEmpty) {
  FakeProcess p;
  p.pid = 81;
  Write({p});
  fs::path status = root_ / "81" / "status";
  for (const std::string& text : {std::string("Name:\tpython3\nState:\tS (sleeping)\n"), std::string("\x01\x02\xff")}) {
    { std::ofstream(status) << text; }
    DirProcFs fs(root_.string());
    ProcessReader reader(fs, Options());
    ProcessInfo info = reader.Read(81);
    EXPECT_TRUE(info.alive);
    EXPECT_FALSE(info.uid);
    EXPECT_TRUE(info.user.empty());
    bool said = false;
    for (const auto& u : info.unreadable) said |= u.find(status.string() + ": no 'Uid:' line") != std::string::npos;
    EXPECT_TRUE(said) << ::testing::PrintToString(info.unreadable);
  }
}

TEST_F(ProcessReaderTest, FdScanFindsDeviceHoldersSeparatesControlFilesAndSkipsSelf) {
  FakeProcess a;
  a.pid = 10;
  a.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/null"};
  FakeProcess b;
  b.pid = 11;
  b.fd_targets = {"/dev/nvidia3", "/dev/nvidia12", "socket:[1234]"};
  FakeProcess ctl_only;
  ctl_only.pid = 12;
  ctl_only.fd_targets = {"/dev/nvidiactl", "/dev/nvidia-uvm-tools"};
  FakeProcess none;
  none.pid = 13;
  none.fd_targets = {"/dev/null", "/dev/nvidia-caps/nvidia-cap1"};
  FakeProcess self;
  self.pid = 1;
  self.fd_targets = {"/dev/nvidia0"};
  Write({a, b, ctl_only, none, self});
  DirProcFs fs(root_.string());
  ProcessReader reader(fs, Options());
  DeviceFdScan scan = reader.ScanDeviceFds();
  EXPECT_EQ(scan.pids_scanned, 5u);  // 10 to 13, and the fixture's kthreadd (PID 2)
  ASSERT_EQ(scan.holders.size(), 3u);
  EXPECT_EQ(scan.holders[0].pid, 10);
  EXPECT_EQ(scan.holders[0].minors, std::vector<unsigned>({0}));
  EXPECT_TRUE(scan.holders[0].control);
  EXPECT_TRUE(scan.holders[0].uvm);
  EXPECT_EQ(scan.holders[1].pid, 11);
  EXPECT_EQ(scan.holders[1].minors, std::vector<unsigned>({3, 12}));
  EXPECT_FALSE(scan.holders[1].control);
  EXPECT_EQ(scan.holders[2].pid, 12);
  EXPECT_TRUE(scan.holders[2].minors.empty());
  EXPECT_TRUE(scan.holders[2].control);
  EXPECT_TRUE(scan.holders[2].uvm);
}

// A device file unlinked while open: its link reads "/dev/nvidia1 (deleted)", and the process still
// holds the GPU (it was ignored, and the GPU's memory said to be held by nothing).
TEST_F(ProcessReaderTest, FdScanCountsADeviceFileUnlinkedWhileOpen) {
  FakeProcess a;
  a.pid = 10;
  a.fd_targets = {"/dev/nvidiactl (deleted)", "/dev/nvidia1 (deleted)", "/dev/nvidia-uvm (deleted)"};
  FakeProcess b;
  b.pid = 11;
  b.fd_targets = {"/dev/nvidia2 (deleted) (deleted)", "/tmp/nvidia3 (deleted)"};
  Write({a, b});
  DirProcFs fs(root_.string());
  DeviceFdScan scan = ProcessReader(fs, Options()).ScanDeviceFds();
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 10);
  EXPECT_EQ(scan.holders[0].minors, std::vector<unsigned>({1}));
  EXPECT_TRUE(scan.holders[0].control);
  EXPECT_TRUE(scan.holders[0].uvm);
}

// Serves stat() of chosen paths: the device numbers a real /proc/PID/fd/N gives.
class DeviceNumbersFs : public ProcFs {
 public:
  DeviceNumbersFs(const ProcFs& inner, std::map<std::string, FileKind> kinds) : inner_(inner), kinds_(kinds) {}
  Result<std::string> ReadFile(const std::string& rel) const override { return inner_.ReadFile(rel); }
  Result<std::vector<std::string>> ListDir(const std::string& rel) const override { return inner_.ListDir(rel); }
  Result<std::string> ReadLink(const std::string& rel) const override { return inner_.ReadLink(rel); }
  Result<FileKind> Stat(const std::string& rel) const override {
    auto it = kinds_.find(rel);
    if (it == kinds_.end()) return Status::NotFound("stat " + rel);
    return it->second;
  }
  std::string Describe(const std::string& rel) const override { return inner_.Describe(rel); }

 private:
  const ProcFs& inner_;
  std::map<std::string, FileKind> kinds_;
};

// `docker run --device /dev/nvidia1:/dev/nvidia0`: the container's /dev/nvidia0 is GPU 1, as its
// device number (195, 1) says; the name decides only where stat() fails. "/dev/nvidia01" is no
// GPU's name, and a file of another device called /dev/nvidia0 is not a GPU's.
TEST_F(ProcessReaderTest, FdScanTakesTheGpuFromTheDeviceNumberNotTheName) {
  FakeProcess remapped;
  remapped.pid = 10;
  remapped.fd_targets = {"/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-modeset"};
  FakeProcess zeros;
  zeros.pid = 11;
  zeros.fd_targets = {"/dev/nvidia01", "/dev/nvidia00"};
  FakeProcess impostor;
  impostor.pid = 12;
  impostor.fd_targets = {"/dev/nvidia0"};
  FakeProcess by_name;
  by_name.pid = 13;
  by_name.fd_targets = {"/dev/nvidia0", "/dev/nvidia-uvm"};
  Write({remapped, zeros, impostor, by_name});
  DirProcFs real(root_.string());
  DeviceNumbersFs fs(real, {{"10/fd/3", {true, 195, 1}},
                            {"10/fd/4", {true, 195, 255}},
                            {"10/fd/5", {true, 195, 254}},
                            {"12/fd/3", {true, 1, 3}},
                            {"13/fd/4", {true, 508, 0}}});
  DeviceFdScan scan = ProcessReader(fs, Options()).ScanDeviceFds();
  ASSERT_EQ(scan.holders.size(), 2u);
  EXPECT_EQ(scan.holders[0].pid, 10);
  EXPECT_EQ(scan.holders[0].minors, std::vector<unsigned>({1}));
  EXPECT_TRUE(scan.holders[0].control);
  EXPECT_EQ(scan.holders[1].pid, 13);
  EXPECT_EQ(scan.holders[1].minors, std::vector<unsigned>({0}));
  EXPECT_TRUE(scan.holders[1].uvm);
}

TEST_F(ProcessReaderTest, FdScanCountsUnreadableFdDirectories) {
  FakeProcess a;
  a.pid = 20;
  a.fd_targets = {"/dev/nvidia0"};
  FakeProcess b;
  b.pid = 21;
  b.fd_targets = {"/dev/nvidia0"};
  Write({a, b});
  DirProcFs real(root_.string());
  FaultInjectingProcFs fs(real);
  fs.Fail("21/fd", FromErrno(EACCES, "opendir 21/fd"));
  ProcessReader reader(fs, Options());
  DeviceFdScan scan = reader.ScanDeviceFds();
  EXPECT_EQ(scan.pids_unreadable, 1u);
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 20);
  ASSERT_EQ(scan.unreadable.size(), 1u);
  EXPECT_NE(scan.unreadable[0].find("21/fd"), std::string::npos);
  EXPECT_EQ(scan.unreadable_pids, std::vector<int64_t>({21}));
}

// A kernel thread's fd directory is root's only, but a kernel thread opens no file: it is not a
// holder the scan missed (as another user, half the "could not be read" count was kernel threads).
TEST_F(ProcessReaderTest, FdScanDoesNotCountKernelThreadsItCannotRead) {
  FakeProcess kworker;
  kworker.pid = 30;
  kworker.comm = "kworker/0:1";
  kworker.ppid = 2;
  kworker.flags = kPfKthread | 0x40;
  FakeProcess user;
  user.pid = 31;
  Write({kworker, user});
  DirProcFs real(root_.string());
  FaultInjectingProcFs fs(real);
  fs.Fail("30/fd", FromErrno(EACCES, "opendir 30/fd"));
  fs.Fail("31/fd", FromErrno(EACCES, "opendir 31/fd"));
  DeviceFdScan scan = ProcessReader(fs, Options()).ScanDeviceFds();
  EXPECT_EQ(scan.pids_unreadable, 1u);
  EXPECT_EQ(scan.unreadable_pids, std::vector<int64_t>({31}));
}

TEST_F(ProcessReaderTest, NamespaceHintsFromPid1SchedAndCgroup) {
  {
    FixtureOptions o;
    o.pid1_sched = "sh (81000, #threads: 1)\n";
    o.kthreadd = false;
    Write({}, o);
    DirProcFs fs(root_.string());
    NamespaceHints h = ProcessReader(fs, Options()).PidNamespaceHints();
    EXPECT_TRUE(h.in_pid_namespace);
    EXPECT_NE(h.evidence.find("81000"), std::string::npos);
  }
  fs::remove_all(root_);
  {
    FixtureOptions o;
    o.pid1_sched = "systemd (1, #threads: 1)\n";
    o.pid1_cgroup = "0::/init.scope\n";
    Write({}, o);
    DirProcFs fs(root_.string());
    EXPECT_FALSE(ProcessReader(fs, Options()).PidNamespaceHints().in_pid_namespace);
  }
  fs::remove_all(root_);
  {
    FixtureOptions o;
    o.pid1_cgroup = "0::/system.slice/docker-" + std::string(64, 'b') + ".scope\n";
    o.kthreadd = false;
    Write({}, o);
    DirProcFs fs(root_.string());
    EXPECT_TRUE(ProcessReader(fs, Options()).PidNamespaceHints().in_pid_namespace);
  }
}

// `unshare --pid --fork --mount-proc`, docker without --pid=host: PID 1 is the container's own
// (sched says 1 on current kernels), its cgroup is "/" (private cgroup namespace), and vramwatch
// has one NSpid level. Only PID 2 tells: the host's is the kernel's kthreadd.
TEST_F(ProcessReaderTest, AContainersOwnProcIsAnotherPidNamespaceThoughPid1LooksLikeInit) {
  FakeProcess self;
  self.pid = 7;
  self.argv = {"vramwatch", "check"};
  self.cgroup = "0::/\n";
  FixtureOptions o;
  o.pid1_sched = "sh (1, #threads: 1)\n";
  o.pid1_cgroup = "0::/\n";
  o.kthreadd = false;
  o.self_pid = 7;
  {
    Write({self}, o);
    DirProcFs fs(root_.string());
    NamespaceHints h = ProcessReader(fs, Options()).PidNamespaceHints();
    EXPECT_TRUE(h.in_pid_namespace);
    EXPECT_NE(h.evidence.find("no PID 2"), std::string::npos) << h.evidence;
  }
  fs::remove_all(root_);
  {
    FakeProcess worker;  // a container's PID 2 is one of its own processes
    worker.pid = 2;
    worker.comm = "python3";
    Write({self, worker}, o);
    DirProcFs fs(root_.string());
    NamespaceHints h = ProcessReader(fs, Options()).PidNamespaceHints();
    EXPECT_TRUE(h.in_pid_namespace);
    EXPECT_NE(h.evidence.find("`python3`, not the kernel's kthreadd"), std::string::npos) << h.evidence;
  }
}

// `--proc-root /host/proc` from inside a container: that procfs numbers PIDs as the host does
// (kthreadd is its PID 2), so NVML's PIDs can be matched, although vramwatch's own NSpid there has
// two levels (host, container). vramwatch is the PID its "self" link names, not getpid(): its own
// /dev/nvidia* files are not a holder.
TEST_F(ProcessReaderTest, TheHostsProcMountedIntoAContainerShowsHostPidsAndNamesUsBySelf) {
  FakeProcess self;
  self.pid = 90210;
  self.nspid = {90210, 7};
  self.argv = {"vramwatch", "check"};
  self.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0"};
  FakeProcess trainer;
  trainer.pid = 4001;
  trainer.fd_targets = {"/dev/nvidia0"};
  FixtureOptions o;
  o.self_pid = 90210;
  Write({self, trainer}, o);
  DirProcFs fs(root_.string());
  ReaderOptions ro = Options();
  ro.self_pid.reset();
  ProcessReader reader(fs, ro);
  NamespaceHints h = reader.PidNamespaceHints();
  EXPECT_FALSE(h.in_pid_namespace) << h.evidence;
  DeviceFdScan scan = reader.ScanDeviceFds();
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 4001);
}

// procfs mounted hidepid=invisible (or 2): another user's process is not listed at all, so a PID
// not found may be alive; its state is unknown and says why, never "gone". Root, and members of
// the mount's gid= group, see every process: there a missing PID is gone. hidepid=noaccess lists
// them (their files are refused): missing is gone there too. Without mountinfo (a fixture): as
// before.
TEST_F(ProcessReaderTest, UnderHidepidAMissingPidIsUnknownNotGone) {
  auto write_mount = [&](const std::string& options) {
    fs::remove_all(root_);
    FixtureOptions o;
    o.mountinfo = "23 1 0:22 / " + root_.string() + " rw,relatime shared:13 - proc proc " + options + "\n";
    Write({}, o);
  };
  auto read_as = [&](uint32_t euid, std::vector<uint32_t> groups) {
    DirProcFs fs(root_.string());
    ReaderOptions ro = Options();
    ro.euid = euid;
    ro.groups = std::move(groups);
    ProcessReader reader(fs, ro);
    return std::make_pair(reader.Read(4242), reader.Hidden());
  };
  write_mount("rw,hidepid=invisible,gid=1001");
  {
    auto [info, hidden] = read_as(1000, {1000});
    EXPECT_FALSE(info.alive);
    EXPECT_EQ(info.state, ProcState::kUnknown);
    ASSERT_EQ(info.unreadable.size(), 1u);
    EXPECT_NE(info.unreadable[0].find("hidepid=invisible"), std::string::npos) << info.unreadable[0];
    EXPECT_TRUE(hidden.hidden);
    EXPECT_NE(hidden.note.find("processes of other users are hidden"), std::string::npos) << hidden.note;
    EXPECT_NE(hidden.note.find("as root or in group 1001"), std::string::npos) << hidden.note;
  }
  EXPECT_EQ(read_as(0, {0}).first.state, ProcState::kGone);
  EXPECT_EQ(read_as(1000, {1000, 1001}).first.state, ProcState::kGone);
  write_mount("rw,hidepid=2");
  EXPECT_EQ(read_as(1000, {1000}).first.state, ProcState::kUnknown);
  write_mount("rw,hidepid=noaccess");
  {
    auto [info, hidden] = read_as(1000, {1000});
    EXPECT_EQ(info.state, ProcState::kGone);
    EXPECT_TRUE(hidden.hidden);
    EXPECT_NE(hidden.note.find("unreadable"), std::string::npos) << hidden.note;
  }
  write_mount("rw");
  EXPECT_FALSE(read_as(1000, {1000}).second.hidden);
  fs::remove_all(root_);
  Write({});
  EXPECT_EQ(read_as(1000, {1000}).first.state, ProcState::kGone);
}

// The mount tables name the mount point by its canonical path: a root given through a symlink,
// relative or with a doubled slash is found there all the same (it was taken for a plain procfs,
// and a hidden holder for none).
TEST_F(ProcessReaderTest, HidepidIsFoundWhateverFormTheRootIsGivenIn) {
  Write({});
  FixtureOptions o;
  o.mountinfo = "23 1 0:22 / " + fs::canonical(root_).string() + " rw,relatime shared:13 - proc proc rw,hidepid=2\n";
  Write({}, o);
  const fs::path link = root_.parent_path() / (root_.filename().string() + "-link");
  fs::remove(link);
  fs::create_symlink(root_, link);
  const fs::path cwd = fs::current_path();
  fs::current_path(root_.parent_path());
  const std::string relative = root_.filename().string();
  for (const std::string& given :
       {link.string(), relative, root_.parent_path().string() + "//" + relative, root_.string() + "/."}) {
    DirProcFs fs(given);
    ReaderOptions ro = Options();
    ro.euid = 1000;
    ro.groups = std::vector<uint32_t>{1000};
    ProcessReader reader(fs, ro);
    EXPECT_TRUE(reader.Hidden().hidden) << given;
    EXPECT_EQ(reader.Read(4242).state, ProcState::kUnknown) << given;
  }
  fs::current_path(cwd);
  fs::remove(link);
}

}  // namespace
}  // namespace vw::procfs
