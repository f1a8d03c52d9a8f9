// Findings rules for `check` (and later `watch`): pure functions of host snapshots, kernel Xid
// summaries and a configuration. No I/O, no clocks; the same inputs always give the same findings.
//
// Input: the snapshots of one check, oldest first (one for a one-shot check; one per --interval
// over --window otherwise). The LAST snapshot is the one reported; earlier ones are evidence for
// persistence (orphaned memory, D state) and for idleness (zero SM over the whole window).
//
// Rules and thresholds (sizes in bytes, times in seconds; see docs/check.md):
//   gpu_lost           critical  GPU reported lost (NVML_ERROR_GPU_IS_LOST)
//   nvml_error         critical when the GPU stopped answering (call past its deadline);
//                      warning for failed calls, and for hangs or failures in earlier samples of
//                      a window when the last sample answers (NOT_SUPPORTED / NOT_FOUND / FUNCTION_NOT_FOUND
//                      are capabilities, reported in notes only)
//   pid_namespace_blind warning  NVML's host PIDs cannot be seen here; dead_holder is suppressed
//   dead_holder        critical  NVML lists a PID that does not exist (or was reused)
//   zombie_holder      critical  holder in state Z
//   stuck_holder       critical  holder in state D (with a window: D in every sample)
//   idle_holder        warning   memory held with SM 0 in every sample of the window (window only)
//   unlisted_holder    warning when the GPU has unattributed memory, else ok: a PID with
//                      /dev/nvidia<minor> open that NVML does not list (always ok when the list
//                      could not be read or host PIDs are invisible: then nothing is claimed)
//   orphaned_memory    used - sum(listed process memory) >= orphan_threshold:
//                      window >= grace and above threshold in every sample -> critical;
//                      one-shot -> warning ("may be lazy reclaim"), critical when >= orphan_large
//                      and no holder exists (no fd holder, no live listed process, host PIDs
//                      visible); where the fd scan could not see every holder (fd directories
//                      unreadable, hidepid, no minor number for the GPU) and found none, it is a
//                      warning that says so, never "only a GPU reset"; samples of the window that could not be read are
//                      not counted; without `reserved` (v1 driver) the threshold is raised by reserved_allowance since
//                      `used` then includes driver-reserved memory
//   xid                critical for the hardware set, warning for application/stuck codes, ok for
//                      informational ones (45 cleanup, unknown codes are warning); a 154 line's
//                      class follows the recovery action it names (kernel::ClassOfLine)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.h"
#include "core/snapshot.h"

namespace vw::detection {

struct CheckConfig {
  uint64_t orphan_threshold_bytes = 256ull << 20;  // --orphan-threshold
  uint64_t orphan_large_bytes = 1ull << 30;        // one-shot: this much with no holder is critical
  uint64_t reserved_allowance_bytes = 1ull << 30;  // added to the threshold when reserved is unknown
  double grace_s = 10;                             // --grace: lazy reclaim after SIGKILL
  double window_s = 0;                             // --window; 0 = one-shot
};

// The Xid events of one GPU and code, already matched to a GPU key and looked up in the catalog.
struct XidSummary {
  std::string gpu;  // GPU key ("0"), or the PCI bus id when no GPU matched
  int xid = 0;
  size_t count = 0;
  std::vector<int64_t> pids;            // distinct PIDs named by the lines
  std::vector<unsigned> gpu_instances;  // distinct MIG GPU instances named by the lines ("GPU-I:09")
  std::string last_message;             // driver text of the latest line
  std::optional<double> last_monotonic_s;
  std::optional<int> caused_by_xid;
  std::string mnemonic, meaning, action;  // empty for unknown codes
  enum class Class { kApplication, kStuck, kHardware, kInformational, kUnknown } klass = Class::kUnknown;
};

struct CheckInput {
  std::vector<HostSnapshot> samples;  // oldest first; must not be empty
  std::vector<XidSummary> xids;
  std::string pid_namespace_evidence;  // why host PIDs are thought invisible
};

struct CheckResult {
  std::vector<Finding> findings;   // ordered: worst severity first, then GPU, then kind
  std::vector<std::string> notes;  // what could not be judged, and why
  Severity worst = Severity::kOk;
};

// The GPU key used in findings and reports: the NVML index as a string.
std::string GpuKey(const GpuSnapshot& gpu);

// False when a process-list call failed or hung on this GPU (or the GPU is lost or unresponsive):
// then the list may miss holders, and "used minus listed" or "not listed any more" says nothing.
bool ProcessListComplete(const GpuSnapshot& gpu);

CheckResult EvaluateCheck(const CheckInput& input, const CheckConfig& config);

}  // namespace vw::detection
