// The JSON documents the daemon serves, built from a published DaemonState or from history:
//   StatusJson   -> /api/v1/status, the `check --json` shape (schema "vramwatch.check/1") with, per GPU,
//                   an `analysis` object {verdict, leak_rate_bytes_per_second, time_to_oom_seconds,
//                   floor_bytes, peak_bytes, ...};
//   HistoryJson  -> /api/v1/history (schema "vramwatch.history/1"):
//                   {"schema","series","total_bytes","points":[[t_epoch_s,used_bytes],...],
//                    "floor":[[t,bytes],...]}.
// Missing values are JSON null. Units: bytes, seconds, bytes/second, ratios 0..1.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "outputs/daemon_state.h"

namespace vw::outputs {

// Built on CheckReportJson (outputs/check_report.h) so the daemon and `check --json` agree field by
// field; adds per GPU `analysis`, `stale`, `sampled_at`, `xid_events`, and top-level `alerts`.
nlohmann::ordered_json StatusJson(const DaemonState& state);

struct HistorySeries {
  std::string series;                               // "gpu:0", "gpu:0/pid:4242"
  std::optional<uint64_t> total_bytes;              // card size for a GPU series
  std::vector<std::pair<double, uint64_t>> points;  // (t, used bytes), time order
  std::vector<std::pair<double, uint64_t>> floor;   // (minute start, floor bytes)
};

nlohmann::json HistoryJson(const HistorySeries& h);

// Series names shared by the sampler (writing history) and the API (reading it).
std::string GpuSeriesName(const std::string& gpu_key);                   // "gpu:0"
std::string ProcessSeriesName(const std::string& gpu_key, int64_t pid);  // "gpu:0/pid:4242"

}  // namespace vw::outputs
