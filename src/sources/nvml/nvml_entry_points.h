// The one table of NVML entry points vramwatch knows about (X-macro).
//
//   VW_NVML_ENTRY(ReturnType, Symbol, Family, Version, (parameter types))
//
// Symbol is the exported C name. Entries of one Family are versions of the same call, listed
// newest first: the loader binds every symbol the library exports, and callers use the first
// bound entry of a family (the fallback chain, e.g. _v3 -> _v2 -> unversioned). Version 1 is the
// unversioned export. Signatures are NVIDIA's (with NVML_NO_UNVERSIONED_FUNC_DEFS semantics for
// the unversioned exports); nvml_types_conformance_test.cpp holds each against NVIDIA's nvml.h.
//
// Generated from this table:
//   - vw::nvml::api::<Symbol>_fn function-pointer types (nvml_loader.h),
//   - the loader's pointer table and its dlsym loop (nvml_loader.h/.cpp),
//   - the emulator's extern "C" declarations, so its definitions cannot drift from the table,
//     and the test that every entry is exported by the emulator.
//
// Include after nvml_types.h, inside namespace vw::nvml::api, with VW_NVML_ENTRY defined.

// Library lifetime and system queries.
VW_NVML_ENTRY(nvmlReturn_t, nvmlInit_v2, Init, 2, (void))
VW_NVML_ENTRY(nvmlReturn_t, nvmlInit, Init, 1, (void))
VW_NVML_ENTRY(nvmlReturn_t, nvmlInitWithFlags, InitWithFlags, 1, (unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlShutdown, Shutdown, 1, (void))
VW_NVML_ENTRY(const char*, nvmlErrorString, ErrorString, 1, (nvmlReturn_t))
VW_NVML_ENTRY(nvmlReturn_t, nvmlSystemGetDriverVersion, DriverVersion, 1, (char*, unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlSystemGetNVMLVersion, NvmlVersion, 1, (char*, unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlSystemGetCudaDriverVersion_v2, CudaDriverVersion, 2, (int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlSystemGetCudaDriverVersion, CudaDriverVersion, 1, (int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlSystemGetProcessName, ProcessName, 1, (unsigned int, char*, unsigned int))

// Device enumeration and identity.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetCount_v2, Count, 2, (unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetCount, Count, 1, (unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, HandleByIndex, 2, (unsigned int, nvmlDevice_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetHandleByIndex, HandleByIndex, 1, (unsigned int, nvmlDevice_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetHandleByUUID, HandleByUuid, 1, (const char*, nvmlDevice_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetName, Name, 1, (nvmlDevice_t, char*, unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetUUID, Uuid, 1, (nvmlDevice_t, char*, unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetIndex, Index, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMinorNumber, MinorNumber, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, PciInfo, 3, (nvmlDevice_t, nvmlPciInfo_t*))

// Memory and utilisation.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2, MemoryInfo, 2, (nvmlDevice_t, nvmlMemory_v2_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMemoryInfo, MemoryInfo, 1, (nvmlDevice_t, nvmlMemory_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetBAR1MemoryInfo, Bar1MemoryInfo, 1, (nvmlDevice_t, nvmlBAR1Memory_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetUtilizationRates, UtilizationRates, 1, (nvmlDevice_t, nvmlUtilization_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetProcessUtilization, ProcessUtilization, 1,
              (nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*, unsigned long long))

// Process lists (two-call). _v3 element size depends on the driver: see nvml.md §5.8.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3, ComputeProcesses, 3,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v2, ComputeProcesses, 2,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses, ComputeProcesses, 1,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v3, GraphicsProcesses, 3,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v2, GraphicsProcesses, 2,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses, GraphicsProcesses, 1,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses_v3, MpsProcesses, 3,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses_v2, MpsProcesses, 2,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses, MpsProcesses, 1,
              (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*))
// Presence probes for the R535 layout rule (§5.8); also real calls.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetRunningProcessDetailList, ProcessDetailList, 1,
              (nvmlDevice_t, nvmlProcessDetailList_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetConfComputeMemSizeInfo, ConfComputeMemSizeInfo, 1,
              (nvmlDevice_t, nvmlConfComputeMemSizeInfo_t*))

// MIG.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMigMode, MigMode, 1, (nvmlDevice_t, unsigned int*, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount, MaxMigDeviceCount, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex, MigDeviceHandleByIndex, 1,
              (nvmlDevice_t, unsigned int, nvmlDevice_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceIsMigDeviceHandle, IsMigDeviceHandle, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetDeviceHandleFromMigDeviceHandle, DeviceHandleFromMigDeviceHandle, 1,
              (nvmlDevice_t, nvmlDevice_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetGpuInstanceId, GpuInstanceId, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetComputeInstanceId, ComputeInstanceId, 1, (nvmlDevice_t, unsigned int*))

// Events (Xid). The unversioned nvmlEventSetWait is the pre-450 export with a 24-byte event.
VW_NVML_ENTRY(nvmlReturn_t, nvmlEventSetCreate, EventSetCreate, 1, (nvmlEventSet_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlEventSetFree, EventSetFree, 1, (nvmlEventSet_t))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetSupportedEventTypes, SupportedEventTypes, 1,
              (nvmlDevice_t, unsigned long long*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceRegisterEvents, RegisterEvents, 1,
              (nvmlDevice_t, unsigned long long, nvmlEventSet_t))
VW_NVML_ENTRY(nvmlReturn_t, nvmlEventSetWait_v2, EventSetWait, 2, (nvmlEventSet_t, nvmlEventData_t*, unsigned int))
VW_NVML_ENTRY(nvmlReturn_t, nvmlEventSetWait, EventSetWait, 1, (nvmlEventSet_t, nvmlEventData_t*, unsigned int))

// Queried by common clients (gpustat, nvitop); vramwatch itself does not need them.
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetTemperature, Temperature, 1,
              (nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetFanSpeed, FanSpeed, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetPowerUsage, PowerUsage, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetEnforcedPowerLimit, EnforcedPowerLimit, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetEncoderUtilization, EncoderUtilization, 1,
              (nvmlDevice_t, unsigned int*, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetDecoderUtilization, DecoderUtilization, 1,
              (nvmlDevice_t, unsigned int*, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetClockInfo, ClockInfo, 1, (nvmlDevice_t, nvmlClockType_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetPowerManagementLimit, PowerManagementLimit, 1, (nvmlDevice_t, unsigned int*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetPersistenceMode, PersistenceMode, 1, (nvmlDevice_t, nvmlEnableState_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetDisplayActive, DisplayActive, 1, (nvmlDevice_t, nvmlEnableState_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetComputeMode, ComputeMode, 1, (nvmlDevice_t, nvmlComputeMode_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetPerformanceState, PerformanceState, 1, (nvmlDevice_t, nvmlPstates_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetTotalEccErrors, TotalEccErrors, 1,
              (nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned long long*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetDriverModel_v2, DriverModel, 2,
              (nvmlDevice_t, nvmlDriverModel_t*, nvmlDriverModel_t*))
VW_NVML_ENTRY(nvmlReturn_t, nvmlDeviceGetDriverModel, DriverModel, 1,
              (nvmlDevice_t, nvmlDriverModel_t*, nvmlDriverModel_t*))
