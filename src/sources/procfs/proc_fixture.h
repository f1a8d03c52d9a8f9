// ProcFixture: writes a procfs-shaped directory tree describing made-up processes, so tests and
// `vramwatch demo` can run the real ProcessReader without touching the host's /proc.
//
// The tree holds, per process, stat / status / cmdline / cgroup files and an fd/ directory of
// symbolic links (e.g. fd/3 -> /dev/nvidia0), and a passwd-format file at <root>/passwd. Like a real
// procfs it always holds PID 1: an idle init with no device file open, unless `processes` gives PID 1.
// Like the host's procfs it holds PID 2, the kernel's kthreadd (PPid 0), unless `processes` gives
// PID 2 or FixtureOptions::kthreadd is false (a container's own /proc, in another PID namespace).
// Times are clock ticks as the kernel writes them (100 per second).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace vw::procfs {

struct FakeProcess {
  int64_t pid = 0;
  std::string comm = "python3";
  char state = 'S';
  uint32_t uid = 1000;
  std::vector<std::string> argv = {"python3"};  // written NUL-separated to cmdline
  std::string cgroup = "0::/user.slice/user-1000.slice/session-1.scope\n";
  std::vector<int64_t> nspid;           // empty: "NSpid:\t<pid>"
  std::vector<std::string> fd_targets;  // fd/3, fd/4, ... link to these
  uint64_t utime_ticks = 0, stime_ticks = 0, starttime_ticks = 1000;
  int64_t ppid = 1;
  uint64_t flags = 0;  // stat field 9 (kPfKthread: a kernel thread)
  // Threads other than the main one, by state ('S', 'D', ...): written as task/<pid + 1 + i>/stat
  // beside the main thread's task/<pid>/stat, and counted in stat field 20.
  std::string thread_states;
};

struct FixtureOptions {
  std::vector<std::pair<uint32_t, std::string>> users = {{0, "root"}, {1000, "alice"}};
  std::string pid1_sched;   // when set, written as 1/sched (container hints)
  std::string pid1_cgroup;  // when set, written as 1/cgroup
  bool kthreadd = true;     // write PID 2 as kthreadd: the tree shows the host's PID namespace
  int64_t self_pid = 0;     // when set, <root>/self links to that PID's directory, as in a real procfs
  std::string mountinfo;    // when set, written as <root>/self/mountinfo (a directory "self" without self_pid)
};

// Creates `root` (and parents) and writes the tree. Fails with the path that could not be written.
Status WriteProcFixture(const std::string& root, const std::vector<FakeProcess>& processes,
                        const FixtureOptions& options = {});

// The stat line the kernel would write for `p` (exposed for parser tests).
std::string FormatStatLine(const FakeProcess& p);

}  // namespace vw::procfs
