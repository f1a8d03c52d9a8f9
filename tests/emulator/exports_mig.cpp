// Emulated NVML: MIG queries, and what common clients ask besides memory and processes: sensors
// (temperature, fan, power, power limit) come from the scenario and are NOT_SUPPORTED without it;
// encoder/decoder, clocks and ECC counters are NOT_SUPPORTED; the driver model is NOT_SUPPORTED as
// on Linux; the modes are fixed: persistence enabled, no display, default compute mode, P0.
#include <algorithm>
#include <cmath>

#include "exports.h"

namespace api = vw::nvml::api;
using vw::emulator::Call;

namespace {
// Seven slices is the most any MIG-capable GPU offers.
constexpr unsigned kMaxMigDevices = 7;
}  // namespace

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  Call c("nvmlDeviceGetMigMode", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (current == nullptr || pending == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig != nullptr) return api::NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = c.gpu->mig_devices.empty() ? api::kDeviceMigDisable : api::kDeviceMigEnable;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  Call c("nvmlDeviceGetMaxMigDeviceCount", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (count == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig != nullptr) return api::NVML_ERROR_NOT_SUPPORTED;
  *count = c.gpu->mig_devices.empty() ? 0 : std::max(kMaxMigDevices, static_cast<unsigned>(c.gpu->mig_devices.size()));
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                               nvmlDevice_t* mig) {
  Call c("nvmlDeviceGetMigDeviceHandleByIndex", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (mig == nullptr || c.mig != nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.gpu->mig_devices.empty()) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (index >= std::max(kMaxMigDevices, static_cast<unsigned>(c.gpu->mig_devices.size()))) {
    return api::NVML_ERROR_INVALID_ARGUMENT;
  }
  if (index >= c.gpu->mig_devices.size()) return api::NVML_ERROR_NOT_FOUND;
  *mig = c.state.mig_handles[c.gpu_index][index];
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig) {
  Call c("nvmlDeviceIsMigDeviceHandle", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (is_mig == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *is_mig = c.mig != nullptr ? 1 : 0;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t* device) {
  Call c("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", mig, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (device == nullptr || c.mig == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *device = c.state.gpu_handles[c.gpu_index];
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  Call c("nvmlDeviceGetGpuInstanceId", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (id == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig == nullptr) return api::NVML_ERROR_NOT_SUPPORTED;
  *id = c.mig->gpu_instance_id;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  Call c("nvmlDeviceGetComputeInstanceId", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (id == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (c.mig == nullptr) return api::NVML_ERROR_NOT_SUPPORTED;
  *id = c.mig->compute_instance_id;
  return api::NVML_SUCCESS;
}

namespace {

// A sensor value from a scenario series, scaled to NVML's unit; NOT_SUPPORTED when absent.
nvmlReturn_t Sensor(const char* fn, nvmlDevice_t device, unsigned* out,
                    vw::emulator::Series vw::emulator::GpuSpec::*series, double factor) {
  Call c(fn, device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (out == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  const auto& s = c.gpu->*series;
  if (s.empty()) return api::NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<unsigned>(std::max(0l, std::lround(s.At(c.t) * factor)));
  return api::NVML_SUCCESS;
}

}  // namespace

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                    unsigned int* temp) {
  if (sensor != api::NVML_TEMPERATURE_GPU) {
    Call c("nvmlDeviceGetTemperature", device, true);
    return c.rc != api::NVML_SUCCESS ? c.rc : api::NVML_ERROR_INVALID_ARGUMENT;
  }
  return Sensor("nvmlDeviceGetTemperature", device, temp, &vw::emulator::GpuSpec::temperature_c, 1);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  return Sensor("nvmlDeviceGetFanSpeed", device, speed, &vw::emulator::GpuSpec::fan_percent, 1);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return Sensor("nvmlDeviceGetPowerUsage", device, power, &vw::emulator::GpuSpec::power_w, 1000);  // mW
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return Sensor("nvmlDeviceGetEnforcedPowerLimit", device, limit, &vw::emulator::GpuSpec::power_limit_w, 1000);
}

static nvmlReturn_t Codec(const char* fn, nvmlDevice_t device, unsigned int* util, unsigned int* period) {
  Call c(fn, device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (util == nullptr || period == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  return api::NVML_ERROR_NOT_SUPPORTED;  // the scenario format has no video engines
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* u, unsigned int* p) {
  return Codec("nvmlDeviceGetEncoderUtilization", device, u, p);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* u, unsigned int* p) {
  return Codec("nvmlDeviceGetDecoderUtilization", device, u, p);
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  Call c("nvmlDeviceGetClockInfo", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (clock == nullptr || type > api::NVML_CLOCK_VIDEO) return api::NVML_ERROR_INVALID_ARGUMENT;
  return api::NVML_ERROR_NOT_SUPPORTED;  // the scenario format has no clocks
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return Sensor("nvmlDeviceGetPowerManagementLimit", device, limit, &vw::emulator::GpuSpec::power_limit_w, 1000);
}

namespace {

template <typename T>
nvmlReturn_t Fixed(const char* fn, nvmlDevice_t device, T* out, T value) {
  Call c(fn, device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (out == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *out = value;
  return api::NVML_SUCCESS;
}

nvmlReturn_t Unsupported(const char* fn, nvmlDevice_t device, const void* out) {
  Call c(fn, device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  return out == nullptr ? api::NVML_ERROR_INVALID_ARGUMENT : api::NVML_ERROR_NOT_SUPPORTED;
}

}  // namespace

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return Fixed("nvmlDeviceGetPersistenceMode", device, mode, api::NVML_FEATURE_ENABLED);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* active) {
  return Fixed("nvmlDeviceGetDisplayActive", device, active, api::NVML_FEATURE_DISABLED);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  return Fixed("nvmlDeviceGetComputeMode", device, mode, api::NVML_COMPUTEMODE_DEFAULT);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* state) {
  return Fixed("nvmlDeviceGetPerformanceState", device, state, api::NVML_PSTATE_0);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
                                                       unsigned long long* counts) {
  return Unsupported("nvmlDeviceGetTotalEccErrors", device, counts);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t device, nvmlDriverModel_t* current,
                                                       nvmlDriverModel_t* pending) {
  return Unsupported("nvmlDeviceGetDriverModel_v2", device, current && pending ? current : nullptr);
}
VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t device, nvmlDriverModel_t* current,
                                                    nvmlDriverModel_t* pending) {
  return Unsupported("nvmlDeviceGetDriverModel", device, current && pending ? current : nullptr);
}
