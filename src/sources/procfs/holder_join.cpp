#include "sources/procfs/holder_join.h"

#include <algorithm>
#include <set>

namespace vw::procfs {

JoinResult JoinHolders(HostSnapshot& host, const ProcessReader& reader, std::map<int64_t, double>& start_times) {
  JoinResult out;
  std::map<int64_t, ProcessInfo> cache;
  auto info_for = [&](int64_t pid) -> const ProcessInfo& {
    auto it = cache.find(pid);
    if (it != cache.end()) return it->second;
    std::optional<double> expected;
    if (auto s = start_times.find(pid); s != start_times.end()) expected = s->second;
    ProcessInfo info = reader.Read(pid, expected);
    if (info.alive && info.start_time_s && !expected) start_times[pid] = *info.start_time_s;
    return cache.emplace(pid, std::move(info)).first->second;
  };

  std::vector<int64_t> nvml_pids;
  std::vector<ProcessInfo> nvml_infos;
  for (auto& gpu : host.gpus) {
    for (auto& p : gpu.processes) {
      if (!p.listed_by_nvml) continue;
      p.info = info_for(p.pid);
      nvml_pids.push_back(p.pid);
      nvml_infos.push_back(p.info);
    }
  }

  DeviceFdScan scan = reader.ScanDeviceFds();
  out.fd_dirs_unreadable = scan.pids_unreadable;
  for (const auto& msg : scan.unreadable) out.notes.push_back("fd scan: " + msg);
  for (const auto& holder : scan.holders) {
    if (holder.minors.empty()) {
      out.control_only.push_back(holder.pid);
      continue;
    }
    for (auto& gpu : host.gpus) {
      if (!gpu.minor || !std::binary_search(holder.minors.begin(), holder.minors.end(), *gpu.minor)) continue;
      bool listed = std::any_of(gpu.processes.begin(), gpu.processes.end(),
                                [&](const ProcessSnapshot& p) { return p.pid == holder.pid; });
      if (listed) continue;
      ProcessSnapshot extra;
      extra.pid = holder.pid;
      extra.listed_by_nvml = false;
      extra.info = info_for(holder.pid);
      gpu.processes.push_back(std::move(extra));
    }
  }

  out.hints = reader.PidNamespaceHints();
  host.host_pids_visible = HostPidsVisible(nvml_pids, nvml_infos, out.hints);
  return out;
}

}  // namespace vw::procfs
