// NvmlSource::GpuState: what the source keeps per GPU (its call worker and the cache of what stays
// true between snapshots). Private to nvml_source.cpp and nvml_xid_events.cpp.
#pragma once

#include "sources/nvml/call_runner.h"
#include "sources/nvml/gpu_reader.h"
#include "sources/nvml/nvml_source.h"

namespace vw::nvml {

struct NvmlSource::GpuState {
  CallRunner runner;
  GpuCache cache;
};

}  // namespace vw::nvml
