// Declarations of every symbol the emulator exports, generated from the binding's entry-point
// table: a definition whose signature drifts from the table fails to compile ("conflicting
// declaration of C function"). Exported with default visibility; the library is built with
// -fvisibility=hidden, and a variant build hides some of these through its linker version script.
#pragma once

#include "emulator_core.h"
#include "sources/nvml/nvml_types.h"

using vw::nvml::api::nvmlBAR1Memory_t;
using vw::nvml::api::nvmlClockType_t;
using vw::nvml::api::nvmlComputeMode_t;
using vw::nvml::api::nvmlConfComputeMemSizeInfo_t;
using vw::nvml::api::nvmlDevice_t;
using vw::nvml::api::nvmlDriverModel_t;
using vw::nvml::api::nvmlEccCounterType_t;
using vw::nvml::api::nvmlEnableState_t;
using vw::nvml::api::nvmlEventData_t;
using vw::nvml::api::nvmlEventSet_t;
using vw::nvml::api::nvmlMemory_t;
using vw::nvml::api::nvmlMemory_v2_t;
using vw::nvml::api::nvmlMemoryErrorType_t;
using vw::nvml::api::nvmlPciInfo_t;
using vw::nvml::api::nvmlProcessDetailList_t;
using vw::nvml::api::nvmlProcessInfo_t;
using vw::nvml::api::nvmlProcessInfo_v1_t;
using vw::nvml::api::nvmlProcessInfo_v2_t;
using vw::nvml::api::nvmlProcessUtilizationSample_t;
using vw::nvml::api::nvmlPstates_t;
using vw::nvml::api::nvmlReturn_t;
using vw::nvml::api::nvmlTemperatureSensors_t;
using vw::nvml::api::nvmlUtilization_t;

#define VW_NVML_ENTRY(ret, name, family, version, params) VW_EMU_EXPORT ret name params;
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
