// Parsers for the procfs files vramwatch reads: /proc/PID/stat, status, cmdline, cgroup, and
// /etc/passwd. Pure functions of the file text; errors name the file and what was expected.
//
// Units: tick fields are clock ticks (sysconf(_SC_CLK_TCK), 100 on Linux); converting to seconds
// is the caller's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/snapshot.h"
#include "core/status.h"

namespace vw::procfs {

// Fields of /proc/PID/stat that vramwatch uses.
struct StatFields {
  int64_t pid = 0;
  std::string comm;              // between the first '(' and the LAST ')': may hold spaces and ')'
  char state = '?';              // R S D Z T t X I W P
  int64_t ppid = 0;              // field 4: the parent's PID (0 for the kernel's own)
  uint64_t flags = 0;            // field 9: PF_* flags (kPfKthread marks a kernel thread)
  uint64_t utime_ticks = 0;      // field 14
  uint64_t stime_ticks = 0;      // field 15
  int64_t num_threads = 0;       // field 20: threads of the process, a zombie main thread included
  uint64_t starttime_ticks = 0;  // field 22, since boot
};

inline constexpr uint64_t kPfKthread = 0x00200000;  // PF_KTHREAD (include/linux/sched.h)

// `what` names the file in error messages ("/proc/12/stat").
Result<StatFields> ParseStat(std::string_view text, std::string_view what);

// R/S/D/Z/T/X letters -> ProcState (I idle kernel thread counts as sleeping, t as stopped).
ProcState StateFromLetter(char c);
char LetterFromState(ProcState s);  // '?' for unknown, 'G' never: kGone -> '-'

// Fields of /proc/PID/status.
struct StatusFields {
  std::optional<uint32_t> uid;  // real UID (first number of "Uid:")
  std::optional<int64_t> ppid;  // "PPid:" (0 for the kernel's own threads)
  std::vector<int64_t> nspid;   // "NSpid:" outermost first; empty on kernels before 4.1
  std::string name;
};
Result<StatusFields> ParseStatus(std::string_view text, std::string_view what);

// NUL-separated argv -> "arg0 arg1 ..." (a trailing NUL is dropped; empty for kernel threads
// and zombies).
std::string ParseCmdline(std::string_view raw);

// What a process's cgroup path says about where it runs.
struct CgroupRefs {
  std::string container_id;  // 64 hex digits, or empty
  std::string runtime;       // "docker", "containerd", "crio", "podman", or empty when only an ID was seen
  std::string pod_uid;       // Kubernetes pod UID with dashes (a static pod's: 32 hex digits), or empty
  std::string slurm_job;     // Slurm job ID, or empty
};
// Accepts cgroup v1 ("12:memory:/docker/<id>") and v2 ("0::/system.slice/docker-<id>.scope").
CgroupRefs ParseCgroup(std::string_view text);

// uid -> user name from passwd-format text; empty when absent.
std::string UserFromPasswd(std::string_view passwd_text, uint32_t uid);

// First line of /proc/PID/sched: "bash (1234, #threads: 1)" -> 1234. Inside a PID namespace on
// older kernels /proc/1/sched shows the host PID of the container's init.
std::optional<int64_t> PidFromSched(std::string_view text);

// The options of the proc filesystem mounted at `mount_point` that decide whose processes it shows.
struct ProcMountOptions {
  std::string hidepid;          // as written: "2", "invisible", "noaccess", ...; empty when absent
  std::optional<uint32_t> gid;  // gid=: members of this group see every process
};
// From /proc/self/mountinfo text (the super options after " - proc ") or /proc/mounts text (the
// fourth field); the last proc mount at `mount_point` wins (it hides those below it). nullopt
// when no proc filesystem is mounted there. Octal escapes in mount points (\040) are decoded.
std::optional<ProcMountOptions> ProcMountOptionsAt(std::string_view text, std::string_view mount_point);

// /proc/uptime "12345.67 54321.00" -> 12345.67 (seconds since boot).
std::optional<double> ParseUptime(std::string_view text);

}  // namespace vw::procfs
