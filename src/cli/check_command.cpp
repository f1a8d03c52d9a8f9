#include "cli/check_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/proc_flags.h"
#include "cli/xid_summary.h"
#include "core/exit_codes.h"
#include "core/time.h"
#include "core/units.h"
#include "outputs/check_report.h"
#include "outputs/json_text.h"
#include "sources/kernel/kernel_log_reader.h"
#include "sources/kernel/xid_catalog.h"
#include "sources/nvml/nvml_source.h"
#include "sources/procfs/holder_join.h"
#include "sources/procfs/kube_names.h"
#include "sources/procfs/proc_parsers.h"

namespace vw::cli {
namespace {

// PIDs NVML lists (on any GPU) whose process no longer exists, where host PIDs can be seen.
std::set<int64_t> DeadListedPids(const HostSnapshot& snap) {
  std::set<int64_t> out;
  if (!snap.host_pids_visible) return out;
  for (const GpuSnapshot& g : snap.gpus) {
    for (const ProcessSnapshot& p : g.processes) {
      if (p.listed_by_nvml && !p.info.alive && p.info.state == ProcState::kGone) out.insert(p.pid);
    }
  }
  return out;
}

bool Listed(const HostSnapshot& snap, int64_t pid) {
  for (const GpuSnapshot& g : snap.gpus) {
    for (const ProcessSnapshot& p : g.processes) {
      if (p.listed_by_nvml && p.pid == pid) return true;
    }
  }
  return false;
}

double Now() {
  using namespace std::chrono;
  return SteadyWallNow();  // the snapshots' clock (core/time.h)
}

// The report of a check that could not run: status "unknown" and the reason.
void PrintUnknownJson(std::FILE* out, const std::string& message) {
  nlohmann::ordered_json j{{"schema", "vramwatch.check/1"},
                           {"status", "unknown"},
                           {"exit_code", kExitUnknown},
                           {"error", message},
                           {"gpus", nlohmann::ordered_json::array()},
                           {"findings", nlohmann::ordered_json::array()},
                           {"notes", nlohmann::ordered_json::array()}};
  std::fprintf(out, "%s\n", outputs::JsonText(j, 2).c_str());
  std::fflush(out);
}

int Unknown(const CheckOptions& o, std::FILE* out, const std::string& message) {
  std::fprintf(stderr, "vramwatch check: UNKNOWN: %s\n", message.c_str());
  if (o.json) PrintUnknownJson(out, message);
  return kExitUnknown;
}

}  // namespace

bool ArgsAskForCheckJson(int argc, const char* const* argv) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i;  // options before the subcommand (--help-all)
  if (i >= argc || std::string(argv[i]) != "check") return false;
  for (++i; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a == "--json") return true;
  }
  return false;
}

int PrintCheckParseError(const std::string& message, std::FILE* out) {
  PrintUnknownJson(out, message);
  return kExitUnknown;
}

int RunCheck(const CheckOptions& o, std::FILE* out) {
  // Kernel log first: a bad --kernel-log is a usage error, found before sampling for a window.
  kernel::KernelLogRead klog;
  if (o.kernel_log == "none") {
    klog.notes.push_back("kernel log not read (--kernel-log none)");
  } else if (!o.kernel_log.empty()) {
    auto scan = kernel::ReadKernelLogFile(o.kernel_log);
    if (!scan.ok()) return Unknown(o, out, scan.status().message());
    klog.scan = std::move(*scan);
    klog.source = o.kernel_log;
  }

  // A missing or empty --proc-root would make every holder look dead: a usage error, before NVML.
  if (Status root = CheckProcRootFlag(o.proc_root); !root.ok()) return Unknown(o, out, root.message());
  auto passwd = ResolvePasswd(o.proc_root, o.passwd);
  if (!passwd.ok()) return Unknown(o, out, passwd.status().message());
  auto kube_logs = ResolveKubeLogs(o.kube_logs);
  if (!kube_logs.ok()) return Unknown(o, out, kube_logs.status().message());

  nvml::SourceOptions so;
  // NVML's name for each PID (nvmlSystemGetProcessName), as `record` writes it: the command shown
  // for a holder whose /proc/PID/cmdline cannot be read (or is empty); a readable one wins.
  so.query_process_names = true;
  so.library_path = nvml::ResolveLibraryPath(o.nvml_lib);
  so.call_deadline = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  so.init_deadline = std::chrono::milliseconds(static_cast<int64_t>(o.init_timeout_s * 1000));
  auto source = nvml::NvmlSource::Open(so);
  if (!source.ok()) {
    return Unknown(o, out, nvml::CannotUseNvmlMessage(source.status()));
  }
  nvml::NvmlSource& nvml = **source;
  if (nvml.gpu_count() == 0) return Unknown(o, out, nvml::NoGpuMessage(nvml.library_path()));

  procfs::DirProcFs fs(o.proc_root);
  procfs::ReaderOptions ro;
  ro.passwd_path = *passwd;
  procfs::ProcessReader reader(fs, ro);
  std::optional<procfs::DirProcFs> kube_fs;
  if (!kube_logs->empty()) kube_fs.emplace(*kube_logs);
  procfs::KubeNaming kube;  // what naming the last sample's holders said

  detection::CheckInput input;
  std::map<int64_t, double> start_times;
  std::map<int64_t, ProcessInfo> known_facts;
  procfs::JoinResult last_join;
  const auto start = std::chrono::steady_clock::now();
  auto take = [&] {
    HostSnapshot snap = nvml.TakeSnapshot();
    if (snap.t == 0) snap.t = Now();
    if (snap.hostname.empty()) {
      char host[256] = {};
      if (::gethostname(host, sizeof host - 1) == 0) snap.hostname = host;
    }
    last_join = procfs::JoinHolders(snap, reader, start_times);
    if (kube_fs) kube = procfs::NameFromKubeLogs(snap, *kube_fs);
    procfs::KeepFactsOfVanishedHolders(snap, known_facts);
    return snap;
  };
  for (;;) {
    HostSnapshot snap = take();
    if (o.config.window_s <= 0) {
      // One look: NVML may still list a process that has just exited while the driver frees its
      // context. A listed PID that no longer exists is looked for again for up to a second; one
      // that leaves the list meanwhile was an exit under way, not a dead holder.
      std::set<int64_t> dead = DeadListedPids(snap);
      for (int tries = 0; !dead.empty() && tries < 5; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        HostSnapshot again = take();
        std::set<int64_t> still = DeadListedPids(again);
        std::vector<int64_t> left;
        for (int64_t pid : dead) {
          if (!still.count(pid) && !Listed(again, pid)) left.push_back(pid);
        }
        snap = std::move(again);
        for (int64_t pid : left) {
          last_join.notes.push_back(fmt::format(
              "PID {} was listed by NVML after it had exited and left the list within {:.1f} s: an exit under way, "
              "not a dead holder",
              pid, 0.2 * (tries + 1)));
        }
        dead = std::move(still);
      }
      // One look: confirm D states over half a second, so one unlucky read is not "stuck".
      for (int64_t pid : procfs::RecheckDiskSleep(snap, reader, 5, 0.1)) {
        last_join.notes.push_back(fmt::format("PID {} was briefly in D state (I/O), not stuck", pid));
      }
    }
    input.samples.push_back(std::move(snap));
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (o.config.window_s <= 0 || std::chrono::duration<double>(elapsed).count() >= o.config.window_s) break;
    double left_s = o.config.window_s - std::chrono::duration<double>(elapsed).count();
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(o.interval_s, left_s)));
  }

  if (o.kernel_log.empty()) {
    klog = kernel::ReadSystemKernelLog();
    // The system log covers this boot: drop old application Xids, keep hardware ones (they stay
    // true until a reset). A user-given file may be from another boot: it is taken whole.
    auto uptime_text = fs.ReadFile("uptime");
    std::optional<double> uptime = uptime_text.ok() ? procfs::ParseUptime(*uptime_text) : std::nullopt;
    if (uptime && !klog.source.empty()) {
      size_t dropped = kernel::DropOlderThan(klog.scan, *uptime, o.xid_max_age_s, [](const kernel::XidEvent& e) {
        return kernel::StaysUntilReset(e.xid, e.message);
      });
      if (dropped > 0) {
        klog.notes.push_back(fmt::format("{} Xid line(s) older than {} ignored (--xid-max-age)", dropped,
                                         FormatDuration(o.xid_max_age_s)));
      }
    }
  }
  // A line that names an Xid but cannot be read is said, not dropped in silence (line numbers
  // only for a whole file).
  if (std::string n = kernel::UnreadableXidNote(klog.scan, klog.source, !o.kernel_log.empty()); !n.empty()) {
    klog.notes.push_back("kernel log " + n);
  }
  input.xids = SummarizeXids(klog.scan, input.samples.back());
  input.pid_namespace_evidence = last_join.hints.evidence;

  outputs::CheckReport report;
  report.result = detection::EvaluateCheck(input, o.config);
  for (const auto& n : last_join.notes) report.result.notes.push_back(n);
  if (!kube.problem.empty()) {
    report.result.notes.push_back("pod and container names not read: " + kube.problem + " (--kube-logs)");
  }
  if (!kube.unnamed_note.empty()) report.result.notes.push_back(kube.unnamed_note);
  for (const auto& n : klog.notes) report.result.notes.push_back(n);
  report.snapshot = input.samples.back();
  report.samples = input.samples.size();
  report.window_s = input.samples.size() > 1 ? input.samples.back().t - input.samples.front().t : 0;
  report.window_given_s = o.config.window_s;
  report.nvml_library = nvml.library_path();
  report.nvml_functions = nvml.BoundFunctions();
  report.kernel_log_source = klog.source;
  report.xid_events = klog.scan.events.size();
  report.control_only_holders = last_join.control_only;
  report.exit_code = ExitCodeFor(report.result.worst);

  if (o.json) {
    std::fprintf(out, "%s\n", outputs::JsonText(outputs::CheckReportJson(report), 2).c_str());
  } else {
    std::fputs(outputs::CheckReportText(report, o.color).c_str(), out);
  }
  std::fflush(out);
  return report.exit_code;
}

CommandRunner AddCheckCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check",
      "One look at every GPU: memory, every holder (PID, container PID, user, state, memory, SM, container/pod/"
      "Slurm job, command) and findings (orphaned memory, dead/zombie/stuck/idle holders, Xid errors) with the next "
      "step to take. Exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.");
  struct Flags {
    CheckOptions o;
    std::string window = "0s", interval = "1s", grace = "10s", timeout = "2s", init_timeout = "60s",
                threshold = "256MiB", xid_max_age = "24h";
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_flag("--json", flags->o.json, "Print one JSON object (schema vramwatch.check/1)");
  cmd->add_option("--nvml-lib", flags->o.nvml_lib,
                  "NVML library to load (default: $VRAMWATCH_NVML_LIB, else "
                  "libnvidia-ml.so.1)");
  cmd->add_option("--proc-root", flags->o.proc_root, "procfs root to read processes from")->capture_default_str();
  cmd->add_option("--passwd", flags->o.passwd,
                  "passwd file for user names (default: the system's user database; <proc-root>/passwd when the "
                  "root is a fixture)");
  cmd->add_option("--kube-logs", flags->o.kube_logs,
                  "The kubelet's log directory, whose pods/ and containers/ entries name each holder's pod, "
                  "namespace and container; 'none' to skip (default: /var/log)");
  cmd->add_option("--kernel-log", flags->o.kernel_log,
                  "Kernel log file to read Xid events from; 'none' to skip (default: /dev/kmsg, then dmesg)");
  cmd->add_option("--window", flags->window, "Sample for this long before judging (e.g. 30s); 0 = one look")
      ->capture_default_str();
  cmd->add_option("--interval", flags->interval, "Sampling interval within --window")->capture_default_str();
  cmd->add_option("--orphan-threshold", flags->threshold,
                  "Unattributed memory (used minus all listed processes) that counts as orphaned, with a unit "
                  "(512MiB, 1GiB; MB and GB read as nvidia-smi writes them)")
      ->capture_default_str();
  cmd->add_option("--grace", flags->grace, "How long memory may lag after a kill (lazy reclaim)")
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout, "Deadline for each NVML call")->capture_default_str();
  cmd->add_option("--init-timeout", flags->init_timeout,
                  "Deadline of nvmlInit, which takes seconds (tens on large hosts) when persistence mode is off")
      ->capture_default_str();
  cmd->add_option("--xid-max-age", flags->xid_max_age,
                  "Ignore application Xids older than this in the system kernel log (hardware Xids are kept)")
      ->capture_default_str();
  return [flags] {
    CheckOptions o = flags->o;
    struct {
      const char* flag;
      const std::string& text;
      double* out;
    } durations[] = {{"--window", flags->window, &o.config.window_s},
                     {"--interval", flags->interval, &o.interval_s},
                     {"--grace", flags->grace, &o.config.grace_s},
                     {"--timeout", flags->timeout, &o.timeout_s},
                     {"--init-timeout", flags->init_timeout, &o.init_timeout_s},
                     {"--xid-max-age", flags->xid_max_age, &o.xid_max_age_s}};
    for (auto& d : durations) {
      auto v = ParseDuration(d.text);
      if (!v.ok()) return Unknown(o, stdout, std::string(d.flag) + ": " + v.status().message());
      *d.out = *v;
    }
    if (o.interval_s <= 0) return Unknown(o, stdout, "--interval must be greater than 0");
    if (o.timeout_s <= 0) return Unknown(o, stdout, "--timeout must be greater than 0");
    if (o.init_timeout_s < 0.001) return Unknown(o, stdout, "--init-timeout must be at least 1ms");
    auto size = ParseSize(flags->threshold, SizeUnits::kGpuMemory);
    if (!size.ok()) return Unknown(o, stdout, "--orphan-threshold: " + size.status().message());
    o.config.orphan_threshold_bytes = *size;
    o.config.orphan_large_bytes = std::max<uint64_t>(o.config.orphan_large_bytes, *size);
    o.color = !o.json && ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    return RunCheck(o, stdout);
  };
}

}  // namespace vw::cli
