// CPU cost of reading GPUs through the NVML binding, measured on the emulator: 8 GPUs with 100
// processes each (compute, some also graphics), memory v2, process utilisation samples.
//
// Reported per iteration: one GpuSnapshot (BM_GpuSnapshot) or one HostSnapshot of all 8 GPUs
// (BM_HostSnapshot). Includes the hand-off of every NVML call to the GPU's worker thread.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sources/nvml/nvml_source.h"

namespace {

constexpr int kGpus = 8;
constexpr int kProcessesPerGpu = 100;

std::string WriteScenario() {
  static std::string path;
  if (!path.empty()) return path;
  char dir[] = "/tmp/vw-nvml-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) std::abort();
  path = std::string(dir) + "/scenario.yaml";
  // Removed at exit, after every benchmark.
  static const std::string kDir = dir;
  std::atexit([] { std::filesystem::remove_all(kDir); });
  std::ofstream f(path);
  f << "driver_version: \"550.54.15\"\ngpus:\n";
  for (int g = 0; g < kGpus; ++g) {
    f << "  - uuid: GPU-bench-" << g << "\n    memory_total_mib: 81559\n    memory_reserved_mib: 479\n"
      << "    utilization_gpu: 80\n    bar1_total_mib: 131072\n    bar1_used_mib: 5\n    processes:\n";
    for (int p = 0; p < kProcessesPerGpu; ++p) {
      f << "      - {pid: " << 100000 + g * 1000 + p << ", used_mib: [[0, 10], [3600, 500]], sm_util: 40"
        << (p % 10 == 0 ? ", type: [compute, graphics]" : "") << "}\n";
    }
  }
  return path;
}

std::unique_ptr<vw::nvml::NvmlSource> Open() {
  setenv("VRAMWATCH_EMULATOR_SCENARIO", WriteScenario().c_str(), 1);
  vw::nvml::SourceOptions o;
  o.library_path = VW_NVML_EMULATOR;
  auto src = vw::nvml::NvmlSource::Open(o);
  if (!src.ok()) {
    std::fprintf(stderr, "%s\n", src.status().ToString().c_str());
    std::abort();
  }
  return std::move(*src);
}

void BM_GpuSnapshot(benchmark::State& state) {
  auto src = Open();
  unsigned i = 0;
  size_t processes = 0;
  for (auto _ : state) {
    vw::GpuSnapshot g = src->TakeGpuSnapshot(i++ % kGpus);
    processes += g.processes.size();
    benchmark::DoNotOptimize(g);
  }
  if (processes != static_cast<size_t>(state.iterations()) * kProcessesPerGpu)
    state.SkipWithError("wrong process count");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GpuSnapshot)->Unit(benchmark::kMicrosecond);

void BM_HostSnapshot(benchmark::State& state) {
  auto src = Open();
  for (auto _ : state) {
    vw::HostSnapshot h = src->TakeSnapshot();
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations() * kGpus);
}
BENCHMARK(BM_HostSnapshot)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
