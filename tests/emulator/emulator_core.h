// State of the emulated NVML library: init refcount, the loaded scenario, scenario time, device
// handles, and the prologue every exported call runs (init check, hang and error injection).
//
// Environment:
//   VRAMWATCH_EMULATOR_SCENARIO    scenario file (required by nvmlInit*)
//   VRAMWATCH_EMULATOR_TIME_SCALE  scenario seconds per wall second (default 1)
//   VRAMWATCH_EMULATOR_CLOCK_FILE  when set, scenario time is read from this file on every call
//   VRAMWATCH_EMULATOR_TRACE       when set, every called symbol is appended to this file
//
// Threading: all state is behind one mutex; a hang injected into a call sleeps without holding
// it, so calls on other GPUs (and other threads) go on. The state object is never destroyed, so a
// thread still sleeping in a hang at process exit touches no destroyed object.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "scenario.h"
#include "sources/nvml/nvml_types.h"

// What a device handle points at: a GPU, or one MIG device of a GPU.
struct vw::nvml::api::nvmlDevice_st {
  unsigned gpu = 0;
  int mig = -1;  // index into GpuSpec::mig_devices, -1 for the physical GPU
};

// An event set: the devices registered on it and the Xid events already delivered.
struct vw::nvml::api::nvmlEventSet_st {
  struct Registration {
    unsigned gpu = 0;
    unsigned long long mask = 0;
    double since_t = 0;  // events before registration are not recorded
  };
  std::vector<Registration> registrations;
  std::vector<std::pair<unsigned, size_t>> delivered;  // (gpu, index into GpuSpec::xid)
};

namespace vw::emulator {

namespace api = vw::nvml::api;

inline constexpr unsigned long long kMiB = 1024ull * 1024ull;

struct ListedProcess {
  const ProcessSpec* spec = nullptr;
  unsigned gpu_instance_id = api::kValueNotAvailableUInt;
  unsigned compute_instance_id = api::kValueNotAvailableUInt;
};

struct State {
  std::mutex mu;
  int refcount = 0;
  bool loaded = false;
  unsigned generation = 0;  // bumped on every scenario load
  Scenario scenario;
  std::vector<api::nvmlDevice_st*> gpu_handles;               // never freed: handles stay valid
  std::vector<std::vector<api::nvmlDevice_st*>> mig_handles;  // [gpu][mig]
  bool clock_started = false;
  double t0_steady = 0;      // seconds, steady clock, at the first nvmlInit* in the process
  double base_epoch_us = 0;  // Unix time in microseconds at the first nvmlInit*
  double t_at_start = 0;     // scenario time (s) at the first nvmlInit*: the clock file's value, else 0
  double scale = 1;
  std::string clock_file;
  std::string trace_file;
  std::vector<std::vector<unsigned>> list_calls;
  std::vector<api::nvmlEventSet_t>
      event_sets;  // live sets (freed ones are removed)  // [gpu][kind bit index]: process-list calls made
};

State& GetState();

// Unix time in microseconds that scenario time `t` (seconds) stands for: the wall clock at the first
// nvmlInit*, moved by the scenario seconds since then (divided by the time scale). Process
// utilisation samples carry it, as the driver stamps samples with the CPU's clock.
inline double EpochMicros(const State& s, double t) {
  return s.base_epoch_us + (t - s.t_at_start) / s.scale * 1e6;
}

// Symbols this build exports and hides, and whether _v3 process calls write 32-byte elements.
const std::vector<std::string>& KnownSymbols();
const std::vector<std::string>& HiddenSymbols();
const char* VariantName();
bool R535Layout();

// nvmlInit* body: loads the scenario on the 0 -> 1 transition.
api::nvmlReturn_t DoInit(const char* function);
api::nvmlReturn_t DoShutdown();
const char* ErrorText(api::nvmlReturn_t code);

// Prologue of an exported call. On construction: trace, init check, device check, hang (sleeps
// unlocked), injected error. `rc` is NVML_SUCCESS when the body should run; the body then runs
// with the state mutex held (`lock`).
class Call {
 public:
  Call(const char* function, api::nvmlDevice_t device, bool needs_device);
  api::nvmlReturn_t rc = api::NVML_SUCCESS;
  double t = 0;
  const GpuSpec* gpu = nullptr;
  const MigSpec* mig = nullptr;
  unsigned gpu_index = 0;
  int mig_index = -1;
  State& state;
  std::unique_lock<std::mutex> lock;
  // Scenario time now (reads the clock file when one is set); false when it cannot be read.
  bool Now(double* out) { return ReadTime(out); }

 private:
  bool ReadTime(double* out);
};

// Scenario evaluation at time t (call with the mutex held).
bool ProcessAlive(const ProcessSpec& p, double t);
// Bytes a process holds at t; false when N/A.
bool ProcessUsedBytes(const ProcessSpec& p, double t, unsigned long long* bytes);
// Processes on a GPU or MIG device at t that are listed in `kind_bit` lists (0 = any kind).
std::vector<ListedProcess> Listed(const GpuSpec& gpu, const MigSpec* mig, double t, unsigned kind_bit);

struct MemoryNow {
  unsigned long long total = 0, reserved = 0, used = 0, free = 0;  // v2 meaning: used excludes reserved
};
MemoryNow MemoryAt(const GpuSpec& gpu, const MigSpec* mig, double t);

// Copies `s` into buf[len] with NVML's size rule; INSUFFICIENT_SIZE when it does not fit.
api::nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned len);

}  // namespace vw::emulator

#define VW_EMU_EXPORT extern "C" __attribute__((visibility("default")))
