#include "detection/check_facts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

#include "core/printable.h"
#include "core/units.h"

namespace vw::detection::check_facts {

// NVML return codes that say "this GPU or driver cannot do that", not "something is wrong".
bool IsCapabilityCode(int code) {
  return code == 3 /*NOT_SUPPORTED*/ || code == 6 /*NOT_FOUND*/ || code == 13;
}

std::string Who(const ProcessSnapshot& p) {
  std::string s = fmt::format("PID {}", p.pid);
  std::vector<std::string> where;
  if (p.info.container_pid) where.push_back(fmt::format("container PID {}", *p.info.container_pid));
  // Kubernetes names when the kubelet's log directory gave them, else the IDs of the cgroup path.
  if (const std::string c = ContainerShown(p.info, 12); !c.empty()) where.push_back("container " + c);
  if (const std::string pod = PodShown(p.info, std::string::npos); !pod.empty()) where.push_back("pod " + pod);
  if (!p.info.slurm_job.empty()) where.push_back("Slurm job " + p.info.slurm_job);
  if (!p.info.user.empty()) where.push_back("user " + p.info.user);
  if (!where.empty()) s += " (" + fmt::format("{}", fmt::join(where, ", ")) + ")";
  std::string cmd = CommandOf(p);
  if (!cmd.empty()) s += " `" + Utf8Shortened(cmd, 80) + "`";
  return s;
}

// "41877 `python3 train.py`" (the command cut at 40 bytes, never inside a UTF-8 character), or the
// PID alone when no command is known.
std::string PidAndCommand(const ProcessSnapshot& p) {
  const std::string& cmd = CommandOf(p);
  if (cmd.empty()) return std::to_string(p.pid);
  return fmt::format("{} `{}`", p.pid, Utf8Shortened(cmd, 40));
}

// "kill -TERM 1234" with the container-side spelling when the PID differs there.
std::string KillHint(const ProcessSnapshot& p) {
  std::string s = fmt::format("`kill -TERM {}` on the host", p.pid);
  if (p.info.container_pid) {
    s += fmt::format(" (inside its container it is PID {}", *p.info.container_pid);
    if (!p.info.pod_name.empty() && !p.info.container_name.empty()) {
      s += fmt::format(": `kubectl exec -n {} {} -c {} -- kill -TERM {}`", p.info.pod_namespace, p.info.pod_name,
                       p.info.container_name, *p.info.container_pid);
    } else if (!p.info.container_id.empty()) {
      // The runtime's own client, as the cgroup path names the runtime; a bare ID under a pod's
      // cgroup is a CRI runtime's (containerd or CRI-O), any other Docker's.
      const std::string& rt = p.info.container_runtime;
      const bool cri = rt == "containerd" || rt == "crio" || (rt.empty() && !p.info.pod_uid.empty());
      const char* client = rt == "podman" ? "podman" : rt == "nerdctl" ? "nerdctl" : cri ? "crictl" : "docker";
      s +=
          fmt::format(": `{} exec {} kill -TERM {}`", client, p.info.container_id.substr(0, 12), *p.info.container_pid);
    }
    s += ")";
  }
  return s;
}

std::string UnreadableFdsText(const HostSnapshot& h) {
  const HolderScan& scan = h.holder_scan;
  std::string s = fmt::format("the open files of {} process{} could not be read", scan.dirs_unreadable,
                              scan.dirs_unreadable == 1 ? "" : "es");
  if (scan.unreadable_pids.empty()) return s;
  const size_t named = scan.unreadable_pids.size();
  const size_t more = scan.dirs_unreadable > named ? scan.dirs_unreadable - named : 0;
  s += fmt::format(" ({} {}{})", named == 1 && more == 0 ? "PID" : "PIDs", fmt::join(scan.unreadable_pids, ", "),
                   more > 0 ? fmt::format(", and {} more", more) : "");
  return s;
}

std::string MigInstanceName(const MigDeviceSnapshot& m) {
  std::vector<std::string> about;
  if (!m.name.empty()) about.push_back(MigProfile(m.name));
  if (!m.uuid.empty()) about.push_back(m.uuid);
  std::string s = m.gpu_instance_id ? fmt::format("MIG GPU instance {}", *m.gpu_instance_id)
                                    : (m.index ? fmt::format("MIG device {}", *m.index) : std::string("a MIG device"));
  if (!about.empty()) s += " (" + fmt::format("{}", fmt::join(about, ", ")) + ")";
  return s;
}

std::string MigInstanceFreeAction(const MigDeviceSnapshot& m, const std::string& gpu_key, const std::string& stop_first,
                                  size_t stop_count, bool nothing_holds) {
  const std::string gi = std::to_string(m.gpu_instance_id.value_or(0));
  const std::string profile = m.name.empty() ? std::string("<profile>") : MigProfile(m.name);
  std::string s = nothing_holds ? "Nothing holds it any more, so no kill can free it"
                                : "No process NVML does not list holds it, so ending one cannot free it";
  s += ". To free it without disturbing the other GPU instances' tenants, ";
  if (stop_count > 0) s += (stop_count == 1 ? "stop PID " : "stop PIDs ") + stop_first + " on this instance, then ";
  s += fmt::format(
      "destroy GPU instance {0} (`nvidia-smi mig -dci -gi {0} -i {1}`, then `nvidia-smi mig -dgi -gi {0} -i {1}`) "
      "and create it again (`nvidia-smi mig -cgi {2} -C -i {1}`; it may get another id). A full GPU reset "
      "(`nvidia-smi --gpu-reset -i {1}`) frees it too, but only once every GPU instance is idle. To be done by a "
      "person.",
      gi, gpu_key, profile);
  return s;
}

std::string MiB(uint64_t bytes) {
  return FormatBytes(static_cast<double>(bytes));
}

std::string Join(const std::vector<std::string>& v) {
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string JoinFew(const std::vector<std::string>& v) {
  constexpr size_t kNamed = 8;
  if (v.size() <= kNamed) return Join(v);
  return Join(std::vector<std::string>(v.begin(), v.begin() + kNamed)) +
         fmt::format(", and {} more", v.size() - kNamed);
}

void AddFinding(CheckResult* result, std::string kind, Severity sev, std::string gpu, std::optional<int64_t> pid,
                std::optional<uint64_t> bytes, std::string message, std::string action) {
  Finding f;
  f.kind = std::move(kind);
  f.severity = sev;
  f.gpu = std::move(gpu);
  f.pid = pid;
  f.bytes = bytes;
  f.message = std::move(message);
  f.action = std::move(action);
  result->worst = std::max(result->worst, sev);
  result->findings.push_back(std::move(f));
}

std::optional<std::string> ListedOn(const HostSnapshot& host, int64_t pid) {
  for (const auto& g : host.gpus) {
    for (const auto& p : g.processes) {
      if (p.pid == pid && p.listed_by_nvml) return GpuKey(g);
    }
  }
  return std::nullopt;
}

const GpuSnapshot* SameGpu(const HostSnapshot& host, const GpuSnapshot& gpu) {
  for (const auto& g : host.gpus) {
    if (!gpu.uuid.empty() ? g.uuid == gpu.uuid : g.index == gpu.index) return &g;
  }
  return nullptr;
}

const ProcessSnapshot* SamePid(const GpuSnapshot& gpu, int64_t pid) {
  for (const auto& p : gpu.processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

// The same GPU in every sample that has it, oldest first (the last one is `gpu` itself).
std::vector<const GpuSnapshot*> History(const CheckInput& in, const GpuSnapshot& gpu) {
  std::vector<const GpuSnapshot*> out;
  for (const auto& host : in.samples) {
    if (const GpuSnapshot* g = SameGpu(host, gpu)) out.push_back(g);
  }
  return out;
}

Unattributed ComputeUnattributed(const GpuSnapshot& g, const CheckConfig& c) {
  Unattributed u;
  u.threshold = std::max<uint64_t>(c.orphan_threshold_bytes, 1);  // 0: any unattributed memory, not none
  if (!g.memory_used_bytes) {
    u.why_not = "device memory could not be read";
    return u;
  }
  if (!ProcessListComplete(g)) {
    u.why_not = "the process list could not be read completely";
    return u;
  }
  uint64_t sum = 0;
  for (const auto& p : g.processes) {
    if (!p.listed_by_nvml) continue;
    if (!p.used_bytes) {
      u.why_not = fmt::format("NVML does not report the memory of PID {} (N/A)", p.pid);
      return u;
    }
    sum += *p.used_bytes;
  }
  if (!g.memory_reserved_bytes) u.threshold += c.reserved_allowance_bytes;
  u.bytes = *g.memory_used_bytes > sum ? *g.memory_used_bytes - sum : 0;
  u.overcount = sum > *g.memory_used_bytes ? sum - *g.memory_used_bytes : 0;
  return u;
}

}  // namespace vw::detection::check_facts
