// Holder join: completes an NVML HostSnapshot with what /proc says about each holder.
//
// For every process NVML lists, fills ProcessSnapshot::info (ProcessReader::Read). Then adds, per
// GPU, every PID that has /dev/nvidia<minor> open but is not listed by NVML for that GPU
// (listed_by_nvml = false, no memory figure); such a row takes NVML's name for the PID from a GPU
// that lists it (ProcessSnapshot::nvml_name), so CommandOf() gives one name per PID across the
// host. PIDs that hold only /dev/nvidiactl or
// /dev/nvidia-uvm are not tied to a GPU: they are returned in `control_only`. Finally sets
// HostSnapshot::host_pids_visible (false in another PID namespace than the host's) and
// HostSnapshot::holder_scan (the fd scan's reach and unreadable PIDs; hidepid: ProcessReader::Hidden).
//
// `start_times` carries the start time first seen for each PID across the samples of one check,
// so a PID reused during a --window reads as gone (PID-reuse guard). Sampler thread only.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/snapshot.h"
#include "sources/procfs/process_reader.h"

namespace vw::procfs {

struct JoinResult {
  NamespaceHints hints;
  std::vector<int64_t> control_only;  // PIDs with /dev/nvidiactl or /dev/nvidia-uvm open and no /dev/nvidia<N>
  std::vector<std::string> notes;
};

JoinResult JoinHolders(HostSnapshot& host, const ProcessReader& reader, std::map<int64_t, double>& start_times);

// Over the samples of one `check --window`: a holder NVML still lists whose /proc entry went away
// (or whose PID was reused) during the window keeps the facts read for it while it was alive
// (uid, user, command, container PID, container, pod, Slurm job), as `watch` keeps them, so the
// dead_holder finding and the table name whom the memory belonged to. State, alive and unreadable
// stay as read now (gone). `known`: the facts of each PID's latest live read, carried across the
// samples and updated here with this sample's live processes.
void KeepFactsOfVanishedHolders(HostSnapshot& host, std::map<int64_t, ProcessInfo>& known);

// A process is often in D state for a moment (disk or network I/O). For every holder in D, reads
// its state again up to `tries` times, `pause_s` apart; a holder seen leaving D takes its new
// state. Returns the PIDs that left D (for a note). One-shot checks use it so a single unlucky
// read does not make a stuck_holder.
std::vector<int64_t> RecheckDiskSleep(HostSnapshot& host, const ProcessReader& reader, int tries, double pause_s);

}  // namespace vw::procfs
