// Prometheus text exposition (format 0.0.4) of a DaemonState: what `/metrics` serves.
//
// Names and labels (docs/watch.md): prefix `vramwatch_`, base units (bytes, seconds, ratios 0..1),
// GPU labels gpu, uuid, pci_bus_id, model_name, hostname; process series add pid, command, user,
// container, pod, namespace, slurm_job. Each family has HELP and TYPE lines and its samples are
// contiguous. A missing value produces no sample (never a 0). Label values are escaped (\\, \", \n),
// invalid UTF-8 bytes are replaced by '?', and the command label is cut at 256 bytes.
//
// Pure function of its input: never calls NVML, never blocks; ~1 µs per series.
// Threading: any thread; the state is read-only.
#pragma once

#include <string>
#include <string_view>

#include "outputs/daemon_state.h"

namespace vw::outputs {

// Renders every metric; now_s is used for vramwatch_gpu_sample_age_seconds.
std::string RenderPrometheus(const DaemonState& state, double now_s);
// Same, appending to `out` (lets a caller reuse one buffer).
void RenderPrometheusTo(const DaemonState& state, double now_s, std::string& out);

// Appends `value` escaped for a label value (backslash, double quote, newline; bad UTF-8 -> '?').
void AppendEscapedLabelValue(std::string_view value, std::string& out);

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace vw::outputs
