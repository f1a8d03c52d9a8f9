// Emulated NVML: library lifetime, system queries, enumeration and identity.
#include <cstdio>
#include <fstream>
#include <iterator>

#include "exports.h"

namespace api = vw::nvml::api;
using vw::emulator::Call;
using vw::emulator::CopyString;

VW_EMU_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return vw::emulator::DoInit("nvmlInit_v2");
}
VW_EMU_EXPORT nvmlReturn_t nvmlInit(void) {
  return vw::emulator::DoInit("nvmlInit");
}
VW_EMU_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  if ((flags & ~7u) != 0) return api::NVML_ERROR_INVALID_ARGUMENT;
  return vw::emulator::DoInit("nvmlInitWithFlags");
}
VW_EMU_EXPORT nvmlReturn_t nvmlShutdown(void) {
  return vw::emulator::DoShutdown();
}
VW_EMU_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  return vw::emulator::ErrorText(result);
}

VW_EMU_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  Call c("nvmlSystemGetDriverVersion", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return CopyString(c.state.scenario.driver_version, version, length);
}

VW_EMU_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  Call c("nvmlSystemGetNVMLVersion", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return CopyString(c.state.scenario.nvml_version, version, length);
}

static nvmlReturn_t CudaVersion(const char* fn, int* v) {
  Call c(fn, nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (v == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *v = c.state.scenario.cuda_driver_version;
  return api::NVML_SUCCESS;
}
VW_EMU_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  return CudaVersion("nvmlSystemGetCudaDriverVersion", v);
}
VW_EMU_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  return CudaVersion("nvmlSystemGetCudaDriverVersion_v2", v);
}

VW_EMU_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  Call c("nvmlSystemGetProcessName", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (name == nullptr || length == 0) return api::NVML_ERROR_INVALID_ARGUMENT;
  auto scan = [&](const std::vector<vw::emulator::ProcessSpec>& ps) -> const std::string* {
    for (const auto& p : ps) {
      if (p.pid == pid && !p.name.empty()) return &p.name;
    }
    return nullptr;
  };
  for (const auto& g : c.state.scenario.gpus) {
    const std::string* n = scan(g.processes);
    for (const auto& m : g.mig_devices) n = n ? n : scan(m.processes);
    if (n != nullptr) return CopyString(*n, name, length);
  }
  // Like the real library, fall back to what the OS says about the PID.
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
  if (!f) return api::NVML_ERROR_NOT_FOUND;
  std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  cmd = cmd.substr(0, cmd.find('\0'));
  if (cmd.empty()) return api::NVML_ERROR_NOT_FOUND;
  return CopyString(cmd, name, length);
}

static nvmlReturn_t Count(const char* fn, unsigned int* count) {
  Call c(fn, nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (count == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(c.state.scenario.gpus.size());
  return api::NVML_SUCCESS;
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return Count("nvmlDeviceGetCount_v2", count);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return Count("nvmlDeviceGetCount", count);
}

static nvmlReturn_t HandleByIndex(const char* fn, unsigned int index, nvmlDevice_t* device) {
  Call c(fn, nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (device == nullptr || index >= c.state.scenario.gpus.size()) return api::NVML_ERROR_INVALID_ARGUMENT;
  // Errors injected for this GPU apply to its handle lookup too (GPU lost, no permission).
  for (const auto& e : c.state.scenario.gpus[index].errors) {
    bool match = e.function == "*" || e.function == fn || std::string(fn).rfind(e.function + "_v", 0) == 0;
    if (match && c.t >= e.from_s && c.t < e.to_s) return static_cast<nvmlReturn_t>(e.code);
  }
  *device = c.state.gpu_handles[index];
  return api::NVML_SUCCESS;
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex("nvmlDeviceGetHandleByIndex_v2", index, device);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex("nvmlDeviceGetHandleByIndex", index, device);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  Call c("nvmlDeviceGetHandleByUUID", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (uuid == nullptr || device == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  const auto& gpus = c.state.scenario.gpus;
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (gpus[g].uuid == uuid) {
      *device = c.state.gpu_handles[g];
      return api::NVML_SUCCESS;
    }
    for (size_t m = 0; m < gpus[g].mig_devices.size(); ++m) {
      if (gpus[g].mig_devices[m].uuid == uuid) {
        *device = c.state.mig_handles[g][m];
        return api::NVML_SUCCESS;
      }
    }
  }
  return api::NVML_ERROR_NOT_FOUND;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  Call c("nvmlDeviceGetName", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (c.mig != nullptr) {
    std::string n = c.mig->name.empty() ? c.gpu->name + " MIG" : c.mig->name;
    return CopyString(n, name, length);
  }
  return CopyString(c.gpu->name, name, length);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  Call c("nvmlDeviceGetUUID", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return CopyString(c.mig ? c.mig->uuid : c.gpu->uuid, uuid, length);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  Call c("nvmlDeviceGetIndex", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (index == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *index = c.mig ? static_cast<unsigned>(c.mig_index) : c.gpu_index;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  Call c("nvmlDeviceGetMinorNumber", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (minor == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig != nullptr) return api::NVML_ERROR_NOT_SUPPORTED;
  *minor = c.gpu->minor ? *c.gpu->minor : c.gpu_index;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  Call c("nvmlDeviceGetPciInfo_v3", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (pci == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  std::sscanf(c.gpu->pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
  *pci = {};
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain & 0xFFFF, bus, dev);
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, dev);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = dev;
  pci->pciDeviceId = c.gpu->pci_device_id;
  pci->pciSubSystemId = 0x16C110DE;
  return api::NVML_SUCCESS;
}
