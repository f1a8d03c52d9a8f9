#include "outputs/check_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/ascii.h"
#include "core/exit_codes.h"
#include "core/printable.h"
#include "core/time.h"
#include "core/units.h"
#include "detection/findings.h"
#include "detection/mig_instances.h"

namespace vw::outputs {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json Str(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

// The window for the text header: FormatDuration() rounds to whole seconds, so a window with a
// fraction of a second (`--window 500ms`, `1500ms`) is written in milliseconds instead.
std::string WindowText(double seconds) {
  const auto ms = static_cast<long long>(std::llround(seconds * 1000.0));
  return ms % 1000 == 0 ? FormatDuration(seconds) : fmt::format("{}ms", ms);
}

json GpuJson(const GpuSnapshot& g) {
  json mig = json::array();
  const std::vector<detection::MigInstance> instances = detection::MigInstances(g);
  for (const auto& m : g.mig_devices) {
    const detection::MigInstance* instance = detection::InstanceOfDevice(instances, m);
    mig.push_back({{"gpu_instance_id", Opt(m.gpu_instance_id)},
                   {"compute_instance_id", Opt(m.compute_instance_id)},
                   {"index", Opt(m.index)},
                   {"uuid", Str(m.uuid)},
                   {"name", Str(m.name)},
                   {"memory_total_bytes", Opt(m.memory_total_bytes)},
                   {"memory_used_bytes", Opt(m.memory_used_bytes)},
                   {"memory_free_bytes", Opt(m.memory_free_bytes)},
                   // its GPU instance's used memory less that of the processes listed on it
                   {"memory_unattributed_bytes", instance ? Opt(instance->unattributed_bytes) : json(nullptr)}});
  }
  json procs = json::array();
  for (const auto& p : g.processes) procs.push_back(ProcessJson(p));
  json errors = json::array();
  for (const auto& e : g.nvml_errors) {
    errors.push_back({{"function", e.function},
                      {"code", e.code},
                      {"code_name", e.code_name.empty() ? json(nullptr) : json(e.code_name)},
                      {"message", e.message}});
  }
  if (g.nvml_errors.empty()) {
    for (const auto& e : g.errors) {
      errors.push_back({{"function", nullptr}, {"code", nullptr}, {"code_name", nullptr}, {"message", e}});
    }
  }
  return json{
      {"gpu", std::to_string(g.index)},
      {"index", g.index},
      {"uuid", Str(g.uuid)},
      {"name", Str(g.name)},
      {"pci_bus_id", Str(g.pci_bus_id)},
      {"minor", Opt(g.minor)},
      {"time", FormatIso8601(g.t, true)},
      {"responsive", g.responsive},
      {"lost", g.lost},
      {"memory_total_bytes", Opt(g.memory_total_bytes)},
      {"memory_used_bytes", Opt(g.memory_used_bytes)},
      {"memory_free_bytes", Opt(g.memory_free_bytes)},
      {"memory_reserved_bytes", Opt(g.memory_reserved_bytes)},
      {"memory_unattributed_bytes", Opt(UnattributedBytes(g))},
      {"bar1_total_bytes", Opt(g.bar1_total_bytes)},
      {"bar1_used_bytes", Opt(g.bar1_used_bytes)},
      {"gpu_util_ratio", Opt(g.gpu_util_ratio)},
      {"memory_util_ratio", Opt(g.memory_util_ratio)},
      {"mig_enabled", g.mig_enabled},
      {"mig_devices", mig},
      {"errors", errors},
      {"processes", procs},
  };
}

std::string Bytes(const std::optional<uint64_t>& b) {
  return b ? FormatBytes(static_cast<double>(*b)) : "-";
}
std::string Percent(const std::optional<double>& r) {
  return r ? fmt::format("{:.0f} %", *r * 100.0) : std::string("-");
}

std::string Where(const ProcessInfo& i) {
  std::vector<std::string> parts;
  if (const std::string c = ContainerShown(i, 12); !c.empty()) parts.push_back("ctr " + c);
  if (const std::string pod = PodShown(i, 8); !pod.empty()) parts.push_back("pod " + pod);
  if (!i.slurm_job.empty()) parts.push_back("job " + i.slurm_job);
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, " "));
}

std::string Paint(const std::string& s, Severity sev, bool color) {
  if (!color) return s;
  const char* code = sev == Severity::kCritical ? "\033[1;31m" : sev == Severity::kWarning ? "\033[1;33m" : "\033[32m";
  return code + s + "\033[0m";
}

std::string OptText(const std::optional<unsigned>& v) {
  return v ? std::to_string(*v) : std::string("-");
}

// nvidia-smi's "MIG devices" table: per MIG device its GPU and compute instance, profile, its GPU
// instance's memory and what no process listed on that instance owns ("-" where unknown).
std::string MigTable(const GpuSnapshot& g) {
  if (g.mig_devices.empty()) return "  MIG mode on: no MIG device (none created, or none could be read)\n";
  const std::vector<detection::MigInstance> instances = detection::MigInstances(g);
  std::string out = fmt::format("  {:>4} {:>4} {:<10} {:>10} {:>10} {:>12}  {}\n", "GI", "CI", "PROFILE", "USED",
                                "TOTAL", "UNATTRIBUTED", "MIG UUID");
  for (const MigDeviceSnapshot& m : g.mig_devices) {
    const detection::MigInstance* instance = detection::InstanceOfDevice(instances, m);
    out += fmt::format("  {:>4} {:>4} {:<10} {:>10} {:>10} {:>12}  {}\n", OptText(m.gpu_instance_id),
                       OptText(m.compute_instance_id),
                       m.name.empty() ? std::string("-") : Printable(MigProfile(m.name)), Bytes(m.memory_used_bytes),
                       Bytes(m.memory_total_bytes), Bytes(instance ? instance->unattributed_bytes : std::nullopt),
                       m.uuid.empty() ? std::string("-") : Printable(m.uuid));
  }
  return out;
}

// What the /dev/nvidia* holder scan saw; null when no scan was made (a replay, /proc not listable).
json FdScanJson(const HolderScan& scan) {
  if (scan.pids_scanned == 0) return nullptr;
  return {{"processes_scanned", scan.pids_scanned},
          {"unreadable", scan.dirs_unreadable},
          {"unreadable_pids", scan.unreadable_pids}};
}

}  // namespace

nlohmann::ordered_json ProcessJson(const ProcessSnapshot& p) {
  const ProcessInfo& i = p.info;
  return json{
      {"pid", p.pid},
      {"container_pid", Opt(i.container_pid)},
      {"listed_by_nvml", p.listed_by_nvml},
      {"type", p.listed_by_nvml ? json(ProcessTypes(p)) : json(nullptr)},
      {"used_bytes", Opt(p.used_bytes)},
      {"sm_util_ratio", Opt(p.sm_util_ratio)},
      {"gpu_instance_id", Opt(p.gpu_instance_id)},
      {"compute_instance_id", Opt(p.compute_instance_id)},
      {"alive", i.alive},
      {"state", StateName(i.state)},
      {"start_time_seconds", Opt(i.start_time_s)},
      {"cpu_seconds", Opt(i.cpu_seconds)},
      {"uid", Opt(i.uid)},
      {"user", Str(i.user)},
      {"command", !i.command.empty() ? json(i.command) : Str(p.nvml_name)},
      {"container_id", Str(i.container_id)},
      {"pod_uid", Str(i.pod_uid)},
      {"pod_namespace", Str(i.pod_namespace)},
      {"pod_name", Str(i.pod_name)},
      {"container_name", Str(i.container_name)},
      {"slurm_job", Str(i.slurm_job)},
      {"unreadable", i.unreadable},
  };
}

std::string StateName(ProcState s) {
  switch (s) {
    case ProcState::kRunning: return "R";
    case ProcState::kSleeping: return "S";
    case ProcState::kDiskSleep: return "D";
    case ProcState::kZombie: return "Z";
    case ProcState::kStopped: return "T";
    case ProcState::kDead: return "X";
    case ProcState::kGone: return "gone";
    case ProcState::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string ProcessTypes(const ProcessSnapshot& p) {
  if (!p.listed_by_nvml) return "-";
  std::string t = ProcessTypeText(p);
  return t.empty() ? "?" : t;
}

std::optional<uint64_t> UnattributedBytes(const GpuSnapshot& g) {
  if (!g.memory_used_bytes || !detection::ProcessListComplete(g)) return std::nullopt;
  uint64_t sum = 0;
  for (const auto& p : g.processes) {
    if (!p.listed_by_nvml) continue;
    if (!p.used_bytes) return std::nullopt;
    sum += *p.used_bytes;
  }
  return *g.memory_used_bytes > sum ? *g.memory_used_bytes - sum : 0;
}

nlohmann::ordered_json CheckReportJson(const CheckReport& r) {
  const HostSnapshot& h = r.snapshot;
  json gpus = json::array();
  for (const auto& g : h.gpus) gpus.push_back(GpuJson(g));
  json findings = json::array();
  for (const auto& f : r.result.findings) {
    findings.push_back({{"kind", f.kind},
                        {"severity", std::string(SeverityName(f.severity))},
                        {"gpu", Str(f.gpu)},
                        {"pid", Opt(f.pid)},
                        {"bytes", Opt(f.bytes)},
                        {"message", f.message},
                        {"action", f.action}});
  }
  std::string status = r.exit_code == kExitUnknown ? "unknown" : std::string(SeverityName(r.result.worst));
  return json{
      {"schema", "vramwatch.check/1"},
      {"status", status},
      {"exit_code", r.exit_code},
      {"host",
       {{"hostname", Str(h.hostname)},
        {"time", FormatIso8601(h.t, true)},
        {"driver_version", Str(h.driver_version)},
        {"cuda_driver_version", Opt(h.cuda_driver_version)},
        {"nvml_version", Str(h.nvml_version)},
        {"nvml_library", Str(r.nvml_library)},
        {"nvml_functions", r.nvml_functions},
        {"host_pids_visible", h.host_pids_visible},
        {"kernel_log", Str(r.kernel_log_source)},
        {"xid_events", r.xid_events},
        {"control_only_holders", r.control_only_holders},
        {"fd_scan", FdScanJson(h.holder_scan)},
        {"pids_hidden", Str(h.holder_scan.pids_hidden)},
        {"errors", h.errors}}},
      {"window_seconds", r.window_s},
      {"samples", r.samples},
      {"gpus", gpus},
      {"findings", findings},
      {"notes", r.result.notes},
  };
}

std::string CheckReportText(const CheckReport& r, bool color) {
  const HostSnapshot& h = r.snapshot;
  std::string out;
  // Every string that comes from outside (NVML, /proc, the kubelet's directories, the kernel log)
  // goes through Printable: a command line's ESC or newline must not reach the terminal as one.
  auto text = [](const std::string& v) { return v.empty() ? std::string("-") : Printable(v); };
  out += fmt::format(
      "vramwatch check  {}  driver {}{}  {}{}\n", text(h.hostname), text(h.driver_version),
      h.cuda_driver_version
          ? fmt::format("  CUDA {}.{}", *h.cuda_driver_version / 1000, (*h.cuda_driver_version % 1000) / 10)
          : std::string(),
      FormatIso8601(h.t, true),
      r.window_s > 0 ? fmt::format("  window {} ({} samples)",
                                   WindowText(r.window_given_s > 0 ? r.window_given_s : r.window_s), r.samples)
                     : std::string());
  for (const auto& g : h.gpus) {
    out += fmt::format("\nGPU {}  {}  {}  {}{}{}\n", g.index, text(g.name), text(g.pci_bus_id), text(g.uuid),
                       g.lost ? "  [LOST]" : "", g.responsive ? "" : "  [NOT RESPONDING]");
    out += fmt::format("  memory used {} / total {}  free {}  reserved {}  unattributed {}  BAR1 {} / {}  util {}\n",
                       Bytes(g.memory_used_bytes), Bytes(g.memory_total_bytes), Bytes(g.memory_free_bytes),
                       Bytes(g.memory_reserved_bytes), Bytes(UnattributedBytes(g)), Bytes(g.bar1_used_bytes),
                       Bytes(g.bar1_total_bytes), Percent(g.gpu_util_ratio));
    if (g.mig_enabled) out += MigTable(g);
    if (g.processes.empty()) {
      out += "  no processes\n";
      continue;
    }
    // The user, state and container/pod/job columns are as wide as their widest cell (a container
    // and a pod together outgrow a fixed width and pushed the command out of line; so did "unknown").
    auto user_of = [](const ProcessSnapshot& p) {
      return p.info.user.empty() ? (p.info.uid ? std::to_string(*p.info.uid) : "-") : Printable(p.info.user);
    };
    auto where_of = [](const ProcessSnapshot& p) { return Printable(Where(p.info)); };
    size_t user_w = 10, where_w = 22, state_w = 5;
    for (const auto& p : g.processes) {
      user_w = std::max(user_w, user_of(p).size());
      state_w = std::max(state_w, StateName(p.info.state).size());
      where_w = std::max(where_w, where_of(p).size());
    }
    // On a MIG GPU, the GPU and compute instance each process runs on (nvidia-smi's GI and CI).
    auto instance_of = [&](const ProcessSnapshot& p) {
      if (!g.mig_enabled) return std::string();
      return fmt::format(" {:>7}", fmt::format("{}/{}", OptText(p.gpu_instance_id), OptText(p.compute_instance_id)));
    };
    out += fmt::format("  {:>8}{} {:>8} {:<{}} {:<{}} {:>10} {:>5} {:<4} {:<{}} {}\n", "PID",
                       g.mig_enabled ? fmt::format(" {:>7}", "GI/CI") : std::string(), "CPID", "USER", user_w, "STATE",
                       state_w, "MEMORY", "SM", "TYPE", "CONTAINER/POD/JOB", where_w, "COMMAND");
    for (const auto& p : g.processes) {
      std::string cmd = Printable(CommandOf(p));
      if (cmd.empty() && p.info.state == ProcState::kZombie) cmd = "(zombie: no command line)";
      if (cmd.empty()) cmd = p.info.unreadable.empty() ? "-" : "(" + Printable(p.info.unreadable.front()) + ")";
      cmd = Utf8Shortened(cmd, 60);
      out += fmt::format("  {:>8}{} {:>8} {:<{}} {:<{}} {:>10} {:>5} {:<4} {:<{}} {}\n", p.pid, instance_of(p),
                         p.info.container_pid ? std::to_string(*p.info.container_pid) : "-", user_of(p), user_w,
                         StateName(p.info.state), state_w, p.listed_by_nvml ? Bytes(p.used_bytes) : "(fd only)",
                         Percent(p.sm_util_ratio), ProcessTypes(p), where_of(p), where_w, cmd);
    }
  }
  out += "\n";
  if (r.result.findings.empty()) {
    out += "No findings.\n";
  } else {
    out += "Findings:\n";
    for (const auto& f : r.result.findings) {
      out += fmt::format("  {} {}{}: {}\n",
                         Paint(fmt::format("{:<8}", AsciiUpper(SeverityName(f.severity))), f.severity, color), f.kind,
                         f.gpu.empty() ? "" : " (GPU " + Printable(f.gpu) + ")", Printable(f.message));
      out += fmt::format("           next: {}\n", Printable(f.action));
    }
  }
  if (!r.result.notes.empty()) {
    out += "Notes:\n";
    for (const auto& n : r.result.notes) out += "  - " + Printable(n) + "\n";
  }
  static constexpr const char* kNames[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
  int code = std::clamp(r.exit_code, 0, 3);
  out += fmt::format("\nStatus: {} (exit {})\n", kNames[code], r.exit_code);
  return out;
}

}  // namespace vw::outputs
