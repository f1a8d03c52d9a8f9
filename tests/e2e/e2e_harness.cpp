#include "e2e_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace vw::e2e {

namespace fs = std::filesystem;

Scratch::Scratch() {
  std::string t = (fs::temp_directory_path() / "vw-e2e-XXXXXX").string();
  if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = t;
}

Scratch::~Scratch() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string Scratch::Write(const std::string& name, const std::string& text) {
  std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string Scratch::Proc(const std::vector<procfs::FakeProcess>& ps, const procfs::FixtureOptions& o) {
  std::string root = dir_ + "/proc";
  Status s = procfs::WriteProcFixture(root, ps, o);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return root;
}

std::string EmulatorLib(const std::string& variant) {
  std::string dir = std::string(VRAMWATCH_BINARY_DIR) + "/emulator";
  if (!variant.empty()) dir += "/" + variant;
  return dir + "/libnvidia-ml.so.1";
}

RunResult RunVramwatch(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                       double timeout_s) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::setenv("NO_COLOR", "1", 1);
    std::string exe = std::string(VRAMWATCH_BINARY_DIR) + "/vramwatch";
    std::vector<char*> argv{exe.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left * 1000) + 1) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[65536];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.json = nlohmann::json::parse(r.out, nullptr, false);
  if (r.json.is_discarded()) r.json = nullptr;
  return r;
}

RunResult Check(const std::string& scenario, const std::string& proc, const std::string& klog,
                const std::vector<std::string>& extra, const std::map<std::string, std::string>& env,
                const std::string& variant) {
  std::vector<std::string> args = {"check",       "--json", "--nvml-lib",   EmulatorLib(variant),
                                   "--proc-root", proc,     "--kernel-log", klog.empty() ? "none" : klog};
  args.insert(args.end(), extra.begin(), extra.end());
  std::map<std::string, std::string> e = env;
  e["VRAMWATCH_EMULATOR_SCENARIO"] = scenario;
  return RunVramwatch(args, e);
}

std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& kind) {
  std::vector<nlohmann::json> out;
  if (!report.is_object() || !report.contains("findings")) return out;
  for (const auto& f : report["findings"]) {
    if (f["kind"] == kind) out.push_back(f);
  }
  return out;
}

}  // namespace vw::e2e
