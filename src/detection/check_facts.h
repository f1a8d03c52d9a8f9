// What the check rules (findings.cpp, orphaned_memory.cpp) read from snapshots, and how they name
// holders: the same GPU and PID across a window's samples, used memory no listed process accounts
// for, and the words for a holder (PID, container, user, command) and for ending it. Pure
// functions, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "detection/findings.h"

namespace vw::detection::check_facts {

// NVML return codes that say "this GPU or driver cannot do that", not "something is wrong".
bool IsCapabilityCode(int code);

// "PID 41877 (container PID 7, container 3f2a..., user alice) `python3 train.py`" (the command
// cut at 80 bytes, never inside a UTF-8 character).
std::string Who(const ProcessSnapshot& p);
// "41877 `python3 train.py`" (the command cut at 40 bytes, never inside a UTF-8 character), or the
// PID alone when no command is known.
std::string PidAndCommand(const ProcessSnapshot& p);
// "`kill -TERM 1234` on the host", with the container-side spelling when the PID differs there:
// `kubectl exec` when the pod's names are known, else the runtime's client (`crictl exec` for
// containerd and CRI-O, `podman exec`, `docker exec`).
std::string KillHint(const ProcessSnapshot& p);
// "MIG GPU instance 5 (2g.20gb, MIG-...)": a MIG device's GPU instance with its profile and MIG
// UUID (those known).
std::string MigInstanceName(const MigDeviceSnapshot& m);
// What frees memory that no process owns in the MIG GPU instance of `m` (id known) on GPU `gpu_key`
// without disturbing the other instances' tenants: stopping `stop_first` (the instance's processes,
// already joined; empty: none), then destroying and recreating the instance with nvidia-smi; a
// full GPU reset only when every instance is idle. `nothing_holds`: no process has the device open.
std::string MigInstanceFreeAction(const MigDeviceSnapshot& m, const std::string& gpu_key, const std::string& stop_first,
                                  size_t stop_count, bool nothing_holds);
// "the open files of 60 processes could not be read (PIDs 812, 1001, ..., and 52 more)": the fd
// scan's blind spot (HolderScan::dirs_unreadable, which is not 0), naming the PIDs it knows.
std::string UnreadableFdsText(const HostSnapshot& h);
// A size in bytes as people read it ("4.0 GiB").
std::string MiB(uint64_t bytes);
// "a, b, c".
std::string Join(const std::vector<std::string>& v);
// The first few of a list that may be long (a GPU with hundreds of processes), and how many more:
// "41877 `python3 train.py`, ..., and 192 more".
std::string JoinFew(const std::vector<std::string>& v);

// Appends a finding to `result` and raises its worst severity.
void AddFinding(CheckResult* result, std::string kind, Severity sev, std::string gpu, std::optional<int64_t> pid,
                std::optional<uint64_t> bytes, std::string message, std::string action);

// The GPU `gpu` in another sample (matched by UUID, else index), or nullptr.
const GpuSnapshot* SameGpu(const HostSnapshot& host, const GpuSnapshot& gpu);
// The holder `pid` of a GPU, or nullptr.
const ProcessSnapshot* SamePid(const GpuSnapshot& gpu, int64_t pid);
// The key of a GPU of `host` on which NVML lists `pid` (the first, by NVML index), if any.
std::optional<std::string> ListedOn(const HostSnapshot& host, int64_t pid);
// The same GPU in every sample that has it, oldest first (the last one is `gpu` itself).
std::vector<const GpuSnapshot*> History(const CheckInput& in, const GpuSnapshot& gpu);

// Used memory no listed process accounts for (bytes), with the threshold in force for the GPU.
struct Unattributed {
  std::optional<uint64_t> bytes;  // used - sum(listed process memory), when computable
  uint64_t threshold = 0;         // threshold in force for this GPU (bytes; at least 1)
  std::string why_not;            // why it could not be computed
  uint64_t overcount = 0;         // sum(listed) - used when the listed processes hold more than used (bytes)
};
Unattributed ComputeUnattributed(const GpuSnapshot& g, const CheckConfig& c);

}  // namespace vw::detection::check_facts
