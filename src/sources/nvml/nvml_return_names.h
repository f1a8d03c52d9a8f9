// NVML return codes as the short, fixed tokens that label vramwatch_nvml_errors_total{code} and the
// `code_name` of a failed call (core/snapshot.h NvmlCallError): the nvmlReturn_t enumerator name
// ("NVML_ERROR_GPU_IS_LOST"), "NVML_RETURN_<n>" for a value this build does not know, and the two
// watchdog cases "timeout" (no answer within the deadline) and "blocked" (not called because an
// earlier call still hangs). Plain functions, no state.
#pragma once

#include <string>

namespace vw::nvml {

inline constexpr const char* kCodeTimeout = "timeout";
inline constexpr const char* kCodeBlocked = "blocked";

// 15 -> "NVML_ERROR_GPU_IS_LOST", 0 -> "NVML_SUCCESS", 12345 -> "NVML_RETURN_12345".
std::string NvmlReturnName(int code);

}  // namespace vw::nvml
