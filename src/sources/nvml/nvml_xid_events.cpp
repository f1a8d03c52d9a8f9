// NvmlSource's Xid events (nvml_source.h): one event set for every GPU, registered for
// nvmlEventTypeXidCriticalError, read without waiting. The set is created and read on the system
// worker; each GPU registers on its own worker, so a GPU whose call hangs holds up only itself.
#include <algorithm>
#include <string>
#include <utility>

#include "sources/nvml/gpu_state.h"
#include "sources/nvml/nvml_loader.h"
#include "sources/nvml/nvml_source.h"

namespace vw::nvml {

NvmlSource::XidListening NvmlSource::ListenForXids() {
  const EntryPoints& f = lib_->fn();
  xid_registered_.resize(gpus_.size(), false);
  const bool has_api = f.nvmlEventSetCreate != nullptr && f.nvmlDeviceRegisterEvents != nullptr &&
                       (f.nvmlEventSetWait_v2 != nullptr || f.nvmlEventSetWait != nullptr);
  if (!has_api) {
    xid_listening_.problems = {
        "the NVML library has no event API (nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait)"};
    return xid_listening_;
  }
  if (xid_set_ == nullptr) {
    NvmlCaller sys(*lib_, *system_runner_, options_.call_deadline);
    auto create = f.nvmlEventSetCreate;
    auto set =
        sys.CallOut<api::nvmlEventSet_t>("nvmlEventSetCreate", [create](api::nvmlEventSet_t* s) { return create(s); });
    if (!set.ok()) {
      xid_listening_.problems = {set.status().message()};  // tried again at the next call
      return xid_listening_;
    }
    xid_set_ = *set;
  }
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    GpuState& g = *gpus_[i];
    if (xid_registered_[i] || g.cache.handle == nullptr) continue;
    NvmlCaller call(*lib_, g.runner, options_.call_deadline);
    auto reg = f.nvmlDeviceRegisterEvents;
    Status st = call.Call("nvmlDeviceRegisterEvents", [reg, d = g.cache.handle, s = xid_set_] {
      return reg(d, api::kEventTypeXidCriticalError, s);
    });
    if (st.ok()) {
      xid_registered_[i] = true;
      xid_failures_.erase(i);
    } else {
      xid_failures_[i] = st.message();
    }
  }
  xid_listening_ = {};
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    if (xid_registered_[i]) xid_listening_.gpus.push_back(i);
  }
  for (const auto& [gpu, why] : xid_failures_)
    xid_listening_.problems.push_back("GPU " + std::to_string(gpu) + ": " + why);
  return xid_listening_;
}

NvmlSource::XidRead NvmlSource::ReadXidEvents(size_t max) {
  XidRead out;
  if (xid_set_ == nullptr || xid_listening_.gpus.empty()) {
    out.status = Status::Unavailable("no GPU is registered for Xid events");
    return out;
  }
  const EntryPoints& f = lib_->fn();
  // The unversioned wait is the pre-450 one: its event has no MIG instance ids.
  const bool v2 = f.nvmlEventSetWait_v2 != nullptr;
  auto wait = v2 ? f.nvmlEventSetWait_v2 : f.nvmlEventSetWait;
  const char* name = v2 ? "nvmlEventSetWait_v2" : "nvmlEventSetWait";
  NvmlCaller sys(*lib_, *system_runner_, options_.call_deadline);
  // Bounded also in reads: an event that is not an Xid of a known GPU is taken and dropped.
  for (size_t reads = 0; out.events.size() < max && reads < 4 * max; ++reads) {
    auto got = sys.CallTask<api::nvmlEventData_t>(name, [wait, s = xid_set_]() {
      api::nvmlEventData_t d{};
      d.gpuInstanceId = api::kValueNotAvailableUInt;
      d.computeInstanceId = api::kValueNotAvailableUInt;
      return std::make_pair(wait(s, &d, 0), d);
    });
    if (!got.ok()) {
      if (sys.last_code() != api::NVML_ERROR_TIMEOUT) out.status = got.status();  // TIMEOUT: nothing queued
      break;
    }
    if ((got->eventType & api::kEventTypeXidCriticalError) == 0) continue;
    XidEvent e;
    bool known = false;
    for (unsigned i = 0; i < gpus_.size(); ++i) {
      if (gpus_[i]->cache.handle == got->device) {
        e.gpu = i;
        known = true;
        break;
      }
    }
    if (!known) continue;  // only registered handles deliver events
    e.xid = got->eventData;
    if (v2 && got->gpuInstanceId != api::kValueNotAvailableUInt) e.gpu_instance = got->gpuInstanceId;
    if (v2 && got->computeInstanceId != api::kValueNotAvailableUInt) e.compute_instance = got->computeInstanceId;
    out.events.push_back(e);
  }
  return out;
}

void NvmlSource::FreeXidSet() {
  if (xid_set_ == nullptr || lib_->fn().nvmlEventSetFree == nullptr) return;
  NvmlCaller sys(*lib_, *system_runner_, options_.call_deadline);
  auto free_set = lib_->fn().nvmlEventSetFree;
  (void)sys.Call("nvmlEventSetFree", [free_set, s = xid_set_] { return free_set(s); });
  xid_set_ = nullptr;
}

}  // namespace vw::nvml
