// /metrics rendering cost: an emulated 8-GPU node with 128 processes (about 530 series).
#include <benchmark/benchmark.h>

#include <string>

#include "outputs/daemon_state_testing.h"
#include "outputs/prometheus_text.h"

namespace {

void BM_RenderPrometheus8Gpus128Processes(benchmark::State& st) {
  vw::outputs::DaemonState s = vw::outputs::testing::MakeDaemonState(8, 16);
  std::string out;
  size_t series = 0;
  for (auto _ : st) {
    out.clear();
    vw::outputs::RenderPrometheusTo(s, s.t, out);
    benchmark::DoNotOptimize(out.data());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if ((i == 0 || out[i - 1] == '\n') && out[i] != '#') ++series;
  }
  st.counters["series"] = static_cast<double>(series);
  st.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RenderPrometheus8Gpus128Processes)->Unit(benchmark::kMicrosecond);

}  // namespace
