#include "outputs/daemon_status_json.h"

#include "core/time.h"

namespace vw::outputs {

namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json AnalysisJson(const SeriesVerdict& a) {
  json j;
  j["verdict"] = a.verdict;
  j["leak_rate_bytes_per_second"] = Opt(a.leak_rate_bps);
  j["leak_rate_ci_bytes_per_second"] =
      (a.leak_rate_lo_bps && a.leak_rate_hi_bps) ? json::array({*a.leak_rate_lo_bps, *a.leak_rate_hi_bps}) : json();
  j["time_to_oom_seconds"] = Opt(a.time_to_oom_s);
  j["time_to_oom_ci_seconds"] =
      (a.time_to_oom_lo_s && a.time_to_oom_hi_s) ? json::array({*a.time_to_oom_lo_s, *a.time_to_oom_hi_s}) : json();
  j["floor_bytes"] = Opt(a.floor_bytes);
  j["peak_bytes"] = Opt(a.peak_bytes);
  j["baseline_bytes"] = Opt(a.baseline_bytes);
  j["evidence"] = a.evidence;
  return j;
}

std::string ContextType(const ProcessSnapshot& p) {
  std::string t;
  if (p.compute) t += "C";
  if (p.graphics) t += t.empty() ? "G" : "+G";
  if (p.mps) t += t.empty() ? "M" : "+M";
  return t;
}

json ProcessJson(const ProcessSnapshot& p, const GpuState& g) {
  json j;
  j["pid"] = p.pid;
  j["listed_by_nvml"] = p.listed_by_nvml;
  j["type"] = ContextType(p);
  j["used_bytes"] = Opt(p.used_bytes);
  j["sm_util_ratio"] = Opt(p.sm_util_ratio);
  j["state"] = std::string(ProcStateName(p.info.state));
  j["alive"] = p.info.alive;
  j["user"] = p.info.user;
  j["command"] = p.info.command;
  j["container_pid"] = Opt(p.info.container_pid);
  j["container_id"] = p.info.container_id;
  j["pod_uid"] = p.info.pod_uid;
  j["slurm_job"] = p.info.slurm_job;
  if (auto it = g.process_analysis.find(std::to_string(p.pid)); it != g.process_analysis.end()) {
    j["analysis"] = AnalysisJson(it->second);
  }
  return j;
}

}  // namespace

std::string GpuSeriesName(const std::string& gpu_key) {
  return "gpu:" + gpu_key;
}

std::string ProcessSeriesName(const std::string& gpu_key, int64_t pid) {
  return "gpu:" + gpu_key + "/pid:" + std::to_string(pid);
}

nlohmann::json StatusJson(const DaemonState& state) {
  json out;
  out["schema"] = "vramwatch.check/1";
  out["time"] = FormatIso8601(state.t, true);
  out["hostname"] = state.hostname;
  out["driver_version"] = state.driver_version;
  out["host_pids_visible"] = state.host_pids_visible;
  json gpus = json::array();
  for (const GpuState& g : state.gpus) {
    const GpuSnapshot& s = g.snapshot;
    json j;
    j["gpu"] = GpuKey(s);
    j["index"] = s.index;
    j["uuid"] = s.uuid;
    j["name"] = s.name;
    j["pci_bus_id"] = s.pci_bus_id;
    j["memory_total_bytes"] = Opt(s.memory_total_bytes);
    j["memory_used_bytes"] = Opt(s.memory_used_bytes);
    j["memory_free_bytes"] = Opt(s.memory_free_bytes);
    j["memory_reserved_bytes"] = Opt(s.memory_reserved_bytes);
    j["memory_unattributed_bytes"] = Opt(g.unattributed_bytes);
    j["bar1_total_bytes"] = Opt(s.bar1_total_bytes);
    j["bar1_used_bytes"] = Opt(s.bar1_used_bytes);
    j["gpu_util_ratio"] = Opt(s.gpu_util_ratio);
    j["sampled_at"] = g.last_sample_t ? json(FormatIso8601(*g.last_sample_t, true)) : json();
    j["stale"] = g.stale;
    j["lost"] = s.lost;
    j["errors"] = s.errors;
    json xids = json::object();
    for (const auto& [code, n] : g.xid_events) xids[std::to_string(code)] = n;
    j["xid_events"] = xids;
    json procs = json::array();
    for (const ProcessSnapshot& p : s.processes) procs.push_back(ProcessJson(p, g));
    j["processes"] = procs;
    j["analysis"] = AnalysisJson(g.analysis);
    gpus.push_back(std::move(j));
  }
  out["gpus"] = gpus;
  json findings = json::array();
  for (const Finding& f : state.findings) {
    json j;
    j["kind"] = f.kind;
    j["severity"] = std::string(SeverityName(f.severity));
    j["gpu"] = f.gpu;
    if (f.pid) j["pid"] = *f.pid;
    j["bytes"] = Opt(f.bytes);
    j["message"] = f.message;
    j["action"] = f.action;
    findings.push_back(std::move(j));
  }
  out["findings"] = findings;
  return out;
}

nlohmann::json HistoryJson(const HistorySeries& h) {
  json out;
  out["schema"] = "vramwatch.history/1";
  out["series"] = h.series;
  out["total_bytes"] = Opt(h.total_bytes);
  json pts = json::array();
  for (const auto& [t, b] : h.points) pts.push_back(json::array({t, b}));
  out["points"] = std::move(pts);
  json fl = json::array();
  for (const auto& [t, b] : h.floor) fl.push_back(json::array({t, b}));
  out["floor"] = std::move(fl);
  return out;
}

}  // namespace vw::outputs
