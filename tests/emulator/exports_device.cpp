// Emulated NVML: memory, utilisation and process lists.
#include <algorithm>
#include <cmath>
#include <vector>

#include "exports.h"

namespace api = vw::nvml::api;
using vw::emulator::Call;
using vw::emulator::kMiB;
using vw::emulator::ListedProcess;

namespace {

unsigned long long UsedOrNa(const vw::emulator::ProcessSpec& p, double t) {
  unsigned long long b = 0;
  return vw::emulator::ProcessUsedBytes(p, t, &b) ? b : api::kValueNotAvailableULL;
}

unsigned Percent(const vw::emulator::Series& s, double t) {
  return static_cast<unsigned>(std::clamp(std::lround(s.At(t)), 0l, 100l));
}

// Index of a process-kind bit (compute 0, graphics 1, mps 2) for the per-GPU call counters.
int KindIndex(unsigned bit) {
  return bit == vw::emulator::kCompute ? 0 : bit == vw::emulator::kGraphics ? 1 : 2;
}

// The two-call protocol shared by every process-list export. `write(i, listed)` fills element i.
template <typename Write>
nvmlReturn_t ListProcesses(Call& c, unsigned kind_bit, unsigned int* count, bool have_buffer, Write write) {
  if (count == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  unsigned& calls = c.state.list_calls[c.gpu_index][KindIndex(kind_bit)];
  unsigned calls_before = calls++;
  std::vector<ListedProcess> listed = vw::emulator::Listed(*c.gpu, c.mig, c.t, kind_bit);
  listed.erase(std::remove_if(listed.begin(), listed.end(),
                              [&](const ListedProcess& l) { return l.spec->visible_after_calls > calls_before; }),
               listed.end());
  unsigned n = static_cast<unsigned>(listed.size());
  if (*count < n) {
    *count = n;
    return api::NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !have_buffer) return api::NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < n; ++i) write(i, listed[i]);
  *count = n;
  return api::NVML_SUCCESS;
}

nvmlReturn_t V1(const char* fn, unsigned kind, nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_v1_t* infos) {
  Call c(fn, d, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return ListProcesses(c, kind, count, infos != nullptr, [&](unsigned i, const ListedProcess& l) {
    infos[i] = {};
    infos[i].pid = static_cast<unsigned>(l.spec->pid);
    infos[i].usedGpuMemory = UsedOrNa(*l.spec, c.t);
  });
}

nvmlReturn_t V2(const char* fn, unsigned kind, nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_v2_t* infos) {
  Call c(fn, d, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return ListProcesses(c, kind, count, infos != nullptr, [&](unsigned i, const ListedProcess& l) {
    infos[i] = {};
    infos[i].pid = static_cast<unsigned>(l.spec->pid);
    infos[i].usedGpuMemory = UsedOrNa(*l.spec, c.t);
    infos[i].gpuInstanceId = l.gpu_instance_id;
    infos[i].computeInstanceId = l.compute_instance_id;
  });
}

// _v3: 24-byte elements, or the 32-byte R535 element in the build that emulates drivers 535.43-535.86.
nvmlReturn_t V3(const char* fn, unsigned kind, nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  if (!vw::emulator::R535Layout()) return V2(fn, kind, d, count, infos);
  Call c(fn, d, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  auto* wide = reinterpret_cast<api::nvmlProcessInfoR535_t*>(infos);
  return ListProcesses(c, kind, count, infos != nullptr, [&](unsigned i, const ListedProcess& l) {
    wide[i] = {};
    wide[i].pid = static_cast<unsigned>(l.spec->pid);
    wide[i].usedGpuMemory = UsedOrNa(*l.spec, c.t);
    wide[i].gpuInstanceId = l.gpu_instance_id;
    wide[i].computeInstanceId = l.compute_instance_id;
    wide[i].usedGpuCcProtectedMemory = 0;
  });
}

}  // namespace

using vw::emulator::kCompute;
using vw::emulator::kGraphics;
using vw::emulator::kMps;

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* n,
                                                                   nvmlProcessInfo_t* p) {
  return V3("nvmlDeviceGetComputeRunningProcesses_v3", kCompute, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int* n,
                                                                   nvmlProcessInfo_v2_t* p) {
  return V2("nvmlDeviceGetComputeRunningProcesses_v2", kCompute, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int* n,
                                                                nvmlProcessInfo_v1_t* p) {
  return V1("nvmlDeviceGetComputeRunningProcesses", kCompute, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int* n,
                                                                    nvmlProcessInfo_t* p) {
  return V3("nvmlDeviceGetGraphicsRunningProcesses_v3", kGraphics, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int* n,
                                                                    nvmlProcessInfo_v2_t* p) {
  return V2("nvmlDeviceGetGraphicsRunningProcesses_v2", kGraphics, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int* n,
                                                                 nvmlProcessInfo_v1_t* p) {
  return V1("nvmlDeviceGetGraphicsRunningProcesses", kGraphics, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* n,
                                                                      nvmlProcessInfo_t* p) {
  return V3("nvmlDeviceGetMPSComputeRunningProcesses_v3", kMps, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int* n,
                                                                      nvmlProcessInfo_v2_t* p) {
  return V2("nvmlDeviceGetMPSComputeRunningProcesses_v2", kMps, d, n, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t d, unsigned int* n,
                                                                   nvmlProcessInfo_v1_t* p) {
  return V1("nvmlDeviceGetMPSComputeRunningProcesses", kMps, d, n, p);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t d, nvmlProcessDetailList_t* plist) {
  Call c("nvmlDeviceGetRunningProcessDetailList", d, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (plist == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (plist->version != api::kProcessDetailListV1Version) return api::NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const unsigned kinds[] = {kCompute, kGraphics, kMps};
  unsigned kind = plist->mode < 3 ? kinds[plist->mode] : 0u;
  if (kind == 0) return api::NVML_ERROR_INVALID_ARGUMENT;
  unsigned n = plist->procArray ? plist->numProcArrayEntries : 0;
  nvmlReturn_t rc = ListProcesses(c, kind, &n, plist->procArray != nullptr, [&](unsigned i, const ListedProcess& l) {
    plist->procArray[i] = {};
    plist->procArray[i].pid = static_cast<unsigned>(l.spec->pid);
    plist->procArray[i].usedGpuMemory = UsedOrNa(*l.spec, c.t);
    plist->procArray[i].gpuInstanceId = l.gpu_instance_id;
    plist->procArray[i].computeInstanceId = l.compute_instance_id;
  });
  plist->numProcArrayEntries = n;
  return rc;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t d, nvmlConfComputeMemSizeInfo_t* info) {
  Call c("nvmlDeviceGetConfComputeMemSizeInfo", d, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (info == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  return api::NVML_ERROR_NOT_SUPPORTED;  // confidential computing is off on every emulated GPU
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  Call c("nvmlDeviceGetMemoryInfo_v2", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (memory == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  // Real drivers answer a wrong version (e.g. 2 instead of nvmlMemory_v2) with FUNCTION_NOT_FOUND.
  if (memory->version != api::kMemoryV2Version) return api::NVML_ERROR_FUNCTION_NOT_FOUND;
  auto m = vw::emulator::MemoryAt(*c.gpu, c.mig, c.t);
  memory->total = m.total;
  memory->reserved = m.reserved;
  memory->used = m.used;
  memory->free = m.free;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  Call c("nvmlDeviceGetMemoryInfo", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (memory == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  auto m = vw::emulator::MemoryAt(*c.gpu, c.mig, c.t);
  memory->total = m.total;
  memory->used = m.used + m.reserved;  // v1 counts reserved as used
  memory->free = m.free;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  Call c("nvmlDeviceGetBAR1MemoryInfo", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (bar1 == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  // Every real GPU has a BAR1 aperture (clients such as nvitop rely on it for MIG devices): without
  // scenario values it is 256 MiB, none used.
  double total_mib = c.gpu->bar1_total_mib.empty() ? 256.0 : c.gpu->bar1_total_mib.At(c.t);
  unsigned long long total = static_cast<unsigned long long>(std::llround(total_mib * kMiB));
  unsigned long long used = static_cast<unsigned long long>(std::llround(c.gpu->bar1_used_mib.At(c.t) * kMiB));
  used = std::min(used, total);
  *bar1 = {total, total - used, used};
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
  Call c("nvmlDeviceGetUtilizationRates", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (u == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  // Not available with MIG on, like the real driver.
  if (c.mig != nullptr || !c.gpu->mig_devices.empty() || c.gpu->utilization_gpu.empty()) {
    return api::NVML_ERROR_NOT_SUPPORTED;
  }
  u->gpu = Percent(c.gpu->utilization_gpu, c.t);
  u->memory = Percent(c.gpu->utilization_memory, c.t);
  return api::NVML_SUCCESS;
}

// One sample per listed process with non-zero SM utilisation, stamped with the emulated time
// (Unix microseconds); only samples newer than lastSeenTimeStamp are returned.
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                           nvmlProcessUtilizationSample_t* utilization,
                                                           unsigned int* processSamplesCount,
                                                           unsigned long long lastSeenTimeStamp) {
  Call c("nvmlDeviceGetProcessUtilization", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (processSamplesCount == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig != nullptr || !c.gpu->mig_devices.empty()) return api::NVML_ERROR_NOT_SUPPORTED;
  // Like the driver, keep a buffer of past samples: a process that used the SMs in the last
  // kSampleBufferS seconds (on a kSampleStepS grid) has its newest such sample returned when that
  // sample is newer than lastSeenTimeStamp, so a caller passing 0 gets old activity back; processes
  // that stayed at 0 % have no sample.
  constexpr double kSampleBufferS = 20, kSampleStepS = 1.0 / 6;
  struct Found {
    unsigned pid, sm;
    unsigned long long ts;
  };
  std::vector<Found> found;
  for (const auto& l : vw::emulator::Listed(*c.gpu, nullptr, c.t, 0)) {
    if (l.spec->sm_util.empty()) continue;
    for (int k = 0; k * kSampleStepS <= kSampleBufferS; ++k) {
      double t = c.t - k * kSampleStepS;
      if (t < 0) break;
      unsigned sm = Percent(l.spec->sm_util, t);
      if (sm == 0) continue;
      auto ts = static_cast<unsigned long long>(vw::emulator::EpochMicros(c.state, t));
      if (ts > lastSeenTimeStamp) found.push_back({static_cast<unsigned>(l.spec->pid), sm, ts});
      break;  // the newest sample with SM use decides
    }
  }
  unsigned n = static_cast<unsigned>(found.size());
  if (n == 0) return api::NVML_ERROR_NOT_FOUND;
  if (utilization == nullptr || *processSamplesCount < n) {
    *processSamplesCount = n;
    return api::NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i) {
    utilization[i] = {};
    utilization[i].pid = found[i].pid;
    utilization[i].timeStamp = found[i].ts;
    utilization[i].smUtil = found[i].sm;
  }
  *processSamplesCount = n;
  return api::NVML_SUCCESS;
}
