// LeakEngine cost: Add() per sample (amortised, bucket closes and merges included) and Assess()
// on a 12-hour series sampled every second (the heaviest window set; goal ≤ 1 ms).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "detection/leak_engine.h"

namespace {

constexpr double kMiB = 1048576.0;

double Sample(double t, std::mt19937_64& rng, bool oscillating) {
  std::normal_distribution<double> noise(0, 8);
  double v = 20000 + 150 * t / 3600 + noise(rng);  // a 150 MiB/h leak
  if (oscillating) v += 3000 * (1 + std::sin(2 * M_PI * t / 1800));
  return std::round(v) * kMiB;
}

void BM_Add(benchmark::State& state) {
  vw::detection::LeakEngine engine;
  std::mt19937_64 rng(1);
  std::vector<double> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = Sample(static_cast<double>(i), rng, false);
  double t = 0;
  size_t i = 0;
  for (auto _ : state) {
    engine.Add(t, values[i++ & 4095]);
    t += 0.1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Add);

void BM_Assess12h(benchmark::State& state) {
  vw::detection::LeakEngine engine;
  engine.SetCapacity(80 * 1024 * kMiB);
  std::mt19937_64 rng(2);
  const bool oscillating = state.range(0) != 0;
  for (int i = 0; i <= 12 * 3600; ++i) engine.Add(i, Sample(i, rng, oscillating));
  for (auto _ : state) benchmark::DoNotOptimize(engine.Assess());
  state.SetLabel(oscillating ? "leak under an oscillating load (envelope tests run)" : "steady leak");
}
BENCHMARK(BM_Assess12h)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
