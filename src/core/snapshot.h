// Snapshots: what the live view (NVML + procfs) knows about a GPU and its memory holders at one
// instant. `check` renders one; `watch` keeps a stream of them.
//
// Every field may be missing: std::optional is set only when the underlying call succeeded.
// Sizes are bytes, times are seconds since the Unix epoch (UTC), ratios are 0..1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vw {

// Process state from /proc/PID/stat: R running, S sleeping, D uninterruptible (stuck in the
// driver), Z zombie, T stopped, X dead; kGone when the PID no longer exists.
enum class ProcState { kUnknown, kRunning, kSleeping, kDiskSleep, kZombie, kStopped, kDead, kGone };

// What the host OS says about one PID (sources/procfs fills it).
struct ProcessInfo {
  bool alive = false;  // /proc/PID exists and (start time matches when known)
  ProcState state = ProcState::kUnknown;
  std::optional<double> start_time_s;  // since boot, from /proc/PID/stat field 22 (PID-reuse guard)
  std::optional<int64_t> ppid;         // the parent's PID (stat field 4), when read and above 0
  // The main thread has exited (a zombie) while other threads live: the process is not reaped
  // until they exit, and `state` is theirs (D when one of them is in D: `stuck_tid`, the first).
  bool main_thread_exited = false;
  std::optional<int64_t> stuck_tid;
  std::string parent_command;  // a zombie's parent's command line (who must reap it); else empty
  std::optional<uint32_t> uid;
  std::string user;                      // name for uid, empty when unknown
  std::string command;                   // full command line, spaces between arguments
  std::optional<double> cpu_seconds;     // utime + stime
  std::optional<int64_t> container_pid;  // the PID in its container: NSpid's second level (one below the
                                         // host's), when there is one and it differs from the host PID
  std::string container_id;              // Docker/containerd/CRI-O ID from the cgroup path
  std::string container_runtime;         // "docker", "containerd", "crio", "podman" from the cgroup path;
                                         // empty when only an ID was seen
  std::string pod_uid;                   // Kubernetes pod UID from the cgroup path
  std::string pod_namespace;             // the pod's namespace, pod name and the container's name,
  std::string pod_name;                  // from the kubelet's log directories (procfs/kube_names.h);
  std::string container_name;            // empty when not known
  std::string slurm_job;                 // Slurm job ID from the cgroup path ("job_1234"), or empty
  std::vector<std::string> unreadable;   // facts that could not be read ("cmdline: permission denied")
};

// Copies who the process is (uid, user, command, container PID, container, pod, their Kubernetes
// names, Slurm job) from `from` to `to`, leaving its state, liveness and what could not be read as
// they are: for a process gone from /proc that keeps the facts read while it was alive.
inline void CopyIdentity(const ProcessInfo& from, ProcessInfo& to) {
  to.uid = from.uid;
  to.user = from.user;
  to.command = from.command;
  to.container_pid = from.container_pid;
  to.container_id = from.container_id;
  to.container_runtime = from.container_runtime;
  to.pod_uid = from.pod_uid;
  to.pod_namespace = from.pod_namespace;
  to.pod_name = from.pod_name;
  to.container_name = from.container_name;
  to.slurm_job = from.slurm_job;
}

// Where a process runs, as a person reads it: the container's Kubernetes name when known, else
// the first `id_chars` of its ID; the pod as "namespace/name" when known, else the first
// `uid_chars` of its UID. Empty when it is in none.
inline std::string ContainerShown(const ProcessInfo& i, size_t id_chars) {
  return !i.container_name.empty() ? i.container_name : i.container_id.substr(0, id_chars);
}
inline std::string PodShown(const ProcessInfo& i, size_t uid_chars) {
  return !i.pod_name.empty() ? i.pod_namespace + "/" + i.pod_name : i.pod_uid.substr(0, uid_chars);
}

// One holder of GPU memory: listed by NVML, or found only through /dev/nvidia* file descriptors.
struct ProcessSnapshot {
  int64_t pid = 0;                                               // host PID as NVML reports it
  bool listed_by_nvml = true;                                    // false: found only by the /dev/nvidia<minor> fd scan
  bool compute = false, graphics = false, mps = false;           // context types (merged by PID)
  std::optional<uint64_t> used_bytes;                            // missing when NVML says NOT_AVAILABLE
  std::optional<double> sm_util_ratio;                           // from process utilisation samples, 0..1
  std::optional<unsigned> gpu_instance_id, compute_instance_id;  // MIG only
  ProcessInfo info;
  std::string nvml_name;  // nvmlSystemGetProcessName, when asked for and known
};

// The command a person knows the process by: its /proc command line, or NVML's name for the PID
// when that could not be read; empty when neither is known.
inline const std::string& CommandOf(const ProcessSnapshot& p) {
  return p.info.command.empty() ? p.nvml_name : p.info.command;
}

// The context types NVML listed `p` with, as `check` shows them and `record` writes them: "C"
// (compute), "G" (graphics), "M" (MPS) joined with '+' in that order ("C+G", "C+M"); empty when
// NVML gave none, or for a holder found only by the fd scan.
inline std::string ProcessTypeText(const ProcessSnapshot& p) {
  if (!p.listed_by_nvml) return {};
  std::string t;
  for (auto [on, letter] : {std::pair<bool, const char*>{p.compute, "C"}, {p.graphics, "G"}, {p.mps, "M"}}) {
    if (!on) continue;
    if (!t.empty()) t += '+';
    t += letter;
  }
  return t;
}

struct MigDeviceSnapshot {
  // Missing when NVML did not give them (nvmlDeviceGetGpuInstanceId / ...ComputeInstanceId failed):
  // never 0, which is a real instance id. The compute instances of one GPU instance share its id.
  std::optional<unsigned> gpu_instance_id;
  std::optional<unsigned> compute_instance_id;
  std::string uuid;  // "MIG-..."; empty when unknown
  std::optional<uint64_t> memory_total_bytes, memory_used_bytes;
  std::optional<unsigned> index;  // MIG device index on its parent GPU
  std::string name;               // "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
  std::optional<uint64_t> memory_free_bytes;
};

// A MIG device's profile from its name ("NVIDIA H100 80GB HBM3 MIG 3g.40gb" -> "3g.40gb"), or the
// name when it has no " MIG ".
inline std::string MigProfile(const std::string& name) {
  const size_t at = name.rfind(" MIG ");
  return at == std::string::npos ? name : name.substr(at + 5);
}

// The MIG device of `p`'s GPU instance on `g` whose memory size is known (the first listed: the
// compute instances of one GPU instance share its memory); null when `p` is not on a MIG
// instance, the instance's id or its size is unknown. A process's room is then the instance's,
// not the card's.
inline const MigDeviceSnapshot* MigInstanceOf(const std::vector<MigDeviceSnapshot>& mig_devices,
                                              const ProcessSnapshot& p) {
  if (!p.gpu_instance_id) return nullptr;
  for (const MigDeviceSnapshot& m : mig_devices) {
    if (m.gpu_instance_id == p.gpu_instance_id && m.memory_total_bytes) return &m;
  }
  return nullptr;
}

// One failed NVML call, for metrics (nvml_errors_total{call,code}) and findings.
struct NvmlCallError {
  std::string function;  // "nvmlDeviceGetMemoryInfo_v2"
  int code = 0;          // nvmlReturn_t value; 0 with a "deadline" message when the call hung
  std::string message;   // "nvmlDeviceGetMemoryInfo_v2: Unknown Error (NVML error 999)"
  // A short fixed token for metrics: the nvmlReturn_t name ("NVML_ERROR_GPU_IS_LOST"), "timeout"
  // (no answer within the deadline) or "blocked" (not called: an earlier call still hangs).
  std::string code_name;
};

struct GpuSnapshot {
  double t = 0;  // when sampled (seconds since epoch, UTC)
  unsigned index = 0;
  std::string uuid;               // "GPU-5b8c..."
  std::string name;               // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;         // "00000000:3B:00.0"
  std::optional<unsigned> minor;  // /dev/nvidia<minor>
  std::optional<uint64_t> memory_total_bytes, memory_used_bytes, memory_free_bytes, memory_reserved_bytes;
  std::optional<uint64_t> bar1_total_bytes, bar1_used_bytes;
  std::optional<double> gpu_util_ratio, memory_util_ratio;
  bool mig_enabled = false;
  std::vector<MigDeviceSnapshot> mig_devices;
  std::vector<ProcessSnapshot> processes;
  bool responsive = true;                  // false when a call hung past its deadline
  bool lost = false;                       // NVML_ERROR_GPU_IS_LOST
  std::vector<std::string> errors;         // "nvmlDeviceGetMemoryInfo_v2: Unknown Error"
  std::vector<NvmlCallError> nvml_errors;  // the same failures, structured
};

// What the scan of /proc/PID/fd for holders of /dev/nvidia* could see, and what not.
struct HolderScan {
  size_t pids_scanned = 0;               // PIDs whose /proc/PID/fd was looked at; 0: no fd scan was made
  size_t dirs_unreadable = 0;            // PIDs whose /proc/PID/fd could not be read: holders may be missing
  std::vector<int64_t> unreadable_pids;  // the first few of them (kernel threads are not counted)
  std::string pids_hidden;               // why other users' processes cannot be seen in /proc (mounted with
                                         // hidepid), and what to do; empty when every process can be
};

// Everything one look at the host gives.
struct HostSnapshot {
  double t = 0;
  std::string hostname;
  std::string driver_version;
  std::optional<int> cuda_driver_version;  // e.g. 12040
  std::vector<GpuSnapshot> gpus;
  bool host_pids_visible = true;    // false inside a container without the host PID namespace
  HolderScan holder_scan;           // the /dev/nvidia* holder scan's reach (procfs/holder_join.h)
  std::string nvml_version;         // nvmlSystemGetNVMLVersion, e.g. "12.550.54.15"
  std::vector<std::string> errors;  // failed system-wide calls (driver/CUDA version)
};

}  // namespace vw
