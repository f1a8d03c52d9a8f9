// check's orphaned_memory rule (findings.h): used memory that no process NVML lists owns, judged
// on the whole GPU or, on a MIG GPU, per GPU instance (a process whose memory NVML does not report
// on one instance leaves the others judgeable). Over a window (--window, the daemon's findings
// window) it is critical once it persisted past --grace in every sample that could be read; at one
// instant only when it is large and nothing holds the GPU. A warning where the fd scan could not
// see every process and found no holder. The message names the holders found (fd holders NVML
// does not list, processes computing elsewhere) and the next step: end a holder, destroy and
// recreate the MIG instance, or reset the GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "detection/check_facts.h"
#include "detection/findings.h"
#include "detection/mig_instances.h"

namespace vw::detection {

// The threshold (bytes) of a MIG GPU instance: the configured one, without the allowance for
// drivers that do not report reserved memory (an instance reports no reserved memory of its own).
uint64_t InstanceThreshold(const CheckConfig& c);

// The samples the rule judges persistence over.
struct OrphanWindow {
  bool windowed = false;  // more than one sample over --window
  double span_s = 0;      // seconds from the first to the last sample
};

// Judges GPU `g` (`key` "0", `name` "GPU 0 (GPU-...)") in the newest sample `last`: the whole GPU
// from `un` when no instance of `instances` (MigInstances(g)) can be judged, else each instance.
// `history`: the same GPU in every sample of the window, oldest first. Appends findings, and notes
// for what could not be judged, to `result`.
void JudgeOrphanedMemory(const GpuSnapshot& g, const std::string& key, const std::string& name,
                         const check_facts::Unattributed& un, const std::vector<MigInstance>& instances,
                         const std::vector<const GpuSnapshot*>& history, const OrphanWindow& window,
                         const HostSnapshot& last, const CheckConfig& c, CheckResult* result);

}  // namespace vw::detection
