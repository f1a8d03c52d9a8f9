#include "detection/findings.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/printable.h"
#include "core/units.h"
#include "detection/check_facts.h"
#include "detection/mig_instances.h"
#include "detection/orphaned_memory.h"

namespace vw::detection {

// False when a process-list call failed or hung: then "used minus listed" says nothing.
bool ProcessListComplete(const GpuSnapshot& g) {
  if (!g.responsive || g.lost) return false;
  // On a MIG GPU the processes are listed per MIG device: a device list that failed leaves some out.
  auto is_list_call = [&g](std::string_view text) {
    return text.find("RunningProcesses") != std::string_view::npos ||
           text.find("ProcessDetailList") != std::string_view::npos ||
           (g.mig_enabled && (text.find("MigDeviceHandleByIndex") != std::string_view::npos ||
                              text.find("MaxMigDeviceCount") != std::string_view::npos));
  };
  for (const auto& e : g.nvml_errors) {
    if (is_list_call(e.function) && e.code != 3 /*NOT_SUPPORTED: that list does not exist here*/) return false;
  }
  if (g.nvml_errors.empty()) {
    for (const auto& e : g.errors) {
      if (is_list_call(e)) return false;
    }
  }
  return true;
}

namespace {

using check_facts::AddFinding;
using check_facts::ComputeUnattributed;
using check_facts::History;
using check_facts::IsCapabilityCode;
using check_facts::Join;
using check_facts::KillHint;
using check_facts::ListedOn;
using check_facts::MiB;
using check_facts::SamePid;
using check_facts::Unattributed;
using check_facts::UnreadableFdsText;
using check_facts::Who;

class Rules {
 public:
  Rules(const CheckInput& in, const CheckConfig& c) : in_(in), c_(c), last_(in.samples.back()) {
    span_s_ = in.samples.size() > 1 ? in.samples.back().t - in.samples.front().t : 0;
    windowed_ = c.window_s > 0 && in.samples.size() > 1;
  }

  CheckResult Run() {
    if (!last_.host_pids_visible) {
      const std::string evidence =
          in_.pid_namespace_evidence.empty() ? std::string() : " (" + in_.pid_namespace_evidence + ")";
      bool listed = false;
      for (const auto& g : last_.gpus) {
        for (const auto& p : g.processes) listed |= p.listed_by_nvml;
      }
      // With nothing listed there is no holder to check: said, but no finding on an idle GPU.
      if (listed) {
        Add("pid_namespace_blind", Severity::kWarning, "", std::nullopt, std::nullopt,
            "vramwatch cannot see the host's PIDs: NVML lists host PIDs, and this is another PID namespace, where "
            "they cannot be matched (a PID missing here may be alive on the host, one found here another "
            "process)" +
                evidence + ". Holders cannot be checked for dead, zombie or stuck states.",
            "Run vramwatch on the host, or in a container started with --pid=host (Kubernetes: hostPID: true).");
      } else {
        result_.notes.push_back("this is another PID namespace than the host's" + evidence +
                                ": the host's processes, and the device files they hold, cannot be seen (run "
                                "vramwatch on the host, or with --pid=host / hostPID: true)");
      }
    }
    for (const auto& e : last_.errors) {
      Add("nvml_error", Severity::kWarning, "", std::nullopt, std::nullopt, "NVML system call failed: " + e,
          "Check the driver installation (nvidia-smi) and that the NVML library matches the driver.");
    }
    for (const auto& gpu : last_.gpus) Gpu(gpu);
    for (const auto& x : in_.xids) Xid(x);
    if (!last_.holder_scan.pids_hidden.empty()) result_.notes.push_back(last_.holder_scan.pids_hidden);
    if (last_.holder_scan.dirs_unreadable > 0) {
      result_.notes.push_back(UnreadableFdsText(last_) + "; run as root to see every /dev/nvidia* holder");
    }
    std::stable_sort(result_.findings.begin(), result_.findings.end(), [](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return a.severity > b.severity;
      if (a.gpu != b.gpu) return GpuKeyLess(a.gpu, b.gpu);
      return a.kind < b.kind;
    });
    return std::move(result_);
  }

 private:
  void Add(std::string kind, Severity sev, std::string gpu, std::optional<int64_t> pid, std::optional<uint64_t> bytes,
           std::string message, std::string action) {
    AddFinding(&result_, std::move(kind), sev, std::move(gpu), pid, bytes, std::move(message), std::move(action));
  }

  void Gpu(const GpuSnapshot& g) {
    const std::string key = GpuKey(g);
    const std::string& id = g.uuid.empty() ? g.pci_bus_id : g.uuid;
    const std::string name = id.empty() ? "GPU " + key : fmt::format("GPU {} ({})", key, id);
    if (g.lost) {
      Add("gpu_lost", Severity::kCritical, key, std::nullopt, std::nullopt,
          name + " is lost: NVML answers GPU_IS_LOST; its memory and processes cannot be inspected.",
          "Rule out hardware: look for Xid 79 (fallen off the bus) in the kernel log. Processes on this GPU are "
          "stuck; a person must reset the GPU or reboot the node.");
      return;
    }
    if (!g.responsive) {
      Add("nvml_error", Severity::kCritical, key, std::nullopt, std::nullopt,
          name + " did not answer: an NVML call passed its deadline (" + Join(g.errors) +
              "). What is shown for it may be incomplete.",
          "A hung NVML call often means a stuck driver or GPU: check the kernel log for Xid and hung-task "
          "messages and for processes in D state; a person may need to reset the GPU.");
    } else {
      std::vector<std::string> failed;
      for (const auto& e : g.nvml_errors) {
        if (IsCapabilityCode(e.code)) {
          result_.notes.push_back(fmt::format("GPU {}: {} (not supported here)", key, e.message));
        } else {
          failed.push_back(e.message);
        }
      }
      if (g.nvml_errors.empty()) failed = g.errors;
      failed = Counted(failed);
      if (!failed.empty()) {
        Add("nvml_error", Severity::kWarning, key, std::nullopt, std::nullopt,
            name + ": NVML calls failed: " + Join(failed) + ". The values they provide are missing, not zero.",
            "If it persists, check the driver (nvidia-smi -q) and the kernel log.");
      }
    }
    MissingMigIds(g, key);
    auto history = History(in_, g);
    if (g.responsive && !g.lost) EarlierTrouble(g, key, name, history);
    Unattributed un = ComputeUnattributed(g, c_);
    bool has_unattributed = un.bytes && *un.bytes >= un.threshold;
    // On a MIG GPU each GPU instance has its own used memory: the instances that can be judged are
    // (a process whose memory NVML does not report on one leaves the others judgeable), and the
    // whole card only when none can.
    const std::vector<MigInstance> instances = MigInstances(g);
    const bool per_instance = std::any_of(instances.begin(), instances.end(),
                                          [](const MigInstance& i) { return i.unattributed_bytes.has_value(); });
    if (per_instance) {
      has_unattributed = std::any_of(instances.begin(), instances.end(), [&](const MigInstance& i) {
        return i.unattributed_bytes && *i.unattributed_bytes >= InstanceThreshold(c_);
      });
    }
    if (!g.memory_reserved_bytes && g.memory_used_bytes) {
      result_.notes.push_back(fmt::format(
          "GPU {}: the driver does not report reserved memory (older driver: used includes it); the orphaned-memory "
          "threshold is raised by {}",
          key, MiB(c_.reserved_allowance_bytes)));
    }
    if (un.overcount >= un.threshold) {
      // The list and the device figure are read at different moments, and some drivers count a
      // shared allocation in each process that maps it: an unattributed 0 here proves nothing.
      result_.notes.push_back(fmt::format(
          "GPU {}: the listed processes hold {} more than the device reports used (read at different moments, "
          "or memory counted in more than one process); orphaned memory is not judged on this reading",
          key, MiB(un.overcount)));
    }
    for (const auto& p : g.processes) Process(g, key, p, history, has_unattributed);
    JudgeOrphanedMemory(g, key, name, un, instances, history, OrphanWindow{windowed_, span_s_}, last_, c_, &result_);
  }

  // MIG devices whose GPU (or compute) instance id NVML did not give: said even when the call
  // answered NOT_SUPPORTED (a capability code, otherwise quiet), since their memory and processes
  // can then be put on no instance.
  void MissingMigIds(const GpuSnapshot& g, const std::string& key) {
    if (!g.mig_enabled) return;
    std::vector<std::string> no_gi, no_ci;
    for (const MigDeviceSnapshot& m : g.mig_devices) {
      std::string which = m.index ? fmt::format("MIG device {}", *m.index) : std::string("a MIG device");
      if (!m.uuid.empty()) which += " (" + m.uuid + ")";
      if (!m.gpu_instance_id) {
        no_gi.push_back(which);
      } else if (!m.compute_instance_id) {
        no_ci.push_back(which);
      }
    }
    if (!no_gi.empty()) {
      result_.notes.push_back(fmt::format(
          "GPU {}: NVML did not give the GPU instance id of {}: shown without one, not as instance 0; its memory is "
          "judged on no GPU instance",
          key, Join(no_gi)));
    }
    if (!no_ci.empty()) {
      result_.notes.push_back(
          fmt::format("GPU {}: NVML did not give the compute instance id of {}: shown without one", key, Join(no_ci)));
    }
  }

  // A window's earlier samples of a GPU that answers now: a call that hung or failed there is
  // reported too (the last sample alone would say all is well). Capability codes stay notes.
  void EarlierTrouble(const GpuSnapshot& g, const std::string& key, const std::string& name,
                      const std::vector<const GpuSnapshot*>& history) {
    if (!windowed_ || history.size() < 2) return;
    const bool failing_now = std::any_of(g.nvml_errors.begin(), g.nvml_errors.end(),
                                         [](const NvmlCallError& e) { return !IsCapabilityCode(e.code); }) ||
                             (g.nvml_errors.empty() && !g.errors.empty());
    size_t hung = 0, failing = 0, lost = 0;
    std::vector<std::string> hung_calls, failed_calls;  // the calls of the samples that hung, that failed
    for (size_t i = 0; i + 1 < history.size(); ++i) {
      const GpuSnapshot& h = *history[i];
      if (h.lost) {  // GPU_IS_LOST: not a call that hung
        ++lost;
        continue;
      }
      const bool hang = !h.responsive;
      std::vector<std::string>& calls = hang ? hung_calls : failed_calls;
      auto remember = [&](const std::string& text) {
        if (std::find(calls.begin(), calls.end(), text) == calls.end()) calls.push_back(text);
      };
      bool failed = false;
      for (const auto& e : h.nvml_errors) {
        if (IsCapabilityCode(e.code)) continue;
        failed = true;
        remember(e.function.empty() ? e.message : e.function);
      }
      if (h.nvml_errors.empty()) {
        for (const auto& e : h.errors) {
          failed = true;
          remember(e.substr(0, e.find(':')));
        }
      }
      if (hang) {
        ++hung;
      } else if (failed) {
        ++failing;
      }
    }
    if (lost == 0 && hung == 0 && (failing == 0 || failing_now)) return;  // failing now: reported by Gpu()
    const std::string over = fmt::format("{} samples over {}", history.size(), FormatDuration(span_s_));
    if (lost > 0) {
      Add("nvml_error", Severity::kWarning, key, std::nullopt, std::nullopt,
          fmt::format("{} was lost (NVML answered GPU_IS_LOST) in {} of {}; it answers again in the last sample.", name,
                      lost, over),
          "A GPU that was lost and came back points at the GPU or its PCIe link: look for Xid 79 (fallen off the "
          "bus) in the kernel log; if it recurs, a person should drain the node and check the GPU and its link.");
    } else if (hung > 0) {
      Add("nvml_error", Severity::kWarning, key, std::nullopt, std::nullopt,
          fmt::format("{} did not answer in {} of {} ({}){}; it answers again in the last sample.", name, hung, over,
                      Join(hung_calls),
                      failing > 0 ? fmt::format("; NVML calls failed in {} other{} ({})", failing,
                                                failing == 1 ? "" : "s", Join(failed_calls))
                                  : std::string()),
          "A hung NVML call often means a stuck driver or GPU: check the kernel log for Xid and hung-task "
          "messages. If it recurs, a person may need to reset the GPU.");
    } else {
      Add("nvml_error", Severity::kWarning, key, std::nullopt, std::nullopt,
          fmt::format("{}: NVML calls failed in {} of {} ({}); they succeed in the last sample.", name, failing, over,
                      Join(failed_calls)),
          "If it recurs, check the driver (nvidia-smi -q) and the kernel log.");
    }
  }

  // A zombie is reaped by its parent: the step names it (by PID and command) when /proc told it.
  static std::string ZombieAction(const ProcessSnapshot& p, const std::string& dev) {
    const std::string others = " If the memory stays, look for other holders of " + dev + ".";
    if (!p.info.ppid) {
      return "A zombie cannot be killed: find its parent (`ps -o ppid= -p " + std::to_string(p.pid) +
             "`) and end the parent with SIGTERM so it is reaped." + others;
    }
    const int64_t parent = *p.info.ppid;
    if (parent == 1) {
      return "A zombie cannot be killed, and its parent is PID 1, which reaps it once every thread of it has "
             "exited: one still in the driver keeps it and its memory." +
             others +
             " Only a GPU reset (nvidia-smi --gpu-reset) or a reboot frees memory nobody holds, done by a "
             "person.";
    }
    const std::string& pc = p.info.parent_command;
    const std::string cmd = pc.empty() ? std::string() : " `" + Utf8Shortened(pc, 80) + "`";
    return fmt::format(
        "A zombie cannot be killed: end its parent, PID {}{}, with SIGTERM (`kill -TERM {}`) so it is "
        "reaped.{}",
        parent, cmd, parent, others);
  }

  void Process(const GpuSnapshot& g, const std::string& key, const ProcessSnapshot& p,
               const std::vector<const GpuSnapshot*>& history, bool has_unattributed) {
    std::string dev = g.minor ? fmt::format("/dev/nvidia{}", *g.minor) : std::string("the GPU's device file");
    if (!p.listed_by_nvml) {
      if (!last_.host_pids_visible) {
        Add("unlisted_holder", Severity::kOk, key, p.pid, std::nullopt,
            Who(p) + " has " + dev +
                " open; NVML lists host PIDs, which this PID namespace cannot see, so whether it is one of the "
                "processes NVML lists cannot be told here.",
            "Run vramwatch on the host (or with --pid=host) to match the holders of " + dev + " with NVML's list.");
        return;
      }
      if (auto other = ListedOn(last_, p.pid)) {
        Add("unlisted_holder", Severity::kOk, key, p.pid, std::nullopt,
            Who(p) + " has " + dev +
                (ProcessListComplete(g) ? " open without a context on GPU " + key
                                        : " open (NVML's process list of GPU " + key +
                                              " could not be read, so whether it holds a context there is unknown)") +
                "; it computes on GPU " + *other + " (CUDA opens every visible GPU's device file).",
            "Nothing to do; to keep it off this GPU, start it with CUDA_VISIBLE_DEVICES. A GPU reset of GPU " + key +
                " would need it stopped.");
        return;
      }
      if (!ProcessListComplete(g)) {
        Add("unlisted_holder", Severity::kOk, key, p.pid, std::nullopt,
            Who(p) + " has " + dev + " open; NVML's process list of GPU " + key +
                " could not be read, so whether it holds a context there is unknown.",
            "Check again once NVML answers for GPU " + key + ".");
        return;
      }
      Add("unlisted_holder", has_unattributed ? Severity::kWarning : Severity::kOk, key, p.pid, std::nullopt,
          Who(p) + " has " + dev + " open but NVML lists no context for it" +
              (has_unattributed ? "; it may hold the GPU memory no listed process accounts for."
                                : " (monitoring tools and nvidia-persistenced do this harmlessly)."),
          has_unattributed
              ? "If it is not a monitoring tool, end it: " + KillHint(p) + ", then check that the memory comes back."
              : "Nothing to do unless GPU memory goes missing.");
      return;
    }
    if (!p.info.alive && p.info.state == ProcState::kGone) {
      if (!last_.host_pids_visible) return;  // invisible, not dead
      Add("dead_holder", Severity::kCritical, key, p.pid, p.used_bytes,
          fmt::format("NVML lists {} with {} on GPU {}, but that process no longer exists{}.", Who(p),
                      p.used_bytes ? MiB(*p.used_bytes) : std::string("unknown memory"), key,
                      std::find(p.info.unreadable.begin(), p.info.unreadable.end(), "pid reused: start time changed") !=
                              p.info.unreadable.end()
                          ? " (its PID now belongs to another process)"
                          : ""),
          "The driver frees a context when the last file descriptor on " + dev +
              " closes: look for holders below (unlisted_holder) and end them with SIGTERM. If nothing holds it, "
              "only a GPU reset (nvidia-smi --gpu-reset) or a reboot frees it, done by a person.");
      return;
    }
    if (p.info.main_thread_exited && p.info.state != ProcState::kDiskSleep) {
      result_.notes.push_back(fmt::format(
          "PID {}: its main thread has exited (zombie) but other threads still run ({}): the process is alive, not "
          "a zombie to reap",
          p.pid,
          p.info.state == ProcState::kRunning    ? "running"
          : p.info.state == ProcState::kSleeping ? "sleeping"
                                                 : "stopped"));
    }
    if (p.info.state == ProcState::kZombie) {
      Add("zombie_holder", Severity::kCritical, key, p.pid, p.used_bytes,
          Who(p) + " is a zombie (exited, not yet reaped) and NVML still counts " +
              (p.used_bytes ? MiB(*p.used_bytes) : std::string("memory")) + " on GPU " + key + " for it.",
          ZombieAction(p, dev));
      return;
    }
    if (p.info.state == ProcState::kDiskSleep) {
      size_t in_d = 0, seen = 0;
      for (const auto* h : history) {
        if (const auto* q = SamePid(*h, p.pid)) {
          ++seen;
          if (q->info.state == ProcState::kDiskSleep) ++in_d;
        }
      }
      if (windowed_ && in_d < seen) {
        result_.notes.push_back(fmt::format("PID {} was in D state in {} of {} samples: not stuck", p.pid, in_d, seen));
      } else if (p.info.main_thread_exited) {
        // `ps` shows it <defunct>, yet it is no zombie its parent could reap: a thread of it is
        // still in the driver, and the process (its GPU memory with it) stays until that returns.
        const std::string tid =
            p.info.stuck_tid ? fmt::format("thread {}", *p.info.stuck_tid) : std::string("one of its threads");
        Add("stuck_holder", Severity::kCritical, key, p.pid, p.used_bytes,
            Who(p) + " is stuck: its main thread has exited (zombie, `<defunct>` in ps) but " + tid +
                " is in uninterruptible sleep (D), usually inside the NVIDIA driver" +
                (windowed_ ? fmt::format(", in every sample over {}", FormatDuration(span_s_)) : std::string()) +
                "; the process cannot be reaped until that call returns.",
            "Ending its parent does not help: the process is reaped only once " + tid +
                " leaves the driver. Send SIGTERM (" + KillHint(p) +
                "); it acts once the call returns. If it stays in D, check the kernel log for Xid and hung-task "
                "messages; a person may need to reset the GPU or reboot.");
        return;
      } else {
        Add("stuck_holder", Severity::kCritical, key, p.pid, p.used_bytes,
            Who(p) + " is in uninterruptible sleep (D), usually inside the NVIDIA driver" +
                (windowed_ ? fmt::format(", in every sample over {}", FormatDuration(span_s_)) : std::string()) +
                "; signals reach it only when that call returns.",
            "Send SIGTERM (" + KillHint(p) +
                "); it acts once the call returns. If it stays in D, check the kernel log for Xid and hung-task "
                "messages; a person may need to reset the GPU or reboot.");
        return;
      }
    }
    if (windowed_ && p.info.state != ProcState::kDiskSleep) {  // D only before the last sample
      size_t in_d = 0, seen = 0;
      for (const auto* h : history) {
        if (const auto* q = SamePid(*h, p.pid)) {
          ++seen;
          if (q->info.state == ProcState::kDiskSleep) ++in_d;
        }
      }
      if (in_d > 0) {
        result_.notes.push_back(fmt::format("PID {} was in D state in {} of {} samples: not stuck", p.pid, in_d, seen));
      }
    }
    Idle(key, p, history);
  }

  void Idle(const std::string& key, const ProcessSnapshot& p, const std::vector<const GpuSnapshot*>& history) {
    if (!windowed_) return;  // the note about one-shot checks is added once, below
    if (!p.used_bytes || *p.used_bytes == 0) return;
    size_t with_sample = 0, zero = 0, listed = 0;
    std::optional<double> cpu_first, cpu_last;
    for (const auto* h : history) {
      const auto* q = SamePid(*h, p.pid);
      if (q == nullptr || !q->listed_by_nvml) continue;
      ++listed;
      if (q->sm_util_ratio) {
        ++with_sample;
        if (*q->sm_util_ratio <= 0.0) ++zero;
      }
      if (q->info.cpu_seconds) {
        if (!cpu_first) cpu_first = q->info.cpu_seconds;
        cpu_last = q->info.cpu_seconds;
      }
    }
    if (listed < history.size()) {  // not held for the whole window, or not known to be
      size_t unreadable = 0;
      for (const auto* h : history) unreadable += ProcessListComplete(*h) ? 0 : 1;
      if (unreadable > 0) {
        result_.notes.push_back(fmt::format(
            "idle_holder not judged for PID {} on GPU {}: the process list could not be read in {} of {} samples",
            p.pid, key, unreadable, history.size()));
      }
      return;
    }
    if (with_sample < listed) {
      if (with_sample == 0 && history.back()->mig_enabled) {
        // Not per process: NVML gives no process SM use on a GPU in MIG mode. Said once per GPU.
        if (std::find(mig_no_sm_noted_.begin(), mig_no_sm_noted_.end(), key) == mig_no_sm_noted_.end()) {
          mig_no_sm_noted_.push_back(key);
          result_.notes.push_back(fmt::format(
              "idle_holder not judged on GPU {}: NVML gives no per-process SM use on a GPU in MIG mode", key));
        }
        return;
      }
      result_.notes.push_back(
          fmt::format("idle_holder not judged for PID {} on GPU {}: no SM sample in {} of {} samples", p.pid, key,
                      listed - with_sample, listed));
      return;
    }
    if (zero < listed) return;
    std::string cpu;
    if (cpu_first && cpu_last) {
      double used = *cpu_last - *cpu_first;
      cpu = used <= 0.01 ? " and used no CPU time either" : fmt::format(" (it used {:.1f} s of CPU meanwhile)", used);
    }
    Add("idle_holder", Severity::kWarning, key, p.pid, p.used_bytes,
        Who(p) + " holds " + MiB(*p.used_bytes) + " on GPU " + key + " with 0 % SM use for the whole " +
            FormatDuration(span_s_) + " window" + cpu + ".",
        "If it is a forgotten notebook or a finished job waiting on something, end it with SIGTERM: " + KillHint(p) +
            ". A server idling between requests is fine.");
  }

  static constexpr size_t kXidPidsNamed = 8, kXidMessageBytes = 240;
  void Xid(const XidSummary& x) {
    Severity sev = Severity::kWarning;
    using C = XidSummary::Class;
    if (x.klass == C::kHardware) sev = Severity::kCritical;
    if (x.klass == C::kInformational) sev = Severity::kOk;
    std::string what = x.meaning.empty() ? "unknown Xid" : x.meaning;
    // On a MIG GPU the driver names the GPU instance the fault hit: "on GPU 0, MIG GPU instance 9".
    std::string instances;
    if (!x.gpu_instances.empty()) {
      instances = fmt::format(", MIG GPU instance{} {}", x.gpu_instances.size() == 1 ? "" : "s",
                              fmt::join(x.gpu_instances, ", "));
    }
    std::string msg =
        fmt::format("Xid {} ({}{}) on GPU {}{}: {} time{}", x.xid, what, x.mnemonic.empty() ? "" : ", " + x.mnemonic,
                    x.gpu, instances, x.count, x.count == 1 ? "" : "s");
    // Bounded, whatever the log holds: the first kXidPidsNamed PIDs, and the last message cut to
    // kXidMessageBytes (a log of 5000 PIDs, or one line of megabytes, is not one finding's text).
    if (!x.pids.empty()) {
      std::vector<std::string> pids;
      for (size_t i = 0; i < x.pids.size() && i < kXidPidsNamed; ++i) pids.push_back(std::to_string(x.pids[i]));
      msg += (pids.size() == 1 ? ", PID " : ", PIDs ") + Join(pids);
      if (x.pids.size() > kXidPidsNamed) msg += fmt::format(" and {} more", x.pids.size() - kXidPidsNamed);
    }
    if (x.caused_by_xid) msg += fmt::format(", caused by Xid {}", *x.caused_by_xid);
    if (!x.last_message.empty()) msg += "; last: \"" + Utf8Shortened(x.last_message, kXidMessageBytes) + "\"";
    std::optional<int64_t> pid;
    if (x.pids.size() == 1) pid = x.pids[0];
    Add("xid", sev, x.gpu, pid, std::nullopt, msg,
        x.action.empty() ? "Look the code up in NVIDIA's Xid catalog; if it repeats, rule out hardware." : x.action);
    result_.findings.back().xid = x.xid;
  }

  // Each text once, in order, with how many times it came when more than once: seven MIG slots
  // failing alike are one error "(7 times)".
  static std::vector<std::string> Counted(const std::vector<std::string>& texts) {
    std::vector<std::pair<std::string, size_t>> seen;
    for (const std::string& t : texts) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == t; });
      if (it == seen.end()) {
        seen.emplace_back(t, 1);
      } else {
        ++it->second;
      }
    }
    std::vector<std::string> out;
    for (const auto& [t, n] : seen) out.push_back(n == 1 ? t : fmt::format("{} ({} times)", t, n));
    return out;
  }

  std::vector<std::string> mig_no_sm_noted_;  // GPUs whose MIG note on SM use was given
  const CheckInput& in_;
  const CheckConfig& c_;
  const HostSnapshot& last_;
  double span_s_ = 0;
  bool windowed_ = false;
  CheckResult result_;
};

}  // namespace

std::string GpuKey(const GpuSnapshot& gpu) {
  return std::to_string(gpu.index);
}

CheckResult EvaluateCheck(const CheckInput& input, const CheckConfig& config) {
  if (input.samples.empty()) {
    CheckResult r;
    r.notes.push_back("no snapshot was taken");
    return r;
  }
  CheckResult r = Rules(input, config).Run();
  if (config.window_s <= 0 || input.samples.size() < 2) {
    r.notes.push_back("idle_holder not judged: it needs --window (zero SM use over a period, not one instant)");
  }
  return r;
}

}  // namespace vw::detection
