// Prometheus reader: pulls GPU memory series from a Prometheus server's HTTP API
// (`/api/v1/query_range`) so `analyze --prometheus URL --query Q --range 12h` can analyse any fleet
// series already there: ours (vramwatch_gpu_memory_used_bytes), dcgm-exporter's
// (DCGM_FI_DEV_FB_USED, in MiB) or nvidia_gpu_exporter's (nvidia_smi_memory_used_bytes).
//
// Each GPU of the result becomes one series in time order. The GPU is named from the series labels:
// index from `gpu`; UUID from `UUID`/`uuid`; PCI bus from `pci_bus_id`; model from
// `modelName`/`model_name`; the host from `Hostname`/`hostname`/`instance` goes into the key
// ("node-1/0") so GPUs of different nodes stay apart; a MIG GPU instance (dcgm-exporter's
// `GPU_I_ID`, `GPU_I_PROFILE`) is a GPU of its own ("node-1/0/gi2", its size its own). Series of one
// GPU whose other labels changed over the range (dcgm-exporter's `pod` when a pod starts) are one
// series again; a card replaced at the same index (another UUID) stays apart. Values are converted
// to bytes: MiB for DCGM_FI_DEV_FB_* metrics, bytes for names ending in _bytes, else --unit
// decides; a metric that is not used memory (free, reserved, total, a percentage) is refused.
// When the used-memory metric has a known companion for the card size, its last value fills
// total_bytes (so a runway can be computed); a failing companion query leaves it empty.
//
// Each sample once: a plain selector (`NAME{...}`) is read with `timestamp(NAME{...})` beside it,
// which says which sample each step read, so a sample read at several steps is kept once, at its
// own time; the step is half the finest scrape interval (read from 10 minutes of raw samples) or
// the smallest whole number of seconds under Prometheus' 11,000 points a series, the larger. Other
// queries are read at that smallest step, and a value may repeat (PrometheusFetch::each_sample_once).
// Errors: connection failures and an answer not complete within the timeout -> unavailable, naming
// the URL (its password written as ***); Prometheus' own error (bad query) -> invalid_argument with
// its message; a malformed response -> parse_error.
// Threading: blocking calls; any thread (each request runs on a thread of its own, for its deadline).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.h"
#include "core/status.h"
#include "sources/prometheus/prometheus_http.h"
#include "sources/prometheus/prometheus_series.h"

namespace vw::prometheus {

Result<ValueUnit> ParseValueUnit(std::string_view text);  // "auto", "bytes"/"B", "KiB", "MiB", "GiB"

// What a query gave: the series, the step used and what Prometheus warned about.
struct PrometheusFetch {
  std::vector<PrometheusSeries> series;
  double step_s = 0;
  // Each sample read once at its own time (a plain selector, its sample times read beside it);
  // false when a step may have read one sample several times (another query).
  bool each_sample_once = false;
  std::vector<std::string> warnings;  // the response's "warnings" (a partial answer), as written
  double newest_t = 0;                // the newest point of any series (seconds since the epoch)
  double end_t = 0;                   // the end of the range asked for (seconds since the epoch)
};

// The step (seconds) for a range: ceil(range / 11000), at least 1.
double ChooseStep(double range_s, size_t max_points = 11000);

// Parses a query_range (or instant query) JSON body. `query` is used for unit detection when the
// series carry no __name__ and to name errors. Series are as Prometheus gave them (not merged).
Result<PrometheusFetch> ParseQueryResponse(std::string_view body, const std::string& query, ValueUnit unit);

GpuIdentity IdentityFromLabels(const std::map<std::string, std::string>& labels);

// Whether `s` ended well before the newest sample of its query (`newest_t`, seconds since the
// epoch): more than ten minutes, or ten steps, before it (a card replaced, an exporter gone).
bool SeriesEnded(const PrometheusSeries& s, double newest_t, double step_s);

// The query for the card size that goes with a used-memory query, or empty when unknown.
std::string CompanionTotalQuery(const std::string& query);

// Why `metric` cannot be analysed as used memory ("DCGM_FI_DEV_FB_FREE is the free memory, ..."),
// or empty when it can.
std::string NotUsedMemoryReason(std::string_view metric);

// NotUsedMemoryReason of the first such metric `query` names when it names no used-memory metric
// (a name with "used" in it): `max_over_time(DCGM_FI_DEV_FB_FREE[5m])` is refused, a ratio of used
// to used plus free is not. Empty when it may be analysed.
std::string NotUsedQueryReason(const std::string& query);

// How to fetch: the step, whether to ask for the card size, and how to reach the server
// (ServerAccess: the timeout and credentials).
struct FetchOptions : ServerAccess {
  std::optional<double> step_s;  // default: half the series' own spacing, or ChooseStep(range)
  bool fetch_total = true;       // ask for the card size with CompanionTotalQuery
};

// Runs `query` over [end_time - range_s, end_time] (end_time: seconds since the epoch; absent:
// now). A user and password in `url` (http://USER:PASSWORD@HOST:PORT) are sent as basic auth.
Result<PrometheusFetch> FetchPrometheusSeries(const std::string& url, const std::string& query, double range_s,
                                              std::optional<double> end_time, ValueUnit unit,
                                              const FetchOptions& options = {});

}  // namespace vw::prometheus
