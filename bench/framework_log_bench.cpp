// framework_log_bench: ParseFrameworkLog() on logs of 10,000 steps in each style it reads, and
// on a training log where one line in ten prints memory. Reports lines per second (`items`).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <functional>
#include <string>

#include "sources/trace/framework_log.h"

namespace {

constexpr int kSteps = 10000;

// A log of kSteps steps; `step(i)` writes step i's lines, each ending in '\n'.
std::string Log(const std::function<std::string(int)>& step) {
  std::string text;
  for (int i = 0; i < kSteps; ++i) text += step(i);
  return text;
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

void Parse(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    auto log = vw::trace::ParseFrameworkLog(text, "bench.log");
    if (!log.ok() || log->steps.empty()) {
      state.SkipWithError("the log did not parse");
      return;
    }
    benchmark::DoNotOptimize(log->steps.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * Lines(text)));
}

// "Mem memory (MB) | allocated: 20.4 | max allocated: 21.8 | reserved: 26.0 | max reserved: 26.0"
void BM_WordsAndValues(benchmark::State& state) {
  static const std::string text = Log([](int i) {
    return fmt::format(
        "Mem memory (MB) | allocated: {:.1f} | max allocated: {:.1f} | reserved: {:.1f} | "
        "max reserved: {:.1f}\n",
        20.4 + i * 0.01, 21.8 + i * 0.01, 26.0 + (i / 7) * 2.0, 26.0 + (i / 7) * 2.0);
  });
  Parse(state, text);
}
BENCHMARK(BM_WordsAndValues);

// "Memory usage (cuda): alloc cur 1.9GB alloc peak 10.7GB reserved cur 11.3GB reserved peak 11.3GB"
void BM_CurAndPeak(benchmark::State& state) {
  static const std::string text = Log([](int i) {
    return fmt::format(
        "Memory usage (cuda): alloc cur {:.1f}GB alloc peak {:.1f}GB reserved cur {:.1f}GB "
        "reserved peak {:.1f}GB\n",
        1.9 + (i % 5) * 0.1, 10.7, 11.3 + (i / 100) * 0.1, 11.3 + (i / 100) * 0.1);
  });
  Parse(state, text);
}
BENCHMARK(BM_CurAndPeak);

// One call per line on two devices, with the driver's figure and the peaks that are not read.
void BM_CallsPerLine(benchmark::State& state) {
  static const std::string text = Log([](int i) {
    std::string s;
    for (int d = 0; d < 2; ++d) {
      s += fmt::format(
          "torch.cuda.max_memory_reserved({0}) 759169024\n"
          "torch.cuda.max_memory_allocated({0}) 685223936\n"
          "torch.cuda.memory_allocated({0}) {1}\n"
          "torch.cuda.memory_reserved({0}) 759169024\n"
          "nvidia-smi GPU-{0} memory (MB) {2}\n",
          d, 318986240 + 4096 * i, 2796 + 2 * i);
    }
    return s + fmt::format("Iter {} Time 0.575\n", i);
  });
  Parse(state, text);
}
BENCHMARK(BM_CallsPerLine);

// A training log: nine lines of loss and timing for each line that prints memory.
void BM_MostlyOtherLines(benchmark::State& state) {
  static const std::string text = Log([](int i) {
    std::string s;
    for (int k = 0; k < 9; ++k) {
      s += fmt::format("epoch 3 step {} batch {} loss 0.{:04d} lr 3.0e-4 grad_norm 1.25 tokens/s 48211\n", i, k,
                       (i * 7 + k) % 10000);
    }
    return s + fmt::format("step {} allocated=1.{:02d} GiB reserved=3.50 GiB\n", i, i % 100);
  });
  Parse(state, text);
}
BENCHMARK(BM_MostlyOtherLines);

// Lines near the 64 KiB a line is read to, each repeating one thing thousands of times: a device
// name (arg 0), a value pair after a rank (1), the word "memory" with no digit after it (2). Each
// was quadratic in the line's length; `bytes` per second should be of the order of the short-line
// logs' above, not hundreds of times lower.
void BM_LongLines(benchmark::State& state) {
  static const std::string pieces[] = {"cuda:0 ", "allocated: 1 GiB reserved: 2 GiB ", "memory "};
  static const std::string heads[] = {"", "rank 0 | ", "nvidia-smi allocated: 1 GiB "};
  static const std::string tails[] = {"allocated: 1 GiB reserved: 2 GiB\n", "\n", "\n"};
  const auto shape = static_cast<size_t>(state.range(0));
  std::string text;
  for (int line = 0; line < 16; ++line) {
    std::string l = heads[shape];
    while (l.size() < 60000) l += pieces[shape];
    text += l + tails[shape];
  }
  for (auto _ : state) {
    auto log = vw::trace::ParseFrameworkLog(text, "bench.log");
    benchmark::DoNotOptimize(log.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_LongLines)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
