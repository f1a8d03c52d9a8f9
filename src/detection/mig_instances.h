// The GPU instances of a MIG GPU, and the memory in each that no process listed on it accounts
// for.
//
// NVML gives each GPU instance its own used memory (through the MIG device handle of any of its
// compute instances, which share it) and lists each process with the GPU instance it runs on. So
// "used minus listed" is judged per instance: one process whose memory NVML does not report (N/A)
// leaves the other instances judgeable. Sizes are bytes. Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"

namespace vw::detection {

struct MigInstance {
  // The MIG device that stands for the instance: the first listed for its GPU instance id (with its
  // size, when one has it). A device whose GPU instance id is unknown is an instance of its own.
  const MigDeviceSnapshot* device = nullptr;
  uint64_t listed_bytes = 0;                   // memory of the processes NVML lists on the instance
  std::optional<uint64_t> unattributed_bytes;  // instance used - listed_bytes; missing when not judgeable
  std::string why_not;                         // why unattributed_bytes is missing
};

// One entry per GPU instance of `gpu`, in the order NVML lists their devices; empty when MIG is
// off. An instance is judgeable when its GPU instance id and used memory are known, the GPU's
// process lists were read completely, every process NVML lists on the GPU has a GPU instance (one
// without could be on any) and every process on the instance has a memory figure.
std::vector<MigInstance> MigInstances(const GpuSnapshot& gpu);

// The entry of `instances` that `device` belongs to (same GPU instance id, or the device itself
// when its id is unknown), or nullptr.
const MigInstance* InstanceOfDevice(const std::vector<MigInstance>& instances, const MigDeviceSnapshot& device);

// The judgeable instances' unattributed memory by GPU instance id (bytes).
std::map<unsigned, uint64_t> MigUnattributedByInstance(const GpuSnapshot& gpu);

}  // namespace vw::detection
