#include "sources/nvml/nvml_loader.h"

#include <dlfcn.h>

#include <algorithm>

namespace vw::nvml {

const std::vector<EntryPointInfo>& AllEntryPoints() {
  static const std::vector<EntryPointInfo> kAll = {
#define VW_NVML_ENTRY(ret, name, family, version, params) {#name, #family, version},
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY
  };
  return kAll;
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Status::Unavailable("cannot load NVML library '" + path + "': " + (err ? err : "unknown error"));
  }
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = handle;
  lib->path_ = path;
#define VW_NVML_ENTRY(ret, name, family, version, params)                 \
  lib->fn_.name = reinterpret_cast<api::name##_fn>(dlsym(handle, #name)); \
  if (lib->fn_.name != nullptr) lib->bound_.emplace_back(#name);
#include "sources/nvml/nvml_entry_points.h"
#undef VW_NVML_ENTRY

  const EntryPoints& f = lib->fn_;
  std::vector<std::string> missing;
  if (!f.nvmlInit_v2 && !f.nvmlInit) missing.emplace_back("nvmlInit_v2/nvmlInit");
  if (!f.nvmlShutdown) missing.emplace_back("nvmlShutdown");
  if (!f.nvmlErrorString) missing.emplace_back("nvmlErrorString");
  if (!f.nvmlDeviceGetCount_v2 && !f.nvmlDeviceGetCount)
    missing.emplace_back("nvmlDeviceGetCount_v2/nvmlDeviceGetCount");
  if (!f.nvmlDeviceGetHandleByIndex_v2 && !f.nvmlDeviceGetHandleByIndex) {
    missing.emplace_back("nvmlDeviceGetHandleByIndex_v2/nvmlDeviceGetHandleByIndex");
  }
  if (!f.nvmlDeviceGetMemoryInfo_v2 && !f.nvmlDeviceGetMemoryInfo) {
    missing.emplace_back("nvmlDeviceGetMemoryInfo_v2/nvmlDeviceGetMemoryInfo");
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return Status::Unavailable("'" + path + "' is not a usable NVML library: missing " + list);
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (handle_ != nullptr && !leak_) dlclose(handle_);
}

bool NvmlLibrary::Has(std::string_view symbol) const {
  return std::find(bound_.begin(), bound_.end(), symbol) != bound_.end();
}

std::string NvmlLibrary::Preferred(std::string_view family) const {
  // Table rows of one family are listed newest first.
  for (const auto& e : AllEntryPoints()) {
    if (family == e.family && Has(e.symbol)) return e.symbol;
  }
  return "";
}

}  // namespace vw::nvml
