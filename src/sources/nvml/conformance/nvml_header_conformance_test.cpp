// Holds our NVML declarations (nvml_types.h, nvml_entry_points.h) against NVIDIA's own nvml.h:
// every function signature in the entry-point table, every struct size and field offset, every
// constant. Most checks are static_asserts, so a mismatch fails the build of this test.
#ifndef VW_NVIDIA_NVML_H
#error "VW_NVIDIA_NVML_H must name NVIDIA's nvml.h (see src/sources/nvml/CMakeLists.txt)"
#endif

// The unversioned exports with their original argument types, as our table declares them.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include VW_NVIDIA_NVML_H

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "sources/nvml/nvml_loader.h"
#include "sources/nvml/nvml_types.h"

namespace {

namespace api = vw::nvml::api;

// Maps a type built from our declarations to the same type built from NVIDIA's.
template <typename T>
struct Theirs {
  using type = T;
};
template <typename T>
struct Theirs<T*> {
  using type = typename Theirs<T>::type*;
};
template <typename T>
struct Theirs<const T> {
  using type = const typename Theirs<T>::type;
};
template <typename R, typename... A>
struct Theirs<R (*)(A...)> {
  using type = typename Theirs<R>::type (*)(typename Theirs<A>::type...);
};
#define VW_MAP(ours, theirs) \
  template <>                \
  struct Theirs<api::ours> { \
    using type = ::theirs;   \
  };
VW_MAP(nvmlDevice_st, nvmlDevice_st)
VW_MAP(nvmlEventSet_st, nvmlEventSet_st)
VW_MAP(nvmlReturn_t, nvmlReturn_t)
VW_MAP(nvmlTemperatureSensors_t, nvmlTemperatureSensors_t)
VW_MAP(nvmlClockType_t, nvmlClockType_t)
VW_MAP(nvmlEnableState_t, nvmlEnableState_t)
VW_MAP(nvmlComputeMode_t, nvmlComputeMode_t)
VW_MAP(nvmlPstates_t, nvmlPstates_t)
VW_MAP(nvmlMemoryErrorType_t, nvmlMemoryErrorType_t)
VW_MAP(nvmlEccCounterType_t, nvmlEccCounterType_t)
VW_MAP(nvmlDriverModel_t, nvmlDriverModel_t)
VW_MAP(nvmlMemory_t, nvmlMemory_t)
VW_MAP(nvmlMemory_v2_t, nvmlMemory_v2_t)
VW_MAP(nvmlBAR1Memory_t, nvmlBAR1Memory_t)
VW_MAP(nvmlUtilization_t, nvmlUtilization_t)
VW_MAP(nvmlProcessInfo_v1_t, nvmlProcessInfo_v1_t)
VW_MAP(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t)
VW_MAP(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t)
VW_MAP(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t)
VW_MAP(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t)
VW_MAP(nvmlPciInfo_t, nvmlPciInfo_t)
VW_MAP(nvmlEventData_t, nvmlEventData_t)
VW_MAP(nvmlConfComputeMemSizeInfo_t, nvmlConfComputeMemSizeInfo_t)
#undef VW_MAP

// Every row of the entry-point table has NVIDIA's exact signature.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // nvmlDeviceGetTemperature (13.0)
#define VW_NVML_ENTRY(ret, name, family, version, params)                        \
  static_assert(std::is_same_v<Theirs<api::name##_fn>::type, decltype(&::name)>, \
                #name ": our signature differs from NVIDIA's nvml.h");
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
#pragma GCC diagnostic pop

// Structs: size and every field's offset and size.
#define VW_SIZE(ours, theirs) static_assert(sizeof(api::ours) == sizeof(::theirs), #ours " size");
#define VW_FIELD(ours, theirs, field)                                                                 \
  static_assert(offsetof(api::ours, field) == offsetof(::theirs, field), #ours "." #field " offset"); \
  static_assert(sizeof(api::ours::field) == sizeof(::theirs::field), #ours "." #field " size");

VW_SIZE(nvmlMemory_t, nvmlMemory_t)
VW_FIELD(nvmlMemory_t, nvmlMemory_t, total)
VW_FIELD(nvmlMemory_t, nvmlMemory_t, free)
VW_FIELD(nvmlMemory_t, nvmlMemory_t, used)
VW_SIZE(nvmlMemory_v2_t, nvmlMemory_v2_t)
VW_FIELD(nvmlMemory_v2_t, nvmlMemory_v2_t, version)
VW_FIELD(nvmlMemory_v2_t, nvmlMemory_v2_t, total)
VW_FIELD(nvmlMemory_v2_t, nvmlMemory_v2_t, reserved)
VW_FIELD(nvmlMemory_v2_t, nvmlMemory_v2_t, free)
VW_FIELD(nvmlMemory_v2_t, nvmlMemory_v2_t, used)
VW_SIZE(nvmlBAR1Memory_t, nvmlBAR1Memory_t)
VW_FIELD(nvmlBAR1Memory_t, nvmlBAR1Memory_t, bar1Total)
VW_FIELD(nvmlBAR1Memory_t, nvmlBAR1Memory_t, bar1Free)
VW_FIELD(nvmlBAR1Memory_t, nvmlBAR1Memory_t, bar1Used)
VW_SIZE(nvmlUtilization_t, nvmlUtilization_t)
VW_FIELD(nvmlUtilization_t, nvmlUtilization_t, gpu)
VW_FIELD(nvmlUtilization_t, nvmlUtilization_t, memory)
VW_SIZE(nvmlProcessInfo_v1_t, nvmlProcessInfo_v1_t)
VW_FIELD(nvmlProcessInfo_v1_t, nvmlProcessInfo_v1_t, pid)
VW_FIELD(nvmlProcessInfo_v1_t, nvmlProcessInfo_v1_t, usedGpuMemory)
VW_SIZE(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t)
VW_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, pid)
VW_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, usedGpuMemory)
VW_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, gpuInstanceId)
VW_FIELD(nvmlProcessInfo_v2_t, nvmlProcessInfo_v2_t, computeInstanceId)
VW_SIZE(nvmlProcessInfo_t, nvmlProcessInfo_t)
// The R535 element has no NVIDIA type any more; it is laid out like nvmlProcessDetail_v1_t.
VW_SIZE(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t)
VW_FIELD(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t, pid)
VW_FIELD(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t, usedGpuMemory)
VW_FIELD(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t, gpuInstanceId)
VW_FIELD(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t, computeInstanceId)
VW_FIELD(nvmlProcessInfoR535_t, nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory)
VW_SIZE(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t)
VW_FIELD(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t, pid)
VW_FIELD(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t, usedGpuMemory)
VW_FIELD(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t, gpuInstanceId)
VW_FIELD(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t, computeInstanceId)
VW_FIELD(nvmlProcessDetail_v1_t, nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory)
VW_SIZE(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t)
VW_FIELD(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t, version)
VW_FIELD(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t, mode)
VW_FIELD(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t, numProcArrayEntries)
VW_FIELD(nvmlProcessDetailList_v1_t, nvmlProcessDetailList_v1_t, procArray)
VW_SIZE(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, pid)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, timeStamp)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, smUtil)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, memUtil)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, encUtil)
VW_FIELD(nvmlProcessUtilizationSample_t, nvmlProcessUtilizationSample_t, decUtil)
VW_SIZE(nvmlPciInfo_t, nvmlPciInfo_t)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, busIdLegacy)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, domain)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, bus)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, device)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, pciDeviceId)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, pciSubSystemId)
VW_FIELD(nvmlPciInfo_t, nvmlPciInfo_t, busId)
VW_SIZE(nvmlEventData_t, nvmlEventData_t)
VW_FIELD(nvmlEventData_t, nvmlEventData_t, device)
VW_FIELD(nvmlEventData_t, nvmlEventData_t, eventType)
VW_FIELD(nvmlEventData_t, nvmlEventData_t, eventData)
VW_FIELD(nvmlEventData_t, nvmlEventData_t, gpuInstanceId)
VW_FIELD(nvmlEventData_t, nvmlEventData_t, computeInstanceId)
VW_SIZE(nvmlConfComputeMemSizeInfo_t, nvmlConfComputeMemSizeInfo_t)
VW_FIELD(nvmlConfComputeMemSizeInfo_t, nvmlConfComputeMemSizeInfo_t, protectedMemSizeKib)
VW_FIELD(nvmlConfComputeMemSizeInfo_t, nvmlConfComputeMemSizeInfo_t, unprotectedMemSizeKib)
#undef VW_SIZE
#undef VW_FIELD

// Handles and enums: same size and representation.
static_assert(sizeof(api::nvmlDevice_t) == sizeof(::nvmlDevice_t));
static_assert(std::is_same_v<std::underlying_type_t<api::nvmlReturn_t>, std::underlying_type_t<::nvmlReturn_t>>);
static_assert(sizeof(api::nvmlTemperatureSensors_t) == sizeof(::nvmlTemperatureSensors_t));
static_assert(sizeof(api::nvmlClockType_t) == sizeof(::nvmlClockType_t));
static_assert(sizeof(api::nvmlPstates_t) == sizeof(::nvmlPstates_t));
static_assert(sizeof(api::nvmlComputeMode_t) == sizeof(::nvmlComputeMode_t));

// Constants.
#define VW_SAME(ours, theirs) static_assert(static_cast<long long>(ours) == static_cast<long long>(theirs), #ours);
VW_SAME(api::NVML_SUCCESS, ::NVML_SUCCESS)
VW_SAME(api::NVML_ERROR_UNINITIALIZED, ::NVML_ERROR_UNINITIALIZED)
VW_SAME(api::NVML_ERROR_INVALID_ARGUMENT, ::NVML_ERROR_INVALID_ARGUMENT)
VW_SAME(api::NVML_ERROR_NOT_SUPPORTED, ::NVML_ERROR_NOT_SUPPORTED)
VW_SAME(api::NVML_ERROR_NO_PERMISSION, ::NVML_ERROR_NO_PERMISSION)
VW_SAME(api::NVML_ERROR_ALREADY_INITIALIZED, ::NVML_ERROR_ALREADY_INITIALIZED)
VW_SAME(api::NVML_ERROR_NOT_FOUND, ::NVML_ERROR_NOT_FOUND)
VW_SAME(api::NVML_ERROR_INSUFFICIENT_SIZE, ::NVML_ERROR_INSUFFICIENT_SIZE)
VW_SAME(api::NVML_ERROR_INSUFFICIENT_POWER, ::NVML_ERROR_INSUFFICIENT_POWER)
VW_SAME(api::NVML_ERROR_DRIVER_NOT_LOADED, ::NVML_ERROR_DRIVER_NOT_LOADED)
VW_SAME(api::NVML_ERROR_TIMEOUT, ::NVML_ERROR_TIMEOUT)
VW_SAME(api::NVML_ERROR_IRQ_ISSUE, ::NVML_ERROR_IRQ_ISSUE)
VW_SAME(api::NVML_ERROR_LIBRARY_NOT_FOUND, ::NVML_ERROR_LIBRARY_NOT_FOUND)
VW_SAME(api::NVML_ERROR_FUNCTION_NOT_FOUND, ::NVML_ERROR_FUNCTION_NOT_FOUND)
VW_SAME(api::NVML_ERROR_CORRUPTED_INFOROM, ::NVML_ERROR_CORRUPTED_INFOROM)
VW_SAME(api::NVML_ERROR_GPU_IS_LOST, ::NVML_ERROR_GPU_IS_LOST)
VW_SAME(api::NVML_ERROR_RESET_REQUIRED, ::NVML_ERROR_RESET_REQUIRED)
VW_SAME(api::NVML_ERROR_OPERATING_SYSTEM, ::NVML_ERROR_OPERATING_SYSTEM)
VW_SAME(api::NVML_ERROR_LIB_RM_VERSION_MISMATCH, ::NVML_ERROR_LIB_RM_VERSION_MISMATCH)
VW_SAME(api::NVML_ERROR_IN_USE, ::NVML_ERROR_IN_USE)
VW_SAME(api::NVML_ERROR_MEMORY, ::NVML_ERROR_MEMORY)
VW_SAME(api::NVML_ERROR_NO_DATA, ::NVML_ERROR_NO_DATA)
VW_SAME(api::NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, ::NVML_ERROR_VGPU_ECC_NOT_SUPPORTED)
VW_SAME(api::NVML_ERROR_INSUFFICIENT_RESOURCES, ::NVML_ERROR_INSUFFICIENT_RESOURCES)
VW_SAME(api::NVML_ERROR_FREQ_NOT_SUPPORTED, ::NVML_ERROR_FREQ_NOT_SUPPORTED)
VW_SAME(api::NVML_ERROR_ARGUMENT_VERSION_MISMATCH, ::NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
VW_SAME(api::NVML_ERROR_DEPRECATED, ::NVML_ERROR_DEPRECATED)
VW_SAME(api::NVML_ERROR_NOT_READY, ::NVML_ERROR_NOT_READY)
VW_SAME(api::NVML_ERROR_GPU_NOT_FOUND, ::NVML_ERROR_GPU_NOT_FOUND)
VW_SAME(api::NVML_ERROR_INVALID_STATE, ::NVML_ERROR_INVALID_STATE)
VW_SAME(api::NVML_ERROR_UNKNOWN, ::NVML_ERROR_UNKNOWN)
VW_SAME(api::NVML_TEMPERATURE_GPU, ::NVML_TEMPERATURE_GPU)
VW_SAME(api::NVML_CLOCK_GRAPHICS, ::NVML_CLOCK_GRAPHICS)
VW_SAME(api::NVML_CLOCK_SM, ::NVML_CLOCK_SM)
VW_SAME(api::NVML_CLOCK_MEM, ::NVML_CLOCK_MEM)
VW_SAME(api::NVML_CLOCK_VIDEO, ::NVML_CLOCK_VIDEO)
VW_SAME(api::NVML_FEATURE_DISABLED, ::NVML_FEATURE_DISABLED)
VW_SAME(api::NVML_FEATURE_ENABLED, ::NVML_FEATURE_ENABLED)
VW_SAME(api::NVML_COMPUTEMODE_DEFAULT, ::NVML_COMPUTEMODE_DEFAULT)
VW_SAME(api::NVML_COMPUTEMODE_EXCLUSIVE_PROCESS, ::NVML_COMPUTEMODE_EXCLUSIVE_PROCESS)
VW_SAME(api::NVML_COMPUTEMODE_COUNT, ::NVML_COMPUTEMODE_COUNT)
VW_SAME(api::NVML_PSTATE_0, ::NVML_PSTATE_0)
VW_SAME(api::NVML_PSTATE_15, ::NVML_PSTATE_15)
VW_SAME(api::NVML_PSTATE_UNKNOWN, ::NVML_PSTATE_UNKNOWN)
VW_SAME(api::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, ::NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
VW_SAME(api::NVML_AGGREGATE_ECC, ::NVML_AGGREGATE_ECC)
VW_SAME(api::NVML_DRIVER_MCDM, ::NVML_DRIVER_MCDM)
VW_SAME(api::kDeviceUuidV2BufferSize, NVML_DEVICE_UUID_V2_BUFFER_SIZE)
VW_SAME(api::kDeviceNameV2BufferSize, NVML_DEVICE_NAME_V2_BUFFER_SIZE)
VW_SAME(api::kSystemDriverVersionBufferSize, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)
VW_SAME(api::kSystemNvmlVersionBufferSize, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE)
VW_SAME(api::kDevicePciBusIdBufferSize, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE)
VW_SAME(api::kDevicePciBusIdBufferV2Size, NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE)
VW_SAME(api::kInitFlagNoGpus, NVML_INIT_FLAG_NO_GPUS)
VW_SAME(api::kInitFlagNoAttach, NVML_INIT_FLAG_NO_ATTACH)
VW_SAME(api::kDeviceMigDisable, NVML_DEVICE_MIG_DISABLE)
VW_SAME(api::kDeviceMigEnable, NVML_DEVICE_MIG_ENABLE)
VW_SAME(api::kEventTypeXidCriticalError, nvmlEventTypeXidCriticalError)
VW_SAME(api::kMemoryV2Version, nvmlMemory_v2)
VW_SAME(api::kProcessDetailListV1Version, nvmlProcessDetailList_v1)
#undef VW_SAME
static_assert(api::kValueNotAvailableULL == static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
static_assert(api::kValueNotAvailableUInt == static_cast<unsigned int>(NVML_VALUE_NOT_AVAILABLE));

TEST(NvmlHeaderConformanceTest, MemoryV2VersionIsTheStructVersionNotTwo) {
  // The pitfall of nvml.md §5.3: the version is sizeof | 2 << 24, and NVIDIA's macro agrees.
  EXPECT_EQ(api::kMemoryV2Version, 0x02000028u);
  EXPECT_EQ(api::kMemoryV2Version, static_cast<unsigned>(nvmlMemory_v2));
}

TEST(NvmlHeaderConformanceTest, EveryTableEntryIsDeclaredByNvidia) {
  // The static_asserts above cover each row; this checks the table is not empty and families are
  // listed newest first, which the loader's fallback relies on.
  const auto& all = vw::nvml::AllEntryPoints();
  ASSERT_GT(all.size(), 40u);
  for (size_t i = 1; i < all.size(); ++i) {
    if (std::string(all[i].family) == all[i - 1].family) {
      EXPECT_LT(all[i].version, all[i - 1].version) << all[i].symbol;
    }
  }
}

}  // namespace
