// Prints what the NVML binding sees as JSON, so scripts can compare it with other NVML clients
// (pynvml, gpustat, nvitop) on the same emulated scenario.
//
// Usage: vw_nvml_snapshot_json [LIBRARY]   (default: --nvml-lib resolution: $VRAMWATCH_NVML_LIB, soname)
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sources/nvml/nvml_source.h"

namespace {

template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  vw::nvml::SourceOptions options;
  options.library_path = vw::nvml::ResolveLibraryPath(argc > 1 ? argv[1] : "");
  auto source = vw::nvml::NvmlSource::Open(options);
  if (!source.ok()) {
    std::fprintf(stderr, "%s\n", source.status().ToString().c_str());
    return 3;
  }
  vw::HostSnapshot h = (*source)->TakeSnapshot();
  nlohmann::json out = {{"driver_version", h.driver_version},
                        {"cuda_driver_version", Opt(h.cuda_driver_version)},
                        {"bound_functions", (*source)->BoundFunctions()},
                        {"gpus", nlohmann::json::array()}};
  for (const auto& g : h.gpus) {
    nlohmann::json procs = nlohmann::json::array();
    for (const auto& p : g.processes) {
      procs.push_back({{"pid", p.pid},
                       {"used_bytes", Opt(p.used_bytes)},
                       {"compute", p.compute},
                       {"graphics", p.graphics},
                       {"mps", p.mps},
                       {"sm_util_ratio", Opt(p.sm_util_ratio)},
                       {"gpu_instance_id", Opt(p.gpu_instance_id)}});
    }
    nlohmann::json migs = nlohmann::json::array();
    for (const auto& m : g.mig_devices) {
      migs.push_back({{"uuid", m.uuid},
                      {"gpu_instance_id", Opt(m.gpu_instance_id)},
                      {"compute_instance_id", Opt(m.compute_instance_id)},
                      {"memory_total_bytes", Opt(m.memory_total_bytes)},
                      {"memory_used_bytes", Opt(m.memory_used_bytes)}});
    }
    out["gpus"].push_back({{"index", g.index},
                           {"uuid", g.uuid},
                           {"name", g.name},
                           {"pci_bus_id", g.pci_bus_id},
                           {"minor", Opt(g.minor)},
                           {"memory_total_bytes", Opt(g.memory_total_bytes)},
                           {"memory_used_bytes", Opt(g.memory_used_bytes)},
                           {"memory_free_bytes", Opt(g.memory_free_bytes)},
                           {"memory_reserved_bytes", Opt(g.memory_reserved_bytes)},
                           {"gpu_util_ratio", Opt(g.gpu_util_ratio)},
                           {"mig_enabled", g.mig_enabled},
                           {"mig_devices", migs},
                           {"lost", g.lost},
                           {"responsive", g.responsive},
                           {"errors", g.errors},
                           {"processes", procs}});
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
