#include "sources/nvml/nvml_source.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <utility>

#include "core/time.h"
#include "sources/nvml/call_runner.h"
#include "sources/nvml/gpu_reader.h"
#include "sources/nvml/gpu_state.h"
#include "sources/nvml/nvml_loader.h"

namespace vw::nvml {

std::string ResolveLibraryPath(std::string_view flag_value) {
  if (!flag_value.empty()) return std::string(flag_value);
  if (const char* env = std::getenv(kLibraryEnvVar); env != nullptr && *env != '\0') return env;
  return kDefaultLibrary;
}

std::string NoGpuMessage(std::string_view library_path) {
  return "NVML sees no GPU (library " + std::string(library_path) + ")";
}

std::string InitTimeoutHint(const Status& error) {
  if (error.code() != StatusCode::kTimeout || error.message().find("nvmlInit") == std::string::npos) return {};
  return " (without persistence mode the driver brings every GPU up in nvmlInit, which can take tens of seconds: "
         "enable it (`nvidia-smi -pm 1` or nvidia-persistenced) or give a longer --init-timeout; a driver that "
         "never answers is hung: see the kernel log)";
}

std::string CannotUseNvmlMessage(const Status& error) {
  if (error.code() == StatusCode::kPermissionDenied) {
    return "cannot use NVML: " + error.message() +
           " (this user may not open the NVIDIA device files: /dev/nvidiactl and /dev/nvidia* need read and write "
           "access; run as root or as a user the files admit, and in a container pass the devices in)";
  }
  if (std::string hint = InitTimeoutHint(error); !hint.empty()) return "cannot use NVML: " + error.message() + hint;
  return "cannot use NVML: " + error.message() + " (is the NVIDIA driver installed and loaded? --nvml-lib or " +
         kLibraryEnvVar + " choose another library)";
}

std::string DeviceNodePath(unsigned minor) {
  return "/dev/nvidia" + std::to_string(minor);
}

Status NvmlStatus(std::string_view function, int nvml_code, std::string_view error_text) {
  std::string msg =
      std::string(function) + ": " + std::string(error_text) + " (NVML error " + std::to_string(nvml_code) + ")";
  switch (nvml_code) {
    case api::NVML_ERROR_NO_PERMISSION: return Status::PermissionDenied(std::move(msg));
    case api::NVML_ERROR_NOT_FOUND: return Status::NotFound(std::move(msg));
    case api::NVML_ERROR_TIMEOUT: return Status::Timeout(std::move(msg));
    default: return Status::Unavailable(std::move(msg));
  }
}

Result<std::unique_ptr<NvmlSource>> NvmlSource::Open(SourceOptions options, OpenFailure* failure) {
  OpenFailure ignored;
  if (failure == nullptr) failure = &ignored;
  *failure = OpenFailure{};
  auto lib = NvmlLibrary::Open(options.library_path);
  if (!lib.ok()) return lib.status();
  std::unique_ptr<NvmlSource> src(new NvmlSource());
  src->lib_ = std::move(*lib);
  src->options_ = std::move(options);
  src->timings_ = std::make_unique<CallTimings>(src->options_.call_latency_bounds);
  src->system_runner_ = std::make_unique<CallRunner>();
  src->system_runner_->set_timings(src->timings_.get());
  const EntryPoints& f = src->lib_->fn();
  NvmlCaller sys(*src->lib_, *src->system_runner_, src->options_.call_deadline);

  const char* init_name = f.nvmlInit_v2 ? "nvmlInit_v2" : "nvmlInit";
  auto init_fn = f.nvmlInit_v2 ? f.nvmlInit_v2 : f.nvmlInit;
  NvmlCaller init_caller(*src->lib_, *src->system_runner_, src->options_.init_deadline);
  Status st = init_caller.Call(init_name, [init_fn] { return init_fn(); });
  if (!st.ok()) {
    *failure = {init_name, init_caller.FailureCodeName(st)};
    if (src->system_runner_->ever_abandoned()) src->lib_->Leak();
    return st.WithContext(src->lib_->path());
  }
  src->initialized_ = true;

  unsigned count = 0;
  const char* count_name = f.nvmlDeviceGetCount_v2 ? "nvmlDeviceGetCount_v2" : "nvmlDeviceGetCount";
  auto count_fn = f.nvmlDeviceGetCount_v2 ? f.nvmlDeviceGetCount_v2 : f.nvmlDeviceGetCount;
  auto got = sys.CallOut<unsigned>(count_name, [count_fn](unsigned* n) { return count_fn(n); });
  if (!got.ok()) {
    *failure = {count_name, sys.FailureCodeName(got.status())};
    return got.status().WithContext(src->lib_->path());
  }
  count = *got;
  src->gpu_count_ = count;

  // nvml.md §5.8: drivers 535.43-535.86 export _v3 process calls that write 32-byte elements; they
  // are recognised by nvmlDeviceGetConfComputeMemSizeInfo without nvmlDeviceGetRunningProcessDetailList.
  src->r535_layout_ = f.nvmlDeviceGetComputeRunningProcesses_v3 != nullptr &&
                      f.nvmlDeviceGetConfComputeMemSizeInfo != nullptr &&
                      f.nvmlDeviceGetRunningProcessDetailList == nullptr;
  for (unsigned i = 0; i < count; ++i) {
    src->gpus_.push_back(std::make_unique<GpuState>());
    src->gpus_.back()->runner.set_timings(src->timings_.get());
  }
  return src;
}

NvmlSource::~NvmlSource() {
  bool abandoned = system_runner_ && system_runner_->ever_abandoned();
  for (const auto& g : gpus_) abandoned = abandoned || g->runner.ever_abandoned();
  if (abandoned) {
    // A thread may still be inside the library: keep it mapped and initialised.
    if (lib_) lib_->Leak();
    return;
  }
  if (initialized_ && lib_) {
    FreeXidSet();
    if (system_runner_->ever_abandoned()) {  // the free hung: a thread is inside the library
      lib_->Leak();
      return;
    }
    NvmlCaller sys(*lib_, *system_runner_, options_.call_deadline);
    auto shutdown = lib_->fn().nvmlShutdown;
    if (!sys.Call("nvmlShutdown", [shutdown] { return shutdown(); }).ok() && system_runner_->ever_abandoned()) {
      lib_->Leak();
    }
  }
}

const std::string& NvmlSource::library_path() const {
  return lib_->path();
}

std::vector<std::string> NvmlSource::BoundFunctions() const {
  std::vector<std::string> out;
  for (const char* family : {"Init", "Count", "HandleByIndex", "MemoryInfo", "ComputeProcesses", "GraphicsProcesses",
                             "MpsProcesses", "CudaDriverVersion"}) {
    std::string s = lib_->Preferred(family);
    if (s.empty()) continue;
    if (r535_layout_ && s.size() > 3 && s.compare(s.size() - 3, 3, "_v3") == 0 &&
        std::string_view(family).find("Processes") != std::string_view::npos) {
      s += " (R535 32-byte elements)";
    }
    out.push_back(std::move(s));
  }
  return out;
}

HostSnapshot NvmlSource::TakeSnapshot() {
  HostSnapshot h;
  h.t = SteadyWallNow();  // a step of the system clock does not move sample times (core/time.h)
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) h.hostname = host;
  ReadSystem(&h);
  for (unsigned i = 0; i < gpu_count_; ++i) h.gpus.push_back(TakeGpuSnapshot(i));
  return h;
}

void NvmlSource::ReadSystem(HostSnapshot* h) {
  const EntryPoints& f = lib_->fn();
  NvmlCaller sys(*lib_, *system_runner_, options_.call_deadline);
  if (driver_version_.empty()) {
    auto fn = f.nvmlSystemGetDriverVersion;
    auto r = sys.CallString("nvmlSystemGetDriverVersion", api::kSystemDriverVersionBufferSize,
                            [fn](char* b, unsigned n) { return fn(b, n); });
    if (r.ok()) {
      driver_version_ = *r;
    } else {
      h->errors.push_back(r.status().message());
    }
  }
  if (nvml_version_.empty() && f.nvmlSystemGetNVMLVersion) {
    auto fn = f.nvmlSystemGetNVMLVersion;
    auto r = sys.CallString("nvmlSystemGetNVMLVersion", api::kSystemNvmlVersionBufferSize,
                            [fn](char* b, unsigned n) { return fn(b, n); });
    if (r.ok()) nvml_version_ = *r;
  }
  if (!cuda_version_) {
    auto fn =
        f.nvmlSystemGetCudaDriverVersion_v2 ? f.nvmlSystemGetCudaDriverVersion_v2 : f.nvmlSystemGetCudaDriverVersion;
    const char* name =
        f.nvmlSystemGetCudaDriverVersion_v2 ? "nvmlSystemGetCudaDriverVersion_v2" : "nvmlSystemGetCudaDriverVersion";
    if (fn != nullptr) {
      auto r = sys.CallOut<int>(name, [fn](int* v) { return fn(v); });
      if (r.ok()) {
        cuda_version_ = *r;
      } else {
        h->errors.push_back(r.status().message());
      }
    }
  }
  h->driver_version = driver_version_;
  h->nvml_version = nvml_version_;
  h->cuda_driver_version = cuda_version_;
}

GpuSnapshot NvmlSource::TakeGpuSnapshot(unsigned index) {
  GpuSnapshot g;
  g.t = SteadyWallNow();
  g.index = index;
  if (index >= gpus_.size()) {
    g.errors.push_back("GPU index " + std::to_string(index) + " is out of range (" + std::to_string(gpus_.size()) +
                       " GPUs)");
    return g;
  }
  GpuState& st = *gpus_[index];
  GpuReader reader(*lib_, st.runner, options_.call_deadline, r535_layout_, options_.query_process_names, &st.cache);
  reader.Read(index, &g);
  return g;
}

}  // namespace vw::nvml
