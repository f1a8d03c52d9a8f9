// Emulated NVML: Xid events. A scenario's `xid: [{t, code}]` entries are delivered, once each and
// in time order, to event sets that registered nvmlEventTypeXidCriticalError on that GPU before
// they happened. Only Xid events are supported; MIG device handles cannot register (as in NVML).
#include <algorithm>
#include <chrono>
#include <thread>

#include "exports.h"

namespace api = vw::nvml::api;
using vw::emulator::Call;

namespace {

constexpr unsigned long long kSupported = api::kEventTypeXidCriticalError;

bool ValidSet(const vw::emulator::State& s, nvmlEventSet_t set) {
  return set != nullptr && std::find(s.event_sets.begin(), s.event_sets.end(), set) != s.event_sets.end();
}

// Next undelivered Xid at or before t for `set`; false when none.
bool NextEvent(const vw::emulator::State& s, nvmlEventSet_t set, double t, unsigned* gpu, size_t* index) {
  double best = 0;
  bool found = false;
  for (const auto& r : set->registrations) {
    if ((r.mask & api::kEventTypeXidCriticalError) == 0 || r.gpu >= s.scenario.gpus.size()) continue;
    const auto& xids = s.scenario.gpus[r.gpu].xid;
    for (size_t i = 0; i < xids.size(); ++i) {
      if (xids[i].t < r.since_t || xids[i].t > t) continue;
      if (std::find(set->delivered.begin(), set->delivered.end(), std::make_pair(r.gpu, i)) != set->delivered.end()) {
        continue;
      }
      if (!found || xids[i].t < best) {
        best = xids[i].t;
        *gpu = r.gpu;
        *index = i;
        found = true;
      }
    }
  }
  return found;
}

nvmlReturn_t Wait(const char* fn, nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeoutms, bool v2) {
  Call c(fn, nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (data == nullptr || !ValidSet(c.state, set)) return api::NVML_ERROR_INVALID_ARGUMENT;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutms);
  unsigned generation = c.state.generation;
  for (;;) {
    double t = 0;
    if (!c.Now(&t)) return api::NVML_ERROR_UNKNOWN;
    unsigned gpu = 0;
    size_t index = 0;
    if (NextEvent(c.state, set, t, &gpu, &index)) {
      set->delivered.emplace_back(gpu, index);
      data->device = c.state.gpu_handles[gpu];
      data->eventType = api::kEventTypeXidCriticalError;
      data->eventData = c.state.scenario.gpus[gpu].xid[index].code;
      if (v2) {  // the pre-450 event is 24 bytes: no instance ids
        data->gpuInstanceId = api::kValueNotAvailableUInt;
        data->computeInstanceId = api::kValueNotAvailableUInt;
      }
      return api::NVML_SUCCESS;
    }
    if (std::chrono::steady_clock::now() >= deadline) return api::NVML_ERROR_TIMEOUT;
    c.lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    c.lock.lock();
    if (!c.state.loaded || generation != c.state.generation) return api::NVML_ERROR_UNINITIALIZED;
    if (!ValidSet(c.state, set)) return api::NVML_ERROR_INVALID_ARGUMENT;
  }
}

}  // namespace

VW_EMU_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  Call c("nvmlEventSetCreate", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (set == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *set = new api::nvmlEventSet_st();
  c.state.event_sets.push_back(*set);
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  Call c("nvmlEventSetFree", nullptr, false);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (!ValidSet(c.state, set)) return api::NVML_ERROR_INVALID_ARGUMENT;
  c.state.event_sets.erase(std::find(c.state.event_sets.begin(), c.state.event_sets.end(), set));
  delete set;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long* types) {
  Call c("nvmlDeviceGetSupportedEventTypes", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (types == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  *types = c.mig ? 0 : kSupported;
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  Call c("nvmlDeviceRegisterEvents", device, true);
  if (c.rc != api::NVML_SUCCESS) return c.rc;
  if (!ValidSet(c.state, set)) return api::NVML_ERROR_INVALID_ARGUMENT;
  // NOT_SUPPORTED registers none of the requested types; the set stays usable.
  if (c.mig != nullptr || (types & ~kSupported) != 0) return api::NVML_ERROR_NOT_SUPPORTED;
  set->registrations.push_back({c.gpu_index, types, c.t});
  return api::NVML_SUCCESS;
}

VW_EMU_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  return Wait("nvmlEventSetWait_v2", set, data, timeoutms, true);
}

VW_EMU_EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  return Wait("nvmlEventSetWait", set, data, timeoutms, false);
}
