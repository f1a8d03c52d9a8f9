// The series `analyze --prometheus` reads from a Prometheus server: one GPU's (or MIG GPU
// instance's, or process's) used memory over time, with what the reading of it found. Plain data;
// the reader (prometheus_reader.h) fills them, series_merge.h makes the series of one GPU one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.h"
#include "core/status.h"

namespace vw::prometheus {

enum class ValueUnit { kAuto, kBytes, kKiB, kMiB, kGiB };
Result<ValueUnit> ParseValueUnit(std::string_view text);  // "auto", "bytes"/"B", "KiB", "MiB", "GiB"

// One point of a series: when, and the used memory in bytes (missing for NaN, Inf, a negative
// value or one no GPU memory can be: above kMaxPlausibleBytes).
struct SeriesPoint {
  double t = 0;  // seconds since the epoch
  std::optional<uint64_t> used_bytes;
};

// The largest value taken as GPU memory, in bytes (1 PiB, far above any node's sum of cards):
// above it, the unit is wrong or the value is garbage.
inline constexpr double kMaxPlausibleBytes = 1125899906842624.0;

struct PrometheusSeries {
  std::map<std::string, std::string> labels;  // including __name__ when Prometheus returned it
  GpuIdentity gpu;
  std::optional<int64_t> pid;               // for per-process series (a `pid` label)
  ValueUnit unit = ValueUnit::kBytes;       // what the values were converted from
  std::vector<SeriesPoint> points;          // time order
  std::optional<uint64_t> total_bytes;      // the card's (or MIG instance's) size from the companion query
  size_t implausible = 0;                   // values above kMaxPlausibleBytes, left missing
  std::string first_implausible;            // the first of them as Prometheus wrote it
  std::vector<double> implausible_at;       // their step times (KeepEachSampleOnce counts each sample once)
  size_t merged = 1;                        // how many Prometheus series this one is made of
  std::vector<std::string> changed_labels;  // the labels whose values differed between them
  // How many series of this GPU held values at the same times (kept apart, their differing labels
  // in their keys); 1 when none did.
  size_t apart = 1;
};

// `name{label="value",...}`, labels in order, values as they are: a series named in messages.
std::string SeriesText(const std::map<std::string, std::string>& labels);

// SeriesText without `__name__`: how a series of `timestamp(Q)` (which drops the name) is matched
// with Q's.
std::string LabelsWithoutName(const std::map<std::string, std::string>& labels);

}  // namespace vw::prometheus
