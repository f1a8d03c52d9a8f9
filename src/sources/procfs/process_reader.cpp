#include "sources/procfs/process_reader.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "sources/procfs/proc_parsers.h"

namespace vw::procfs {
namespace {

std::string Brief(const Status& s) {
  switch (s.code()) {
    case StatusCode::kPermissionDenied: return "permission denied";
    // A file missing under /proc/PID/ while the PID's stat was read: the process is there, the
    // file is not (a gone PID is found by its stat, ProcState::kGone).
    case StatusCode::kNotFound: return "missing";
    default: return s.message();
  }
}

constexpr unsigned kNvidiaMajor = 195;  // NVIDIA's character devices (Documentation/admin-guide/devices.txt)
constexpr unsigned kNvidiaCtlMinor = 255;
constexpr unsigned kNvidiaModesetMinor = 254;

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// hidepid (Linux 3.3+; names since 5.8): 0/off shows every process; 1/noaccess lists them but
// refuses their files to others; 2/invisible and 4/ptraceable do not even list them.
HiddenPids HiddenPidsOf(const ProcFs& fs, const ReaderOptions& o) {
  HiddenPids h;
  std::optional<ProcMountOptions> mount;
  // The mount tables name the mount point as the kernel resolved it: a --proc-root given through a
  // symlink, relative or with "//" is looked up by its canonical path too.
  const std::string root = fs.Describe("");
  std::error_code ec;
  const std::string canonical = std::filesystem::canonical(root, ec).string();
  for (const char* file : {"self/mountinfo", "mounts"}) {
    if (auto text = fs.ReadFile(file); text.ok()) {
      mount = ProcMountOptionsAt(*text, root);
      if (!mount && !ec && canonical != root) mount = ProcMountOptionsAt(*text, canonical);
      if (mount) break;
    }
  }
  if (!mount || mount->hidepid.empty() || mount->hidepid == "0" || mount->hidepid == "off") return h;
  const uint32_t euid = o.euid ? *o.euid : static_cast<uint32_t>(::geteuid());
  if (euid == 0) return h;
  std::vector<uint32_t> groups;
  if (o.groups) {
    groups = *o.groups;
  } else {
    groups.push_back(static_cast<uint32_t>(::getegid()));
    int n = ::getgroups(0, nullptr);
    std::vector<gid_t> list(n > 0 ? static_cast<size_t>(n) : 0);
    if (n > 0 && ::getgroups(n, list.data()) == n) groups.insert(groups.end(), list.begin(), list.end());
  }
  if (mount->gid && std::find(groups.begin(), groups.end(), *mount->gid) != groups.end()) return h;
  const std::string& v = mount->hidepid;
  h.hidden = true;
  h.missing_is_unknown = v != "1" && v != "noaccess";
  h.option = "hidepid=" + v;
  h.note =
      fs.Describe("") + " is mounted with " + h.option + " and vramwatch runs as uid " + std::to_string(euid) +
      ": processes of other users are " +
      (h.missing_is_unknown ? "hidden (a listed PID not found may be alive: its state is unknown)" : "unreadable") +
      ", and their /dev/nvidia* files cannot be seen. Run vramwatch as root" +
      (mount->gid ? " or in group " + std::to_string(*mount->gid) + " (the mount's gid=)" : std::string()) +
      " to see every process.";
  return h;
}

}  // namespace

ProcessReader::ProcessReader(const ProcFs& fs, ReaderOptions options) : fs_(fs), options_(std::move(options)) {
  if (!options_.self_pid) {
    // A host's /proc mounted into a container numbers us as the host does, not as getpid() does:
    // its "self" link says which PID we are there.
    if (auto self = fs_.ReadLink("self"); self.ok() && IsNumber(*self)) {
      int64_t pid = 0;
      std::from_chars(self->data(), self->data() + self->size(), pid);
      options_.self_pid = pid;
    } else {
      options_.self_pid = static_cast<int64_t>(::getpid());
    }
  }
  hidden_ = HiddenPidsOf(fs_, options_);
  if (options_.clock_ticks_per_second <= 0) {
    long hz = ::sysconf(_SC_CLK_TCK);
    options_.clock_ticks_per_second = hz > 0 ? static_cast<double>(hz) : 100.0;
  }
}

std::string ProcessReader::UserFor(uint32_t uid, std::vector<std::string>& unreadable) const {
  if (options_.passwd_path.empty()) {
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return found->pw_name;
    return "";
  }
  auto text = fs_.ReadFile(options_.passwd_path);
  if (!text.ok()) {
    unreadable.push_back("user: " + text.status().message());
    return "";
  }
  return UserFromPasswd(*text, uid);
}

ProcessInfo ProcessReader::Read(int64_t pid, std::optional<double> expected_start_s) const {
  ProcessInfo info;
  const std::string dir = std::to_string(pid);
  const double hz = options_.clock_ticks_per_second;

  auto stat_text = fs_.ReadFile(dir + "/stat");
  if (!stat_text.ok()) {
    if (stat_text.status().code() == StatusCode::kNotFound && hidden_.missing_is_unknown) {
      // Not listed may be hidden: another user's process is invisible to us, alive or not.
      info.alive = false;
      info.state = ProcState::kUnknown;
      info.unreadable.push_back("state: not visible (" + hidden_.option + " hides other users' processes)");
      return info;
    }
    if (stat_text.status().code() == StatusCode::kNotFound) {
      info.alive = false;
      info.state = ProcState::kGone;
      return info;
    }
    // The directory may exist while stat is unreadable: alive is then unknown, report it.
    info.unreadable.push_back("stat: " + Brief(stat_text.status()));
    auto listing = fs_.ListDir(dir);
    info.alive = listing.ok() || listing.status().code() != StatusCode::kNotFound;
    if (!info.alive) info.state = ProcState::kGone;
  } else {
    auto stat = ParseStat(*stat_text, fs_.Describe(dir + "/stat"));
    if (!stat.ok()) {
      info.alive = true;
      info.unreadable.push_back("stat: " + stat.status().message());
    } else {
      info.start_time_s = static_cast<double>(stat->starttime_ticks) / hz;
      if (expected_start_s && std::fabs(*expected_start_s - *info.start_time_s) > 1.0 / hz) {
        // Same number, different process: the one we knew is gone.
        info.alive = false;
        info.state = ProcState::kGone;
        info.unreadable.push_back("pid reused: start time changed");
        return info;
      }
      info.alive = true;
      info.state = StateFromLetter(stat->state);
      if (stat->ppid > 0) info.ppid = stat->ppid;
      info.cpu_seconds = static_cast<double>(stat->utime_ticks + stat->stime_ticks) / hz;
      if (info.state == ProcState::kZombie) ReadThreadsOfZombie(pid, stat->num_threads, info);
    }
  }

  auto status_text = fs_.ReadFile(dir + "/status");
  if (!status_text.ok()) {
    if (status_text.status().code() == StatusCode::kNotFound && !info.alive) return info;
    info.unreadable.push_back("status: " + Brief(status_text.status()));
  } else {
    auto status = ParseStatus(*status_text, fs_.Describe(dir + "/status"));
    if (!status.ok()) {
      info.unreadable.push_back("status: " + status.status().message());
    } else {
      info.uid = status->uid;
      // Every process's status has a Uid line: one without (a cut or garbled file) is unreadable.
      if (!info.uid) info.unreadable.push_back("status: " + fs_.Describe(dir + "/status") + ": no 'Uid:' line");
      // NSpid lists the PID in each namespace from the host's down: the second is the container's
      // (`docker exec`, `kubectl exec` act there), whatever a process in it nested further below.
      if (status->nspid.size() > 1 && status->nspid[1] != pid) info.container_pid = status->nspid[1];
      if (info.uid) info.user = UserFor(*info.uid, info.unreadable);
    }
  }

  auto cmdline = fs_.ReadFile(dir + "/cmdline");
  if (!cmdline.ok()) {
    info.unreadable.push_back("cmdline: " + Brief(cmdline.status()));
  } else {
    info.command = ParseCmdline(*cmdline);
  }

  // A zombie is reaped by its parent: the finding names it, so read who it is.
  if (info.state == ProcState::kZombie && info.ppid) {
    if (auto parent = fs_.ReadFile(std::to_string(*info.ppid) + "/cmdline"); parent.ok()) {
      info.parent_command = ParseCmdline(*parent);
    }
  }

  auto cgroup = fs_.ReadFile(dir + "/cgroup");
  if (!cgroup.ok()) {
    info.unreadable.push_back("cgroup: " + Brief(cgroup.status()));
  } else {
    CgroupRefs refs = ParseCgroup(*cgroup);
    info.container_id = refs.container_id;
    info.container_runtime = refs.runtime;
    info.pod_uid = refs.pod_uid;
    info.slurm_job = refs.slurm_job;
  }

  // The files above are read one after the other: the process may have exited meanwhile (its files
  // then read as missing, which would say "alive, files missing"), or its PID may even belong to
  // another process by now (the files would mix two processes). Its stat, read again, tells.
  if (info.alive && info.start_time_s) {
    auto again = fs_.ReadFile(dir + "/stat");
    std::optional<double> start_again;
    if (again.ok()) {
      if (auto stat = ParseStat(*again, fs_.Describe(dir + "/stat")); stat.ok()) {
        start_again = static_cast<double>(stat->starttime_ticks) / hz;
      }
    }
    const bool vanished = !again.ok() && again.status().code() == StatusCode::kNotFound;
    const bool reused = start_again && std::fabs(*start_again - *info.start_time_s) > 1.0 / hz;
    if (vanished || reused) {
      ProcessInfo gone;
      gone.alive = false;
      gone.state = ProcState::kGone;
      gone.start_time_s = info.start_time_s;
      if (vanished) {
        // What was read before it went is its own; the files it no longer has are not "missing".
        CopyIdentity(info, gone);
        for (const std::string& u : info.unreadable) {
          if (u.size() < 9 || u.compare(u.size() - 9, 9, ": missing") != 0) gone.unreadable.push_back(u);
        }
      } else {
        gone.unreadable.push_back("pid reused: start time changed");
      }
      return gone;
    }
  }
  return info;
}

// A zombie main thread with live threads is no zombie to reap: `ps` shows the process <defunct>
// while a thread of it is still inside the driver (D), or still running. Their states decide.
void ProcessReader::ReadThreadsOfZombie(int64_t pid, int64_t num_threads, ProcessInfo& info) const {
  const std::string task_dir = std::to_string(pid) + "/task";
  auto tasks = fs_.ListDir(task_dir);
  if (!tasks.ok()) {
    if (num_threads > 1) info.unreadable.push_back("task: " + Brief(tasks.status()));
    return;
  }
  std::vector<int64_t> tids;
  for (const std::string& name : *tasks) {
    int64_t tid = 0;
    if (IsNumber(name) && std::from_chars(name.data(), name.data() + name.size(), tid).ec == std::errc() &&
        tid != pid) {
      tids.push_back(tid);
    }
  }
  std::sort(tids.begin(), tids.end());
  std::optional<ProcState> live;  // the busiest live thread's: R before S before the others
  auto rank = [](ProcState s) { return s == ProcState::kRunning ? 0 : s == ProcState::kSleeping ? 1 : 2; };
  for (int64_t tid : tids) {
    const std::string rel = task_dir + "/" + std::to_string(tid) + "/stat";
    auto text = fs_.ReadFile(rel);
    if (!text.ok()) continue;  // exited meanwhile, or not readable: says nothing of the others
    auto stat = ParseStat(*text, fs_.Describe(rel));
    if (!stat.ok()) continue;
    const ProcState s = StateFromLetter(stat->state);
    if (s == ProcState::kDiskSleep) {
      info.state = ProcState::kDiskSleep;
      info.main_thread_exited = true;
      info.stuck_tid = tid;
      return;
    }
    if (s == ProcState::kZombie || s == ProcState::kDead || s == ProcState::kUnknown) continue;
    if (!live || rank(s) < rank(*live)) live = s;
  }
  if (live) {
    info.state = *live;
    info.main_thread_exited = true;
  } else if (num_threads > 1 && tids.empty()) {
    info.unreadable.push_back("task: " + std::to_string(num_threads) + " threads, none listed");
  }
}

DeviceFdScan ProcessReader::ScanDeviceFds() const {
  DeviceFdScan scan;
  auto pids = fs_.ListDir("");
  if (!pids.ok()) {
    scan.unreadable.push_back(pids.status().message());
    return scan;
  }
  std::vector<int64_t> numbers;
  for (const auto& name : *pids) {
    if (!IsNumber(name)) continue;
    int64_t pid = 0;
    std::from_chars(name.data(), name.data() + name.size(), pid);
    if (pid != *options_.self_pid) numbers.push_back(pid);
  }
  std::sort(numbers.begin(), numbers.end());
  for (int64_t pid : numbers) {
    ++scan.pids_scanned;
    const std::string fd_dir = std::to_string(pid) + "/fd";
    auto fds = fs_.ListDir(fd_dir);
    if (!fds.ok()) {
      if (fds.status().code() == StatusCode::kNotFound) continue;  // exited meanwhile
      // A kernel thread opens no file (its fd directory is root's only): not a holder unseen.
      if (auto stat = fs_.ReadFile(std::to_string(pid) + "/stat"); stat.ok()) {
        if (auto f = ParseStat(*stat, ""); f.ok() && (f->flags & kPfKthread) != 0) continue;
      }
      ++scan.pids_unreadable;
      if (scan.unreadable_pids.size() < DeviceFdScan::kMaxNamedPids) scan.unreadable_pids.push_back(pid);
      if (scan.unreadable.size() < 5) scan.unreadable.push_back(fds.status().message());
      continue;
    }
    DeviceFdHolder holder;
    holder.pid = pid;
    std::set<unsigned> minors;
    for (const auto& fd : *fds) {
      const std::string link = fd_dir + "/" + fd;
      auto target = fs_.ReadLink(link);
      if (!target.ok()) continue;  // closed meanwhile, or not a link
      std::string_view t = *target;
      // The device number says which GPU, whatever the file is called: a container given
      // `--device /dev/nvidia1:/dev/nvidia0` holds GPU 1 through its /dev/nvidia0. NVIDIA's character
      // devices have major 195: minor 255 is nvidiactl, 254 nvidia-modeset, the others one GPU's.
      // Where stat() fails (a fixture's link to nothing, a file closed meanwhile) the name decides.
      bool other_device = false;
      if (t.substr(0, 5) == "/dev/") {
        if (auto kind = fs_.Stat(link); kind.ok() && kind->char_device) {
          if (kind->major == kNvidiaMajor) {
            if (kind->minor == kNvidiaCtlMinor) {
              holder.control = true;
            } else if (kind->minor != kNvidiaModesetMinor) {
              minors.insert(kind->minor);
            }
            continue;
          }
          other_device = true;  // nvidia-uvm (its major is assigned at load), or no NVIDIA device at all
        }
      }
      // A device node unlinked while open (a container's /dev torn down, nvidia-modprobe making it
      // again) reads "/dev/nvidia1 (deleted)": the file is still open, and holds the GPU.
      static constexpr std::string_view kDeleted = " (deleted)";
      if (t.size() > kDeleted.size() && t.substr(t.size() - kDeleted.size()) == kDeleted) {
        t.remove_suffix(kDeleted.size());
      }
      static constexpr std::string_view kPrefix = "/dev/nvidia";
      if (t.substr(0, kPrefix.size()) != kPrefix) continue;
      std::string_view rest = t.substr(kPrefix.size());
      if (rest == "ctl") {
        holder.control = true;
      } else if (rest == "-uvm" || rest == "-uvm-tools") {
        holder.uvm = true;
      } else if (!other_device && !rest.empty() && (rest.size() == 1 || rest[0] != '0') &&
                 std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        // The driver names GPU N /dev/nvidiaN: "/dev/nvidia01" is no GPU's file.
        unsigned minor = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), minor);
        if (ec == std::errc() && p == rest.data() + rest.size()) minors.insert(minor);
      }
    }
    if (minors.empty() && !holder.control && !holder.uvm) continue;
    holder.minors.assign(minors.begin(), minors.end());
    scan.holders.push_back(std::move(holder));
  }
  return scan;
}

NamespaceHints ProcessReader::PidNamespaceHints() const {
  NamespaceHints hints;
  // PID 2 is the kernel's kthreadd, child of PID 0, in the host's PID namespace only: a procfs
  // that shows it shows host PIDs, whatever namespace vramwatch itself runs in (a host's /proc
  // mounted into a container). One that shows another PID 2, or none, is a container's own.
  auto pid2 = fs_.ReadFile("2/status");
  std::optional<StatusFields> pid2_status;
  if (pid2.ok()) {
    if (auto parsed = ParseStatus(*pid2, fs_.Describe("2/status")); parsed.ok()) pid2_status = *parsed;
  }
  if (pid2_status && pid2_status->name == "kthreadd" && pid2_status->ppid == 0) return hints;
  if (auto sched = fs_.ReadFile("1/sched"); sched.ok()) {
    if (auto pid = PidFromSched(*sched); pid && *pid != 1) {
      hints.in_pid_namespace = true;
      hints.evidence = "PID 1 here is PID " + std::to_string(*pid) + " on the host (/proc/1/sched)";
      return hints;
    }
  }
  if (auto cgroup = fs_.ReadFile("1/cgroup"); cgroup.ok()) {
    CgroupRefs refs = ParseCgroup(*cgroup);
    if (!refs.container_id.empty() || !refs.pod_uid.empty()) {
      hints.in_pid_namespace = true;
      hints.evidence = "PID 1 here runs in container " + refs.container_id.substr(0, 12) +
                       (refs.pod_uid.empty() ? "" : " of pod " + refs.pod_uid) + " (/proc/1/cgroup)";
      return hints;
    }
  }
  if (pid2_status) {
    hints.in_pid_namespace = true;
    hints.evidence = "PID 2 here is `" + pid2_status->name + "`, not the kernel's kthreadd of the host (" +
                     fs_.Describe("2/status") + ")";
  } else if (!pid2.ok() && pid2.status().code() == StatusCode::kNotFound && !hidden_.missing_is_unknown) {
    hints.in_pid_namespace = true;
    hints.evidence = fs_.Describe("") + " has no PID 2, the kernel's kthreadd of the host's PID namespace";
  }
  // PID 2 unreadable (EACCES), or hidden by hidepid: nothing says we are in a container; taken as
  // the host.
  return hints;
}

}  // namespace vw::procfs
