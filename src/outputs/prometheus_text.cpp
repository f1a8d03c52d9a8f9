#include "outputs/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/printable.h"
#include "sources/kernel/xid_catalog.h"

namespace vw::outputs {

namespace {

constexpr size_t kMaxCommandLabelBytes = 256;

void AppendNumber(double v, std::string& out) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

void AppendNumber(uint64_t v, std::string& out) {
  fmt::format_to(std::back_inserter(out), "{}", v);
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;  // our own help texts need no escaping
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  // name{labels[,extra]} value. `labels` is an already escaped label list without braces.
  template <typename V>
  void Sample(std::string_view name, std::string_view labels, std::string_view extra, V value) {
    out_ += name;
    if (!labels.empty() || !extra.empty()) {
      out_ += '{';
      out_ += labels;
      if (!labels.empty() && !extra.empty()) out_ += ',';
      out_ += extra;
      out_ += '}';
    }
    out_ += ' ';
    AppendNumber(value, out_);
    out_ += '\n';
  }

 private:
  std::string& out_;
};

void AppendLabel(std::string_view name, std::string_view value, std::string& out) {
  if (!out.empty()) out += ',';
  out += name;
  out += "=\"";
  AppendEscapedLabelValue(value, out);
  out += '"';
}

std::string Label(std::string_view name, std::string_view value) {
  std::string s;
  AppendLabel(name, value, s);
  return s;
}

struct ProcessRow {
  const ProcessSnapshot* p;
  const GpuState* gpu;
  std::string labels;
};

std::string GpuLabels(const GpuSnapshot& g, std::string_view hostname) {
  std::string s;
  AppendLabel("gpu", GpuKey(g), s);
  AppendLabel("uuid", g.uuid, s);
  AppendLabel("pci_bus_id", g.pci_bus_id, s);
  AppendLabel("model_name", g.name, s);
  AppendLabel("hostname", hostname, s);
  return s;
}

// On a MIG GPU the process series also carry gpu_instance_id (empty when NVML did not give it); a
// GPU without MIG keeps the label set it always had.
std::string ProcessLabels(const std::string& gpu_labels, const GpuSnapshot& g, const ProcessSnapshot& p) {
  std::string s = gpu_labels;
  AppendLabel("pid", std::to_string(p.pid), s);
  // The command line from /proc, or NVML's name for the PID when that could not be read (as `check`).
  AppendLabel("command", Utf8Prefix(CommandOf(p), kMaxCommandLabelBytes), s);
  AppendLabel("user", p.info.user, s);
  AppendLabel("container", p.info.container_id, s);
  AppendLabel("pod", p.info.pod_uid, s);
  AppendLabel("namespace", p.info.pod_namespace, s);
  AppendLabel("pod_name", p.info.pod_name, s);
  AppendLabel("container_name", p.info.container_name, s);
  AppendLabel("slurm_job", p.info.slurm_job, s);
  if (g.mig_enabled) AppendLabel("gpu_instance_id", p.gpu_instance_id ? std::to_string(*p.gpu_instance_id) : "", s);
  return s;
}

// The hardware Xid codes of the catalog (kernel/xid_catalog.h). Their counters are served at 0 for
// every GPU before the first event, so that increase() and rate() see the first event (a series
// that appears at 1 has no increase).
const std::vector<unsigned>& HardwareXidCodes() {
  static const std::vector<unsigned> codes = [] {
    std::vector<unsigned> out;
    for (int code = 1; code < 1000; ++code) {
      const kernel::XidInfo* info = kernel::LookupXid(code);
      if (info != nullptr && info->hardware()) out.push_back(static_cast<unsigned>(code));
    }
    return out;
  }();
  return codes;
}

constexpr const char* kVerdicts[] = {"insufficient_data", "warmup", "settling", "plateau", "leak"};

}  // namespace

void AppendEscapedLabelValue(std::string_view value, std::string& out) {
  for (size_t i = 0; i < value.size();) {
    const char c = value[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      size_t n = Utf8SequenceLength(value, i);
      if (n == 0) {
        out += '?';
        ++i;
        continue;
      }
      out.append(value.data() + i, n);
      i += n;
      continue;
    }
    ++i;
  }
}

void RenderPrometheusTo(const DaemonState& state, double now_s, std::string& out) {
  Writer w(out);
  std::vector<std::string> gpu_labels;
  gpu_labels.reserve(state.gpus.size());
  std::vector<ProcessRow> procs;
  // A GPU that is not up (its calls hang or fail, it is lost) has no sample now: the figures a
  // sample reads (used, free, reserved, unattributed, utilisation) and its processes are left out
  // until it answers again, so that a dashboard shows a gap, not the last values as a flat line.
  // Its size, the engine's judgement of its history, its Xid counts, vramwatch_gpu_up (0) and the
  // sample age stay.
  auto up = [](const GpuState& g) { return !g.stale && !g.snapshot.lost && g.snapshot.responsive; };
  for (const GpuState& g : state.gpus) {
    gpu_labels.push_back(GpuLabels(g.snapshot, state.hostname));
    if (!up(g)) continue;
    for (const ProcessSnapshot& p : g.snapshot.processes) {
      procs.push_back({&p, &g, ProcessLabels(gpu_labels.back(), g.snapshot, p)});
    }
  }
  out.reserve(out.size() + 400 + state.gpus.size() * 2500 + procs.size() * 700);

  // One gauge family per optional GPU field.
  auto gpu_gauge = [&](const char* name, const char* help, auto get) {
    bool any = false;
    for (size_t i = 0; i < state.gpus.size(); ++i) {
      auto v = get(state.gpus[i]);
      if (!v) continue;
      if (!any) w.Family(name, "gauge", help);
      any = true;
      w.Sample(name, gpu_labels[i], "", *v);
    }
  };
  // ... and of a sample, only for a GPU that is up.
  auto sampled = [&](auto get) {
    return [&up, get](const GpuState& g) -> decltype(get(g)) {
      if (!up(g)) return std::nullopt;
      return get(g);
    };
  };
  gpu_gauge("vramwatch_gpu_memory_total_bytes", "Total memory of the GPU in bytes.",
            [](const GpuState& g) { return g.snapshot.memory_total_bytes; });
  gpu_gauge("vramwatch_gpu_memory_used_bytes", "Memory in use on the GPU in bytes (driver view).",
            sampled([](const GpuState& g) { return g.snapshot.memory_used_bytes; }));
  gpu_gauge("vramwatch_gpu_memory_free_bytes", "Free memory on the GPU in bytes.",
            sampled([](const GpuState& g) { return g.snapshot.memory_free_bytes; }));
  gpu_gauge("vramwatch_gpu_memory_reserved_bytes", "Memory reserved by the driver in bytes.",
            sampled([](const GpuState& g) { return g.snapshot.memory_reserved_bytes; }));
  gpu_gauge("vramwatch_gpu_memory_floor_bytes", "Recent floor (low quantile) of used memory in bytes.",
            [](const GpuState& g) { return g.analysis.floor_bytes; });
  gpu_gauge("vramwatch_gpu_memory_unattributed_bytes", "Used memory that no listed process owns, in bytes.",
            sampled([](const GpuState& g) { return g.unattributed_bytes; }));
  gpu_gauge("vramwatch_gpu_memory_baseline_bytes", "Learned plateau of the workload on this GPU, in bytes.",
            [](const GpuState& g) { return g.analysis.baseline_bytes; });
  gpu_gauge("vramwatch_gpu_leak_rate_bytes_per_second", "Measured leak rate in bytes per second (leak verdict only).",
            [](const GpuState& g) { return g.analysis.leak_rate_bps; });
  gpu_gauge("vramwatch_gpu_load_rise_bytes_per_second",
            "Without a leak verdict: rate in bytes per second at which a swinging load's memory, its cycle removed, "
            "rose clearly enough to be worth watching (absent otherwise).",
            [](const GpuState& g) { return g.analysis.load_rise_bps; });
  gpu_gauge("vramwatch_gpu_time_to_oom_seconds", "Estimated seconds until the GPU runs out of memory.",
            [](const GpuState& g) { return g.analysis.time_to_oom_s; });
  gpu_gauge("vramwatch_gpu_time_to_oom_lower_seconds",
            "Pessimistic end of the time-to-OOM range in seconds (fastest plausible leak).",
            [](const GpuState& g) { return g.analysis.time_to_oom_lo_s; });
  gpu_gauge("vramwatch_gpu_utilization_ratio", "GPU compute utilisation as a ratio 0..1.",
            sampled([](const GpuState& g) { return g.snapshot.gpu_util_ratio; }));

  // MIG: each GPU instance's memory, which its processes run out of (not the card's); the first of
  // its compute instances listed with a size stands for it (they share its memory). A MIG device
  // whose GPU instance id NVML did not give is its own row (gpu_instance_id ""), told apart by
  // its MIG UUID: it is never folded into another instance.
  struct MigRow {
    size_t gpu;
    const MigDeviceSnapshot* m;
    std::string labels;
  };
  std::vector<MigRow> mig;
  for (size_t i = 0; i < state.gpus.size(); ++i) {
    std::set<unsigned> seen_instances;
    std::set<std::string> seen_labels;  // two devices with neither id nor UUID cannot be told apart
    for (const MigDeviceSnapshot& m : state.gpus[i].snapshot.mig_devices) {
      if (!m.memory_total_bytes) continue;
      if (m.gpu_instance_id && !seen_instances.insert(*m.gpu_instance_id).second) continue;
      std::string labels = gpu_labels[i];
      AppendLabel("gpu_instance_id", m.gpu_instance_id ? std::to_string(*m.gpu_instance_id) : "", labels);
      AppendLabel("mig_profile", MigProfile(m.name), labels);
      AppendLabel("mig_uuid", m.uuid, labels);
      if (!seen_labels.insert(labels).second) continue;
      mig.push_back({i, &m, std::move(labels)});
    }
  }
  if (!mig.empty()) {
    w.Family("vramwatch_mig_instance_memory_total_bytes", "gauge",
             "Memory of a MIG GPU instance in bytes: what its processes run out of.");
    for (const MigRow& r : mig)
      w.Sample("vramwatch_mig_instance_memory_total_bytes", r.labels, "", *r.m->memory_total_bytes);
    bool any = false;
    for (const MigRow& r : mig) {
      if (!up(state.gpus[r.gpu]) || !r.m->memory_used_bytes) continue;
      if (!any)
        w.Family("vramwatch_mig_instance_memory_used_bytes", "gauge", "Memory in use in a MIG GPU instance in bytes.");
      any = true;
      w.Sample("vramwatch_mig_instance_memory_used_bytes", r.labels, "", *r.m->memory_used_bytes);
    }
    any = false;
    for (const MigRow& r : mig) {
      const GpuState& g = state.gpus[r.gpu];
      if (!up(g) || !r.m->gpu_instance_id) continue;
      auto it = g.mig_unattributed_bytes.find(*r.m->gpu_instance_id);
      if (it == g.mig_unattributed_bytes.end()) continue;
      if (!any) {
        w.Family("vramwatch_mig_instance_memory_unattributed_bytes", "gauge",
                 "Used memory of a MIG GPU instance that no process listed on it owns, in bytes.");
      }
      any = true;
      w.Sample("vramwatch_mig_instance_memory_unattributed_bytes", r.labels, "", it->second);
    }
  }

  if (!state.gpus.empty()) {
    w.Family("vramwatch_gpu_verdict", "gauge", "Leak detector verdict for the GPU: 1 for the current verdict.");
    for (size_t i = 0; i < state.gpus.size(); ++i) {
      for (const char* v : kVerdicts) {
        w.Sample("vramwatch_gpu_verdict", gpu_labels[i], Label("verdict", v),
                 static_cast<uint64_t>(state.gpus[i].analysis.verdict == v ? 1 : 0));
      }
    }
    w.Family("vramwatch_gpu_up", "gauge",
             "1 when the latest sample read the GPU's memory, 0 when its NVML calls hang or fail, it is lost, or it "
             "has not answered yet.");
    for (size_t i = 0; i < state.gpus.size(); ++i) {
      w.Sample("vramwatch_gpu_up", gpu_labels[i], "", static_cast<uint64_t>(up(state.gpus[i]) ? 1 : 0));
    }
  }
  gpu_gauge("vramwatch_gpu_sample_age_seconds", "Seconds since the GPU's memory was last read successfully.",
            [&](const GpuState& g) -> std::optional<double> {
              if (!g.last_sample_t) return std::nullopt;
              return std::max(0.0, now_s - *g.last_sample_t);
            });

  // The hardware codes are listed at 0 only while Xid events are read (from the kernel log, or
  // from NVML's event API while it is not read): a kernel log skipped (--kernel-log none) or
  // unreadable reads nothing, and a 0 would claim that none happened.
  const bool xids_read = state.kernel_log_up.value_or(false) || state.xid_events_from_nvml;
  bool xid_family = false;
  for (size_t i = 0; i < state.gpus.size(); ++i) {
    std::map<unsigned, uint64_t> counts = state.gpus[i].xid_events;
    if (xids_read) {
      for (unsigned code : HardwareXidCodes()) counts.emplace(code, 0);
    }
    for (const auto& [code, count] : counts) {
      if (!xid_family) {
        w.Family("vramwatch_xid_events_total", "counter",
                 "Xid events seen since the daemon started, or with a history database since the host booted "
                 "(hardware codes listed at 0 before their first event while Xid events are read).");
        xid_family = true;
      }
      w.Sample("vramwatch_xid_events_total", gpu_labels[i], Label("xid", std::to_string(code)), count);
    }
  }

  auto proc_gauge = [&](const char* name, const char* help, auto get) {
    bool any = false;
    for (const ProcessRow& r : procs) {
      auto v = get(*r.p);
      if (!v) continue;
      if (!any) w.Family(name, "gauge", help);
      any = true;
      w.Sample(name, r.labels, "", *v);
    }
  };
  proc_gauge("vramwatch_process_memory_used_bytes", "GPU memory held by the process in bytes.",
             [](const ProcessSnapshot& p) { return p.used_bytes; });
  proc_gauge("vramwatch_process_sm_utilization_ratio", "SM utilisation of the process as a ratio 0..1.",
             [](const ProcessSnapshot& p) { return p.sm_util_ratio; });
  // The leak engine's view of each process series, present only while it judges the process leaking
  // (the daemon's GpuProcessMemoryLeak alert holds exactly then): what a rule needs to alert on one
  // process's leak, with the process's labels.
  auto proc_analysis_gauge = [&](const char* name, const char* help, auto get) {
    bool any = false;
    for (const ProcessRow& r : procs) {
      auto it = r.gpu->process_analysis.find(std::to_string(r.p->pid));
      if (it == r.gpu->process_analysis.end() || it->second.verdict != "leak") continue;
      std::optional<double> v = get(it->second);
      if (!v) continue;
      if (!any) w.Family(name, "gauge", help);
      any = true;
      w.Sample(name, r.labels, "", *v);
    }
  };
  proc_analysis_gauge("vramwatch_process_leak_rate_bytes_per_second",
                      "Measured leak rate of the process in bytes per second (leak verdict only).",
                      [](const SeriesVerdict& v) { return v.leak_rate_bps; });
  proc_analysis_gauge("vramwatch_process_time_to_oom_seconds",
                      "Estimated seconds until the process's leak fills the GPU (leak verdict only).",
                      [](const SeriesVerdict& v) { return v.time_to_oom_s; });
  proc_analysis_gauge("vramwatch_process_time_to_oom_lower_seconds",
                      "Pessimistic end of the process's time-to-OOM range in seconds (fastest plausible leak).",
                      [](const SeriesVerdict& v) { return v.time_to_oom_lo_s; });
  if (!procs.empty()) {
    w.Family("vramwatch_process_state", "gauge", "State of the holder process from /proc: 1 for the current state.");
    for (const ProcessRow& r : procs) {
      w.Sample("vramwatch_process_state", r.labels, Label("state", ProcStateName(r.p->info.state)),
               static_cast<uint64_t>(1));
    }
  }

  if (!state.findings.empty()) {
    // Count per (gpu, kind, severity).
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> counts;
    for (const Finding& f : state.findings) counts[{f.gpu, f.kind, std::string(SeverityName(f.severity))}]++;
    w.Family("vramwatch_finding", "gauge", "Number of current findings by kind and severity.");
    for (const auto& [key, n] : counts) {
      const auto& [gpu, kind, severity] = key;
      std::string labels;
      size_t idx = state.gpus.size();
      for (size_t i = 0; i < state.gpus.size(); ++i) {
        if (GpuKey(state.gpus[i].snapshot) == gpu) idx = i;
      }
      if (idx < state.gpus.size()) {
        labels = gpu_labels[idx];
      } else {
        AppendLabel("gpu", gpu, labels);
        AppendLabel("hostname", state.hostname, labels);
      }
      AppendLabel("kind", kind, labels);
      AppendLabel("severity", severity, labels);
      w.Sample("vramwatch_finding", labels, "", n);
    }
  }

  // Every self-metric carries `hostname` like the GPU series, so that one host selector (the
  // dashboard's $hostname, a rule's `by (hostname)`) finds them all.
  const std::string host = Label("hostname", state.hostname);
  if (!state.nvml_calls.empty()) {
    const auto& bounds = NvmlLatencyBuckets();
    w.Family("vramwatch_nvml_call_duration_seconds", "histogram", "Duration of NVML calls in seconds.");
    for (const NvmlCallStats& c : state.nvml_calls) {
      std::string call = Label("call", c.call);
      AppendLabel("hostname", state.hostname, call);
      for (size_t b = 0; b < bounds.size() && b < c.bucket_counts.size(); ++b) {
        std::string le = Label("le", fmt::format("{}", bounds[b]));
        w.Sample("vramwatch_nvml_call_duration_seconds_bucket", call, le, c.bucket_counts[b]);
      }
      w.Sample("vramwatch_nvml_call_duration_seconds_bucket", call, "le=\"+Inf\"", c.count);
      w.Sample("vramwatch_nvml_call_duration_seconds_sum", call, "", c.sum_seconds);
      w.Sample("vramwatch_nvml_call_duration_seconds_count", call, "", c.count);
    }
  }
  if (!state.nvml_errors.empty()) {
    w.Family("vramwatch_nvml_errors_total", "counter",
             "NVML calls that failed, by call and code (NVML_ERROR_..., timeout, blocked).");
    for (const auto& [key, n] : state.nvml_errors) {
      std::string labels = Label("call", key.first);
      AppendLabel("code", key.second, labels);
      AppendLabel("hostname", state.hostname, labels);
      w.Sample("vramwatch_nvml_errors_total", labels, "", n);
    }
  }

  if (state.kernel_log_up) {
    w.Family("vramwatch_kernel_log_up", "gauge",
             "1 when Xid events can be read from the kernel log, 0 when it cannot be read (blind to Xids).");
    w.Sample("vramwatch_kernel_log_up", host, "", static_cast<uint64_t>(*state.kernel_log_up ? 1 : 0));
  }
  w.Family("vramwatch_nvml_xid_events_up", "gauge",
           "1 when Xid events are taken from NVML's event API because the kernel log is not read.");
  w.Sample("vramwatch_nvml_xid_events_up", host, "", static_cast<uint64_t>(state.xid_events_from_nvml ? 1 : 0));
  if (state.sample_interval_s) {
    w.Family("vramwatch_sample_interval_seconds", "gauge",
             "Seconds between samples (--interval): a GPU's sample age rises to it between two samples.");
    w.Sample("vramwatch_sample_interval_seconds", host, "", *state.sample_interval_s);
  }
  w.Family("vramwatch_samples_total", "counter",
           "Samples taken since the daemon started (one per --interval, each reading every GPU).");
  w.Sample("vramwatch_samples_total", host, "", state.samples_total);
  w.Family("vramwatch_history_paused", "gauge", "1 when the history database refuses writes (disk full, read-only).");
  w.Sample("vramwatch_history_paused", host, "", static_cast<uint64_t>(state.history_paused ? 1 : 0));
  w.Family("vramwatch_history_dropped_samples_total", "counter",
           "Samples dropped because the history database could not take them.");
  w.Sample("vramwatch_history_dropped_samples_total", host, "", state.history_dropped_samples);
  w.Family("vramwatch_notifications_failed_total", "counter",
           "Alert webhook deliveries that failed (no answer or not 2xx); each retry counts.");
  w.Sample("vramwatch_notifications_failed_total", host, "", state.notifications_failed);
  w.Family("vramwatch_notifications_dropped_total", "counter",
           "Alert webhook batches never delivered: pushed out of the full queue, or given up after the last retry "
           "or a 4xx answer.");
  w.Sample("vramwatch_notifications_dropped_total", host, "", state.notifications_dropped);
  w.Family("vramwatch_build_info", "gauge", "Version of vramwatch and of the NVIDIA driver; always 1.");
  std::string build = host;
  AppendLabel("version", state.version, build);
  AppendLabel("driver_version", state.driver_version, build);
  w.Sample("vramwatch_build_info", build, "", static_cast<uint64_t>(1));
}

std::string RenderPrometheus(const DaemonState& state, double now_s) {
  std::string out;
  RenderPrometheusTo(state, now_s, out);
  return out;
}

}  // namespace vw::outputs
