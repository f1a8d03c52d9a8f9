#include "outputs/daemon_state.h"

namespace vw::outputs {

const std::vector<double>& NvmlLatencyBuckets() {
  static const std::vector<double> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                               0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return kBuckets;
}

std::string GpuKey(const GpuSnapshot& g) {
  return std::to_string(g.index);
}

std::string_view ProcStateName(ProcState s) {
  switch (s) {
    case ProcState::kRunning: return "running";
    case ProcState::kSleeping: return "sleeping";
    case ProcState::kDiskSleep: return "disk_sleep";
    case ProcState::kZombie: return "zombie";
    case ProcState::kStopped: return "stopped";
    case ProcState::kDead: return "dead";
    case ProcState::kGone: return "gone";
    case ProcState::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace vw::outputs
