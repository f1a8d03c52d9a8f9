// Test fixtures: PyTorch memory logs as `analyze` reads them (FrameworkReport with its steps),
// judged by the real framework split, for the chart, report and browser tests (header-only; not
// part of the library). Sizes in bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sample.h"
#include "core/units.h"
#include "detection/framework_split.h"
#include "outputs/framework_report.h"

namespace vw::outputs::testing {

// A report of `steps` judged by SplitFrameworkLog, as AnalyzeFrameworkLog builds it.
inline FrameworkReport JudgedLog(const std::string& source, std::vector<FrameworkStep> steps) {
  FrameworkReport r;
  r.source = source;
  r.lines = steps.empty() ? 0 : steps.back().line;
  r.devices = detection::SplitFrameworkLog(steps);
  r.steps = std::move(steps);
  return r;
}

// Device 0 of a training log that restarts at its 16th step: before it, 15 steps holding 2 GiB
// allocated in 13 GiB reserved; then the application keeps 50 MiB of tensors a step (reserved one
// GiB above allocated) for 40 steps. One line a step; no driver figure.
inline FrameworkReport RestartThenTensorLeak(const std::string& source = "logs/train.log") {
  std::vector<FrameworkStep> steps;
  size_t line = 1;
  for (int i = 0; i < 15; ++i) {
    steps.push_back(
        {line++, 0, static_cast<uint64_t>(2 * kGiB + (i % 3) * kMiB), static_cast<uint64_t>(13 * kGiB), std::nullopt});
  }
  for (int j = 0; j < 40; ++j) {
    const auto allocated = static_cast<uint64_t>(512 * kMiB + j * 50 * kMiB + (j % 4) * kMiB);
    steps.push_back({line++, 0, allocated, static_cast<uint64_t>(allocated + kGiB), std::nullopt});
  }
  return JudgedLog(source, std::move(steps));
}

// Devices 0 and 1 holding still for 30 steps, with the driver's figure: nothing grows.
inline FrameworkReport TwoDevicesFlat(const std::string& source = "flat.log") {
  std::vector<FrameworkStep> steps;
  size_t line = 1;
  for (int i = 0; i < 30; ++i) {
    for (int dev = 0; dev < 2; ++dev) {
      steps.push_back({line++, dev, static_cast<uint64_t>((3 + dev) * kGiB + (i % 5) * kMiB),
                       static_cast<uint64_t>((5 + dev) * kGiB), static_cast<uint64_t>((6 + dev) * kGiB)});
    }
  }
  return JudgedLog(source, std::move(steps));
}

}  // namespace vw::outputs::testing
