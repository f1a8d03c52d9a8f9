// Our own declarations of the NVML subset vramwatch uses, so the build needs no CUDA toolkit.
//
// Everything here mirrors NVIDIA's nvml.h (x86-64 / LP64 layouts) but lives in vw::nvml::api, so a
// test can include both this header and NVIDIA's in one translation unit and compare them
// (nvml_types_conformance_test.cpp: sizes, offsets, constants, function signatures).
// Enumerator names match NVIDIA's (they are enumerators there, not macros); constants NVIDIA
// defines as macros get k-prefixed names here so NVIDIA's macros cannot rewrite them.
//
// Sizes are bytes; timestamps are microseconds since the Unix epoch; utilisations are percent.
// Plain data only: no threading concerns.
#pragma once

#include <cstdint>

namespace vw::nvml::api {

// Opaque handles: pointers the caller never dereferences. The structs are declared first so they
// are ours even where NVIDIA's global ones are visible.
struct nvmlDevice_st;
struct nvmlEventSet_st;
typedef nvmlDevice_st* nvmlDevice_t;
typedef nvmlEventSet_st* nvmlEventSet_t;

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef enum nvmlTemperatureSensors_enum {
  NVML_TEMPERATURE_GPU = 0,
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

typedef enum nvmlEnableState_enum {
  NVML_FEATURE_DISABLED = 0,
  NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

typedef enum nvmlComputeMode_enum {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
  NVML_COMPUTEMODE_COUNT
} nvmlComputeMode_t;

typedef enum nvmlPStates_enum {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32,
} nvmlPstates_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
  NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1,
  NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

typedef enum nvmlDriverModel_enum {
  NVML_DRIVER_WDDM = 0,
  NVML_DRIVER_WDM = 1,
  NVML_DRIVER_MCDM = 2,
} nvmlDriverModel_t;

// NVIDIA defines these as macros; the k-names avoid clashing with them.
inline constexpr unsigned long long kValueNotAvailableULL = 0xFFFFFFFFFFFFFFFFull;  // (-1)
inline constexpr unsigned int kValueNotAvailableUInt = 0xFFFFFFFFu;
inline constexpr unsigned int kDeviceUuidV2BufferSize = 96;
inline constexpr unsigned int kDeviceNameV2BufferSize = 96;
inline constexpr unsigned int kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned int kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned int kDevicePciBusIdBufferSize = 32;
inline constexpr unsigned int kDevicePciBusIdBufferV2Size = 16;
inline constexpr unsigned int kInitFlagNoGpus = 1;
inline constexpr unsigned int kInitFlagNoAttach = 2;
inline constexpr unsigned int kDeviceMigDisable = 0;
inline constexpr unsigned int kDeviceMigEnable = 1;
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

// NVML_STRUCT_VERSION(data, ver) = sizeof(struct) | ver << 24.
constexpr unsigned int StructVersion(unsigned long size, unsigned int ver) {
  return static_cast<unsigned int>(size) | (ver << 24);
}

// nvmlDeviceGetMemoryInfo (v1): used = reserved + allocated; total = free + used.
typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

// nvmlDeviceGetMemoryInfo_v2: reserved reported apart; version must be kMemoryV2Version.
typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
inline constexpr unsigned int kMemoryV2Version = StructVersion(sizeof(nvmlMemory_v2_t), 2);  // 0x02000028

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel ran
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

// Element of the unversioned (v1) process-list exports: 16 bytes.
typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, kValueNotAvailableULL when unknown
} nvmlProcessInfo_v1_t;

// Element of the _v2 and (R535.104+) _v3 process-list exports: 24 bytes.
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;      // kValueNotAvailableUInt when MIG is off
  unsigned int computeInstanceId;  // kValueNotAvailableUInt when MIG is off
} nvmlProcessInfo_v2_t;
typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;

// Element that the _v3 exports of drivers 535.43-535.86 wrote: 32 bytes (nvml.md §5.8). NVIDIA's
// current header has no such type; its layout equals nvmlProcessDetail_v1_t.
typedef struct nvmlProcessInfoR535_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfoR535_t;

// nvmlDeviceGetRunningProcessDetailList (Hopper+, 535.104+): element 32 bytes, list 24 bytes.
typedef struct nvmlProcessDetail_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;
typedef struct nvmlProcessDetailList_v1_st {
  unsigned int version;  // kProcessDetailListV1Version
  unsigned int mode;     // 0 compute, 1 graphics, 2 MPS
  unsigned int numProcArrayEntries;
  nvmlProcessDetail_v1_t* procArray;
} nvmlProcessDetailList_v1_t;
typedef nvmlProcessDetailList_v1_t nvmlProcessDetailList_t;
inline constexpr unsigned int kProcessDetailListV1Version =
    StructVersion(sizeof(nvmlProcessDetailList_v1_t), 1);  // 0x01000018

typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

// nvmlDeviceGetPciInfo_v3 layout (68 bytes).
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];  // "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
} nvmlPciInfo_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // Xid number for XidCriticalError, 999 = unknown Xid
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

typedef struct nvmlConfComputeMemSizeInfo_st {
  unsigned long long protectedMemSizeKib;
  unsigned long long unprotectedMemSizeKib;
} nvmlConfComputeMemSizeInfo_t;

}  // namespace vw::nvml::api
