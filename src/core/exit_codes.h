// Exit codes of `check`, `analyze` and `run`: the monitoring-plugin convention.
#pragma once

namespace vw {

inline constexpr int kExitOk = 0;
inline constexpr int kExitWarning = 1;
inline constexpr int kExitCritical = 2;
inline constexpr int kExitUnknown = 3;  // bad input, usage error, no NVML, no GPU visible

}  // namespace vw
