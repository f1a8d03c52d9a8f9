#include "sources/procfs/holder_join.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

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

  for (auto& gpu : host.gpus) {
    for (auto& p : gpu.processes) {
      if (p.listed_by_nvml) p.info = info_for(p.pid);
    }
  }

  DeviceFdScan scan = reader.ScanDeviceFds();
  host.holder_scan.pids_scanned = scan.pids_scanned;
  host.holder_scan.dirs_unreadable = scan.pids_unreadable;
  host.holder_scan.unreadable_pids = scan.unreadable_pids;
  // Per-PID EACCES is summarised by the findings (HolderScan::dirs_unreadable); only a failed listing of
  // the root itself is worth its own note.
  if (scan.pids_scanned == 0) {
    for (const auto& msg : scan.unreadable) out.notes.push_back("fd scan: " + msg);
  }
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

  // One name per PID across the host: NVML names a PID (nvmlSystemGetProcessName) on the GPUs that
  // list it; its rows elsewhere (device file open, not listed there) take that name too, so
  // CommandOf() names the process the same on every GPU, in the tables and the findings.
  std::map<int64_t, std::string> nvml_names;
  for (const auto& gpu : host.gpus) {
    for (const auto& p : gpu.processes) {
      if (!p.nvml_name.empty()) nvml_names.emplace(p.pid, p.nvml_name);
    }
  }
  for (auto& gpu : host.gpus) {
    for (auto& p : gpu.processes) {
      if (!p.nvml_name.empty()) continue;
      if (auto it = nvml_names.find(p.pid); it != nvml_names.end()) p.nvml_name = it->second;
    }
  }

  host.holder_scan.pids_hidden = reader.Hidden().note;
  out.hints = reader.PidNamespaceHints();
  // NVML lists host PIDs (the driver does not translate them into a PID namespace). In another
  // namespace a listed PID that is missing here may be alive on the host, one that exists here is
  // another process with the same number, and the fd scan sees this namespace's processes only: a
  // device file no process here has open may be held on the host. Also when NVML lists no PID.
  host.host_pids_visible = !out.hints.in_pid_namespace;
  if (!host.host_pids_visible) {
    // NVML's host PIDs are not in this namespace: not finding one says nothing about its state,
    // and a process here with the same number is another one (its facts are not the holder's).
    for (auto& gpu : host.gpus) {
      for (auto& p : gpu.processes) {
        if (!p.listed_by_nvml) continue;
        p.info = ProcessInfo{};
        p.info.state = ProcState::kUnknown;
        p.info.unreadable.push_back("state: host PID not visible in this PID namespace");
      }
    }
  }
  return out;
}

void KeepFactsOfVanishedHolders(HostSnapshot& host, std::map<int64_t, ProcessInfo>& known) {
  for (const auto& gpu : host.gpus) {
    for (const auto& p : gpu.processes) {
      if (p.info.alive && p.info.state != ProcState::kGone) known[p.pid] = p.info;
    }
  }
  for (auto& gpu : host.gpus) {
    for (auto& p : gpu.processes) {
      if (!p.listed_by_nvml || p.info.alive || p.info.state != ProcState::kGone) continue;
      auto it = known.find(p.pid);
      if (it == known.end()) continue;
      CopyIdentity(it->second, p.info);
    }
  }
}

std::vector<int64_t> RecheckDiskSleep(HostSnapshot& host, const ProcessReader& reader, int tries, double pause_s) {
  std::set<int64_t> pending;
  for (const auto& gpu : host.gpus) {
    for (const auto& p : gpu.processes) {
      if (p.info.state == ProcState::kDiskSleep) pending.insert(p.pid);
    }
  }
  std::map<int64_t, ProcState> left;
  for (int i = 0; i < tries && !pending.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
    for (auto it = pending.begin(); it != pending.end();) {
      ProcessInfo now = reader.Read(*it);
      if (now.state != ProcState::kDiskSleep && now.state != ProcState::kUnknown) {
        left[*it] = now.state;
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<int64_t> out;
  for (auto& gpu : host.gpus) {
    for (auto& p : gpu.processes) {
      auto it = left.find(p.pid);
      if (it == left.end()) continue;
      p.info.state = it->second;
      if (it->second == ProcState::kGone) p.info.alive = false;
    }
  }
  for (const auto& [pid, state] : left) out.push_back(pid);
  return out;
}

}  // namespace vw::procfs
