#include "detection/mig_instances.h"

#include <fmt/format.h>

#include "detection/findings.h"

namespace vw::detection {

std::vector<MigInstance> MigInstances(const GpuSnapshot& g) {
  std::vector<MigInstance> out;
  if (!g.mig_enabled) return out;
  for (const MigDeviceSnapshot& m : g.mig_devices) {
    MigInstance* same = nullptr;
    if (m.gpu_instance_id) {
      for (MigInstance& i : out) {
        if (i.device->gpu_instance_id == m.gpu_instance_id) same = &i;
      }
    }
    if (same == nullptr) {
      out.push_back({&m, 0, std::nullopt, ""});
    } else if (!same->device->memory_total_bytes && m.memory_total_bytes) {
      same->device = &m;
    }
  }
  const bool complete = ProcessListComplete(g);
  const ProcessSnapshot* nowhere = nullptr;  // a listed process on no known GPU instance
  for (const ProcessSnapshot& p : g.processes) {
    if (p.listed_by_nvml && !p.gpu_instance_id && nowhere == nullptr) nowhere = &p;
  }
  for (MigInstance& i : out) {
    const MigDeviceSnapshot& m = *i.device;
    if (!m.gpu_instance_id) {
      i.why_not = "NVML did not give its GPU instance id";
      continue;
    }
    if (!complete) {
      i.why_not = "the process list could not be read completely";
      continue;
    }
    if (!m.memory_used_bytes) {
      i.why_not = "its memory could not be read";
      continue;
    }
    if (nowhere != nullptr) {
      i.why_not =
          fmt::format("NVML lists PID {} on no one GPU instance (it may hold memory on this one)", nowhere->pid);
      continue;
    }
    bool known = true;
    for (const ProcessSnapshot& p : g.processes) {
      if (!p.listed_by_nvml || p.gpu_instance_id != m.gpu_instance_id) continue;
      if (!p.used_bytes) {
        i.why_not = fmt::format("NVML does not report the memory of PID {} (N/A)", p.pid);
        known = false;
        break;
      }
      i.listed_bytes += *p.used_bytes;
    }
    if (!known) continue;
    i.unattributed_bytes = *m.memory_used_bytes > i.listed_bytes ? *m.memory_used_bytes - i.listed_bytes : 0;
  }
  return out;
}

const MigInstance* InstanceOfDevice(const std::vector<MigInstance>& instances, const MigDeviceSnapshot& device) {
  for (const MigInstance& i : instances) {
    if (device.gpu_instance_id ? i.device->gpu_instance_id == device.gpu_instance_id : i.device == &device) return &i;
  }
  return nullptr;
}

std::map<unsigned, uint64_t> MigUnattributedByInstance(const GpuSnapshot& g) {
  std::map<unsigned, uint64_t> out;
  for (const MigInstance& i : MigInstances(g)) {
    if (i.unattributed_bytes) out[*i.device->gpu_instance_id] = *i.unattributed_bytes;
  }
  return out;
}

}  // namespace vw::detection
