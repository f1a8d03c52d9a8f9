#include "outputs/daemon_status_json.h"

#include <algorithm>

#include "core/time.h"
#include "outputs/check_report.h"

namespace vw::outputs {

namespace {

using nlohmann::json;

template <typename T>
nlohmann::ordered_json Opt(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json AnalysisJson(const SeriesVerdict& a) {
  nlohmann::ordered_json j;
  j["verdict"] = a.verdict;
  j["leak_rate_bytes_per_second"] = Opt(a.leak_rate_bps);
  j["leak_rate_ci_bytes_per_second"] = (a.leak_rate_lo_bps && a.leak_rate_hi_bps)
                                           ? nlohmann::ordered_json::array({*a.leak_rate_lo_bps, *a.leak_rate_hi_bps})
                                           : nlohmann::ordered_json();
  // Where the sustained growth began, as analyze's JSON field of that name (ISO 8601, UTC here).
  j["leak_start"] =
      a.leak_start_t ? nlohmann::ordered_json(FormatIso8601(*a.leak_start_t, true)) : nlohmann::ordered_json();
  j["time_to_oom_seconds"] = Opt(a.time_to_oom_s);
  j["time_to_oom_ci_seconds"] = (a.time_to_oom_lo_s && a.time_to_oom_hi_s)
                                    ? nlohmann::ordered_json::array({*a.time_to_oom_lo_s, *a.time_to_oom_hi_s})
                                    : nlohmann::ordered_json();
  j["floor_bytes"] = Opt(a.floor_bytes);
  j["peak_bytes"] = Opt(a.peak_bytes);
  j["baseline_bytes"] = Opt(a.baseline_bytes);
  j["load_rise_bytes_per_second"] = Opt(a.load_rise_bps);
  j["held_until"] =
      a.held_until_t ? nlohmann::ordered_json(FormatIso8601(*a.held_until_t, true)) : nlohmann::ordered_json();
  j["evidence"] = a.evidence;
  return j;
}

}  // namespace

std::string GpuSeriesName(const std::string& gpu_key) {
  return "gpu:" + gpu_key;
}

std::string ProcessSeriesName(const std::string& gpu_key, int64_t pid) {
  return "gpu:" + gpu_key + "/pid:" + std::to_string(pid);
}

nlohmann::ordered_json StatusJson(const DaemonState& state) {
  CheckReport report;
  report.snapshot.t = state.t;
  report.snapshot.hostname = state.hostname;
  report.snapshot.driver_version = state.driver_version;
  report.snapshot.cuda_driver_version = state.cuda_driver_version;
  report.snapshot.nvml_version = state.nvml_version;
  report.nvml_library = state.nvml_library;
  report.nvml_functions = state.nvml_functions;
  report.kernel_log_source = state.kernel_log_source;
  report.xid_events = state.xid_events;
  report.snapshot.host_pids_visible = state.host_pids_visible;
  report.snapshot.holder_scan = state.holder_scan;
  for (const GpuState& g : state.gpus) report.snapshot.gpus.push_back(g.snapshot);
  report.result.findings = state.findings;
  for (const Finding& f : state.findings) report.result.worst = std::max(report.result.worst, f.severity);
  report.exit_code = ExitCodeFor(report.result.worst);
  report.samples = state.samples_total;
  report.window_s = state.findings_window_s;
  report.result.notes = state.notes;
  if (!state.kernel_log_note.empty()) report.result.notes.push_back(state.kernel_log_note);
  nlohmann::ordered_json out = CheckReportJson(report);
  out["time"] = FormatIso8601(state.t, true);
  out["host"]["kernel_log_up"] = Opt(state.kernel_log_up);
  out["host"]["xid_events_from_nvml"] = state.xid_events_from_nvml;
  // Whether /api/v1/history has anything to give (--db), and whether its writes are paused; the
  // live page asks for history only when it is kept.
  out["host"]["history_kept"] = state.history_enabled;
  out["host"]["history_paused"] = state.history_paused;
  auto& gpus = out["gpus"];
  for (size_t i = 0; i < state.gpus.size() && i < gpus.size(); ++i) {
    const GpuState& g = state.gpus[i];
    auto& j = gpus[i];
    j["memory_unattributed_bytes"] = Opt(g.unattributed_bytes);  // as /metrics: read with its process list
    for (auto& m : j["mig_devices"]) {                           // and so each GPU instance's
      auto it = m["gpu_instance_id"].is_number_unsigned()
                    ? g.mig_unattributed_bytes.find(m["gpu_instance_id"].get<unsigned>())
                    : g.mig_unattributed_bytes.end();
      m["memory_unattributed_bytes"] =
          it == g.mig_unattributed_bytes.end() ? nlohmann::ordered_json() : nlohmann::ordered_json(it->second);
    }
    j["analysis"] = AnalysisJson(g.analysis);
    j["stale"] = g.stale;
    j["sampled_at"] =
        g.last_sample_t ? nlohmann::ordered_json(FormatIso8601(*g.last_sample_t, true)) : nlohmann::ordered_json();
    nlohmann::ordered_json xids = nlohmann::ordered_json::object();
    for (const auto& [code, n] : g.xid_events) xids[std::to_string(code)] = n;
    j["xid_events"] = xids;
    for (auto& p : j["processes"]) {
      if (!p.contains("pid")) continue;
      auto it = g.process_analysis.find(std::to_string(p["pid"].get<int64_t>()));
      if (it != g.process_analysis.end()) p["analysis"] = AnalysisJson(it->second);
    }
  }
  nlohmann::ordered_json alerts = nlohmann::ordered_json::array();
  for (const AlertView& a : state.alerts) {
    alerts.push_back({{"name", a.name},
                      {"state", a.state},
                      {"gpu", a.gpu},
                      {"severity", a.severity},
                      {"since", a.since},
                      {"summary", a.summary}});
  }
  out["alerts"] = alerts;
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
