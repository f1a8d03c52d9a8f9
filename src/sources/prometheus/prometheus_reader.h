// Prometheus reader: pulls GPU memory series from a Prometheus server's HTTP API
// (`/api/v1/query_range`) so `analyze --prometheus URL --query Q --range 12h` can analyse any fleet
// series already there: ours (vramwatch_gpu_memory_used_bytes), dcgm-exporter's
// (DCGM_FI_DEV_FB_USED, in MiB) or nvidia_gpu_exporter's (nvidia_smi_memory_used_bytes).
//
// Each series of the result matrix becomes one stream of TraceRecords in time order. The GPU is
// named from the series labels: index from `gpu`; UUID from `UUID`/`uuid`; PCI bus from
// `pci_bus_id`; model from `modelName`/`model_name`; the host from `Hostname`/`hostname`/`instance`
// goes into the key ("node-1/0") so GPUs of different nodes stay apart. Values are converted to
// bytes: MiB for DCGM_FI_DEV_FB_* metrics, bytes for names ending in _bytes, else --unit decides.
// When the used-memory metric has a known companion for the card size, its last value fills
// total_bytes (so a runway can be computed); a failing companion query leaves it empty.
//
// The step is the smallest whole number of seconds that keeps a series under 11,000 points
// (Prometheus' limit), never below 1 s, unless the caller gives one.
// Errors: connection failures -> unavailable, naming the URL; Prometheus' own error (bad query) ->
// invalid_argument with its message; a malformed response -> parse_error.
// Threading: blocking calls; any thread.
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

struct PrometheusSeries {
  std::map<std::string, std::string> labels;  // including __name__ when Prometheus returned it
  GpuIdentity gpu;
  std::optional<int64_t> pid;          // for per-process series (a `pid` label)
  ValueUnit unit = ValueUnit::kBytes;  // what the values were converted from
  std::vector<TraceRecord> records;    // time order; values in bytes
};

// The step (seconds) for a range: ceil(range / 11000), at least 1.
double ChooseStep(double range_s, size_t max_points = 11000);

// Parses a query_range (or instant query) JSON body. `query` is used for unit detection when the
// series carry no __name__ and to name errors.
Result<std::vector<PrometheusSeries>> ParseQueryResponse(std::string_view body, const std::string& query,
                                                         ValueUnit unit);

GpuIdentity IdentityFromLabels(const std::map<std::string, std::string>& labels);

// The query for the card size that goes with a used-memory query, or empty when unknown.
std::string CompanionTotalQuery(const std::string& query);

struct FetchOptions {
  std::optional<double> step_s;  // default: ChooseStep(range)
  double timeout_s = 30;
  bool fetch_total = true;  // ask for the card size with CompanionTotalQuery
};

// Runs `query` over [end_time - range_s, end_time] (end_time: seconds since the epoch; absent: now).
Result<std::vector<PrometheusSeries>> FetchPrometheusSeries(const std::string& url, const std::string& query,
                                                            double range_s, std::optional<double> end_time,
                                                            ValueUnit unit, const FetchOptions& options = {});

}  // namespace vw::prometheus
