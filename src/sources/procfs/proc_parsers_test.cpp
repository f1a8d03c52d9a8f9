#include "sources/procfs/proc_parsers.h"

#include <gtest/gtest.h>

namespace vw::procfs {
namespace {

std::string StatWith(const std::string& head) {
  // head = "PID (comm) S"; then fields 4..52 with ppid=31 utime=250 stime=50 starttime=123456.
  std::string s = head;
  for (int f = 4; f <= 52; ++f) {
    uint64_t v = f == 4 ? 31 : f == 14 ? 250 : f == 15 ? 50 : f == 20 ? 3 : f == 22 ? 123456 : 0;
    s += " " + std::to_string(v);
  }
  return s + "\n";
}

TEST(ParseStat, ReadsCommWithSpacesAndParenthesesUpToTheLastParen) {
  struct Case {
    std::string head;
    int64_t pid;
    std::string comm;
    char state;
  } cases[] = {
      {"4242 (python3) R", 4242, "python3", 'R'},
      {"17 (pt main thread) D", 17, "pt main thread", 'D'},
      {"99 (a) b) (c) Z", 99, "a) b) (c", 'Z'},
      {"7 ((sd-pam)) S", 7, "(sd-pam)", 'S'},
      {"8 () T", 8, "", 'T'},
  };
  for (const auto& c : cases) {
    auto r = ParseStat(StatWith(c.head), "/proc/x/stat");
    ASSERT_TRUE(r.ok()) << c.head << ": " << r.status().ToString();
    EXPECT_EQ(r->pid, c.pid) << c.head;
    EXPECT_EQ(r->comm, c.comm) << c.head;
    EXPECT_EQ(r->state, c.state) << c.head;
    EXPECT_EQ(r->ppid, 31) << c.head;
    EXPECT_EQ(r->utime_ticks, 250u) << c.head;
    EXPECT_EQ(r->stime_ticks, 50u) << c.head;
    EXPECT_EQ(r->starttime_ticks, 123456u) << c.head;
    EXPECT_EQ(r->num_threads, 3) << c.head;
  }
}

TEST(ParseStat, RejectsTruncatedAndMalformedLinesNamingTheFile) {
  const char* bad[] = {"", "12 python R 1 2 3", "12 (python) R 1 2 3", "x (python) R",
                       "12 (p) RR 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"};
  for (const char* text : bad) {
    auto r = ParseStat(text, "/proc/12/stat");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kParseError);
    EXPECT_NE(r.status().message().find("/proc/12/stat"), std::string::npos) << r.status().message();
  }
  std::string non_numeric = StatWith("5 (x) S");
  non_numeric.replace(non_numeric.find(" 250 "), 5, " abc ");
  auto r = ParseStat(non_numeric, "/proc/5/stat");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("field 14"), std::string::npos) << r.status().message();
}

TEST(StateFromLetter, MapsKernelLetters) {
  EXPECT_EQ(StateFromLetter('R'), ProcState::kRunning);
  EXPECT_EQ(StateFromLetter('S'), ProcState::kSleeping);
  EXPECT_EQ(StateFromLetter('I'), ProcState::kSleeping);
  EXPECT_EQ(StateFromLetter('D'), ProcState::kDiskSleep);
  EXPECT_EQ(StateFromLetter('Z'), ProcState::kZombie);
  EXPECT_EQ(StateFromLetter('t'), ProcState::kStopped);
  EXPECT_EQ(StateFromLetter('X'), ProcState::kDead);
  EXPECT_EQ(StateFromLetter('?'), ProcState::kUnknown);
  EXPECT_EQ(LetterFromState(ProcState::kDiskSleep), 'D');
}

TEST(ParseStatus, ReadsRealUidAndNSpidLevels) {
  auto r = ParseStatus(
      "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1001\t1002\t1003\n"
      "NStgid:\t81234\t57\nNSpid:\t81234\t57\n",
      "s");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "python3");
  ASSERT_TRUE(r->uid.has_value());
  EXPECT_EQ(*r->uid, 1000u);
  ASSERT_EQ(r->nspid.size(), 2u);
  EXPECT_EQ(r->nspid[0], 81234);
  EXPECT_EQ(r->nspid[1], 57);
}

TEST(ParseStatus, OldKernelWithoutNSpidLeavesItEmptyAndBadUidIsAnError) {
  auto r = ParseStatus("Name:\tx\nUid:\t0\t0\t0\t0\n", "s");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->nspid.empty());
  auto bad = ParseStatus("Name:\tx\nUid:\tabc\n", "/proc/3/status");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/proc/3/status:2"), std::string::npos) << bad.status().message();
}

TEST(ParseCmdline, JoinsNulSeparatedArguments) {
  using namespace std::string_literals;
  EXPECT_EQ(ParseCmdline("python3\0train.py\0--lr\0001e-3\0"s), "python3 train.py --lr 1e-3");
  EXPECT_EQ(ParseCmdline(""), "");
  EXPECT_EQ(ParseCmdline("sleep\0"s), "sleep");
}

TEST(ParseCgroup, FindsContainerPodAndSlurmInV1AndV2Paths) {
  const std::string id = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";
  struct Case {
    std::string text, container, runtime, pod, slurm;
  } cases[] = {
      {"12:memory:/docker/" + id + "\n11:cpu:/docker/" + id + "\n", id, "docker", "", ""},
      {"0::/system.slice/docker-" + id + ".scope\n", id, "docker", "", ""},
      {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice/"
       "cri-containerd-" +
           id + ".scope\n",
       id, "containerd", "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", ""},
      {"0::/kubepods.slice/kubepods-pod0a1b2c3d_0000_1111_2222_333344445555.slice/crio-" + id + ".scope\n", id, "crio",
       "0a1b2c3d-0000-1111-2222-333344445555", ""},
      {"11:memory:/kubepods/besteffort/pod0a1b2c3d-0000-1111-2222-333344445555/" + id + "\n", id, "",
       "0a1b2c3d-0000-1111-2222-333344445555", ""},
      {"7:memory:/slurm/uid_1000/job_4242/step_0/task_0\n", "", "", "", "4242"},
      {"0::/system.slice/slurmstepd.scope/job_987/step_batch/user/task_0\n", "", "", "", "987"},
      {"0::/user.slice/user-1000.slice/session-3.scope\n", "", "", "", ""},
      // Podman: rootful and rootless (crun's "container" sub-cgroup below the scope), cgroup v1
      // with the cgroupfs manager; conmon's own scope is no container.
      {"0::/machine.slice/libpod-" + id + ".scope/container\n", id, "podman", "", ""},
      {"0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id + ".scope/container\n", id, "podman",
       "", ""},
      {"9:memory:/libpod_parent/libpod-" + id + "\n", id, "podman", "", ""},
      {"0::/machine.slice/libpod-conmon-" + id + ".scope\n", "", "", "", ""},
      // A static pod (its UID the manifest's hash), systemd and cgroupfs drivers; 32 hex digits
      // outside kubepods, or running on into more, are no pod.
      {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b.slice/"
       "cri-containerd-" +
           id + ".scope\n",
       id, "containerd", "6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b", ""},
      {"0::/kubepods/besteffort/pod6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b/" + id + "\n", id, "",
       "6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b", ""},
      {"0::/user.slice/pod6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b.slice\n", "", "", "", ""},
      {"0::/kubepods/besteffort/pod6f1e8d2c9b7a4e3f8a1b2c3d4e5f6a7b00/x\n", "", "", "", ""},
      {"0::/batch/job_5/step\n", "", "", "", ""},
      {"garbage without colons\n", "", "", "", ""},
      // The systemd driver's unconverted "SLICE:PREFIX:ID" segment under containerd.service (its ID
      // was lost, and with it the container's own exec step).
      {"0::/system.slice/containerd.service/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice:"
       "cri-containerd:" +
           id + "\n",
       id, "containerd", "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", ""},
      // A kind node's pod on cgroup v1: the node is a Docker container, its pods' are CRI ones.
      {"12:memory:/docker/" + std::string(64, 'a') + "/kubepods/besteffort/pod0a1b2c3d-0000-1111-2222-333344445555/" +
           id + "\n",
       id, "", "0a1b2c3d-0000-1111-2222-333344445555", ""},
      {"0::/nerdctl-" + id + ".scope\n", id, "nerdctl", "", ""},
  };
  for (const auto& c : cases) {
    CgroupRefs r = ParseCgroup(c.text);
    EXPECT_EQ(r.container_id, c.container) << c.text;
    EXPECT_EQ(r.runtime, c.runtime) << c.text;
    EXPECT_EQ(r.pod_uid, c.pod) << c.text;
    EXPECT_EQ(r.slurm_job, c.slurm) << c.text;
  }
}

TEST(ParseCgroup, IgnoresHexSegmentsOfTheWrongLength) {
  CgroupRefs r = ParseCgroup("0::/docker/3f4e5d6c7b8a\n");
  EXPECT_EQ(r.container_id, "");
}

TEST(UserFromPasswd, FindsTheNameForAUid) {
  std::string passwd = "root:x:0:0:root:/root:/bin/bash\n# comment\nalice:x:1000:1000::/home/alice:/bin/sh\nbroken\n";
  EXPECT_EQ(UserFromPasswd(passwd, 1000), "alice");
  EXPECT_EQ(UserFromPasswd(passwd, 0), "root");
  EXPECT_EQ(UserFromPasswd(passwd, 4242), "");
}

TEST(PidFromSched, ReadsThePidInTheFirstLine) {
  EXPECT_EQ(PidFromSched("systemd (1, #threads: 1)\n-----\n"), 1);
  EXPECT_EQ(PidFromSched("sh (81234, #threads: 1)\n"), 81234);
  EXPECT_EQ(PidFromSched("nonsense\n"), std::nullopt);
}

// Whose processes a procfs shows: mountinfo's super options (after " - proc proc") or mounts'
// options, of the proc mount at the given mount point; the last mount there hides those below.
TEST(ProcMountOptionsAt, ReadsHidepidAndGidOfTheProcMountAtThePath) {
  const std::string mountinfo =
      "22 1 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
      "23 1 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n"
      "98 23 0:48 / /proc rw,relatime shared:50 master:3 - proc proc rw,hidepid=invisible,gid=1001\n"
      "99 1 0:49 / /host\\040proc rw,relatime - proc proc rw,hidepid=2\n";
  auto at_proc = ProcMountOptionsAt(mountinfo, "/proc");
  ASSERT_TRUE(at_proc.has_value());
  EXPECT_EQ(at_proc->hidepid, "invisible");
  EXPECT_EQ(at_proc->gid, 1001u);
  auto host = ProcMountOptionsAt(mountinfo, "/host proc");
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(host->hidepid, "2");
  EXPECT_FALSE(host->gid.has_value());
  EXPECT_FALSE(ProcMountOptionsAt(mountinfo, "/sys").has_value());  // not a proc mount
  EXPECT_FALSE(ProcMountOptionsAt(mountinfo, "/tmp/fixture").has_value());

  const std::string mounts =
      "sysfs /sys sysfs rw,nosuid 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime,hidepid=noaccess 0 0\n";
  auto from_mounts = ProcMountOptionsAt(mounts, "/proc");
  ASSERT_TRUE(from_mounts.has_value());
  EXPECT_EQ(from_mounts->hidepid, "noaccess");
  auto plain = ProcMountOptionsAt("proc /proc proc rw,relatime 0 0\n", "/proc");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->hidepid, "");
}

TEST(ParseUptime, ReadsSecondsSinceBoot) {
  EXPECT_EQ(ParseUptime("12345.67 54321.00\n"), 12345.67);
  EXPECT_EQ(ParseUptime(""), std::nullopt);
  EXPECT_EQ(ParseUptime("soon 1\n"), std::nullopt);
}

}  // namespace
}  // namespace vw::procfs
