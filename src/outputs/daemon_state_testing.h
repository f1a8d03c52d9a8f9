// A populated DaemonState for tests and benchmarks: `gpus` GPUs with `procs_per_gpu` holders each,
// a leak on GPU 0, a plateau elsewhere, findings, Xid counters and NVML call statistics. Values are
// chosen so that each field can be recognised in rendered output.
#pragma once

#include <string>

#include "outputs/daemon_state.h"

namespace vw::outputs::testing {

inline DaemonState MakeDaemonState(int gpus, int procs_per_gpu, double now_s = 1764189075) {
  DaemonState s;
  s.t = now_s;
  s.started_t = now_s - 3600;
  s.hostname = "node-7";
  s.driver_version = "550.54.15";
  s.version = "0.1.0";
  s.samples_total = 12345;
  s.history_enabled = true;
  s.kernel_log_up = true;
  for (int i = 0; i < gpus; ++i) {
    GpuState g;
    g.snapshot.t = now_s - 0.5;
    g.snapshot.index = static_cast<unsigned>(i);
    g.snapshot.uuid = "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f6" + std::to_string(i);
    g.snapshot.name = "NVIDIA H100 80GB HBM3";
    g.snapshot.pci_bus_id = "00000000:3B:00." + std::to_string(i);
    g.snapshot.memory_total_bytes = 85520809984ull;
    g.snapshot.memory_reserved_bytes = 502267904ull;
    g.snapshot.memory_used_bytes = 42949672960ull + static_cast<uint64_t>(i);
    g.snapshot.memory_free_bytes = *g.snapshot.memory_total_bytes - *g.snapshot.memory_used_bytes;
    g.snapshot.gpu_util_ratio = 0.9;
    g.last_sample_t = now_s - 0.5;
    g.unattributed_bytes = 0;
    g.analysis.floor_bytes = 42000000000.0;
    g.analysis.peak_bytes = 43000000000.0;
    if (i == 0) {
      g.analysis.verdict = "leak";
      g.analysis.leak_rate_bps = 1048576.0;
      g.analysis.leak_rate_lo_bps = 900000.0;
      g.analysis.leak_rate_hi_bps = 1200000.0;
      g.analysis.time_to_oom_s = 40000.0;
      g.analysis.time_to_oom_lo_s = 35000.0;
      g.analysis.time_to_oom_hi_s = 47000.0;
      g.xid_events[79] = 2;
    } else {
      g.analysis.verdict = "plateau";
    }
    for (int p = 0; p < procs_per_gpu; ++p) {
      ProcessSnapshot ps;
      ps.pid = 1000 + i * 1000 + p;
      ps.compute = true;
      ps.used_bytes = 1073741824ull * static_cast<uint64_t>(p + 1);
      ps.sm_util_ratio = 0.5;
      ps.info.alive = true;
      ps.info.state = ProcState::kRunning;
      ps.info.user = "alice";
      ps.info.command = "python train.py --config \"big\"";
      ps.info.container_id = "3f4e5d6c7b8a";
      ps.info.pod_uid = "pod-uid-" + std::to_string(p);
      g.snapshot.processes.push_back(ps);
    }
    s.gpus.push_back(g);
  }
  Finding f;
  f.kind = "orphaned_memory";
  f.severity = Severity::kCritical;
  f.gpu = "0";
  f.bytes = 12884901888ull;
  f.message = "12 GiB held with no listed process";
  f.action = "find the holder with lsof /dev/nvidia0";
  s.findings.push_back(f);
  s.alerts.push_back({"GpuMemoryLeak", "firing", "0", "critical", "2025-11-26T20:35:00Z", "GPU 0 leaks 1 MiB/s"});
  NvmlCallStats c;
  c.call = "nvmlDeviceGetMemoryInfo_v2";
  c.bucket_counts.assign(NvmlLatencyBuckets().size(), 0);
  for (size_t b = 1; b < c.bucket_counts.size(); ++b) c.bucket_counts[b] = 100;
  c.count = 100;
  c.sum_seconds = 0.05;
  s.nvml_calls.push_back(c);
  s.nvml_errors[{"nvmlDeviceGetComputeRunningProcesses_v3", "timeout"}] = 3;
  return s;
}

}  // namespace vw::outputs::testing
