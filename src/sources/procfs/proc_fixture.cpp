#include "sources/procfs/proc_fixture.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

namespace vw::procfs {
namespace {

namespace fs = std::filesystem;

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return FromErrno(errno, "write " + path.string());
  out << text;
  out.close();
  if (!out) return Status::IoError("write " + path.string() + ": short write");
  return Status::Ok();
}

}  // namespace

std::string FormatStatLine(const FakeProcess& p) {
  // Fields 1..52 as in proc(5); only pid, comm, state, ppid, utime, stime, starttime matter to us.
  std::string s = std::to_string(p.pid) + " (" + p.comm + ") " + p.state;
  for (int field = 4; field <= 52; ++field) {
    uint64_t v = 0;
    if (field == 4) v = static_cast<uint64_t>(p.ppid);
    if (field == 9) v = p.flags;
    if (field == 14) v = p.utime_ticks;
    if (field == 15) v = p.stime_ticks;
    if (field == 20) v = 1 + p.thread_states.size();  // threads
    if (field == 22) v = p.starttime_ticks;
    s += " " + std::to_string(v);
  }
  return s + "\n";
}

Status WriteProcFixture(const std::string& root, const std::vector<FakeProcess>& processes,
                        const FixtureOptions& options) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::IoError("create " + root + ": " + ec.message());
  std::string passwd;
  for (const auto& [uid, name] : options.users) {
    passwd += name + ":x:" + std::to_string(uid) + ":" + std::to_string(uid) + "::/home/" + name + ":/bin/sh\n";
  }
  VW_RETURN_IF_ERROR(WriteText(fs::path(root) / "passwd", passwd));
  // A real procfs always has PID 1 (init): unless the caller describes it, it is an idle init with no
  // device files open, so that a fixture with no other process is still a procfs root.
  std::vector<FakeProcess> all = processes;
  if (std::none_of(all.begin(), all.end(), [](const FakeProcess& p) { return p.pid == 1; })) {
    FakeProcess init;
    init.pid = 1;
    init.comm = "systemd";
    init.uid = 0;
    init.argv = {"/sbin/init"};
    init.cgroup = "0::/init.scope\n";
    init.starttime_ticks = 1;
    all.insert(all.begin(), init);
  }
  // The host's procfs shows the kernel's threads too: kthreadd is PID 2, child of PID 0.
  if (options.kthreadd && std::none_of(all.begin(), all.end(), [](const FakeProcess& p) { return p.pid == 2; })) {
    FakeProcess kthreadd;
    kthreadd.pid = 2;
    kthreadd.comm = "kthreadd";
    kthreadd.uid = 0;
    kthreadd.argv = {};
    kthreadd.cgroup = "0::/\n";
    kthreadd.starttime_ticks = 1;
    kthreadd.ppid = 0;
    all.push_back(kthreadd);
  }
  for (const auto& p : all) {
    fs::path dir = fs::path(root) / std::to_string(p.pid);
    fs::create_directories(dir / "fd", ec);
    if (ec) return Status::IoError("create " + dir.string() + ": " + ec.message());
    VW_RETURN_IF_ERROR(WriteText(dir / "stat", FormatStatLine(p)));
    fs::create_directories(dir / "task" / std::to_string(p.pid), ec);
    if (ec) return Status::IoError("create " + dir.string() + "/task: " + ec.message());
    VW_RETURN_IF_ERROR(WriteText(dir / "task" / std::to_string(p.pid) / "stat", FormatStatLine(p)));
    for (size_t i = 0; i < p.thread_states.size(); ++i) {
      FakeProcess thread = p;
      thread.pid = p.pid + 1 + static_cast<int64_t>(i);
      thread.state = p.thread_states[i];
      fs::path task = dir / "task" / std::to_string(thread.pid);
      fs::create_directories(task, ec);
      if (ec) return Status::IoError("create " + task.string() + ": " + ec.message());
      VW_RETURN_IF_ERROR(WriteText(task / "stat", FormatStatLine(thread)));
    }
    std::string nspid = "NSpid:";
    if (p.nspid.empty()) {
      nspid += "\t" + std::to_string(p.pid);
    } else {
      for (int64_t n : p.nspid) nspid += "\t" + std::to_string(n);
    }
    std::string uid = std::to_string(p.uid);
    VW_RETURN_IF_ERROR(WriteText(dir / "status", "Name:\t" + p.comm + "\nState:\t" + std::string(1, p.state) +
                                                     "\nTgid:\t" + std::to_string(p.pid) + "\nPid:\t" +
                                                     std::to_string(p.pid) + "\nPPid:\t" + std::to_string(p.ppid) +
                                                     "\nUid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid + "\n" +
                                                     nspid + "\n"));
    std::string cmdline;
    if (p.state != 'Z') {
      for (const auto& a : p.argv) {
        cmdline += a;
        cmdline.push_back('\0');
      }
    }
    VW_RETURN_IF_ERROR(WriteText(dir / "cmdline", cmdline));
    VW_RETURN_IF_ERROR(WriteText(dir / "cgroup", p.cgroup));
    int fd = 3;
    for (const auto& target : p.fd_targets) {
      fs::path link = dir / "fd" / std::to_string(fd++);
      fs::remove(link, ec);
      fs::create_symlink(target, link, ec);
      if (ec) return Status::IoError("symlink " + link.string() + ": " + ec.message());
    }
  }
  if (!options.pid1_sched.empty() || !options.pid1_cgroup.empty()) {
    fs::create_directories(fs::path(root) / "1", ec);
    if (ec) return Status::IoError("create " + root + "/1: " + ec.message());
    if (!options.pid1_sched.empty()) VW_RETURN_IF_ERROR(WriteText(fs::path(root) / "1" / "sched", options.pid1_sched));
    if (!options.pid1_cgroup.empty()) {
      VW_RETURN_IF_ERROR(WriteText(fs::path(root) / "1" / "cgroup", options.pid1_cgroup));
    }
  }
  if (options.self_pid > 0) {
    fs::path self = fs::path(root) / "self";
    fs::remove(self, ec);
    fs::create_symlink(std::to_string(options.self_pid), self, ec);
    if (ec) return Status::IoError("symlink " + self.string() + ": " + ec.message());
  }
  if (!options.mountinfo.empty()) {
    fs::path dir = fs::path(root) / (options.self_pid > 0 ? std::to_string(options.self_pid) : "self");
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("create " + dir.string() + ": " + ec.message());
    VW_RETURN_IF_ERROR(WriteText(dir / "mountinfo", options.mountinfo));
  }
  return Status::Ok();
}

}  // namespace vw::procfs
