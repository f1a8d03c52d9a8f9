// NvmlLibrary: dlopen of libnvidia-ml.so.1 and the table of entry points it exports.
//
// Every symbol of nvml_entry_points.h is looked up with dlsym; absent ones stay nullptr (an older
// driver). `Preferred(family)` names the newest bound version of a call (the fallback chain).
// The library handle is closed on destruction unless Leak() was called (a call may still be
// running inside the library on an abandoned thread; unmapping it would crash that thread).
//
// Threading: immutable after Open(); the pointers may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sources/nvml/nvml_types.h"

namespace vw::nvml {

namespace api {
#define VW_NVML_ENTRY(ret, name, family, version, params) using name##_fn = ret(*) params;
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
}  // namespace api

// One row of the table, for code that walks it (tests, diagnostics).
struct EntryPointInfo {
  const char* symbol;  // "nvmlDeviceGetMemoryInfo_v2"
  const char* family;  // "MemoryInfo"
  int version;         // 2; 1 = unversioned export
};
const std::vector<EntryPointInfo>& AllEntryPoints();

// The bound function pointers, one member per table row, named like the C symbol.
struct EntryPoints {
#define VW_NVML_ENTRY(ret, name, family, version, params) api::name##_fn name = nullptr;
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
};

class NvmlLibrary {
 public:
  // `path`: a file path (contains '/') or a soname searched by the dynamic loader.
  // Fails with kUnavailable naming the path and dlerror() text when the library cannot be loaded,
  // or when it lacks the minimum set (an init, a count, a handle-by-index, memory info, nvmlShutdown,
  // nvmlErrorString).
  static Result<std::unique_ptr<NvmlLibrary>> Open(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const EntryPoints& fn() const { return fn_; }
  const std::string& path() const { return path_; }
  bool Has(std::string_view symbol) const;
  // Newest bound symbol of `family` ("nvmlDeviceGetMemoryInfo_v2"), or "" when none is bound.
  std::string Preferred(std::string_view family) const;
  // Keep the library mapped for the life of the process.
  void Leak() { leak_ = true; }

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  bool leak_ = false;
  std::string path_;
  EntryPoints fn_;
  std::vector<std::string> bound_;
};

}  // namespace vw::nvml
