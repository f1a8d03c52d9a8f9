// Samples: what every source (trace file, NVML, Prometheus, replay) produces for the detector.
//
// Every metric may be missing: a field is set only when the source really had the value
// ("[N/A]" and failed NVML calls leave it empty, never zero). Sizes are bytes, times are seconds
// since the epoch (see core/time.h for zone handling), ratios are 0..1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vw {

// How a GPU is named in a trace: any of these may be empty; `key` is what reports show
// ("0", or the UUID, or the PCI bus id when that is all the trace has).
struct GpuIdentity {
  std::string key;
  std::optional<int> index;
  std::string uuid;
  std::string pci_bus_id;  // normalised "00000000:3B:00.0"
  std::string name;        // "NVIDIA H100 80GB HBM3"
};

// Memory held by one process on one GPU at one instant (from a table capture, pmon, NVML).
struct ProcessMemory {
  int64_t pid = 0;
  std::string command;                  // as the tool printed it (may be truncated)
  std::string type;                     // "C", "G", "C+G", "M" or empty
  std::optional<uint64_t> used_bytes;   // missing on WDDM / N/A
  std::optional<double> sm_util_ratio;  // 0..1 when known
  // MIG only: the GPU instance the process runs on, and that instance's memory (its compute
  // instances share it) when the source shows it; its runway is against the instance, not the card.
  std::optional<unsigned> gpu_instance_id;
  std::optional<uint64_t> instance_used_bytes, instance_total_bytes;
};

// One GPU at one instant.
struct MemorySample {
  double t = 0;  // seconds since the epoch, or since the trace start when it has no clock
  std::optional<uint64_t> used_bytes;
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> reserved_bytes;
  std::optional<double> gpu_util_ratio;  // 0..1
  // Present only when the source lists processes for this instant (tables, pmon, NVML).
  std::optional<std::vector<ProcessMemory>> processes;
};

// One step of a framework's own memory log (sources/trace/framework_log.h) for one device: what
// the training script printed between two prints of the same value. Bytes.
struct FrameworkStep {
  size_t line = 0;                            // 1-based line of the step's first value
  int device = 0;                             // the CUDA device number the log names (0 when it names none)
  std::optional<uint64_t> allocated_bytes;    // memory in live tensors
  std::optional<uint64_t> reserved_bytes;     // held by the caching allocator (allocated + its cache)
  std::optional<uint64_t> driver_used_bytes;  // the driver's memory.used, when the log prints it
};

// A sample tagged with the GPU it belongs to: what trace readers yield one at a time.
struct TraceRecord {
  GpuIdentity gpu;
  MemorySample sample;
};

}  // namespace vw
