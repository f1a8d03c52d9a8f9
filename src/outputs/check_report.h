// Check report: renders one `vramwatch check` as JSON (schema "vramwatch.check/1", documented in
// docs/check.md and docs/schema/check.schema.json) or as human text (a table per GPU like
// nvidia-smi's, every holder, then findings with their actions, then notes).
//
// Sizes are bytes, ratios 0..1, times seconds; missing values are JSON null (text "-"), never 0.
// Pure functions: no I/O.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "detection/findings.h"

namespace vw::outputs {

struct CheckReport {
  HostSnapshot snapshot;          // the last sample (what is reported)
  detection::CheckResult result;  // findings and notes
  double window_s = 0;            // --window actually sampled (0 for one-shot)
  double window_given_s = 0;      // --window as the user gave it, seconds (0: not given; the text shows window_s)
  size_t samples = 1;
  std::string nvml_library;                   // path given to dlopen
  std::vector<std::string> nvml_functions;    // bound versioned calls
  std::string kernel_log_source;              // "/dev/kmsg", "dmesg", a file, or empty when none was readable
  size_t xid_events = 0;                      // Xid lines considered
  std::vector<int64_t> control_only_holders;  // PIDs with only /dev/nvidiactl or /dev/nvidia-uvm open
  int exit_code = 0;
};

nlohmann::ordered_json CheckReportJson(const CheckReport& report);

// `color`: ANSI colours for severities (when stdout is a terminal).
std::string CheckReportText(const CheckReport& report, bool color);

// One holder as the check JSON (and the daemon's /api/v1/status) lists it: pid, container_pid,
// user, state, used_bytes, container_id, pod_uid, slurm_job and the rest (docs/check.md).
nlohmann::ordered_json ProcessJson(const ProcessSnapshot& p);

// "R" "S" "D" "Z" "T" "X" "gone" "unknown".
std::string StateName(ProcState s);

// ProcessTypeText() (core/snapshot.h), "?" when NVML gave no type; "-" for fd-only holders.
std::string ProcessTypes(const ProcessSnapshot& p);

// used - sum(listed process memory), when every listed process has a figure.
std::optional<uint64_t> UnattributedBytes(const GpuSnapshot& gpu);

}  // namespace vw::outputs
