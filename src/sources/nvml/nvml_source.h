// NvmlSource: the live view of this host's GPUs through NVML (libnvidia-ml.so.1, loaded with dlopen).
//
// Open() loads the library, calls nvmlInit_v2 (or nvmlInit on old drivers) and counts the GPUs;
// TakeSnapshot() fills a HostSnapshot (core/snapshot.h): identity, memory (v2 with reserved, else
// v1), BAR1, utilisation, processes (compute, graphics and MPS lists merged by PID; per-process SM
// utilisation from process samples newer than the last one seen on that GPU), MIG devices with
// their memory, driver and CUDA driver versions. Missing values stay std::nullopt: a failed call
// is recorded in GpuSnapshot::errors / nvml_errors and never becomes a zero. NOT_SUPPORTED and
// FUNCTION_NOT_FOUND only leave the value missing (they describe the GPU, not a failure). With
// memory v1 (older drivers) memory_used_bytes includes the reserved memory and
// memory_reserved_bytes is missing. With MIG on, processes are read per MIG device (GI/CI set) and
// sm_util_ratio stays missing. A process without a utilisation sample newer than the last one
// seen used 0 % of the SMs since (the driver samples only busy processes).
//
// Versioned calls follow the fallback chain of nvml_entry_points.h (_v3 -> _v2 -> unversioned).
// The R535 hazard (nvml.md §5.8) is handled: when _v3 process calls and
// nvmlDeviceGetConfComputeMemSizeInfo are exported but nvmlDeviceGetRunningProcessDetailList is
// not, _v3 is called with 32-byte elements.
//
// Deadlines: every NVML call runs on a worker thread and the caller waits at most
// `call_deadline`. There is one worker per GPU and one for system-wide calls, so a call that hangs
// on one GPU does not hold up the others (GPUs are read one after the other, so a snapshot waits
// at most one deadline per hung GPU). When a call passes its deadline, its worker is
// abandoned (the thread stays blocked inside NVML, detached) and the GPU is reported
// `responsive = false`; while that abandoned call has not returned, further calls for the same GPU
// fail at once with kTimeout ("still blocked in <function>") instead of piling up threads. Once
// the call returns, the next snapshot gets a fresh worker. A source whose worker was ever abandoned
// never unloads the library or calls nvmlShutdown, since a thread may still be inside it.
//
// NVML_ERROR_GPU_IS_LOST from any call marks the GPU `lost`.
//
// Xid events through NVML's event API (nvml_xid_events.cpp): ListenForXids() registers each GPU
// for nvmlEventTypeXidCriticalError on one event set; ReadXidEvents() takes what NVML queued since,
// without waiting. NVML delivers only events that happen after a GPU registered, with the code,
// the GPU and (nvmlEventSetWait_v2) the MIG instance: no PID, no driver text.
//
// Every call's duration (the time waited for it, see call_timings.h) is aggregated per NVML
// function name into a histogram with `call_latency_bounds`; call_timings() copies it out.
//
// Threading: one thread uses a NvmlSource at a time (the sampler); the workers are internal.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/snapshot.h"
#include "core/status.h"
#include "sources/nvml/call_timings.h"

namespace vw::nvml {

inline constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";
inline constexpr const char* kLibraryEnvVar = "VRAMWATCH_NVML_LIB";

// The library to load: `flag_value` (from --nvml-lib) when not empty, else $VRAMWATCH_NVML_LIB when
// set and not empty, else kDefaultLibrary.
std::string ResolveLibraryPath(std::string_view flag_value);

// What NVML answering with no GPU is called wherever it stops the work (check's UNKNOWN, record's
// exit 3, watch's critical nvml_error finding): "NVML sees no GPU (library PATH)".
std::string NoGpuMessage(std::string_view library_path);

// What NVML failing to open is called where it stops the work (check's UNKNOWN, record's exit 3):
// "cannot use NVML: ERROR (is the NVIDIA driver installed and loaded? --nvml-lib or
// VRAMWATCH_NVML_LIB choose another library)"; for a refusal (NVML_ERROR_NO_PERMISSION, the
// device files not open to this user) the hint is about access instead, and for nvmlInit past its
// deadline it is InitTimeoutHint(). `error`: NvmlSource::Open's.
std::string CannotUseNvmlMessage(const Status& error);
// " (without persistence mode the driver brings every GPU up in nvmlInit …)" when `error` is
// nvmlInit past its deadline (SourceOptions::init_deadline), else empty.
std::string InitTimeoutHint(const Status& error);

// The device node of a GPU: "/dev/nvidia<minor>" (GpuSnapshot::minor).
std::string DeviceNodePath(unsigned minor);

// Status for a failed NVML call: the message is "<function>: <nvmlErrorString text> (NVML error
// <code>)"; the code maps NO_PERMISSION -> kPermissionDenied, NOT_FOUND -> kNotFound, TIMEOUT ->
// kTimeout, everything else (NOT_SUPPORTED, GPU_IS_LOST, DRIVER_NOT_LOADED, ...) -> kUnavailable.
Status NvmlStatus(std::string_view function, int nvml_code, std::string_view error_text);

struct SourceOptions {
  std::string library_path = kDefaultLibrary;     // see ResolveLibraryPath
  std::chrono::milliseconds call_deadline{5000};  // per NVML call
  // nvmlInit's own: without persistence mode the driver brings every GPU up inside it, which takes
  // seconds (tens of seconds on large hosts), far more than any later call.
  std::chrono::milliseconds init_deadline{60000};
  bool query_process_names = false;  // nvmlSystemGetProcessName for each PID (procfs is preferred)
  std::vector<double> call_latency_bounds = DefaultCallLatencyBounds();  // seconds, increasing
};

class NvmlLibrary;
class CallRunner;
namespace api {
struct nvmlEventSet_st;
}  // namespace api

class NvmlSource {
 public:
  // Why Open failed, as vramwatch_nvml_errors_total{call,code} counts it: the NVML call that failed
  // and its code's token (nvml_return_names.h: "NVML_ERROR_DRIVER_NOT_LOADED", "timeout",
  // "blocked"); "unknown" and "other" when the library could not be loaded.
  struct OpenFailure {
    std::string call = "unknown";
    std::string code = "other";
  };
  // Fails (kUnavailable, kPermissionDenied, kTimeout) when the library cannot be loaded, nvmlInit
  // fails or hangs, or the GPU count cannot be read. The message names the library path and call;
  // `failure`, when given, is set to the call and code.
  static Result<std::unique_ptr<NvmlSource>> Open(SourceOptions options, OpenFailure* failure = nullptr);
  ~NvmlSource();
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  unsigned gpu_count() const { return gpu_count_; }
  const std::string& library_path() const;
  // The symbol used for each versioned call, e.g. {"nvmlDeviceGetMemoryInfo_v2",
  // "nvmlDeviceGetComputeRunningProcesses_v3", ...}; "(R535 32-byte elements)" is appended to the
  // process-list entries when that layout is in use.
  std::vector<std::string> BoundFunctions() const;
  // True when _v3 process lists are read with the 32-byte R535 element (nvml.md §5.8).
  bool uses_r535_process_layout() const { return r535_layout_; }

  // One look at every GPU, in NVML index order. Per-GPU failures are inside each GpuSnapshot;
  // failures of system-wide calls (driver version, CUDA version) are in HostSnapshot::errors.
  HostSnapshot TakeSnapshot();
  // One GPU; `index` < gpu_count().
  GpuSnapshot TakeGpuSnapshot(unsigned index);

  // One Xid event from NVML's event set.
  struct XidEvent {
    unsigned gpu = 0;                                        // NVML index
    unsigned long long xid = 0;                              // the code; 999 is NVML's "an Xid it does not know"
    std::optional<unsigned> gpu_instance, compute_instance;  // MIG; missing when NVML gives none
  };
  // Which GPUs deliver Xid events, and why the others do not.
  struct XidListening {
    std::vector<unsigned> gpus;         // NVML indices registered, increasing
    std::vector<std::string> problems;  // "GPU 1: nvmlDeviceRegisterEvents: Not Supported (NVML error 3)"
  };
  // Registers every GPU whose handle is known (a GPU first read by TakeSnapshot) and that is not
  // registered yet: one whose registration failed is tried again at the next call (a transient
  // error, a call past its deadline). Creates the event set on the first call. The result covers
  // every GPU tried so far, each failing one with its latest reason.
  XidListening ListenForXids();
  // What one ReadXidEvents took: the events, and why reading stopped early when it did (the events
  // read before the failure are kept: an Xid 79 read just before the GPU is lost must not go).
  struct XidRead {
    std::vector<XidEvent> events;
    Status status;
  };
  // The Xid events queued since the previous call, oldest first, at most `max` (the rest stay
  // queued). Waits for none. status fails when no GPU is registered or a wait failed.
  XidRead ReadXidEvents(size_t max = 256);

  // Duration histograms of every NVML call made so far (nvmlInit included), per function name.
  std::vector<CallTiming> call_timings() const { return timings_->Snapshot(); }

 private:
  struct GpuState;
  NvmlSource() = default;
  void ReadSystem(HostSnapshot* h);
  void FreeXidSet();

  std::unique_ptr<NvmlLibrary> lib_;
  SourceOptions options_;
  std::unique_ptr<CallTimings> timings_;
  unsigned gpu_count_ = 0;
  bool r535_layout_ = false;
  bool initialized_ = false;
  std::string driver_version_, nvml_version_;  // cached once read: they do not change while loaded
  std::optional<int> cuda_version_;
  std::unique_ptr<CallRunner> system_runner_;
  std::vector<std::unique_ptr<GpuState>> gpus_;
  api::nvmlEventSet_st* xid_set_ = nullptr;  // created by the first ListenForXids
  XidListening xid_listening_;
  std::vector<bool> xid_registered_;              // per GPU
  std::map<unsigned, std::string> xid_failures_;  // GPU -> why it could not register, latest
};

}  // namespace vw::nvml
