// Xid events -> per GPU and code summaries that check's rules (detection/findings.h) take. Events
// are matched to a GPU by PCI address, or through the driver's "GPU at PCI:...: GPU-<uuid>" map
// line when NVML's bus id is unknown; unmatched events keep the PCI address as their GPU key.
// Shared by `check` (the whole log) and `watch` (the events seen since it started).
//
// Threading: free functions, no shared state.
#pragma once

#include <string>
#include <vector>

#include "core/snapshot.h"
#include "detection/findings.h"
#include "sources/kernel/xid_parser.h"

namespace vw::cli {

std::vector<detection::XidSummary> SummarizeXids(const kernel::KernelLogScan& scan, const HostSnapshot& host);

// The GPU key of the GPU an event names ("0"), or empty when no GPU of `host` matches it.
std::string XidGpuKey(const kernel::XidEvent& e, const kernel::KernelLogScan& scan, const HostSnapshot& host);

}  // namespace vw::cli
