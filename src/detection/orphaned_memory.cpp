#include "detection/orphaned_memory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <utility>

#include "core/units.h"
#include "detection/check_facts.h"

namespace vw::detection {

using check_facts::AddFinding;
using check_facts::ComputeUnattributed;
using check_facts::Join;
using check_facts::JoinFew;
using check_facts::ListedOn;
using check_facts::MiB;
using check_facts::MigInstanceFreeAction;
using check_facts::MigInstanceName;
using check_facts::PidAndCommand;
using check_facts::Unattributed;
using check_facts::UnreadableFdsText;

uint64_t InstanceThreshold(const CheckConfig& c) {
  return std::max<uint64_t>(c.orphan_threshold_bytes, 1);
}

class OrphanedMemoryRule {
 public:
  OrphanedMemoryRule(const HostSnapshot& last, const CheckConfig& c, bool windowed, double span_s, CheckResult* result)
      : last_(last), c_(c), windowed_(windowed), span_s_(span_s), result_(result) {}

  void OnGpu(const GpuSnapshot& g, const std::string& key, const std::string& name, const Unattributed& un,
             const std::vector<const GpuSnapshot*>& history) {
    if (!un.bytes) {
      result_->notes.push_back(fmt::format("GPU {}: orphaned memory not judged: {}", key, un.why_not));
      return;
    }
    OrphanScope scope{name, *un.bytes, un.threshold, nullptr,
                      [this](const GpuSnapshot& h) -> std::optional<std::pair<uint64_t, uint64_t>> {
                        Unattributed u = ComputeUnattributed(h, c_);
                        if (!u.bytes) return std::nullopt;
                        return std::make_pair(*u.bytes, u.threshold);
                      }};
    Orphaned(g, key, scope, history);
  }

  void InInstance(const GpuSnapshot& g, const std::string& key, const std::string& name, const MigInstance& i,
                  const std::vector<const GpuSnapshot*>& history) {
    const MigDeviceSnapshot& m = *i.device;
    const std::string instance = MigInstanceName(m);
    if (!i.unattributed_bytes) {
      result_->notes.push_back(fmt::format("GPU {}: orphaned memory not judged on {}: {}", key, instance, i.why_not));
      return;
    }
    const unsigned gi = *m.gpu_instance_id;
    const uint64_t threshold = InstanceThreshold(c_);
    OrphanScope scope{instance + " of " + name, *i.unattributed_bytes, threshold, &m,
                      [gi, threshold](const GpuSnapshot& h) -> std::optional<std::pair<uint64_t, uint64_t>> {
                        for (const MigInstance& j : MigInstances(h)) {
                          if (j.device->gpu_instance_id != gi) continue;
                          if (!j.unattributed_bytes) return std::nullopt;
                          return std::make_pair(*j.unattributed_bytes, threshold);
                        }
                        return std::nullopt;
                      }};
    Orphaned(g, key, scope, history);
  }

 private:
  // What one orphaned-memory judgement is about: the whole GPU, or one MIG GPU instance of it.
  struct OrphanScope {
    std::string name;                             // as the message names it
    uint64_t bytes = 0, threshold = 0;            // unattributed memory now, the threshold in force
    const MigDeviceSnapshot* instance = nullptr;  // the instance's device; null for the whole GPU
    // The same figure and threshold in a sample of the window; missing where it cannot be computed.
    std::function<std::optional<std::pair<uint64_t, uint64_t>>(const GpuSnapshot&)> at;
  };

  void Add(std::string kind, Severity sev, std::string gpu, std::optional<int64_t> pid, std::optional<uint64_t> bytes,
           std::string message, std::string action) {
    AddFinding(result_, std::move(kind), sev, std::move(gpu), pid, bytes, std::move(message), std::move(action));
  }

  void Orphaned(const GpuSnapshot& g, const std::string& key, const OrphanScope& scope,
                const std::vector<const GpuSnapshot*>& history) {
    if (scope.bytes < scope.threshold) return;
    // On a MIG instance, the processes listed on it: those on the other instances are other tenants.
    auto on_scope = [&](const ProcessSnapshot& p) {
      return scope.instance == nullptr || p.gpu_instance_id == scope.instance->gpu_instance_id;
    };
    // Suspects: fd holders NVML lists nowhere (e.g. a forked worker that inherited the device file).
    // Holders listed on another GPU only have this GPU's file open because CUDA opens them all.
    // The message names each PID with its command (CommandOf: one name per PID on every GPU).
    std::vector<std::string> holders, elsewhere, holder_names, elsewhere_names, listed, listed_names;
    for (const auto& p : g.processes) {
      if (!p.listed_by_nvml) {
        const bool other = last_.host_pids_visible && ListedOn(last_, p.pid).has_value();
        (other ? elsewhere : holders).push_back(std::to_string(p.pid));
        (other ? elsewhere_names : holder_names).push_back(PidAndCommand(p));
      } else if (p.info.alive && on_scope(p)) {
        listed.push_back(std::to_string(p.pid));
        listed_names.push_back(PidAndCommand(p));
      }
    }
    const bool live_listed = !listed.empty();
    std::string dev = g.minor ? fmt::format("/dev/nvidia{}", *g.minor) : std::string("/dev/nvidia*");
    // What the fd scan could not see: a holder may be there, so "nothing holds it" is not known.
    std::vector<std::string> unseen;
    if (!g.minor) unseen.push_back("NVML gives no minor number for this GPU, so its device file cannot be looked for");
    if (last_.holder_scan.dirs_unreadable > 0) {
      unseen.push_back(UnreadableFdsText(last_));
    }
    if (!last_.holder_scan.pids_hidden.empty())
      unseen.push_back("other users' processes are hidden from vramwatch (hidepid)");
    const bool scan_blind = !unseen.empty();
    const std::string unreadable_hint = scan_blind ? " as far as vramwatch could see (" + Join(unseen) + ")" : "";
    std::string holder_text;
    std::string action;
    if (!last_.host_pids_visible) {
      // NVML's PIDs are the host's and the fd scan's are this namespace's: they cannot be matched,
      // and the host's other processes cannot be seen at all.
      holder_text = holders.empty()
                        ? "No process in this PID namespace has " + dev + " open; the host's processes cannot be seen"
                        : "Processes in this PID namespace with " + dev + " open (their PIDs cannot be matched with " +
                              "NVML's host PIDs): " + JoinFew(holder_names);
      action = "Run vramwatch on the host (or with --pid=host) to see which process holds it.";
    } else {
      // Processes a GPU reset would need stopped: those computing here and those computing elsewhere.
      std::vector<std::string> users = listed;
      users.insert(users.end(), elsewhere.begin(), elsewhere.end());
      std::vector<std::string> others;
      if (!listed.empty()) {
        others.push_back(std::string("the processes NVML lists on this ") + (scope.instance ? "GPU instance" : "GPU") +
                         ", whose memory is counted (" + JoinFew(listed_names) + ")");
      }
      if (!elsewhere.empty()) others.push_back("processes computing on other GPUs (" + JoinFew(elsewhere_names) + ")");
      if (!holders.empty()) {
        holder_text = "PIDs with " + dev + " open that NVML does not list: " + JoinFew(holder_names);
        if (!elsewhere.empty())
          holder_text += "; processes computing on other GPUs have it open too (" + JoinFew(elsewhere_names) + ")";
      } else if (scope.instance != nullptr) {
        // The other instances' processes have the device open too: they are other tenants.
        holder_text = (listed.empty() ? std::string("No process is listed on this GPU instance, and")
                                      : "Apart from the processes NVML lists on this GPU instance, whose memory is "
                                        "counted (" +
                                            JoinFew(listed_names) + "),") +
                      " no process NVML does not list has " + dev + " open" + unreadable_hint;
      } else if (others.empty()) {
        holder_text = "No process has " + dev + " open" + unreadable_hint;
      } else if (listed.empty()) {
        holder_text = "Only processes computing on other GPUs have " + dev + " open (" + JoinFew(elsewhere_names) +
                      "), and none of them owns this memory" + unreadable_hint;
      } else {
        holder_text = "Apart from " + fmt::format("{}", fmt::join(others, " and ")) + ", no process has " + dev +
                      " open" + unreadable_hint;
      }
      action =
          holders.empty() && scan_blind
              ? "Find the holder first: " +
                    std::string(last_.holder_scan.dirs_unreadable > 0 || !last_.holder_scan.pids_hidden.empty()
                                    ? "run vramwatch as root so it can read every process's open files (or `sudo "
                                      "fuser -v " +
                                          dev + "`)"
                                    : "look for it with `sudo fuser -v /dev/nvidia*` (`nvidia-smi -q` gives the "
                                      "GPU's minor number)") +
                    ", and end the process that has it open with SIGTERM. Whether anything holds this memory cannot "
                    "be told from here, so a GPU reset is not called for yet."
          : holders.empty() && scope.instance != nullptr
              ? MigInstanceFreeAction(*scope.instance, key, JoinFew(listed), listed.size(), listed.empty())
          : holders.empty()
              ? std::string(others.empty() ? "Nothing holds it any more, so no kill can free it"
                                           : "No process NVML does not list holds it, so ending one cannot free it") +
                    ": only a GPU reset (`nvidia-smi --gpu-reset -i " + key + "`, with no process using the GPU" +
                    (users.empty() ? std::string()
                                   : (users.size() == 1 ? ": stop PID " : ": stop PIDs ") + JoinFew(users) + " first") +
                    ") or a reboot will, to be done by a person."
              : "End those PIDs with SIGTERM (then SIGKILL if they do not exit), then check that the memory comes "
                "back.";
    }
    std::string amount = fmt::format("{} of used memory on {} belongs to no process NVML lists{}", MiB(scope.bytes),
                                     scope.name, scope.instance ? " on it" : "");
    if (windowed_ && span_s_ >= c_.grace_s) {
      // Judged on the samples where it could be computed: one whose process list or memory could
      // not be read says nothing either way (it is not "below").
      size_t above = 0, readable = 0;
      for (const auto* h : history) {
        auto u = scope.at(*h);
        if (!u) continue;
        ++readable;
        if (u->first >= u->second) ++above;
      }
      if (readable < 2) {
        Add("orphaned_memory", Severity::kWarning, key, std::nullopt, scope.bytes,
            amount + fmt::format(" now; it could be computed in only {} of {} samples over {}, too few to say "
                                 "whether it persists.",
                                 readable, history.size(), FormatDuration(span_s_)),
            "Check again in a minute. " + holder_text + ".");
        return;
      }
      if (above < readable) {
        Add("orphaned_memory", Severity::kWarning, key, std::nullopt, scope.bytes,
            amount + fmt::format(" now, but it was below {} in {} of {} samples over {}: it may still be reclaimed.",
                                 MiB(scope.threshold), readable - above, readable, FormatDuration(span_s_)),
            "Check again in a minute. " + holder_text + ".");
        return;
      }
      const std::string unread =
          readable < history.size()
              ? fmt::format(" (in every sample that could be read: {} of {})", readable, history.size())
              : std::string();
      // Persistent, but whether anything holds it is unknown when the scan could not see everything,
      // and in another PID namespace the holders in sight cannot be told from NVML's own.
      const bool unknown_holder = (holders.empty() && scan_blind) || !last_.host_pids_visible;
      Add("orphaned_memory", unknown_holder ? Severity::kWarning : Severity::kCritical, key, std::nullopt, scope.bytes,
          amount + fmt::format(", and has for the whole {}{} (grace {}). {}.", FormatDuration(span_s_), unread,
                               FormatDuration(c_.grace_s), holder_text),
          action);
      return;
    }
    bool large_and_unheld = scope.bytes >= c_.orphan_large_bytes && holders.empty() && !live_listed &&
                            last_.host_pids_visible && !scan_blind;
    Add("orphaned_memory", large_and_unheld ? Severity::kCritical : Severity::kWarning, key, std::nullopt, scope.bytes,
        amount + ". " + holder_text + "." +
            (large_and_unheld
                 ? std::string()
                 : fmt::format(" It may be lazy reclaim after a recent kill (allow {}).", FormatDuration(c_.grace_s))),
        large_and_unheld ? action
                         : "Run `vramwatch check --window 30s` to see whether it persists. " +
                               std::string(holders.empty() ? "" : "If it does: ") + action);
  }

  const HostSnapshot& last_;
  const CheckConfig& c_;
  bool windowed_;
  double span_s_;
  CheckResult* result_;
};

void JudgeOrphanedMemory(const GpuSnapshot& g, const std::string& key, const std::string& name,
                         const check_facts::Unattributed& un, const std::vector<MigInstance>& instances,
                         const std::vector<const GpuSnapshot*>& history, const OrphanWindow& window,
                         const HostSnapshot& last, const CheckConfig& c, CheckResult* result) {
  OrphanedMemoryRule rule(last, c, window.windowed, window.span_s, result);
  const bool per_instance = std::any_of(instances.begin(), instances.end(),
                                        [](const MigInstance& i) { return i.unattributed_bytes.has_value(); });
  if (!per_instance) {
    rule.OnGpu(g, key, name, un, history);
    return;
  }
  for (const MigInstance& i : instances) rule.InInstance(g, key, name, i, history);
}

}  // namespace vw::detection
