// NvmlCaller and GpuReader: the NVML calls behind NvmlSource, one GPU at a time.
//
// NvmlCaller turns one NVML call, run under a deadline on a CallRunner, into a Status / Result:
// a failed call becomes NvmlStatus(function, code, nvmlErrorString(code)); a call past its
// deadline becomes kTimeout. GpuReader fills one GpuSnapshot: identity (cached in GpuCache after
// the first success), memory (v2, else v1), BAR1, utilisation, MIG devices, process lists merged
// by PID, per-process SM utilisation, and stops early when the GPU is lost or unresponsive.
//
// NOT_SUPPORTED and FUNCTION_NOT_FOUND leave the field missing without an entry in
// GpuSnapshot::errors (they describe the GPU or driver, not a failure); every other failure is
// recorded in errors and nvml_errors.
//
// Threading: the sampler thread; calls run on the GPU's CallRunner.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/snapshot.h"
#include "core/status.h"
#include "sources/nvml/call_runner.h"
#include "sources/nvml/nvml_loader.h"

namespace vw::nvml {

class NvmlCaller {
 public:
  NvmlCaller(const NvmlLibrary& lib, CallRunner& runner, std::chrono::milliseconds deadline)
      : lib_(lib), runner_(runner), deadline_(deadline) {}

  // `fn` must capture by value (see CallRunner).
  Status Call(const char* name, std::function<api::nvmlReturn_t()> fn);

  template <typename T>
  Result<T> CallOut(const char* name, std::function<api::nvmlReturn_t(T*)> fn) {
    auto r = runner_.Run<std::pair<api::nvmlReturn_t, T>>(name, deadline_, [fn]() {
      T v{};
      api::nvmlReturn_t rc = fn(&v);
      return std::make_pair(rc, v);
    });
    if (!r.ok()) return Timeout(r.status());
    if (r->first != api::NVML_SUCCESS) return Failed(name, r->first);
    last_code_ = api::NVML_SUCCESS;
    timed_out_ = false;
    return r->second;
  }

  Result<std::string> CallString(const char* name, unsigned size, std::function<api::nvmlReturn_t(char*, unsigned)> fn);

  // Runs an arbitrary task returning (code, value); for multi-call sequences such as two-call lists.
  template <typename T>
  Result<T> CallTask(const char* name, std::function<std::pair<api::nvmlReturn_t, T>()> task) {
    auto r = runner_.Run<std::pair<api::nvmlReturn_t, T>>(name, deadline_, std::move(task));
    if (!r.ok()) return Timeout(r.status());
    if (r->first != api::NVML_SUCCESS) return Failed(name, r->first);
    last_code_ = api::NVML_SUCCESS;
    timed_out_ = false;
    return std::move(r->second);
  }

  // NVML code of the last call (NVML_SUCCESS when it succeeded); nullopt when it timed out.
  std::optional<int> last_code() const { return last_code_; }
  bool last_timed_out() const { return timed_out_; }
  // The token of the last call's failure `s` (what it returned): its return code's name
  // (nvml_return_names.h), or the watchdog's "timeout" or "blocked" (not made because an earlier
  // call is still blocked; the runner's message tells the two apart, call_runner.h).
  std::string FailureCodeName(const Status& s) const;

 private:
  Status Failed(const char* name, api::nvmlReturn_t rc);
  Status Timeout(Status s);

  const NvmlLibrary& lib_;
  CallRunner& runner_;
  std::chrono::milliseconds deadline_;
  std::optional<int> last_code_;
  bool timed_out_ = false;
};

// How far back (µs) the first per-process SM read looks: one second of the driver's samples.
inline constexpr int64_t kFirstSampleLookbackUs = 1'000'000;

// What stays true of a GPU between snapshots.
struct GpuCache {
  api::nvmlDevice_t handle = nullptr;
  bool identity_done = false;
  std::string uuid, name, pci_bus_id;
  std::optional<unsigned> minor;
  unsigned long long last_sample_us = 0;  // newest process-utilisation sample seen (lastSeenTimeStamp);
                                          // 0 before the first read, which asks for the last
                                          // kFirstSampleLookbackUs only
};

class GpuReader {
 public:
  GpuReader(const NvmlLibrary& lib, CallRunner& runner, std::chrono::milliseconds deadline, bool r535_layout,
            bool process_names, GpuCache* cache)
      : f_(lib.fn()), call_(lib, runner, deadline), r535_(r535_layout), names_(process_names), cache_(*cache) {}

  void Read(unsigned index, GpuSnapshot* g);

 private:
  struct RawProcess {
    unsigned pid = 0;
    unsigned long long used = 0;
    unsigned gi = api::kValueNotAvailableUInt, ci = api::kValueNotAvailableUInt;
  };
  enum class Kind { kCompute, kGraphics, kMps };

  // Records a failure in the snapshot; false when the GPU is lost or unresponsive.
  bool Note(const Status& s);
  bool Dead() const { return g_->lost || !g_->responsive; }
  void ReadIdentity(unsigned index);
  struct Memory {
    std::optional<uint64_t> total, used, free, reserved;
  };
  Memory ReadMemory(api::nvmlDevice_t dev);
  void ReadMig();
  // The processes of `dev` (the GPU, or one of its MIG devices); `gi`/`ci` are that MIG device's
  // instance ids (missing when unknown), used only for entries whose list gives none.
  void ReadProcesses(api::nvmlDevice_t dev, std::optional<unsigned> gi, std::optional<unsigned> ci);
  Result<std::vector<RawProcess>> ReadList(api::nvmlDevice_t dev, Kind kind);
  void ReadProcessUtilization();
  void ReadProcessNames();

  const EntryPoints& f_;
  NvmlCaller call_;
  bool r535_;
  bool names_;
  GpuCache& cache_;
  GpuSnapshot* g_ = nullptr;
  std::vector<api::nvmlDevice_t> mig_handles_;  // parallel to g_->mig_devices
};

}  // namespace vw::nvml
