// ProcessReader: what the host OS says about GPU memory holders, read through a ProcFs.
//
// - Read(pid): ProcessInfo for one PID (state, start time, user, command line, CPU time, NSpid
//   container PID, container/pod/Slurm job from the cgroup). A vanished PID gives alive=false and
//   state kGone, except where the procfs hides other users' processes from us (Hidden()): there a
//   missing PID may be alive, so its state is kUnknown and `unreadable` says why; a file that cannot be read (EACCES,
//   parse error, or missing while the PID's stat was there) is listed in ProcessInfo::unreadable ("cmdline: permission
//   denied", "cmdline: missing") and its fields stay empty, never guessed. The stat is read again after the other
//   files: a process that exited meanwhile is gone (keeping what was read before it went, its
//   files not called missing), one whose PID now has another start time is gone ("pid reused"),
//   its files mixing two processes. A process whose main thread is a zombie while other threads
//   live (stat field 20, /proc/PID/task) takes their state: D when one is in D (a thread stuck in
//   the driver keeps the defunct process and its GPU memory), and main_thread_exited is set.
// - ScanDeviceFds(): what `fuser -v /dev/nvidia*` does: every PID with an open fd on
//   /dev/nvidia<minor>; /dev/nvidiactl and /dev/nvidia-uvm are recorded separately (they are not
//   tied to one GPU). The minor is the device number's (major 195) where stat() of the fd works,
//   else the name's ("/dev/nvidia1", also "/dev/nvidia1 (deleted)"; never "/dev/nvidia01"). vramwatch's own PID is
//   excluded (as this procfs numbers it: `<root>/self`).
// - Hidden(): whether the procfs is mounted with hidepid (read from `<root>/self/mountinfo`, else
//   `<root>/mounts`, for the proc mount at the root's path) in a way that hides processes of
//   other users from us: not when we run as root or in the mount's gid= group. A tree without
//   those files (a fixture) hides nothing.
// - PidNamespaceHints(): whether this procfs shows a PID namespace other than the host's (NVML
//   lists host PIDs). PID 2 is the kernel's kthreadd (PPid 0) in the host's namespace only: when
//   `<root>/2/status` can be read it decides; then /proc/1/sched and PID 1's cgroup are looked at.
//
// Times are seconds (start time since boot, CPU time as utime + stime). Thread-safe for reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "sources/procfs/proc_fs.h"

namespace vw::procfs {

struct ReaderOptions {
  std::string passwd_path;                      // passwd-format file for uid -> user; empty: getpwuid()
  std::optional<int64_t> self_pid;              // excluded from the fd scan; default: the PID `<root>/self`
                                                // links to (this procfs's number for us), else getpid()
  double clock_ticks_per_second = 0;            // 0: sysconf(_SC_CLK_TCK)
  std::optional<uint32_t> euid;                 // whose processes we may see under hidepid; default: geteuid()
  std::optional<std::vector<uint32_t>> groups;  // our groups (gid= of hidepid); default: getegid(), getgroups()
};

// Whether the procfs hides processes of other users from us (mount option hidepid).
struct HiddenPids {
  bool hidden = false;              // some processes of other users cannot be seen (or not read) here
  bool missing_is_unknown = false;  // they are not even listed (hidepid=2/invisible, 4/ptraceable)
  std::string option;               // "hidepid=invisible" as mounted
  std::string note;                 // what that means for the findings and what to do; empty when not hidden
};

// One PID holding NVIDIA device files open.
struct DeviceFdHolder {
  int64_t pid = 0;
  std::vector<unsigned> minors;  // /dev/nvidia<minor>, sorted, unique
  bool control = false;          // /dev/nvidiactl
  bool uvm = false;              // /dev/nvidia-uvm or /dev/nvidia-uvm-tools
};

struct DeviceFdScan {
  std::vector<DeviceFdHolder> holders;  // sorted by PID; only PIDs with at least one NVIDIA fd
  size_t pids_scanned = 0;
  size_t pids_unreadable = 0;            // fd directory not readable (EACCES): holders may be missing
  std::vector<int64_t> unreadable_pids;  // the first kMaxNamedPids of them, by PID
  static constexpr size_t kMaxNamedPids = 8;
  std::vector<std::string> unreadable;  // first few messages, for notes
};

struct NamespaceHints {
  bool in_pid_namespace = false;  // evidence that this procfs shows a PID namespace other than the host's
  std::string evidence;           // what said so, for notes and the finding message
};

class ProcessReader {
 public:
  ProcessReader(const ProcFs& fs, ReaderOptions options);

  // `expected_start_s`: the start time seen earlier for this PID; when it differs the PID was
  // reused and the process we knew is gone.
  ProcessInfo Read(int64_t pid, std::optional<double> expected_start_s = std::nullopt) const;
  DeviceFdScan ScanDeviceFds() const;
  NamespaceHints PidNamespaceHints() const;
  const HiddenPids& Hidden() const { return hidden_; }

 private:
  std::string UserFor(uint32_t uid, std::vector<std::string>& unreadable) const;
  void ReadThreadsOfZombie(int64_t pid, int64_t num_threads, ProcessInfo& info) const;
  const ProcFs& fs_;
  ReaderOptions options_;
  HiddenPids hidden_;
};

}  // namespace vw::procfs
