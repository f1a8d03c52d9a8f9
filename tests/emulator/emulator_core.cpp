#include "emulator_core.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace vw::emulator {

namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> SplitList(const char* s) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = s; *p; ++p) {
    if (*p == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool Matches(const std::string& spec, const char* function) {
  if (spec == "*" || spec == function) return true;
  size_t n = spec.size();
  return std::strncmp(function, spec.c_str(), n) == 0 && std::strncmp(function + n, "_v", 2) == 0;
}

void Trace(State& s, const char* function) {
  if (s.trace_file.empty()) return;
  if (FILE* f = std::fopen(s.trace_file.c_str(), "a")) {
    std::fprintf(f, "%s\n", function);
    std::fclose(f);
  }
}

}  // namespace

State& GetState() {
  static State* s = [] {
    auto* st = new State();  // never destroyed: see the header
#if defined(__SANITIZE_ADDRESS__)
    // Kept on purpose (and unreachable once the library is unloaded): not a leak to report.
    __lsan_ignore_object(st);
#endif
    if (const char* v = std::getenv("VRAMWATCH_EMULATOR_TRACE")) st->trace_file = v;
    return st;
  }();
  return *s;
}

const std::vector<std::string>& KnownSymbols() {
  static const std::vector<std::string> k = {
#define VW_NVML_ENTRY(ret, name, family, version, params) #name,
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
  };
  return k;
}

const std::vector<std::string>& HiddenSymbols() {
  static const std::vector<std::string> h = SplitList(VW_EMU_HIDDEN_SYMBOLS);
  return h;
}

const char* VariantName() {
  return VW_EMU_VARIANT;
}

bool R535Layout() {
  return VW_EMU_R535_LAYOUT != 0;
}

const char* ErrorText(api::nvmlReturn_t code) {
  switch (code) {
    case api::NVML_SUCCESS: return "Success";
    case api::NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case api::NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case api::NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case api::NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case api::NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case api::NVML_ERROR_NOT_FOUND: return "Not Found";
    case api::NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case api::NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case api::NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case api::NVML_ERROR_TIMEOUT: return "Timeout";
    case api::NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case api::NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case api::NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case api::NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case api::NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case api::NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case api::NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
    case api::NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    case api::NVML_ERROR_IN_USE: return "In use by another client";
    case api::NVML_ERROR_MEMORY: return "Insufficient Memory";
    case api::NVML_ERROR_NO_DATA: return "No data";
    case api::NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case api::NVML_ERROR_DEPRECATED: return "Deprecated";
    case api::NVML_ERROR_NOT_READY: return "Not ready";
    case api::NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case api::NVML_ERROR_INVALID_STATE: return "Invalid state";
    default: return "Unknown Error";
  }
}

api::nvmlReturn_t DoInit(const char* function) {
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.refcount > 0) {
    Trace(s, function);
    ++s.refcount;
    return api::NVML_SUCCESS;
  }
  const char* path = std::getenv("VRAMWATCH_EMULATOR_SCENARIO");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "NVML emulator (%s): VRAMWATCH_EMULATOR_SCENARIO is not set; it must name a scenario file\n",
                 VariantName());
    return api::NVML_ERROR_UNKNOWN;
  }
  Scenario sc;
  std::string error;
  if (!LoadScenario(path, KnownSymbols(), &sc, &error)) {
    std::fprintf(stderr, "NVML emulator: bad scenario: %s\n", error.c_str());
    return api::NVML_ERROR_UNKNOWN;
  }
  // hide_symbols must describe this build: symbols cannot be removed from a loaded library, so each
  // set of hidden symbols is its own build of the emulator.
  std::vector<std::string> want = sc.hide_symbols, have = HiddenSymbols();
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  if (want != have) {
    auto join = [](const std::vector<std::string>& v) {
      std::string o;
      for (const auto& x : v) o += (o.empty() ? "" : ", ") + x;
      return o.empty() ? std::string("(none)") : o;
    };
    std::fprintf(stderr,
                 "NVML emulator: scenario %s: hide_symbols [%s] does not match this emulator build '%s', which hides "
                 "[%s]; load the emulator variant built for that set\n",
                 path, join(want).c_str(), VariantName(), join(have).c_str());
    return api::NVML_ERROR_UNKNOWN;
  }
  double scale = 1;
  if (const char* v = std::getenv("VRAMWATCH_EMULATOR_TIME_SCALE"); v && *v) {
    char* end = nullptr;
    scale = std::strtod(v, &end);
    if (*end != '\0' || !(scale > 0)) {
      std::fprintf(stderr, "NVML emulator: VRAMWATCH_EMULATOR_TIME_SCALE='%s' is not a positive number\n", v);
      return api::NVML_ERROR_UNKNOWN;
    }
  }
  s.scale = scale;
  const char* clock = std::getenv("VRAMWATCH_EMULATOR_CLOCK_FILE");
  s.clock_file = clock ? clock : "";
  if (!s.clock_started) {
    s.clock_started = true;
    s.t0_steady = SteadySeconds();
    s.base_epoch_us =
        std::chrono::duration<double, std::micro>(std::chrono::system_clock::now().time_since_epoch()).count();
    // Scenario time at this instant, so that EpochMicros(t) follows the wall clock (a test that
    // starts its clock file at 100 s gets samples stamped "now", not 100 s in the future).
    if (!s.clock_file.empty()) {
      std::ifstream f(s.clock_file);
      double v = 0;
      if (f >> v && std::isfinite(v)) s.t_at_start = v;
    }
  }
  s.scenario = std::move(sc);
  ++s.generation;
  while (s.gpu_handles.size() < s.scenario.gpus.size()) {
    s.gpu_handles.push_back(new api::nvmlDevice_st{static_cast<unsigned>(s.gpu_handles.size()), -1});
  }
  s.mig_handles.resize(std::max(s.mig_handles.size(), s.scenario.gpus.size()));
  for (size_t g = 0; g < s.scenario.gpus.size(); ++g) {
    auto& v = s.mig_handles[g];
    while (v.size() < s.scenario.gpus[g].mig_devices.size()) {
      v.push_back(new api::nvmlDevice_st{static_cast<unsigned>(g), static_cast<int>(v.size())});
    }
  }
  s.list_calls.assign(s.scenario.gpus.size(), std::vector<unsigned>(3, 0));
  s.loaded = true;
  s.refcount = 1;
  lock.unlock();
  // Scenario-wide errors and hangs apply to the init call itself (e.g. a driver that hangs in init).
  Call c(function, nullptr, false);
  if (c.rc != api::NVML_SUCCESS) {
    s.loaded = false;
    s.refcount = 0;
  }
  return c.rc;
}

api::nvmlReturn_t DoShutdown() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Trace(s, "nvmlShutdown");
  // Extra shutdowns are not an error (NVML keeps them harmless for old callers).
  if (s.refcount > 0 && --s.refcount == 0) s.loaded = false;
  return api::NVML_SUCCESS;
}

bool Call::ReadTime(double* out) {
  if (!state.clock_file.empty()) {
    std::ifstream f(state.clock_file);
    std::string text;
    if (!f || !std::getline(f, text)) {
      std::fprintf(stderr, "NVML emulator: cannot read the clock file %s\n", state.clock_file.c_str());
      return false;
    }
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    while (end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')) ++end;
    if (end == text.c_str() || (end && *end != '\0') || !std::isfinite(v)) {
      std::fprintf(stderr, "NVML emulator: clock file %s holds '%s', not a number of seconds\n",
                   state.clock_file.c_str(), text.c_str());
      return false;
    }
    *out = v;
    return true;
  }
  *out = state.clock_started ? (SteadySeconds() - state.t0_steady) * state.scale : 0;
  return true;
}

Call::Call(const char* function, api::nvmlDevice_t device, bool needs_device) : state(GetState()), lock(state.mu) {
  Trace(state, function);
  if (!state.loaded) {
    rc = api::NVML_ERROR_UNINITIALIZED;
    return;
  }
  if (needs_device) {
    bool valid = false;
    if (device != nullptr) {
      for (auto* h : state.gpu_handles) valid = valid || h == device;
      for (auto& v : state.mig_handles) {
        for (auto* h : v) valid = valid || h == device;
      }
    }
    if (!valid || device->gpu >= state.scenario.gpus.size()) {
      rc = api::NVML_ERROR_INVALID_ARGUMENT;
      return;
    }
    gpu_index = device->gpu;
    gpu = &state.scenario.gpus[gpu_index];
    mig_index = device->mig;
    if (mig_index >= 0) {
      if (static_cast<size_t>(mig_index) >= gpu->mig_devices.size()) {
        rc = api::NVML_ERROR_INVALID_ARGUMENT;
        return;
      }
      mig = &gpu->mig_devices[mig_index];
    }
  }
  if (!ReadTime(&t)) {
    rc = api::NVML_ERROR_UNKNOWN;
    return;
  }
  // Hangs: a call made inside [at_s, at_s + seconds) blocks until scenario time reaches the end.
  auto find_hang = [&](double now) -> const HangSpec* {
    for (const std::vector<HangSpec>* list :
         std::initializer_list<const std::vector<HangSpec>*>{&state.scenario.hangs, gpu ? &gpu->hangs : nullptr}) {
      if (list == nullptr) continue;
      for (const auto& h : *list) {
        if (Matches(h.function, function) && now >= h.at_s && now < h.at_s + h.seconds) return &h;
      }
    }
    return nullptr;
  };
  if (const HangSpec* h = find_hang(t)) {
    double end = h->at_s + h->seconds;
    double scale = state.scale;
    bool clocked = !state.clock_file.empty();
    unsigned generation = state.generation;
    lock.unlock();
    if (!clocked) {
      std::this_thread::sleep_for(std::chrono::duration<double>((end - t) / scale));
    }
    lock.lock();
    while (clocked) {
      if (!ReadTime(&t)) {
        rc = api::NVML_ERROR_UNKNOWN;
        return;
      }
      if (t >= end) break;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      lock.lock();
    }
    if (!state.loaded || generation != state.generation) {
      rc = api::NVML_ERROR_UNINITIALIZED;
      return;
    }
    if (!ReadTime(&t)) {
      rc = api::NVML_ERROR_UNKNOWN;
      return;
    }
  }
  for (const std::vector<ErrorSpec>* list :
       std::initializer_list<const std::vector<ErrorSpec>*>{&state.scenario.errors, gpu ? &gpu->errors : nullptr}) {
    if (list == nullptr) continue;
    for (const auto& e : *list) {
      if (Matches(e.function, function) && t >= e.from_s && t < e.to_s) {
        rc = static_cast<api::nvmlReturn_t>(e.code);
        return;
      }
    }
  }
}

bool ProcessAlive(const ProcessSpec& p, double t) {
  return t >= p.start_s && (!p.end_s || t < *p.end_s);
}

bool ProcessUsedBytes(const ProcessSpec& p, double t, unsigned long long* bytes) {
  if (p.used_not_available) return false;
  double mib = std::max(0.0, p.used_mib.At(t));
  *bytes = static_cast<unsigned long long>(std::llround(mib * kMiB));
  return true;
}

std::vector<ListedProcess> Listed(const GpuSpec& gpu, const MigSpec* mig, double t, unsigned kind_bit) {
  std::vector<ListedProcess> out;
  auto add = [&](const std::vector<ProcessSpec>& procs, unsigned gi, unsigned ci) {
    for (const auto& p : procs) {
      if (!ProcessAlive(p, t)) continue;
      if (kind_bit != 0 && (p.types & kind_bit) == 0) continue;
      out.push_back({&p, gi, ci});
    }
  };
  if (mig != nullptr) {
    add(mig->processes, mig->gpu_instance_id, mig->compute_instance_id);
  } else if (!gpu.mig_devices.empty()) {
    for (const auto& m : gpu.mig_devices) add(m.processes, m.gpu_instance_id, m.compute_instance_id);
  } else {
    add(gpu.processes, api::kValueNotAvailableUInt, api::kValueNotAvailableUInt);
  }
  return out;
}

namespace {

unsigned long long Mib(double mib) {
  return static_cast<unsigned long long>(std::llround(std::max(0.0, mib) * kMiB));
}

unsigned long long SumProcesses(const std::vector<ProcessSpec>& procs, double t) {
  unsigned long long sum = 0;
  for (const auto& p : procs) {
    unsigned long long b = 0;
    if (ProcessAlive(p, t) && ProcessUsedBytes(p, t, &b)) sum += b;
  }
  return sum;
}

unsigned long long MigUsed(const MigSpec& m, double t) {
  unsigned long long used = SumProcesses(m.processes, t) + Mib(m.unattributed_mib.At(t));
  return std::min(used, Mib(m.memory_total_mib));
}

}  // namespace

MemoryNow MemoryAt(const GpuSpec& gpu, const MigSpec* mig, double t) {
  MemoryNow m;
  if (mig != nullptr) {
    // A GPU instance's memory is shared by its compute instances: each of them reports the
    // whole instance's use.
    m.total = Mib(mig->memory_total_mib);
    m.reserved = 0;
    m.used = 0;
    for (const auto& d : gpu.mig_devices) {
      if (d.gpu_instance_id == mig->gpu_instance_id) m.used += MigUsed(d, t);
    }
    m.used = std::min(m.used, m.total);
  } else {
    m.total = Mib(gpu.memory_total_mib);
    m.reserved = Mib(gpu.memory_reserved_mib);
    unsigned long long used = Mib(gpu.unattributed_mib.At(t));
    if (gpu.mig_devices.empty()) {
      used += SumProcesses(gpu.processes, t);
    } else {
      for (const auto& d : gpu.mig_devices) used += MigUsed(d, t);
    }
    m.used = std::min(used, m.total - m.reserved);
  }
  m.free = m.total - m.reserved - m.used;
  return m;
}

api::nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned len) {
  if (buf == nullptr) return api::NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > len) return api::NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return api::NVML_SUCCESS;
}

}  // namespace vw::emulator
