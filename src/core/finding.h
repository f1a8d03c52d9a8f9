// Finding: one thing `check` or `watch` found wrong (or notable) about a GPU or a process.
//
// `kind` is a stable machine name (orphaned_memory, dead_holder, zombie_holder, stuck_holder,
// idle_holder, unlisted_holder, xid, nvml_error, gpu_lost, pid_namespace_blind, leak);
// `message` says what was seen, `action` the next step a person should take.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vw {

enum class Severity { kOk = 0, kWarning = 1, kCritical = 2 };

std::string_view SeverityName(Severity s);  // "ok" | "warning" | "critical"

struct Finding {
  std::string kind;
  Severity severity = Severity::kOk;
  std::string gpu;                // GPU key ("0" or UUID); empty for host-wide findings
  std::optional<int64_t> pid;     // host PID when the finding is about a process
  std::optional<uint64_t> bytes;  // memory concerned
  std::optional<int64_t> xid;     // the Xid code, for kind "xid" (one finding per GPU and code)
  std::string message;
  std::string action;
};

// The order findings are listed in by GPU: host-wide ones (empty key) first, then GPU indices in
// numeric order ("2" before "10"), then other keys (a UUID, the PCI address of a GPU NVML does
// not list) as text.
bool GpuKeyLess(std::string_view a, std::string_view b);

// Monitoring-plugin exit code for the worst severity: 0 OK, 1 WARNING, 2 CRITICAL.
int ExitCodeFor(Severity worst);

}  // namespace vw
