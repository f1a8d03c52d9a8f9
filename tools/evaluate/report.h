// Report: the side-by-side table of vramwatch and the Prometheus baselines over an evaluated
// corpus (recall per leak-rate band at the end and within 30 m / 1 h / 2 h of the leak start, the
// two goal lines, detection delay, false alarms per 1000 healthy GPU-hours and per shape, rate
// error and interval coverage). What every row means is in tools/evaluate/README.md.
//
// Units: rates in the table are MiB/h, delays human durations. Threading: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "evaluation.h"

namespace vw::evaluate {

struct ReportInfo {
  uint64_t seed = 0;
  int threads = 1;
  double wall_seconds = 0;          // whole run (generation + evaluation)
  double cpu_seconds = 0;           // CPU time of the whole run, all threads (user + system)
  std::vector<std::string> shapes;  // the shapes evaluated, when not all of them
};

// Leak-rate bands (MiB/h): [0,40), [40,100), [100,500), [500,2000), [2000,inf).
inline constexpr double kBandEdgesMiBPerHour[] = {40, 100, 500, 2000};

std::string FormatReport(const std::vector<TraceResult>& results, const EvalOptions& eval, const ReportInfo& info);

// 95 % (z = 1.96) Wilson score interval of a share hits/n; [0, 1] when n = 0.
std::pair<double, double> WilsonInterval(size_t hits, size_t n, double z = 1.96);

// Linear-interpolated quantile (q in [0,1]) of the values; nullopt when empty.
std::optional<double> Quantile(std::vector<double> values, double q);

}  // namespace vw::evaluate
