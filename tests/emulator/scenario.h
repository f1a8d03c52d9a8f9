// Scenario files for the NVML emulator: what the emulated GPUs hold over time.
//
// YAML (or JSON) as described in the product design; ${VAR} in any scalar is replaced from the
// environment before the value is read. Every key is checked: an unknown key, a wrong type or an
// unset variable is an error naming file:line:column and what was expected. Time values are
// seconds of scenario time; memory is MiB; utilisation is percent.
//
// Top level:  driver_version, nvml_version, cuda_driver_version, hide_symbols, gpus,
//             errors, hangs (these two apply to every GPU and to system calls)
// Per GPU:    name, uuid, pci_bus_id, pci_device_id, minor, memory_total_mib,
//             memory_reserved_mib, unattributed_mib, utilization_gpu, utilization_memory,
//             bar1_total_mib, bar1_used_mib, temperature_c, power_w, power_limit_w, fan_percent,
//             processes, mig_devices, xid, errors, hangs
// Per process: pid, type (compute|graphics|mps, or a list of them), name, used_mib (a series or
//             "N/A"), sm_util, start_s, end_s, visible_after_calls
// Per MIG device: gpu_instance_id, compute_instance_id, uuid, name, memory_total_mib,
//             unattributed_mib, processes
// errors:     {function, code, from_s, to_s};  hangs: {function, at_s, seconds}
//             function "*" matches every call; a name without a _vN suffix matches its versions.
//
// Threading: plain data, immutable after parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vw::emulator {

// Piecewise-linear series of (t, value) points, held at the first/last value outside them.
class Series {
 public:
  Series() = default;
  explicit Series(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {}
  bool empty() const { return points_.empty(); }
  double At(double t) const;

 private:
  std::vector<std::pair<double, double>> points_;  // sorted by t
};

enum ProcessTypeBits : unsigned { kCompute = 1, kGraphics = 2, kMps = 4 };

struct ProcessSpec {
  int64_t pid = 0;
  unsigned types = kCompute;
  std::string name;
  Series used_mib;
  bool used_not_available = false;  // used_mib: "N/A"
  Series sm_util;
  double start_s = 0;
  std::optional<double> end_s;
  unsigned visible_after_calls = 0;  // listed only from this many earlier list calls of its kind on
};

struct ErrorSpec {
  std::string function;  // "*", a symbol, or a base name
  int code = 0;
  double from_s = 0;
  double to_s = 1e300;
};

struct HangSpec {
  std::string function;
  double at_s = 0;
  double seconds = 0;
};

struct XidSpec {
  double t = 0;
  unsigned long long code = 0;
};

struct MigSpec {
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
  std::string uuid;
  std::string name;
  double memory_total_mib = 0;
  Series unattributed_mib;
  std::vector<ProcessSpec> processes;
};

struct GpuSpec {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;
  std::string pci_bus_id;  // "00000000:3B:00.0"
  unsigned pci_device_id = 0x233010DE;
  std::optional<unsigned> minor;  // default: the GPU's index
  double memory_total_mib = 0;
  double memory_reserved_mib = 0;
  Series unattributed_mib;
  Series utilization_gpu, utilization_memory;
  Series bar1_total_mib, bar1_used_mib;
  Series temperature_c, power_w, power_limit_w, fan_percent;
  std::vector<ProcessSpec> processes;
  std::vector<MigSpec> mig_devices;  // not empty: MIG mode on
  std::vector<XidSpec> xid;
  std::vector<ErrorSpec> errors;
  std::vector<HangSpec> hangs;
};

struct Scenario {
  std::string path;
  std::string driver_version = "550.54.15";
  std::string nvml_version;  // default "12." + driver_version
  int cuda_driver_version = 12040;
  std::vector<std::string> hide_symbols;
  std::vector<GpuSpec> gpus;
  std::vector<ErrorSpec> errors;
  std::vector<HangSpec> hangs;
};

// Parses `path`. On failure returns false and sets `error` to "file:line:column: message".
// `known_functions` lists the symbols errors/hangs may name.
bool LoadScenario(const std::string& path, const std::vector<std::string>& known_functions, Scenario* out,
                  std::string* error);

// Replaces ${NAME} with the environment variable NAME. Returns false (error set) when a variable is
// unset or a "${" is not closed.
bool SubstituteEnv(const std::string& in, std::string* out, std::string* error);

}  // namespace vw::emulator
