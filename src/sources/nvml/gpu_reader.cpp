#include "sources/nvml/gpu_reader.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "sources/nvml/nvml_return_names.h"
#include "sources/nvml/nvml_source.h"

namespace vw::nvml {

namespace {

constexpr int kMaxListAttempts = 8;

bool Quiet(int code) {
  return code == api::NVML_ERROR_NOT_SUPPORTED || code == api::NVML_ERROR_FUNCTION_NOT_FOUND;
}

std::optional<unsigned> Instance(unsigned id) {
  if (id == api::kValueNotAvailableUInt) return std::nullopt;
  return id;
}

// The two-call protocol: ask for the size, allocate with some slack, call again; retry while the
// list grows between the calls. Runs entirely on the worker thread, so it owns its buffer.
template <typename Elem, typename Fn>
std::pair<api::nvmlReturn_t, std::vector<Elem>> TwoCall(Fn fn, api::nvmlDevice_t dev) {
  std::vector<Elem> buf;
  unsigned count = 0;
  api::nvmlReturn_t rc = fn(dev, &count, nullptr);
  if (rc == api::NVML_SUCCESS) return {rc, {}};
  for (int attempt = 0; attempt < kMaxListAttempts && rc == api::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    unsigned cap = count + count / 4 + 4;
    buf.assign(cap, Elem{});
    count = cap;
    rc = fn(dev, &count, buf.data());
    if (rc == api::NVML_SUCCESS) {
      buf.resize(std::min<size_t>(count, buf.size()));
      return {rc, std::move(buf)};
    }
  }
  return {rc, {}};
}

}  // namespace

Status NvmlCaller::Failed(const char* name, api::nvmlReturn_t rc) {
  last_code_ = rc;
  timed_out_ = false;
  const char* text = lib_.fn().nvmlErrorString ? lib_.fn().nvmlErrorString(rc) : nullptr;
  return NvmlStatus(name, rc, text ? text : "unknown error");
}

std::string NvmlCaller::FailureCodeName(const Status& s) const {
  if (!timed_out_) return NvmlReturnName(last_code_.value_or(0));
  return s.message().find(": not called, ") != std::string::npos ? kCodeBlocked : kCodeTimeout;
}

Status NvmlCaller::Timeout(Status s) {
  last_code_.reset();
  timed_out_ = true;
  return s;
}

Status NvmlCaller::Call(const char* name, std::function<api::nvmlReturn_t()> fn) {
  auto r = runner_.Run<api::nvmlReturn_t>(name, deadline_, std::move(fn));
  if (!r.ok()) return Timeout(r.status());
  if (*r != api::NVML_SUCCESS) return Failed(name, *r);
  last_code_ = api::NVML_SUCCESS;
  timed_out_ = false;
  return Status::Ok();
}

Result<std::string> NvmlCaller::CallString(const char* name, unsigned size,
                                           std::function<api::nvmlReturn_t(char*, unsigned)> fn) {
  return CallTask<std::string>(name, [fn, size]() {
    std::string buf(size, '\0');
    api::nvmlReturn_t rc = fn(buf.data(), size);
    buf.resize(buf.find('\0') == std::string::npos ? buf.size() : buf.find('\0'));
    return std::make_pair(rc, buf);
  });
}

bool GpuReader::Note(const Status& s) {
  if (s.ok()) return true;
  if (call_.last_timed_out()) {
    g_->responsive = false;
  } else if (call_.last_code() && Quiet(*call_.last_code())) {
    return true;
  }
  std::string function = s.message().substr(0, s.message().find(':'));
  g_->errors.push_back(s.message());
  g_->nvml_errors.push_back({function, call_.last_code().value_or(0), s.message(), call_.FailureCodeName(s)});
  if (call_.last_code() == api::NVML_ERROR_GPU_IS_LOST) g_->lost = true;
  return !Dead();
}

void GpuReader::Read(unsigned index, GpuSnapshot* g) {
  g_ = g;
  if (cache_.handle == nullptr) {
    auto fn = f_.nvmlDeviceGetHandleByIndex_v2 ? f_.nvmlDeviceGetHandleByIndex_v2 : f_.nvmlDeviceGetHandleByIndex;
    const char* name =
        f_.nvmlDeviceGetHandleByIndex_v2 ? "nvmlDeviceGetHandleByIndex_v2" : "nvmlDeviceGetHandleByIndex";
    auto h = call_.CallOut<api::nvmlDevice_t>(name, [fn, index](api::nvmlDevice_t* d) { return fn(index, d); });
    if (!h.ok()) {
      Note(h.status());
      return;
    }
    cache_.handle = *h;
  }
  ReadIdentity(index);
  if (Dead()) return;

  Memory m = ReadMemory(cache_.handle);
  g->memory_total_bytes = m.total;
  g->memory_used_bytes = m.used;
  g->memory_free_bytes = m.free;
  g->memory_reserved_bytes = m.reserved;
  if (Dead()) return;

  if (auto fn = f_.nvmlDeviceGetBAR1MemoryInfo) {
    auto r = call_.CallOut<api::nvmlBAR1Memory_t>(
        "nvmlDeviceGetBAR1MemoryInfo", [fn, d = cache_.handle](api::nvmlBAR1Memory_t* b) { return fn(d, b); });
    if (r.ok()) {
      g->bar1_total_bytes = r->bar1Total;
      g->bar1_used_bytes = r->bar1Used;
    } else if (!Note(r.status())) {
      return;
    }
  }

  ReadMig();
  if (Dead()) return;

  if (!g->mig_enabled) {
    if (auto fn = f_.nvmlDeviceGetUtilizationRates) {
      auto r = call_.CallOut<api::nvmlUtilization_t>(
          "nvmlDeviceGetUtilizationRates", [fn, d = cache_.handle](api::nvmlUtilization_t* u) { return fn(d, u); });
      if (r.ok()) {
        if (r->gpu <= 100) g->gpu_util_ratio = r->gpu / 100.0;
        if (r->memory <= 100) g->memory_util_ratio = r->memory / 100.0;
      } else if (!Note(r.status())) {
        return;
      }
    }
    ReadProcesses(cache_.handle, std::nullopt, std::nullopt);
    if (Dead()) return;
    ReadProcessUtilization();
  } else {
    // Per MIG device: works without the privileges the parent handle's aggregate list needs.
    for (unsigned i = 0; i < mig_handles_.size(); ++i) {
      ReadProcesses(mig_handles_[i], g->mig_devices[i].gpu_instance_id, g->mig_devices[i].compute_instance_id);
      if (Dead()) return;
    }
  }
  if (names_) ReadProcessNames();
}

void GpuReader::ReadIdentity(unsigned index) {
  GpuSnapshot& g = *g_;
  api::nvmlDevice_t d = cache_.handle;
  if (!cache_.identity_done) {
    bool ok = true;
    auto name_fn = f_.nvmlDeviceGetName;
    auto uuid_fn = f_.nvmlDeviceGetUUID;
    if (name_fn) {
      auto r = call_.CallString("nvmlDeviceGetName", api::kDeviceNameV2BufferSize,
                                [name_fn, d](char* b, unsigned n) { return name_fn(d, b, n); });
      if (r.ok()) {
        cache_.name = *r;
      } else {
        ok = false;
        if (!Note(r.status())) return;
      }
    }
    if (uuid_fn) {
      auto r = call_.CallString("nvmlDeviceGetUUID", api::kDeviceUuidV2BufferSize,
                                [uuid_fn, d](char* b, unsigned n) { return uuid_fn(d, b, n); });
      if (r.ok()) {
        cache_.uuid = *r;
      } else {
        ok = false;
        if (!Note(r.status())) return;
      }
    }
    if (auto fn = f_.nvmlDeviceGetPciInfo_v3) {
      auto r = call_.CallOut<api::nvmlPciInfo_t>("nvmlDeviceGetPciInfo_v3",
                                                 [fn, d](api::nvmlPciInfo_t* p) { return fn(d, p); });
      if (r.ok()) {
        cache_.pci_bus_id = std::string(r->busId, strnlen(r->busId, sizeof r->busId));
      } else {
        ok = false;
        if (!Note(r.status())) return;
      }
    }
    if (auto fn = f_.nvmlDeviceGetMinorNumber) {
      auto r = call_.CallOut<unsigned>("nvmlDeviceGetMinorNumber", [fn, d](unsigned* m) { return fn(d, m); });
      if (r.ok()) {
        cache_.minor = *r;
      } else if (!Note(r.status())) {
        return;
      }
    }
    cache_.identity_done = ok;
  }
  (void)index;
  g.uuid = cache_.uuid;
  g.name = cache_.name;
  g.pci_bus_id = cache_.pci_bus_id;
  g.minor = cache_.minor;
}

GpuReader::Memory GpuReader::ReadMemory(api::nvmlDevice_t d) {
  Memory m;
  if (auto fn = f_.nvmlDeviceGetMemoryInfo_v2) {
    auto r = call_.CallOut<api::nvmlMemory_v2_t>("nvmlDeviceGetMemoryInfo_v2", [fn, d](api::nvmlMemory_v2_t* v) {
      v->version = api::kMemoryV2Version;
      return fn(d, v);
    });
    if (r.ok()) {
      m.total = r->total;
      m.reserved = r->reserved;
      m.used = r->used;
      m.free = r->free;
      return m;
    }
    // An older driver may export _v2 but answer FUNCTION_NOT_FOUND/NOT_SUPPORTED: use v1 then.
    if (!(call_.last_code() && Quiet(*call_.last_code()))) {
      Note(r.status());
      return m;
    }
  }
  if (auto fn = f_.nvmlDeviceGetMemoryInfo) {
    auto r =
        call_.CallOut<api::nvmlMemory_t>("nvmlDeviceGetMemoryInfo", [fn, d](api::nvmlMemory_t* v) { return fn(d, v); });
    if (r.ok()) {
      // v1 counts reserved memory as used and cannot tell it apart: reserved stays missing.
      m.total = r->total;
      m.used = r->used;
      m.free = r->free;
    } else {
      Note(r.status());
    }
  }
  return m;
}

void GpuReader::ReadMig() {
  mig_handles_.clear();
  auto mode_fn = f_.nvmlDeviceGetMigMode;
  if (mode_fn == nullptr) return;
  api::nvmlDevice_t d = cache_.handle;
  auto mode = call_.CallOut<std::pair<unsigned, unsigned>>(
      "nvmlDeviceGetMigMode",
      [mode_fn, d](std::pair<unsigned, unsigned>* cp) { return mode_fn(d, &cp->first, &cp->second); });
  if (!mode.ok()) {
    Note(mode.status());
    return;
  }
  if (mode->first != api::kDeviceMigEnable) return;
  g_->mig_enabled = true;
  auto max_fn = f_.nvmlDeviceGetMaxMigDeviceCount;
  auto by_index = f_.nvmlDeviceGetMigDeviceHandleByIndex;
  if (max_fn == nullptr || by_index == nullptr) return;
  auto max =
      call_.CallOut<unsigned>("nvmlDeviceGetMaxMigDeviceCount", [max_fn, d](unsigned* n) { return max_fn(d, n); });
  if (!max.ok()) {
    Note(max.status());
    return;
  }
  for (unsigned i = 0; i < *max; ++i) {
    auto h = call_.CallOut<api::nvmlDevice_t>("nvmlDeviceGetMigDeviceHandleByIndex",
                                              [by_index, d, i](api::nvmlDevice_t* m) { return by_index(d, i, m); });
    if (!h.ok()) {
      if (call_.last_code() == api::NVML_ERROR_NOT_FOUND) continue;  // an empty slot
      if (!Note(h.status())) return;
      continue;
    }
    api::nvmlDevice_t md = *h;
    MigDeviceSnapshot mig;
    mig.index = i;
    auto id = [&](const char* name, api::nvmlDeviceGetGpuInstanceId_fn fn) -> std::optional<unsigned> {
      if (fn == nullptr) return std::nullopt;
      auto r = call_.CallOut<unsigned>(name, [fn, md](unsigned* v) { return fn(md, v); });
      if (!r.ok()) {
        Note(r.status());
        return std::nullopt;
      }
      return *r;
    };
    auto gi = id("nvmlDeviceGetGpuInstanceId", f_.nvmlDeviceGetGpuInstanceId);
    if (Dead()) return;
    auto ci = id("nvmlDeviceGetComputeInstanceId", f_.nvmlDeviceGetComputeInstanceId);
    if (Dead()) return;
    mig.gpu_instance_id = gi;  // missing stays missing: 0 is a real instance
    mig.compute_instance_id = ci;
    if (auto fn = f_.nvmlDeviceGetUUID) {
      auto r = call_.CallString("nvmlDeviceGetUUID", api::kDeviceUuidV2BufferSize,
                                [fn, md](char* b, unsigned n) { return fn(md, b, n); });
      if (r.ok()) {
        mig.uuid = *r;
      } else if (!Note(r.status())) {
        return;
      }
    }
    if (auto fn = f_.nvmlDeviceGetName) {
      auto r = call_.CallString("nvmlDeviceGetName", api::kDeviceNameV2BufferSize,
                                [fn, md](char* b, unsigned n) { return fn(md, b, n); });
      if (r.ok()) {
        mig.name = *r;
      } else if (!Note(r.status())) {
        return;
      }
    }
    Memory m = ReadMemory(md);
    if (Dead()) return;
    mig.memory_total_bytes = m.total;
    mig.memory_used_bytes = m.used;
    mig.memory_free_bytes = m.free;
    g_->mig_devices.push_back(std::move(mig));
    mig_handles_.push_back(md);
  }
}

Result<std::vector<GpuReader::RawProcess>> GpuReader::ReadList(api::nvmlDevice_t d, Kind kind) {
  const EntryPoints& f = f_;
  api::nvmlDeviceGetComputeRunningProcesses_v3_fn v3 = nullptr;
  api::nvmlDeviceGetComputeRunningProcesses_v2_fn v2 = nullptr;
  api::nvmlDeviceGetComputeRunningProcesses_fn v1 = nullptr;
  const char* names[3];
  switch (kind) {
    case Kind::kCompute:
      v3 = f.nvmlDeviceGetComputeRunningProcesses_v3;
      v2 = f.nvmlDeviceGetComputeRunningProcesses_v2;
      v1 = f.nvmlDeviceGetComputeRunningProcesses;
      names[0] = "nvmlDeviceGetComputeRunningProcesses_v3";
      names[1] = "nvmlDeviceGetComputeRunningProcesses_v2";
      names[2] = "nvmlDeviceGetComputeRunningProcesses";
      break;
    case Kind::kGraphics:
      v3 = f.nvmlDeviceGetGraphicsRunningProcesses_v3;
      v2 = f.nvmlDeviceGetGraphicsRunningProcesses_v2;
      v1 = f.nvmlDeviceGetGraphicsRunningProcesses;
      names[0] = "nvmlDeviceGetGraphicsRunningProcesses_v3";
      names[1] = "nvmlDeviceGetGraphicsRunningProcesses_v2";
      names[2] = "nvmlDeviceGetGraphicsRunningProcesses";
      break;
    case Kind::kMps:
      v3 = f.nvmlDeviceGetMPSComputeRunningProcesses_v3;
      v2 = f.nvmlDeviceGetMPSComputeRunningProcesses_v2;
      v1 = f.nvmlDeviceGetMPSComputeRunningProcesses;
      names[0] = "nvmlDeviceGetMPSComputeRunningProcesses_v3";
      names[1] = "nvmlDeviceGetMPSComputeRunningProcesses_v2";
      names[2] = "nvmlDeviceGetMPSComputeRunningProcesses";
      break;
  }
  auto convert = [](const auto& elems) {
    std::vector<RawProcess> out;
    out.reserve(elems.size());
    for (const auto& e : elems) {
      RawProcess p;
      p.pid = e.pid;
      p.used = e.usedGpuMemory;
      if constexpr (requires { e.gpuInstanceId; }) {
        p.gi = e.gpuInstanceId;
        p.ci = e.computeInstanceId;
      }
      out.push_back(p);
    }
    return out;
  };
  // _v3 -> _v2 -> v1; a version that answers FUNCTION_NOT_FOUND falls through to the next one.
  if (v3 != nullptr) {
    Result<std::vector<RawProcess>> r = Status::Internal("unset");
    if (r535_) {
      auto fn = reinterpret_cast<api::nvmlReturn_t (*)(api::nvmlDevice_t, unsigned*, api::nvmlProcessInfoR535_t*)>(v3);
      r = call_.CallTask<std::vector<RawProcess>>(names[0], [fn, d, convert]() {
        auto [rc, v] = TwoCall<api::nvmlProcessInfoR535_t>(fn, d);
        return std::make_pair(rc, convert(v));
      });
    } else {
      r = call_.CallTask<std::vector<RawProcess>>(names[0], [v3, d, convert]() {
        auto [rc, v] = TwoCall<api::nvmlProcessInfo_t>(v3, d);
        return std::make_pair(rc, convert(v));
      });
    }
    if (r.ok() || call_.last_code() != api::NVML_ERROR_FUNCTION_NOT_FOUND) return r;
  }
  if (v2 != nullptr) {
    auto r = call_.CallTask<std::vector<RawProcess>>(names[1], [v2, d, convert]() {
      auto [rc, v] = TwoCall<api::nvmlProcessInfo_v2_t>(v2, d);
      return std::make_pair(rc, convert(v));
    });
    if (r.ok() || call_.last_code() != api::NVML_ERROR_FUNCTION_NOT_FOUND) return r;
  }
  if (v1 != nullptr) {
    return call_.CallTask<std::vector<RawProcess>>(names[2], [v1, d, convert]() {
      auto [rc, v] = TwoCall<api::nvmlProcessInfo_v1_t>(v1, d);
      return std::make_pair(rc, convert(v));
    });
  }
  // A driver without any version of this list (MPS before R470) cannot show such processes.
  return std::vector<RawProcess>{};
}

void GpuReader::ReadProcesses(api::nvmlDevice_t d, std::optional<unsigned> gi, std::optional<unsigned> ci) {
  std::vector<ProcessSnapshot>& procs = g_->processes;
  // Processes already listed for an earlier device of this GPU (other MIG devices) are kept apart:
  // their memory adds up; within one device the same PID in several lists is one process.
  size_t first_of_device = procs.size();
  for (Kind kind : {Kind::kCompute, Kind::kGraphics, Kind::kMps}) {
    auto r = ReadList(d, kind);
    if (!r.ok()) {
      if (!Note(r.status())) return;
      continue;
    }
    for (const RawProcess& raw : *r) {
      auto it = std::find_if(procs.begin() + static_cast<std::ptrdiff_t>(first_of_device), procs.end(),
                             [&](const ProcessSnapshot& p) { return p.pid == raw.pid; });
      if (it == procs.end()) {
        ProcessSnapshot p;
        p.pid = raw.pid;
        // The instance NVML's list gives the process; the MIG device's own ids only when the list
        // has none (v1 lists carry no instance fields).
        const std::optional<unsigned> listed_gi = Instance(raw.gi), listed_ci = Instance(raw.ci);
        p.gpu_instance_id = listed_gi ? listed_gi : gi;
        p.compute_instance_id = listed_ci ? listed_ci : (p.gpu_instance_id == gi ? ci : std::nullopt);
        procs.push_back(std::move(p));
        it = procs.end() - 1;
      }
      if (kind == Kind::kCompute) it->compute = true;
      if (kind == Kind::kGraphics) it->graphics = true;
      if (kind == Kind::kMps) it->mps = true;
      if (raw.used != api::kValueNotAvailableULL) {
        it->used_bytes = std::max(it->used_bytes.value_or(0), static_cast<uint64_t>(raw.used));
      }
    }
  }
  // A PID on several MIG devices of this GPU: one entry, memory summed across devices, on no one
  // GPU instance (or compute instance) when they differ: that sum is not one instance's.
  for (size_t i = first_of_device; i < procs.size();) {
    auto prev = std::find_if(procs.begin(), procs.begin() + static_cast<std::ptrdiff_t>(first_of_device),
                             [&](const ProcessSnapshot& p) { return p.pid == procs[i].pid; });
    if (prev == procs.begin() + static_cast<std::ptrdiff_t>(first_of_device)) {
      ++i;
      continue;
    }
    // N/A on one device: the sum is not known (a part of it is not the process's memory).
    prev->used_bytes = prev->used_bytes && procs[i].used_bytes
                           ? std::optional<uint64_t>(*prev->used_bytes + *procs[i].used_bytes)
                           : std::nullopt;
    prev->compute |= procs[i].compute;
    prev->graphics |= procs[i].graphics;
    prev->mps |= procs[i].mps;
    if (prev->gpu_instance_id != procs[i].gpu_instance_id) {
      prev->gpu_instance_id.reset();
      prev->compute_instance_id.reset();
    } else if (prev->compute_instance_id != procs[i].compute_instance_id) {
      prev->compute_instance_id.reset();
    }
    procs.erase(procs.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void GpuReader::ReadProcessUtilization() {
  auto fn = f_.nvmlDeviceGetProcessUtilization;
  if (fn == nullptr) return;
  api::nvmlDevice_t d = cache_.handle;
  unsigned long long last = cache_.last_sample_us;
  if (last == 0) {
    // First read: the driver keeps a buffer of past samples and returns all of them for 0, so a
    // process idle now would show the SM use of its start-up (seen on a real driver). Ask only for
    // the last second; sample times are the CPU's wall clock in microseconds.
    auto now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    last = static_cast<unsigned long long>(std::max<int64_t>(0, now_us - kFirstSampleLookbackUs));
  }
  auto r = call_.CallTask<std::vector<api::nvmlProcessUtilizationSample_t>>(
      "nvmlDeviceGetProcessUtilization", [fn, d, last]() {
        std::vector<api::nvmlProcessUtilizationSample_t> buf;
        unsigned count = 0;
        api::nvmlReturn_t rc = fn(d, nullptr, &count, last);
        for (int attempt = 0; attempt < kMaxListAttempts && rc == api::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
          unsigned cap = count + count / 4 + 4;
          buf.assign(cap, {});
          count = cap;
          rc = fn(d, buf.data(), &count, last);
          if (rc == api::NVML_SUCCESS) buf.resize(std::min<size_t>(count, buf.size()));
        }
        // NOT_FOUND: no sample newer than `last`, i.e. no process used the SMs since then.
        if (rc == api::NVML_ERROR_NOT_FOUND) return std::make_pair(api::NVML_SUCCESS, decltype(buf){});
        if (rc != api::NVML_SUCCESS) buf.clear();
        return std::make_pair(rc, std::move(buf));
      });
  if (!r.ok()) {
    Note(r.status());
    return;
  }
  // Keep the newest plausible sample per listed PID (NVML has returned >100 % and stale PIDs).
  std::map<unsigned, const api::nvmlProcessUtilizationSample_t*> newest;
  unsigned long long max_ts = last;
  for (const auto& s : *r) {
    if (s.timeStamp <= last || s.smUtil > 100) continue;
    max_ts = std::max(max_ts, s.timeStamp);
    auto& slot = newest[s.pid];
    if (slot == nullptr || s.timeStamp > slot->timeStamp) slot = &s;
  }
  cache_.last_sample_us = max_ts;
  // The driver reports only processes with non-zero use in the period: the others used 0 %.
  for (auto& p : g_->processes) {
    auto it = newest.find(static_cast<unsigned>(p.pid));
    p.sm_util_ratio = it == newest.end() ? 0.0 : it->second->smUtil / 100.0;
  }
}

void GpuReader::ReadProcessNames() {
  auto fn = f_.nvmlSystemGetProcessName;
  if (fn == nullptr) return;
  for (auto& p : g_->processes) {
    unsigned pid = static_cast<unsigned>(p.pid);
    auto r =
        call_.CallString("nvmlSystemGetProcessName", 1024, [fn, pid](char* b, unsigned n) { return fn(pid, b, n); });
    if (r.ok()) {
      p.nvml_name = *r;
    } else if (call_.last_timed_out()) {
      Note(r.status());
      return;
    }
  }
}

}  // namespace vw::nvml
