// `vramwatch watch` end to end: the real binary as a daemon on the NVML emulator and a procfs
// fixture; its HTTP endpoints, alert log and history database checked from outside, including a
// kill -9 and restart, and the documented faults (port in use, NVML missing, NVML hang, GPU lost,
// database full). `watch --replay` raises the leak alert on a recorded leak and nothing on a
// healthy run (alert times zone-less when the trace's are), and feeds a saved kernel log's Xid lines
// at their time in the trace; a live daemon resumed from two hours of history raises the leak
// alert within seconds.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "core/testing/free_port.h"
#include "core/time.h"
#include "e2e_harness.h"
#include "sources/trace/recording_writer.h"
#include "storage/history_store.h"

namespace vw::e2e {
namespace {

using nlohmann::json;
using procfs::FakeProcess;

constexpr uint64_t kMiB = 1ull << 20;

int FreePort() {
  return vw::test_support::FreeLoopbackPort();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A `vramwatch watch` process in the background; killed (SIGKILL) by the destructor if still running.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
         const std::string& log_path)
      : log_(log_path) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> argv;
      std::string bin = std::string(VRAMWATCH_BINARY_DIR) + "/vramwatch";
      argv.push_back(bin.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Daemon() { Kill(SIGKILL); }
  // Sends `sig` and waits; returns the exit status (or -signal).
  int Kill(int sig) {
    if (pid_ <= 0) return exit_;
    kill(pid_, sig);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = 0;
    exit_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    return exit_;
  }
  // Waits for the process to exit by itself.
  int Wait(double timeout_s) {
    for (int i = 0; i < timeout_s * 20 && pid_ > 0; ++i) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        exit_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
        return exit_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1000;
  }
  std::string Log() const { return ReadAll(log_); }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
  int exit_ = -1000;
  std::string log_;
};

httplib::Result Get(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  return c.Get(path.c_str());
}

// Polls `pred` on /api/v1/status until it holds or `timeout_s` passes; returns the last status.
json WaitStatus(int port, double timeout_s, const std::function<bool(const json&)>& pred) {
  json last;
  for (int i = 0; i < timeout_s * 5; ++i) {
    auto r = Get(port, "/api/v1/status");
    if (r && r->status == 200) {
      last = json::parse(r->body, nullptr, false);
      if (!last.is_discarded() && pred(last)) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

// The first sample line starting with `prefix`, without its newline; empty when absent.
std::string MetricLine(const std::string& body, const std::string& prefix) {
  size_t at = body.find("\n" + prefix);
  if (at == std::string::npos) return {};
  size_t end = body.find('\n', at + 1);
  return body.substr(at + 1, end - at - 1);
}

// Whether a status document lists PID `pid` on some GPU with `field` equal to `value`.
bool ListsProcessWith(const json& st, int64_t pid, const std::string& field, const std::string& value) {
  for (const auto& g : st.value("gpus", json::array())) {
    for (const auto& p : g.value("processes", json::array())) {
      if (p.value("pid", int64_t{0}) == pid && p.value(field, json()) == value) return true;
    }
  }
  return false;
}

bool HasAlert(const json& st, const std::string& name, const std::string& gpu, const std::string& state = "firing") {
  for (const auto& a : st.value("alerts", json::array())) {
    if (a["name"] == name && a["gpu"] == gpu && a["state"] == state) return true;
  }
  return false;
}

// GPU 0: a healthy trainer on a plateau. GPU 1: a trainer SIGKILLed at t=4 s whose 12 GiB stay held.
std::string Scenario(const std::string& extra_gpu0 = "", const std::string& extra_gpu1 = "") {
  return R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-00000000-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 90
    processes:
      - {pid: "${PID_HEALTHY}", type: compute, used_mib: [[0, 1000], [2, 30000]], sm_util: 90}
)" + extra_gpu0 +
         R"(  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-11111111-1111-1111-1111-111111111111"
    pci_bus_id: "00000000:3C:00.0"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: [[0, 90], [4, 0]]
    unattributed_mib: [[0, 0], [4, 0], [4.5, 12288]]
    processes:
      - {pid: "${PID_KILLED}", type: compute, used_mib: 12288, sm_util: 95, start_s: 0, end_s: 4}
)" + extra_gpu1;
}

// `watch` on the emulator at test speed (0.2 s samples, 0.4 s process lists, 1 s grace and
// finding persistence, 0.5 s NVML deadlines), reading processes under `proc`, serving on `port`.
std::vector<std::string> FastWatchArgs(const std::string& proc, int port, const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"watch",
                                "--nvml-lib",
                                EmulatorLib(),
                                "--proc-root",
                                proc,
                                "--listen",
                                "127.0.0.1:" + std::to_string(port),
                                "--interval",
                                "200ms",
                                "--process-interval",
                                "400ms",
                                "--grace",
                                "1s",
                                "--finding-for",
                                "1s",
                                "--timeout",
                                "500ms"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

struct Host {
  Scratch s;
  std::string proc, scenario;
  std::map<std::string, std::string> env;
  // `healthy_opens_every_gpu`: the trainer on GPU 0 has /dev/nvidia1 open too, as CUDA does for
  // every visible GPU.
  explicit Host(const std::string& scenario_text = Scenario(), bool healthy_opens_every_gpu = false) {
    FakeProcess healthy;
    healthy.pid = 5100;
    healthy.state = 'R';
    healthy.argv = {"python3", "train.py", "--config", "big.yaml"};
    healthy.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"};
    if (healthy_opens_every_gpu) healthy.fd_targets.push_back("/dev/nvidia1");
    // The trainer on GPU 1 (PID 5200) exists while NVML lists it; the fixture gives it no device
    // file, so once NVML drops it nobody holds /dev/nvidia1.
    FakeProcess killed;
    killed.pid = 5200;
    killed.state = 'R';
    killed.argv = {"python3", "train.py", "--config", "small.yaml"};
    proc = s.Proc({healthy, killed});
    scenario = s.Write("scenario.yaml", scenario_text);
    // NODE_NAME names the host in every label (cli/host_name.h): fixed here, whatever the runner has.
    env = {{"VRAMWATCH_EMULATOR_SCENARIO", scenario},
           {"PID_HEALTHY", "5100"},
           {"PID_KILLED", "5200"},
           {"NODE_NAME", "e2e-node"}};
  }
  std::vector<std::string> Args(int port, const std::vector<std::string>& extra = {}) const {
    return FastWatchArgs(proc, port, extra);
  }
};

// The system clock stepped a day ahead and back before the killed trainer's end (NTP correcting a
// wrong clock, someone running `date`): the daemon's sample times keep to the clock it started with,
// so it goes on listing processes, sees the trainer leave and raises the orphan alert as it would
// have; each step is said on stderr. (On the system clock it went blind for the day: no process
// list was due until the clock came back to its last one.)
TEST(WatchE2E, ASteppedSystemClockDoesNotBlindTheDaemon) {
  Host h;
  const std::string step = h.s.Write("clock-step", "0");
  auto set_step = [&](const char* seconds) {  // written whole, then renamed: never read half-written
    const std::string tmp = h.s.Write("clock-step.new", seconds);
    ASSERT_EQ(std::rename(tmp.c_str(), step.c_str()), 0);
  };
  h.env["LD_PRELOAD"] = VW_CLOCK_STEP_SHIM;
  h.env["VRAMWATCH_TEST_CLOCK_STEP_FILE"] = step;
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) {
    for (const auto& g : j.value("gpus", json::array())) {
      if (!g.value("processes", json::array()).empty()) return true;
    }
    return false;
  });
  ASSERT_FALSE(st.is_null()) << d.Log();
  set_step("86400");
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  set_step("0");
  st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "1"); });
  ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "1")) << st.dump(2) << d.Log();
  EXPECT_LT(st["window_seconds"].get<double>(), 60) << st.dump(2);
  const std::string log = d.Log();
  EXPECT_NE(log.find("the system clock stepped ahead by 1d 0h"), std::string::npos) << log;
  EXPECT_NE(log.find("the system clock stepped back by 1d 0h"), std::string::npos) << log;
}

TEST(WatchE2E, RaisesExactlyTheOrphanAlertServesConsistentMetricsAndSurvivesKill9) {
  Host h;
  const std::string db = h.s.dir() + "/history.db";
  const std::string alerts = h.s.dir() + "/alerts.jsonl";
  int port = FreePort();
  {
    Daemon d(h.Args(port, {"--db", db, "--alert-log", alerts}), h.env, h.s.dir() + "/d1.log");
    json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "1"); });
    ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "1")) << st.dump(2) << d.Log();
    // Exactly that alert: nothing on the healthy GPU, no leak anywhere.
    for (const auto& a : st["alerts"]) {
      EXPECT_EQ(a["name"], "GpuOrphanedMemory") << a.dump();
      EXPECT_EQ(a["gpu"], "1") << a.dump();
    }
    EXPECT_EQ(st["schema"], "vramwatch.check/1");
    ASSERT_EQ(st["gpus"].size(), 2u);
    EXPECT_EQ(st["gpus"][0]["memory_used_bytes"], 30000 * kMiB);
    EXPECT_EQ(st["gpus"][0]["processes"][0]["pid"], 5100);
    EXPECT_TRUE(st["gpus"][0]["analysis"].contains("verdict"));

    // /metrics says the same, and passes promtool.
    auto m = Get(port, "/metrics");
    ASSERT_TRUE(m);
    ASSERT_EQ(m->status, 200);
    EXPECT_NE(m->body.find("vramwatch_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-0000-0000-0000-"
                           "000000000000\""),
              std::string::npos);
    EXPECT_NE(m->body.find(std::to_string(30000 * kMiB)), std::string::npos);
    EXPECT_NE(m->body.find("kind=\"orphaned_memory\",severity=\"critical\"} 1"), std::string::npos) << m->body;
    // The wall time of each sample's NVML calls, as a histogram.
    EXPECT_NE(
        MetricLine(m->body, "vramwatch_nvml_call_duration_seconds_count{call=\"host_snapshot\",hostname=\"e2e-node\"}"),
        "")
        << m->body;
    EXPECT_NE(
        MetricLine(
            m->body,
            "vramwatch_nvml_call_duration_seconds_bucket{call=\"host_snapshot\",hostname=\"e2e-node\",le=\"+Inf\"}"),
        "")
        << m->body;
    // ... and of each NVML function on its own.
    EXPECT_NE(
        MetricLine(
            m->body,
            "vramwatch_nvml_call_duration_seconds_count{call=\"nvmlDeviceGetMemoryInfo_v2\",hostname=\"e2e-node\"}"),
        "")
        << m->body;
    EXPECT_NE(
        MetricLine(m->body, "vramwatch_nvml_call_duration_seconds_count{call=\"nvmlInit_v2\",hostname=\"e2e-node\"} 1"),
        "")
        << m->body;
    std::string mf = h.s.Write("metrics.txt", m->body);
    EXPECT_EQ(std::system(("promtool check metrics < " + mf + " > /dev/null 2>&1").c_str()), 0);
    auto page = Get(port, "/");
    ASSERT_TRUE(page);
    EXPECT_NE(page->body.find("<html"), std::string::npos);
    auto health = Get(port, "/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);

    std::this_thread::sleep_for(std::chrono::seconds(6));  // at least one history batch (5 s)
    EXPECT_EQ(d.Kill(SIGKILL), -SIGKILL);
    // The alert log holds exactly one firing: the orphan on GPU 1.
    std::istringstream log(ReadAll(alerts));
    int firing = 0;
    for (std::string line; std::getline(log, line);) {
      json e = json::parse(line);
      if (e["event"] != "firing") continue;
      ++firing;
      EXPECT_EQ(e["alert"], "GpuOrphanedMemory") << line;
      EXPECT_EQ(e["labels"]["gpu"], "1") << line;
    }
    EXPECT_EQ(firing, 1);
  }
  // The database is sound and holds what was flushed.
  double last_t = 0;
  {
    auto store = storage::HistoryStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto check = (*store)->db().IntegrityCheck();
    ASSERT_TRUE(check.ok());
    EXPECT_EQ(*check, "ok");
    auto pts = (*store)->Raw("gpu:0", 0, 1e12);
    ASSERT_TRUE(pts.ok());
    EXPECT_GE(pts->size(), 10u);
    last_t = pts->back().t;
    auto procs = (*store)->processes().Query(0, 1e12);
    ASSERT_TRUE(procs.ok());
    bool vanished = false, healthy = false;
    for (const auto& p : *procs) {
      if (p.pid == 5200) vanished = p.end == storage::ProcessEnd::kVanishedMemoryHeld;
      if (p.pid == 5100) healthy = p.end == storage::ProcessEnd::kRunning && p.peak_bytes == 30000 * kMiB;
    }
    EXPECT_TRUE(vanished) << "the SIGKILLed holder is recorded as gone with its memory held";
    EXPECT_TRUE(healthy);
  }
  // Restart on the same database; the emulator's clock restarts too, so the restarted daemon sees
  // a scenario where GPU 1's memory is orphaned from the start.
  std::string after = Scenario();
  after = after.substr(0, after.find("    utilization_gpu: [[0, 90], [4, 0]]")) +
          "    utilization_gpu: 0\n    unattributed_mib: 12288\n";
  std::map<std::string, std::string> env2 = h.env;
  env2["VRAMWATCH_EMULATOR_SCENARIO"] = h.s.Write("after.yaml", after);
  Daemon d2(h.Args(port, {"--db", db}), env2, h.s.dir() + "/d2.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d2.Log();
  auto hist = Get(port, "/api/v1/history?series=gpu:0&from=" + std::to_string(static_cast<long>(last_t) - 600) +
                            "&to=" + std::to_string(static_cast<long>(last_t) + 1));
  ASSERT_TRUE(hist);
  ASSERT_EQ(hist->status, 200) << hist->body;
  json hj = json::parse(hist->body);
  EXPECT_EQ(hj["schema"], "vramwatch.history/1");
  EXPECT_GE(hj["points"].size(), 10u);
  EXPECT_EQ(hj["points"].back()[1], 30000 * kMiB);
  EXPECT_NE(d2.Log().find("resumed"), std::string::npos) << d2.Log();
  // The orphan alert was firing before the kill: it is firing again without a new notice.
  json again = WaitStatus(port, 20, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "1"); });
  EXPECT_TRUE(HasAlert(again, "GpuOrphanedMemory", "1")) << again.dump(2);
  EXPECT_EQ(d2.Log().find("alert firing GpuOrphanedMemory"), std::string::npos) << d2.Log();
  EXPECT_EQ(d2.Kill(SIGTERM), 0);
  // A clean stop keeps everything: the samples from before the kill and those of the second run.
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto pts = (*store)->Raw("gpu:0", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  EXPECT_GT(pts->size(), 20u);
  EXPECT_GT(pts->back().t, last_t);
  EXPECT_LT(pts->front().t, last_t - 5);
}

// The trainer computing on GPU 0 also holds /dev/nvidia1: GPU 1's findings name it
// (unlisted_holder), but GPU 1's history has no lifecycle record for a process that never had a
// context or memory there.
// Orphaned memory beside a live holder, at the daemon's default --grace (10s) and
// --process-interval (5s): the findings' window spans at least the grace on every tick once the
// daemon has run that long, so the finding stays critical and its alert fires after --finding-for
// (shortened here to 15s: three process ticks in a row). A window that spanned the grace give or
// take the clock's jitter flipped the finding to a warning, restarting the alert's pending time.
TEST(WatchE2E, OrphanedMemoryBesideALiveHolderFiresAtTheDefaultGraceAndProcessInterval) {
  Host h(R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-77777777-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    unattributed_mib: 5000
    processes:
      - {pid: "${PID_HEALTHY}", type: compute, used_mib: 20000, sm_util: 50}
)");
  int port = FreePort();
  Daemon d({"watch", "--nvml-lib", EmulatorLib(), "--proc-root", h.proc, "--listen",
            "127.0.0.1:" + std::to_string(port), "--kernel-log", "none", "--finding-for", "15s"},
           h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 60, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "0"); });
  ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "0")) << st.dump(2) << d.Log();
  auto f = FindingsOf(st, "orphaned_memory");
  ASSERT_EQ(f.size(), 1u) << st.dump(2);
  EXPECT_EQ(f[0]["severity"], "critical") << f[0].dump(2);
}

// The same orphan across a restart on the same --db: after the restart the finding is found again
// only once its grace has passed, and the alert restored as firing waits for it, neither resolved
// at the first sample nor fired anew after it (a resolve then a new alert, the memory orphaned
// all along).
TEST(WatchE2E, AFiringOrphanAlertNeitherResolvesNorFiresAgainAcrossARestart) {
  Host h(R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-77777777-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    unattributed_mib: 5000
    processes:
      - {pid: "${PID_HEALTHY}", type: compute, used_mib: 20000, sm_util: 50}
)");
  const std::string db = h.s.dir() + "/history.db", alerts = h.s.dir() + "/alerts.jsonl";
  int port = FreePort();
  std::vector<std::string> args = h.Args(port, {"--db", db, "--alert-log", alerts, "--kernel-log", "none"});
  *(std::find(args.begin(), args.end(), "--grace") + 1) = "3s";  // several samples and process ticks
  {
    Daemon d(args, h.env, h.s.dir() + "/d1.log");
    json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "0"); });
    ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "0")) << st.dump(2) << d.Log();
    EXPECT_EQ(d.Kill(SIGTERM), 0);
  }
  Daemon d2(args, h.env, h.s.dir() + "/d2.log");
  // Past the grace and the restored alert's wait (3s + two process ticks + two samples).
  json st = WaitStatus(port, 30, [](const json& j) { return !FindingsOf(j, "orphaned_memory").empty(); });
  std::this_thread::sleep_for(std::chrono::seconds(6));
  st = WaitStatus(port, 10, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "0"); });
  EXPECT_TRUE(HasAlert(st, "GpuOrphanedMemory", "0")) << st.dump(2) << d2.Log();
  EXPECT_EQ(d2.Kill(SIGTERM), 0);
  std::vector<std::string> events;
  std::ifstream in(alerts);
  for (std::string line; std::getline(in, line);) events.push_back(json::parse(line)["event"]);
  EXPECT_EQ(events, std::vector<std::string>{"firing"}) << "one firing over both runs, and no resolve";
}

TEST(WatchE2E, AProcessWithOnlyTheDeviceFileOfAGpuOpenHasNoLifecycleRecordOnIt) {
  Host h(Scenario(), true);
  const std::string db = h.s.dir() + "/history.db";
  int port = FreePort();
  Daemon d(h.Args(port, {"--db", db, "--kernel-log", "none"}), h.env, h.s.dir() + "/d.log");
  auto names_fd_holder = [](const json& j) {
    for (const auto& f : j.value("findings", json::array())) {
      if (f["kind"] == "unlisted_holder" && f["gpu"] == "1" && f["pid"] == 5100) return true;
    }
    return false;
  };
  json st = WaitStatus(port, 30, names_fd_holder);
  ASSERT_TRUE(names_fd_holder(st)) << st.dump(2) << d.Log();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a few more process refreshes
  EXPECT_EQ(d.Kill(SIGTERM), 0) << d.Log();
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto procs = (*store)->processes().Query(0, 1e12);
  ASSERT_TRUE(procs.ok());
  std::set<std::pair<std::string, int64_t>> recorded;
  for (const auto& p : *procs) recorded.insert({p.gpu, p.pid});
  EXPECT_EQ(recorded, (std::set<std::pair<std::string, int64_t>>{{"0", 5100}, {"1", 5200}}));
}

TEST(WatchE2E, XidAppendedToTheKernelLogIsCountedForItsGpuAndRaisesTheFinding) {
  Host h;
  // A line already in the log when the daemon starts is not counted.
  const std::string klog =
      h.s.Write("kern.log", "[ 10.0] NVRM: Xid (PCI:0000:3c:00): 13, pid=77, name=python3, Graphics SM Warp\n");
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  {
    std::ofstream out(klog, std::ios::app);
    out << "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
  }
  auto has_xid = [](const json& j) {
    for (const auto& f : j.value("findings", json::array())) {
      if (f["kind"] == "xid" && f["gpu"] == "1") return true;
    }
    return false;
  };
  st = WaitStatus(port, 20, has_xid);
  ASSERT_TRUE(has_xid(st)) << st.dump(2) << d.Log();
  for (const auto& f : st["findings"]) {
    if (f["kind"] != "xid") continue;
    EXPECT_EQ(f["gpu"], "1") << f.dump();
    EXPECT_EQ(f["severity"], "critical") << "Xid 79 is a hardware Xid: " << f.dump();
  }
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  // The value of vramwatch_xid_events_total for one GPU and code, "absent" when not served.
  auto xid_count = [&](const std::string& gpu, const std::string& xid) -> std::string {
    std::istringstream in(m->body);
    for (std::string l; std::getline(in, l);) {
      if (l.rfind("vramwatch_xid_events_total{gpu=\"" + gpu + "\"", 0) == 0 &&
          l.find(",xid=\"" + xid + "\"} ") != std::string::npos) {
        return l.substr(l.rfind(' ') + 1);
      }
    }
    return "absent";
  };
  EXPECT_EQ(xid_count("1", "79"), "1") << m->body;
  EXPECT_EQ(m->body.find("xid=\"13\""), std::string::npos) << "the line from before the start counted";
  // GPU 0 had no Xid: the hardware codes are there at 0, so that increase() sees a first event.
  EXPECT_EQ(xid_count("0", "79"), "0") << m->body;
  EXPECT_EQ(xid_count("0", "48"), "0") << m->body;
  std::string mf = h.s.Write("metrics.txt", m->body);
  EXPECT_EQ(std::system(("promtool check metrics < " + mf + " > /dev/null 2>&1").c_str()), 0);
  // The host block is check's: the kernel log read and the Xid events read from it since the start,
  // the NVML library, its bound calls and the versions it gave.
  const json& host = st["host"];
  EXPECT_EQ(host["kernel_log"], klog) << host.dump(2);
  EXPECT_EQ(host["xid_events"], 1) << host.dump(2);
  EXPECT_EQ(host["nvml_library"], EmulatorLib()) << host.dump(2);
  ASSERT_TRUE(host["nvml_functions"].is_array()) << host.dump(2);
  EXPECT_FALSE(host["nvml_functions"].empty()) << host.dump(2);
  EXPECT_EQ(host["nvml_version"], "12.550.54.15") << host.dump(2);
  EXPECT_EQ(host["cuda_driver_version"], 12040) << host.dump(2);
}

// The value of vramwatch_xid_events_total for one GPU and code in a /metrics body, "absent" when
// not served.
std::string XidCount(const std::string& metrics, const std::string& gpu, const std::string& xid) {
  std::istringstream in(metrics);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("vramwatch_xid_events_total{gpu=\"" + gpu + "\"", 0) == 0 &&
        l.find(",xid=\"" + xid + "\"} ") != std::string::npos) {
      return l.substr(l.rfind(' ') + 1);
    }
  }
  return "absent";
}

// Without a kernel log (a container without the host's), Xid events come from NVML's event API:
// counted for their GPU, raising the finding, and said in the status and /metrics.
TEST(WatchE2E, WithoutAKernelLogXidEventsComeFromNvmlsEventApi) {
  Host h(Scenario("", "    xid: [{t: 3, code: 79}]\n"));
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", "none"}), h.env, h.s.dir() + "/d.log");
  auto has_xid = [](const json& j) {
    for (const auto& f : j.value("findings", json::array())) {
      if (f["kind"] == "xid" && f["gpu"] == "1") return true;
    }
    return false;
  };
  json st = WaitStatus(port, 30, has_xid);
  ASSERT_TRUE(has_xid(st)) << st.dump(2) << d.Log();
  for (const auto& f : st["findings"]) {
    if (f["kind"] == "xid") {
      EXPECT_EQ(f["severity"], "critical") << f.dump();
    }
  }
  EXPECT_EQ(st["host"]["xid_events_from_nvml"], true) << st["host"].dump(2);
  EXPECT_TRUE(st["host"]["kernel_log_up"].is_null()) << st["host"].dump(2);
  bool noted = false;
  for (const auto& n : st.value("notes", json::array())) {
    noted |= n.get<std::string>().find("read from NVML's event API") != std::string::npos;
  }
  EXPECT_TRUE(noted) << st.dump(2);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(XidCount(m->body, "1", "79"), "1") << m->body;
  EXPECT_EQ(XidCount(m->body, "0", "79"), "0") << "hardware codes at 0 while Xids are read: " << m->body;
  EXPECT_NE(m->body.find("\nvramwatch_nvml_xid_events_up{hostname=\"e2e-node\"} 1\n"), std::string::npos) << m->body;
}

// A GPU that cannot register for NVML's events leaves the others covered, but NVML does not count
// as standing in for the kernel log: the metric stays 0 (so the ticket for a blind host fires) and
// the note names the GPUs covered and why the other is not.
TEST(WatchE2E, NvmlXidEventsForSomeGpusOnlyDoNotCountAsStandingIn) {
  Host h(Scenario("    errors: [{function: nvmlDeviceRegisterEvents, code: 3}]\n", "    xid: [{t: 2, code: 79}]\n"));
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", "none"}), h.env, h.s.dir() + "/d.log");
  auto counted = [](const json& j) {
    const auto gpus = j.value("gpus", json::array());
    return gpus.size() > 1 && gpus[1].value("xid_events", json::object()).value("79", 0) == 1;
  };
  json st = WaitStatus(port, 30, counted);
  ASSERT_TRUE(counted(st)) << st.dump(2) << d.Log();
  EXPECT_EQ(st["host"]["xid_events_from_nvml"], false) << st["host"].dump(2);
  bool noted = false;
  for (const auto& n : st.value("notes", json::array())) {
    const std::string t = n.get<std::string>();
    noted |= t.find("for GPU 1 only (GPU 0: nvmlDeviceRegisterEvents") != std::string::npos;
  }
  EXPECT_TRUE(noted) << st.dump(2);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("\nvramwatch_nvml_xid_events_up{hostname=\"e2e-node\"} 0\n"), std::string::npos) << m->body;
}

// While the kernel log is read, NVML's events are taken and dropped: the log's lines say the same
// with the PID and the driver's text, and an event must not count twice.
TEST(WatchE2E, WhileTheKernelLogIsReadNvmlsXidEventsAreNotCountedAgain) {
  Host h(Scenario("", "    xid: [{t: 1, code: 79}]\n"));
  const std::string klog = h.s.Write("kern.log", "");
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // past the event's time, several process ticks
  st = WaitStatus(port, 5, [](const json& j) { return j.contains("host"); });
  EXPECT_EQ(st["host"]["xid_events_from_nvml"], false) << st["host"].dump(2);
  EXPECT_EQ(st["host"]["xid_events"], 0) << st["host"].dump(2);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(XidCount(m->body, "1", "79"), "0") << m->body;
  EXPECT_NE(m->body.find("\nvramwatch_nvml_xid_events_up{hostname=\"e2e-node\"} 0\n"), std::string::npos) << m->body;
}

// The tick on which a --kernel-log file first appears reads it from its end: an Xid NVML gave in
// that interval is counted from NVML, not dropped as one the log would give.
TEST(WatchE2E, AnXidNvmlGaveAsTheKernelLogAppearedIsCounted) {
  Host h(Scenario("", "    xid: [{t: 10, code: 79}]\n"));
  const std::string clock = h.s.Write("clock", "0\n");
  h.env["VRAMWATCH_EMULATOR_CLOCK_FILE"] = clock;
  const std::string klog = h.s.dir() + "/kern.log";  // not there yet
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(
      port, 30, [](const json& j) { return j.value("host", json::object()).value("xid_events_from_nvml", false); });
  ASSERT_EQ(st["host"]["xid_events_from_nvml"], true) << st.dump(2) << d.Log();
  h.s.Write("clock", "20\n");  // NVML has the Xid now, and then the log appears
  h.s.Write("kern.log", "");
  auto counted = [](const json& j) {
    for (const auto& g : j.value("gpus", json::array())) {
      if (g.value("xid_events", json::object()).value("79", 0) > 0) return true;
    }
    return false;
  };
  st = WaitStatus(port, 10, counted);
  ASSERT_TRUE(counted(st)) << st.dump(2) << d.Log();
  EXPECT_EQ(st["gpus"][1]["xid_events"]["79"], 1) << st.dump(2);
  EXPECT_EQ(st["host"]["kernel_log_up"], true) << st["host"].dump(2);
}

// A followed kernel log that could not be read for a while (moved away) and is back: its lines of
// that while were given by NVML meanwhile, and are not counted again.
TEST(WatchE2E, AKernelLogReadAgainAfterAnOutageDoesNotCountNvmlsXidsTwice) {
  Host h(Scenario("", "    xid: [{t: 10, code: 79}]\n"));
  const std::string clock = h.s.Write("clock", "0\n");
  h.env["VRAMWATCH_EMULATOR_CLOCK_FILE"] = clock;
  const std::string klog = h.s.Write("kern.log", "");
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  const std::string away = h.s.dir() + "/kern.log.away";
  std::filesystem::rename(klog, away);
  st = WaitStatus(port, 10,
                  [](const json& j) { return j.value("host", json::object()).value("xid_events_from_nvml", false); });
  ASSERT_EQ(st["host"]["xid_events_from_nvml"], true) << st.dump(2) << d.Log();
  {
    std::ofstream out(away, std::ios::app);
    out << "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
  }
  h.s.Write("clock", "20\n");  // NVML gives the same Xid
  auto count79 = [](const json& j) -> int {
    const auto gpus = j.value("gpus", json::array());
    return gpus.size() > 1 ? gpus[1].value("xid_events", json::object()).value("79", 0) : 0;
  };
  st = WaitStatus(port, 10, [&](const json& j) { return count79(j) > 0; });
  ASSERT_EQ(count79(st), 1) << st.dump(2) << d.Log();
  std::filesystem::rename(away, klog);
  st = WaitStatus(port, 10,
                  [](const json& j) { return j.value("host", json::object()).value("kernel_log_up", false) == true; });
  ASSERT_EQ(st["host"]["kernel_log_up"], true) << st.dump(2) << d.Log();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a few more process ticks
  st = WaitStatus(port, 5, [](const json& j) { return j.contains("gpus"); });
  EXPECT_EQ(count79(st), 1) << "counted again from the log: " << st.dump(2);
}

// NVML covering GPU 1 only while the log was away: back, the log's line for GPU 1 is not counted
// again, and its line for GPU 0, which NVML could not give, is counted (before, the drop was all
// or nothing: a partly covered host counted GPU 1's Xid twice).
TEST(WatchE2E, AKernelLogBackAfterAnOutageCountsOnlyTheGpusNvmlDidNotCover) {
  Host h(Scenario("    errors: [{function: nvmlDeviceRegisterEvents, code: 3}]\n", "    xid: [{t: 10, code: 79}]\n"));
  const std::string clock = h.s.Write("clock", "0\n");
  h.env["VRAMWATCH_EMULATOR_CLOCK_FILE"] = clock;
  const std::string klog = h.s.Write("kern.log", "");
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  const std::string away = h.s.dir() + "/kern.log.away";
  std::filesystem::rename(klog, away);
  st = WaitStatus(port, 10,
                  [](const json& j) { return j.value("host", json::object()).value("kernel_log_up", true) == false; });
  ASSERT_EQ(st["host"]["kernel_log_up"], false) << st.dump(2) << d.Log();
  EXPECT_EQ(st["host"]["xid_events_from_nvml"], false) << "GPU 0 is not covered";
  {
    std::ofstream out(away, std::ios::app);
    out << "[ 1936.4] NVRM: Xid (PCI:0000:3b:00): 13, pid=5100, name=python3, Graphics Exception\n"
        << "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
  }
  h.s.Write("clock", "20\n");  // NVML gives GPU 1's Xid
  auto count = [](const json& j, size_t gpu, const char* code) -> int {
    const auto gpus = j.value("gpus", json::array());
    return gpus.size() > gpu ? gpus[gpu].value("xid_events", json::object()).value(code, 0) : 0;
  };
  st = WaitStatus(port, 10, [&](const json& j) { return count(j, 1, "79") > 0; });
  ASSERT_EQ(count(st, 1, "79"), 1) << st.dump(2) << d.Log();
  std::filesystem::rename(away, klog);
  st = WaitStatus(port, 10, [&](const json& j) { return count(j, 0, "13") > 0; });
  EXPECT_EQ(count(st, 0, "13"), 1) << "GPU 0's line, which NVML could not give: " << st.dump(2) << d.Log();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a few more process ticks
  st = WaitStatus(port, 5, [](const json& j) { return j.contains("gpus"); });
  EXPECT_EQ(count(st, 1, "79"), 1) << "counted again from the log: " << st.dump(2);
}

// A hardware Xid's alert and count survive a restart on the same --db: the kernel log's old lines
// are not read again, the stored event keeps the finding, and Alertmanager gets no resolve.
TEST(WatchE2E, HardwareXidAlertFindingAndCountSurviveARestartOnTheSameDatabase) {
  Host h;
  const std::string klog = h.s.Write("kern.log", "");
  const std::string db = h.s.dir() + "/history.db";
  const std::string alerts = h.s.dir() + "/alerts.jsonl";
  const std::vector<std::string> extra = {"--kernel-log", klog, "--db", db, "--alert-log", alerts};
  auto xid_alert_firing = [](const json& j) { return HasAlert(j, "GpuXidError", "1"); };
  int port = FreePort();
  {
    Daemon d(h.Args(port, extra), h.env, h.s.dir() + "/d1.log");
    json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
    ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
    {
      std::ofstream out(klog, std::ios::app);
      out << "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
    }
    st = WaitStatus(port, 20, xid_alert_firing);
    ASSERT_TRUE(xid_alert_firing(st)) << st.dump(2) << d.Log();
    std::this_thread::sleep_for(std::chrono::seconds(6));  // one history batch
    EXPECT_EQ(d.Kill(SIGTERM), 0);
  }
  Daemon d2(h.Args(port, extra), h.env, h.s.dir() + "/d2.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d2.Log();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // several process ticks and findings
  st = WaitStatus(port, 5, xid_alert_firing);
  EXPECT_TRUE(xid_alert_firing(st)) << st.dump(2) << d2.Log();
  bool finding = false;
  for (const auto& f : st.value("findings", json::array())) finding |= f["kind"] == "xid" && f["gpu"] == "1";
  EXPECT_TRUE(finding) << st.dump(2);
  EXPECT_EQ(d2.Log().find("alert resolved GpuXidError"), std::string::npos) << d2.Log();
  EXPECT_EQ(d2.Log().find("alert firing GpuXidError"), std::string::npos) << d2.Log();
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  // GPU 1's Xid 79 counter (the other hardware codes are listed at 0 beside it) goes on from 1.
  std::string line;
  std::istringstream body(m->body);
  for (std::string l; std::getline(body, l);) {
    if (l.rfind("vramwatch_xid_events_total{gpu=\"1\"", 0) == 0 && l.find("xid=\"79\"}") != std::string::npos) line = l;
  }
  EXPECT_NE(line.find("xid=\"79\"} 1"), std::string::npos) << m->body;
  EXPECT_EQ(d2.Kill(SIGTERM), 0);
  std::istringstream log(ReadAll(alerts));
  int resolved = 0;
  // (The orphan on GPU 1 may resolve: the emulator's clock restarts with the daemon.)
  for (std::string l; std::getline(log, l);) {
    json e = json::parse(l);
    resolved += e["event"] == "resolved" && e["alert"] == "GpuXidError";
  }
  EXPECT_EQ(resolved, 0) << ReadAll(alerts);
}

// logrotate's default: move the alert log away; the next line goes to a new file. SIGHUP reopens
// the file and does not stop the daemon.
TEST(WatchE2E, AlertLogIsCreatedAgainAfterItWasMovedAndSighupOnlyReopensIt) {
  Host h;
  const std::string alerts = h.s.dir() + "/alerts.jsonl";
  int port = FreePort();
  Daemon d(h.Args(port, {"--alert-log", alerts}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  ASSERT_EQ(std::rename(alerts.c_str(), (alerts + ".1").c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // SIGHUP before anything was written to the new path: the daemon lives on and reopens.
  ASSERT_EQ(std::system(("kill -HUP " + std::to_string(d.pid())).c_str()), 0);
  st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "1"); });
  ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "1")) << st.dump(2) << d.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string now_log = ReadAll(alerts);
  EXPECT_NE(now_log.find("\"event\":\"firing\""), std::string::npos) << "the firing line went to the new file";
  EXPECT_EQ(ReadAll(alerts + ".1").find("firing"), std::string::npos);
  EXPECT_EQ(d.Kill(SIGTERM), 0) << d.Log();
}

// A webhook nobody answers: one stderr line for the streak, and the counters say so.
TEST(WatchE2E, FailedWebhookDeliveriesAreNotedOnceAndCounted) {
  Host h;
  const int dead_port = FreePort();  // nothing listens there
  int port = FreePort();
  Daemon d(h.Args(port, {"--webhook", "http://127.0.0.1:" + std::to_string(dead_port)}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuOrphanedMemory", "1"); });
  ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "1")) << st.dump(2) << d.Log();
  std::string failed;
  for (int i = 0; i < 50 && failed.empty(); ++i) {
    auto m = Get(port, "/metrics");
    if (m) {
      std::string line = MetricLine(m->body, "vramwatch_notifications_failed_total");
      if (!line.empty() && line.substr(line.size() - 2) != " 0") failed = line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(failed, "") << "vramwatch_notifications_failed_total stayed 0";
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(MetricLine(m->body, "vramwatch_notifications_dropped_total"), "") << m->body;
  const std::string log = d.Log();
  const std::string note =
      "alert webhook http://127.0.0.1:" + std::to_string(dead_port) + "/api/v2/alerts: delivery failed";
  EXPECT_NE(log.find(note), std::string::npos) << log;
  EXPECT_EQ(log.find(note, log.find(note) + 1), std::string::npos) << "one line per failure streak\n" << log;
}

// GPU 1's holder loses its /proc entry while NVML still lists its 12 GiB: who it was stays known.
TEST(WatchE2E, AHolderWhoseProcEntryVanishedKeepsItsCommandAndUser) {
  std::string scenario = Scenario();
  scenario.replace(scenario.find("start_s: 0, end_s: 4"), std::string("start_s: 0, end_s: 4").size(), "start_s: 0");
  Host h(scenario);
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  auto listed_with_user = [](const json& j) { return ListsProcessWith(j, 5200, "user", "alice"); };
  json st = WaitStatus(port, 30, listed_with_user);
  ASSERT_TRUE(listed_with_user(st)) << st.dump(2) << d.Log();
  std::filesystem::remove_all(h.proc + "/5200");
  auto dead = [](const json& j) {
    for (const auto& f : j.value("findings", json::array())) {
      if (f["kind"] == "dead_holder") return f["message"].get<std::string>();
    }
    return std::string();
  };
  st = WaitStatus(port, 20, [&](const json& j) { return !dead(j).empty(); });
  const std::string message = dead(st);
  EXPECT_NE(message.find("PID 5200 (user alice) `python3 train.py --config small.yaml`"), std::string::npos)
      << message << "\n"
      << st.dump(2);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  std::string state = MetricLine(m->body, "vramwatch_process_state{gpu=\"1\"");
  EXPECT_NE(state.find("pid=\"5200\""), std::string::npos) << m->body;
  EXPECT_NE(state.find("command=\"python3 train.py --config small.yaml\""), std::string::npos) << state;
  EXPECT_NE(state.find("user=\"alice\""), std::string::npos) << state;
  EXPECT_NE(state.find("state=\"gone\""), std::string::npos) << state;
}

// A holder whose /proc/PID/cmdline cannot be read is named by NVML, as `check` names it: in
// /api/v1/status and in the process labels of /metrics.
TEST(WatchE2E, HolderWithoutAReadableCommandLineIsNamedByNvml) {
  std::string scenario = Scenario();
  const std::string listed = "{pid: \"${PID_HEALTHY}\", type: compute,";
  scenario.replace(scenario.find(listed), listed.size(), listed + " name: \"trainer-9\",");
  Host h(scenario);
  ASSERT_TRUE(std::filesystem::remove(h.proc + "/5100/cmdline"));
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  auto named = [](const json& j) { return ListsProcessWith(j, 5100, "command", "trainer-9"); };
  json st = WaitStatus(port, 30, named);
  ASSERT_TRUE(named(st)) << st.dump(2) << d.Log();
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  std::string used = MetricLine(m->body, "vramwatch_process_memory_used_bytes{gpu=\"0\"");
  EXPECT_NE(used.find("pid=\"5100\""), std::string::npos) << m->body;
  EXPECT_NE(used.find("command=\"trainer-9\""), std::string::npos) << used;
}

// A holder of a Kubernetes pod: the daemon names its pod, namespace and container from the kubelet's
// log directory (--kube-logs), in /api/v1/status and in the process series' labels of /metrics.
TEST(WatchE2E, AKubernetesHolderIsNamedByItsPodInStatusAndMetrics) {
  Host h;
  const std::string id(64, 'e');
  const std::string uid = "0a1b2c3d-0000-1111-2222-333344445555";
  {
    std::ofstream cg(h.proc + "/5100/cgroup", std::ios::trunc);
    cg << "0::/kubepods.slice/kubepods-pod0a1b2c3d_0000_1111_2222_333344445555.slice/cri-containerd-" << id
       << ".scope\n";
  }
  const std::string logs = h.s.dir() + "/var-log";
  std::filesystem::create_directories(logs + "/pods/ml_llm-train-0_" + uid + "/trainer");
  std::filesystem::create_directories(logs + "/containers");
  std::filesystem::create_symlink("../pods/ml_llm-train-0_" + uid + "/trainer/0.log",
                                  logs + "/containers/llm-train-0_ml_trainer-" + id + ".log");
  int port = FreePort();
  Daemon d(h.Args(port, {"--kube-logs", logs}), h.env, h.s.dir() + "/d.log");
  auto named = [](const json& j) { return ListsProcessWith(j, 5100, "pod_name", "llm-train-0"); };
  json st = WaitStatus(port, 30, named);
  ASSERT_TRUE(named(st)) << st.dump(2) << d.Log();
  EXPECT_TRUE(ListsProcessWith(st, 5100, "pod_namespace", "ml"));
  EXPECT_TRUE(ListsProcessWith(st, 5100, "container_name", "trainer"));
  EXPECT_TRUE(ListsProcessWith(st, 5100, "pod_uid", uid));
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  std::string used = MetricLine(m->body, "vramwatch_process_memory_used_bytes{gpu=\"0\"");
  EXPECT_NE(used.find("pid=\"5100\""), std::string::npos) << m->body;
  EXPECT_NE(used.find("pod=\"" + uid + "\",namespace=\"ml\",pod_name=\"llm-train-0\",container_name=\"trainer\""),
            std::string::npos)
      << used;
}

// What a fleet sees: the node name from NODE_NAME on every label, one GpuXidError per GPU and Xid
// code (with `xid` and `uuid`, whatever PIDs the driver names), every label the Grafana dashboard
// selects on present on the daemon's real /metrics, and a kernel log that can no longer be read
// shown as vramwatch_kernel_log_up 0 with a status note.
TEST(WatchE2E, FleetLabelsOneXidAlertPerCodeDashboardSelectorsAndKernelLogUp) {
  Host h;
  h.env["NODE_NAME"] = "k8s-node-3";
  const std::string klog = h.s.Write("kern.log", "");
  const std::string alerts = h.s.dir() + "/alerts.jsonl";
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog, "--alert-log", alerts}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  EXPECT_EQ(st["host"]["hostname"], "k8s-node-3") << st.dump(2);
  EXPECT_EQ(st["host"]["kernel_log_up"], true);
  auto append = [&](const std::string& line) {
    std::ofstream out(klog, std::ios::app);
    out << line << "\n";
  };
  append("[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.");
  st = WaitStatus(port, 20, [](const json& j) { return HasAlert(j, "GpuXidError", "1"); });
  ASSERT_TRUE(HasAlert(st, "GpuXidError", "1")) << st.dump(2) << d.Log();
  // The same Xid again, naming another PID: the same alert, not a second one.
  append("[ 1937.0] NVRM: Xid (PCI:0000:3c:00): 79, pid=5100, name=python3, GPU has fallen off the bus.");
  std::this_thread::sleep_for(std::chrono::seconds(3));

  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(MetricLine(m->body, "vramwatch_kernel_log_up{"), "vramwatch_kernel_log_up{hostname=\"k8s-node-3\"} 1")
      << m->body;
  // Every selector of the shipped dashboard against the real /metrics: each label it matches on
  // is on every served sample of that metric.
  std::map<std::string, std::vector<std::string>> served;  // name -> sample lines
  {
    std::istringstream in(m->body);
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l[0] != '#') served[l.substr(0, l.find_first_of("{ "))].push_back(l);
    }
  }
  json dash = json::parse(ReadAll(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/grafana/vramwatch-dashboard.json"));
  std::vector<std::string> exprs;
  for (const auto& p : dash["panels"]) {
    for (const auto& t : p["targets"]) exprs.push_back(t["expr"]);
  }
  for (const auto& v : dash["templating"]["list"]) {
    if (v.contains("query") && v["query"].is_object()) exprs.push_back(v["query"]["query"]);
  }
  const std::regex selector("(vramwatch_[a-z0-9_]+)\\{([^}]*)\\}");
  const std::regex matcher("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
  std::set<std::string> checked;
  for (const std::string& expr : exprs) {
    for (auto it = std::sregex_iterator(expr.begin(), expr.end(), selector); it != std::sregex_iterator(); ++it) {
      const std::string metric = (*it)[1].str(), matchers = (*it)[2].str();
      auto lines = served.find(metric);
      if (lines == served.end()) continue;  // not served in this run (no leak, no NVML error)
      checked.insert(metric);
      for (auto mm = std::sregex_iterator(matchers.begin(), matchers.end(), matcher); mm != std::sregex_iterator();
           ++mm) {
        const std::string label = (*mm)[1].str() + "=\"";
        for (const std::string& l : lines->second) {
          EXPECT_NE(l.find(label), std::string::npos)
              << "dashboard selects on " << label << " in " << expr << " but the daemon serves: " << l;
        }
      }
    }
  }
  for (const char* must : {"vramwatch_gpu_memory_used_bytes", "vramwatch_nvml_call_duration_seconds_bucket",
                           "vramwatch_xid_events_total", "vramwatch_process_memory_used_bytes"}) {
    EXPECT_TRUE(checked.count(must)) << must << " not served or not on the dashboard";
  }

  // The alert log: one GpuXidError for GPU 1 and code 79, labelled for routing, never resolved.
  std::istringstream log(ReadAll(alerts));
  int xid_firing = 0, xid_resolved = 0;
  for (std::string l; std::getline(log, l);) {
    json e = json::parse(l);
    if (e["alert"] != "GpuXidError") continue;
    if (e["event"] == "resolved") ++xid_resolved;
    if (e["event"] != "firing") continue;
    ++xid_firing;
    EXPECT_EQ(e["labels"], json({{"gpu", "1"},
                                 {"hostname", "k8s-node-3"},
                                 {"uuid", "GPU-11111111-1111-1111-1111-111111111111"},
                                 {"xid", "79"}}))
        << l;
  }
  EXPECT_EQ(xid_firing, 1) << ReadAll(alerts);
  EXPECT_EQ(xid_resolved, 0) << ReadAll(alerts);

  // The log disappears: blind to Xids, and it shows.
  std::filesystem::remove(klog);
  st = WaitStatus(port, 20,
                  [](const json& j) { return j.contains("host") && j["host"].value("kernel_log_up", true) == false; });
  EXPECT_EQ(st["host"]["kernel_log_up"], false) << st.dump(2);
  ASSERT_EQ(st["notes"].size(), 1u) << st.dump(2);
  EXPECT_NE(st["notes"][0].get<std::string>().find(klog), std::string::npos) << st["notes"];
  m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(MetricLine(m->body, "vramwatch_kernel_log_up{"), "vramwatch_kernel_log_up{hostname=\"k8s-node-3\"} 0")
      << m->body;

  // It comes back: read again, and the daemon says so as it said it was lost.
  h.s.Write("kern.log", "");
  st = WaitStatus(port, 20,
                  [](const json& j) { return j.contains("host") && j["host"].value("kernel_log_up", false) == true; });
  EXPECT_EQ(st["host"]["kernel_log_up"], true) << st.dump(2);
  EXPECT_NE(d.Log().find("kernel log: can be read now"), std::string::npos) << d.Log();
}

// A --kernel-log file that does not exist at start (a node whose syslog writes elsewhere) does not
// stop the daemon, which would lose every GPU's monitoring for want of Xids: it runs, blind to Xids
// and showing it, and follows the file once it exists, from the end it had then (a log moved into
// place with old Xids in it raises nothing). One whose directory does not exist is a typo: exit 3.
TEST(WatchE2E, AKernelLogFileThatDoesNotExistYetIsWaitedFor) {
  Host h;
  const std::string klog = h.s.dir() + "/kern.log";
  int port = FreePort();
  Daemon d(h.Args(port, {"--kernel-log", klog}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("gpus", json::array()).size() == 2; });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  EXPECT_EQ(st["host"]["kernel_log_up"], false) << st.dump(2);
  std::string notes = st["notes"].dump();
  EXPECT_NE(notes.find("kern.log"), std::string::npos) << notes;
  EXPECT_NE(d.Log().find("kern.log does not exist (yet)"), std::string::npos) << d.Log();
  EXPECT_TRUE(st["host"]["kernel_log"].is_null()) << st.dump(2);
  const std::string xid =
      "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
  h.s.Write("kern.log", xid);  // what it holds when it appears is old
  st = WaitStatus(port, 20,
                  [](const json& j) { return j.contains("host") && j["host"].value("kernel_log_up", false) == true; });
  EXPECT_EQ(st["host"]["kernel_log_up"], true) << st.dump(2);
  EXPECT_EQ(st["host"]["kernel_log"], klog) << st.dump(2);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  st = WaitStatus(port, 5, [](const json&) { return true; });
  EXPECT_FALSE(HasAlert(st, "GpuXidError", "1")) << "the Xid the file held when it appeared: " << st.dump(2);
  {
    std::ofstream out(klog, std::ios::app);
    out << xid;
  }
  st = WaitStatus(port, 20, [](const json& j) { return HasAlert(j, "GpuXidError", "1"); });
  EXPECT_TRUE(HasAlert(st, "GpuXidError", "1")) << st.dump(2) << d.Log();

  Daemon typo(h.Args(FreePort(), {"--kernel-log", h.s.dir() + "/no-such-dir/kern.log"}), h.env,
              h.s.dir() + "/typo.log");
  EXPECT_EQ(typo.Wait(10), 3) << typo.Log();
  EXPECT_NE(typo.Log().find("no-such-dir/kern.log"), std::string::npos) << typo.Log();
}

TEST(WatchE2E, KernelLogThatIsADirectoryIsAUsageErrorAtStart) {
  Host h;
  const std::string dir = h.s.dir() + "/klogdir";
  std::filesystem::create_directories(dir);
  Daemon d(h.Args(FreePort(), {"--kernel-log", dir}), h.env, h.s.dir() + "/d.log");
  EXPECT_EQ(d.Wait(10), 3) << d.Log();
  EXPECT_NE(d.Log().find("klogdir"), std::string::npos) << d.Log();
  EXPECT_NE(d.Log().find("directory"), std::string::npos) << d.Log();
}

// A missing or empty --proc-root, a --passwd that cannot be read, and a --db that cannot be
// opened or is not a database stop the daemon at start with exit 3 naming the path.
TEST(WatchE2E, BadProcRootPasswdOrDatabaseAtStartIsAUsageErrorNamingIt) {
  Host h;
  const std::string empty = h.s.dir() + "/emptyproc";
  std::filesystem::create_directories(empty);
  const std::string notadb = h.s.Write("notadb.csv", "timestamp,memory.used\n2026-03-14T10:00:00,1\n");
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const Case cases[] = {
      {FastWatchArgs(h.s.dir() + "/host/proc", FreePort(), {}), "host/proc"},
      {FastWatchArgs(empty, FreePort(), {}), "emptyproc"},
      {h.Args(FreePort(), {"--passwd", h.s.dir() + "/nonexist"}), "nonexist"},
      {h.Args(FreePort(), {"--kube-logs", h.s.dir() + "/no-kube-logs"}), "--kube-logs " + h.s.dir() + "/no-kube-logs"},
      {h.Args(FreePort(), {"--db", h.s.dir() + "/no/such/dir/h.db"}), "no/such/dir/h.db"},
      {h.Args(FreePort(), {"--db", notadb}), "notadb.csv"},
  };
  int i = 0;
  for (const Case& c : cases) {
    Daemon d(c.args, h.env, h.s.dir() + "/d" + std::to_string(i++) + ".log");
    EXPECT_EQ(d.Wait(10), 3) << c.named << "\n" << d.Log();
    EXPECT_NE(d.Log().find(c.named), std::string::npos) << d.Log();
    EXPECT_EQ(d.Log().find("serving"), std::string::npos) << d.Log();
  }
}

// A history file with 8 KiB of garbage in its middle (the series table's pages): the daemon and a
// replay refuse it at start, exit 3, naming the file, saying it is corrupt and what to do, and
// leave it as it was. (It used to start, restore alerts from it and pause history at the first
// flush.)
TEST(WatchE2E, CorruptDatabaseAtStartIsAUsageErrorSayingWhatToDo) {
  Host h;
  const std::string db = h.s.dir() + "/corrupt.db";
  {
    auto store = storage::HistoryStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (int i = 0; i < 300; ++i) (*store)->Append("gpu:0", now - 300 + i, 1000 * kMiB);
    ASSERT_TRUE((*store)->Flush().ok());
    ASSERT_TRUE((*store)->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    std::string junk(8192, '\0');
    uint32_t x = 12345;
    for (char& c : junk) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
    f.seekp(8192);
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    ASSERT_TRUE(f.good());
  }
  const std::string before = ReadAll(db);
  RunResult live = RunVramwatch(h.Args(FreePort(), {"--db", db, "--duration", "5s"}), h.env, 30);
  RunResult replay = RunVramwatch(
      {"watch", "--replay", std::string(VRAMWATCH_SOURCE_DIR) + "/examples/training-leak.csv", "--db", db}, {}, 30);
  for (const RunResult* r : {&live, &replay}) {
    EXPECT_EQ(r->exit_code, 3) << r->err;
    EXPECT_NE(r->err.find("--db: " + db + " is corrupt"), std::string::npos) << r->err;
    EXPECT_NE(r->err.find("move it aside"), std::string::npos) << r->err;
    EXPECT_NE(r->err.find(".dump"), std::string::npos) << r->err;
    EXPECT_EQ(r->err.find("serving"), std::string::npos) << r->err;
  }
  EXPECT_TRUE(ReadAll(db) == before) << "the corrupt file was written to";
}

// watch names the same user as check for the same PID: <proc-root>/passwd for a fixture root
// (here given as a relative path), and a relative --passwd is relative to the working directory.
TEST(WatchE2E, FixtureRootUsersAreNamedFromItsPasswdAsCheckDoes) {
  Host h;
  const std::string rel = std::filesystem::relative(h.proc).string();
  auto user_of_5100 = [](const json& st) -> std::string {
    for (const auto& g : st.value("gpus", json::array())) {
      for (const auto& p : g.value("processes", json::array())) {
        if (p.value("pid", 0) == 5100 && p["user"].is_string()) return p["user"];
      }
    }
    return "";
  };
  {
    int port = FreePort();
    Daemon d(FastWatchArgs(rel, port, {}), h.env, h.s.dir() + "/d1.log");
    json st = WaitStatus(port, 20, [&](const json& j) { return !user_of_5100(j).empty(); });
    EXPECT_EQ(user_of_5100(st), "alice") << st.dump(2) << d.Log();
  }
  {
    const std::string users = h.s.Write("users", "carol:x:1000:1000::/home/carol:/bin/sh\n");
    int port = FreePort();
    Daemon d(FastWatchArgs(rel, port, {"--passwd", std::filesystem::relative(users).string()}), h.env,
             h.s.dir() + "/d2.log");
    json st = WaitStatus(port, 20, [&](const json& j) { return !user_of_5100(j).empty(); });
    EXPECT_EQ(user_of_5100(st), "carol") << st.dump(2) << d.Log();
  }
}

// --duration stops the daemon at its deadline, not at the first sample tick after it: with an
// --interval longer than the --duration it still stops after the --duration.
TEST(WatchE2E, DurationStopsTheDaemonBetweenSampleTicks) {
  Host h;
  for (const std::string interval : {"20s", "1h"}) {
    std::vector<std::string> args = h.Args(FreePort(), {"--duration", "2s", "--kernel-log", "none"});
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--interval") args[i + 1] = interval;
    }
    RunResult r = RunVramwatch(args, h.env, 40);
    EXPECT_EQ(r.exit_code, 0) << interval << r.err;
    EXPECT_LT(r.seconds, 10) << interval << ": ran " << r.seconds << " s with --duration 2s\n" << r.err;
    EXPECT_NE(r.err.find("stopped after"), std::string::npos) << interval << r.err;
  }
}

TEST(WatchE2E, PortInUseExitsWithTheAddressAndReason) {
  Host h;
  int port = FreePort();
  Daemon first(h.Args(port), h.env, h.s.dir() + "/first.log");
  WaitStatus(port, 20, [](const json& j) { return j.contains("gpus"); });
  Daemon second(h.Args(port), h.env, h.s.dir() + "/second.log");
  EXPECT_EQ(second.Wait(20), 3);
  EXPECT_NE(second.Log().find("127.0.0.1:" + std::to_string(port)), std::string::npos) << second.Log();
  EXPECT_NE(second.Log().find("in use"), std::string::npos) << second.Log();
}

TEST(WatchE2E, MissingNvmlKeepsServingAndSaysWhy) {
  Host h;
  int port = FreePort();
  std::vector<std::string> args = h.Args(port);
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--nvml-lib") args[i + 1] = h.s.dir() + "/no-such-libnvidia-ml.so.1";
  }
  Daemon d(args, h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 20, [](const json& j) { return !FindingsOf(j, "nvml_error").empty(); });
  auto f = FindingsOf(st, "nvml_error");
  ASSERT_EQ(f.size(), 1u) << st.dump(2) << d.Log();
  EXPECT_NE(f[0]["message"].get<std::string>().find("no-such-libnvidia-ml.so.1"), std::string::npos);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("kind=\"nvml_error\""), std::string::npos);
  // The failure counts in the self-metrics, as a failure that is no NVML call.
  EXPECT_NE(m->body.find("vramwatch_nvml_errors_total{call=\"unknown\",code=\"other\",hostname=\"e2e-node\"} "),
            std::string::npos)
      << m->body;
  EXPECT_NE(d.Log().find("retrying"), std::string::npos);
  // Like any critical finding, it raises its alert once it has held for --finding-for (1 s).
  json fired = WaitStatus(port, 20, [](const json& j) { return HasAlert(j, "GpuNvmlError", ""); });
  EXPECT_TRUE(HasAlert(fired, "GpuNvmlError", "")) << fired.dump(2) << d.Log();
}

// An nvmlInit that hangs past --init-timeout counts as that call's timeout in the self-metrics.
TEST(WatchE2E, AHungNvmlInitCountsAsItsTimeout) {
  std::string scenario = Scenario();
  scenario += "hangs:\n  - {function: nvmlInit, at_s: 0, seconds: 30}\n";
  Host h(scenario);
  int port = FreePort();
  Daemon d(h.Args(port, {"--init-timeout", "500ms"}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 20, [](const json& j) { return !FindingsOf(j, "nvml_error").empty(); });
  ASSERT_FALSE(FindingsOf(st, "nvml_error").empty()) << st.dump(2) << d.Log();
  // The finding and stderr point at persistence mode, as check and record do.
  EXPECT_NE(FindingsOf(st, "nvml_error")[0]["message"].get<std::string>().find("persistence mode"), std::string::npos)
      << st.dump(2);
  EXPECT_NE(d.Log().find("--init-timeout"), std::string::npos) << d.Log();
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("vramwatch_nvml_errors_total{call=\"nvmlInit_v2\",code=\"timeout\",hostname=\"e2e-node\"} "),
            std::string::npos)
      << m->body << d.Log();
}

// NVML that answers but lists no GPU is check's UNKNOWN ("NVML sees no GPU"), not a healthy host:
// a critical nvml_error finding in the status and the metrics, and its alert after --finding-for.
TEST(WatchE2E, NvmlThatSeesNoGpuIsACriticalFindingNotAHealthyHost) {
  Host h("driver_version: \"550.54.15\"\ngpus: []\n");
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 20, [](const json& j) { return HasAlert(j, "GpuNvmlError", ""); });
  ASSERT_TRUE(HasAlert(st, "GpuNvmlError", "")) << st.dump(2) << d.Log();
  EXPECT_EQ(st["status"], "critical") << st.dump(2);
  EXPECT_EQ(st["exit_code"], 2) << st.dump(2);
  auto f = FindingsOf(st, "nvml_error");
  ASSERT_EQ(f.size(), 1u) << st.dump(2);
  EXPECT_EQ(f[0]["message"].get<std::string>().rfind("NVML sees no GPU (library ", 0), 0u) << f[0].dump();
  EXPECT_EQ(f[0]["severity"], "critical");
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  const std::string series = MetricLine(
      m->body, "vramwatch_finding{gpu=\"\",hostname=\"e2e-node\",kind=\"nvml_error\",severity=\"critical\"}");
  EXPECT_NE(series.find("} 1"), std::string::npos) << m->body;
  EXPECT_NE(d.Log().find("NVML sees no GPU"), std::string::npos) << d.Log();
}

TEST(WatchE2E, GpuHungFromTheStartRaisesTheNvmlErrorAndStaleAlerts) {
  Host h(Scenario("    hangs: [{function: nvmlDeviceGetMemoryInfo_v2, at_s: 0, seconds: 600}]\n"));
  const std::string alerts = h.s.dir() + "/alerts.jsonl";
  int port = FreePort();
  Daemon d(h.Args(port, {"--alert-log", alerts}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuNvmlError", "0"); });
  ASSERT_TRUE(HasAlert(st, "GpuNvmlError", "0")) << st.dump(2) << d.Log();
  EXPECT_FALSE(HasAlert(st, "GpuNvmlError", "1")) << st.dump(2);
  EXPECT_NE(ReadAll(alerts).find("GpuNvmlError"), std::string::npos) << ReadAll(alerts);
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(MetricLine(m->body, "vramwatch_gpu_up{gpu=\"0\"").find("} 0"), std::string::npos) << m->body;
  // That GPU cannot be registered for Xid events while its call hangs: said once on stderr, not at
  // every process tick with the time the call has been blocked.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string log = d.Log();
  size_t said = 0;
  for (size_t at = log.find("NVML Xid events: GPU 0:"); at != std::string::npos;
       at = log.find("NVML Xid events: GPU 0:", at + 1)) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << log;
}

TEST(WatchE2E, HungNvmlCallMakesOneGpuStaleWhileTheOtherGoesOn) {
  Host h(Scenario("    hangs: [{function: nvmlDeviceGetMemoryInfo_v2, at_s: 2, seconds: 600}]\n"));
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) {
    return j.value("gpus", json::array()).size() == 2 && j["gpus"][0].value("stale", false);
  });
  ASSERT_EQ(st["gpus"].size(), 2u) << d.Log();
  EXPECT_TRUE(st["gpus"][0]["stale"].get<bool>()) << st.dump(2);
  EXPECT_FALSE(st["gpus"][1]["stale"].get<bool>());
  // GPU 1 keeps being sampled: its sample age stays small while GPU 0's grows.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("vramwatch_gpu_up{gpu=\"0\""), std::string::npos);
  auto age = [&](const std::string& gpu) {
    const std::string key = "vramwatch_gpu_sample_age_seconds{gpu=\"" + gpu + "\"";
    size_t at = m->body.find(key);
    if (at == std::string::npos) return -1.0;
    size_t sp = m->body.find("} ", at);
    return std::stod(m->body.substr(sp + 2));
  };
  EXPECT_GT(age("0"), 2.0) << m->body;
  EXPECT_LT(age("1"), 2.0) << m->body;
  // The hung call waited its 500 ms deadline: one observation of nvmlDeviceGetMemoryInfo_v2 above
  // 0.25 s; every other function answered fast.
  auto bucket = [&](const std::string& call, const std::string& le) {
    std::string line = MetricLine(m->body, "vramwatch_nvml_call_duration_seconds_bucket{call=\"" + call +
                                               "\",hostname=\"e2e-node\",le=\"" + le + "\"}");
    return line.empty() ? -1.0 : std::stod(line.substr(line.rfind(' ') + 1));
  };
  const double fast = bucket("nvmlDeviceGetMemoryInfo_v2", "0.25");
  const double all = bucket("nvmlDeviceGetMemoryInfo_v2", "+Inf");
  EXPECT_EQ(all - fast, 1) << m->body;
  EXPECT_EQ(bucket("nvmlDeviceGetMemoryInfo_v2", "1"), all) << m->body;
  EXPECT_GT(bucket("nvmlDeviceGetUtilizationRates", "+Inf"), 0) << m->body;
  EXPECT_EQ(bucket("nvmlDeviceGetUtilizationRates", "0.25"), bucket("nvmlDeviceGetUtilizationRates", "+Inf"))
      << m->body;
}

TEST(WatchE2E, LostGpuRaisesItsAlertAndTheOtherGpuGoesOn) {
  Host h(Scenario("    errors: [{function: nvmlDeviceGetMemoryInfo_v2, code: 15, from_s: 2, to_s: 600}]\n"));
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuLost", "0"); });
  ASSERT_TRUE(HasAlert(st, "GpuLost", "0")) << st.dump(2) << d.Log();
  EXPECT_TRUE(st["gpus"][0]["lost"].get<bool>());
  EXPECT_FALSE(st["gpus"][1]["lost"].get<bool>());
  EXPECT_EQ(st["gpus"][1]["memory_used_bytes"], 12288 * kMiB);
}

// A GPU whose memory has never been read, because the call fails from the start (NVML error 999)
// or the GPU is lost, is down in /metrics with no sample age (what VramwatchGpuDown looks for) and
// stale in the status, as its GpuStale alert counts it; the GPU that answers is up.
TEST(WatchE2E, AGpuWhoseMemoryWasNeverReadIsDownAndStale) {
  for (int code : {999, 15}) {
    Host h(Scenario("", fmt::format("    errors: [{{function: nvmlDeviceGetMemoryInfo, code: {}, from_s: 0, to_s: "
                                    "10000}}]\n",
                                    code)));
    int port = FreePort();
    Daemon d(h.Args(port, {"--kernel-log", "none"}), h.env, h.s.dir() + "/d.log");
    json st = WaitStatus(port, 30, [](const json& j) { return j.value("samples", 0) >= 3; });
    ASSERT_EQ(st.value("gpus", json::array()).size(), 2u) << code << st.dump(2) << d.Log();
    EXPECT_FALSE(st["gpus"][0]["stale"].get<bool>()) << code;
    EXPECT_TRUE(st["gpus"][1]["stale"].get<bool>()) << code << st["gpus"][1].dump(2);
    auto m = Get(port, "/metrics");
    ASSERT_TRUE(m);
    EXPECT_NE(MetricLine(m->body, "vramwatch_gpu_up{gpu=\"0\"").find("} 1"), std::string::npos) << m->body;
    EXPECT_NE(MetricLine(m->body, "vramwatch_gpu_up{gpu=\"1\"").find("} 0"), std::string::npos) << code << m->body;
    EXPECT_NE(MetricLine(m->body, "vramwatch_gpu_sample_age_seconds{gpu=\"0\""), "") << m->body;
    EXPECT_EQ(MetricLine(m->body, "vramwatch_gpu_sample_age_seconds{gpu=\"1\""), "") << m->body;
  }
}

TEST(WatchE2E, FullDatabasePausesHistoryButNotMonitoring) {
  Host h;
  int port = FreePort();
  // A database with its schema, and a file size limit (ulimit -f) that leaves its -wal file a few
  // pages: the disk refuses writes within seconds. (A --db-max-size with room for one page stood in
  // for a full disk; at its cap the daemon now makes room for the newest samples instead.)
  const std::string small = h.s.dir() + "/small.db";
  {
    auto store = storage::HistoryStore::Open(small);
    ASSERT_TRUE(store.ok());
  }
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = static_cast<rlim_t>(std::filesystem::file_size(small)) + 16 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  Daemon d(h.Args(port, {"--db", small}), h.env, h.s.dir() + "/d.log");
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  std::string body;
  for (int i = 0; i < 150; ++i) {
    auto m = Get(port, "/metrics");
    std::string line = m ? MetricLine(m->body, "vramwatch_history_paused{") : "";
    if (line.size() > 2 && line.compare(line.size() - 2, 2, " 1") == 0) {
      body = m->body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_FALSE(body.empty()) << "history never paused\n" << d.Log();
  EXPECT_NE(d.Log().find("history paused"), std::string::npos);
  // Monitoring goes on: the sample counter keeps rising.
  auto count = [](const std::string& text) {
    size_t at = text.find("vramwatch_samples_total{");
    return std::stoull(text.substr(text.find("} ", at) + 2));
  };
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto later = Get(port, "/metrics");
  ASSERT_TRUE(later);
  EXPECT_GT(count(later->body), count(body));
}

// Writes `hours` of a `gpus`-GPU query-gpu CSV, one line per GPU every `step_s` seconds, from
// 2026-11-30 00:00:00; returns its path.
std::string LongTrace(Scratch& s, const std::string& name, int hours, int gpus, int step_s) {
  const std::string csv = s.dir() + "/" + name;
  std::ofstream out(csv);
  out << "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int i = 0; i < hours * 3600; i += step_s) {
    const std::string at = fmt::format("2026/11/30 {:02d}:{:02d}:{:02d}.000", i / 3600, i / 60 % 60, i % 60);
    for (int g = 0; g < gpus; ++g) out << at << ", " << g << ", " << 1000 + 100 * g + i % 7 << " MiB, 81559 MiB\n";
  }
  return csv;
}

// The history file deleted under a running daemon (a person "resetting" history): the writes go
// on into the deleted file, lost at the stop; stderr and the status notes say so.
TEST(WatchE2E, AHistoryFileDeletedWhileRunningIsSaid) {
  Host h;
  const std::string db = h.s.dir() + "/history.db";
  int port = FreePort();
  Daemon d(h.Args(port, {"--db", db, "--kernel-log", "none"}), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) { return j.value("samples", 0) > 2; });
  ASSERT_GT(st.value("samples", 0), 2) << d.Log();
  ASSERT_TRUE(std::filesystem::remove(db));
  auto noted = [&](const json& j) {
    for (const auto& n : j.value("notes", json::array())) {
      if (n.get<std::string>().find(db + " was deleted while open") != std::string::npos) return true;
    }
    return false;
  };
  st = WaitStatus(port, 20, noted);  // within a flush (5 s)
  EXPECT_TRUE(noted(st)) << st.dump(2) << d.Log();
  EXPECT_NE(d.Log().find("history: " + db + " was deleted while open"), std::string::npos) << d.Log();
}

// A --db-max-size below the size the file already has: SQLite cannot cap a file below it, so the
// start says the file keeps its size, instead of accepting the cap silently.
TEST(WatchE2E, ACapBelowTheFilesSizeIsSaidAtStart) {
  Scratch s;
  const std::string csv = LongTrace(s, "1h.csv", 1, 4, 1);
  const std::string db = s.dir() + "/big.db";
  RunResult first = RunVramwatch({"watch", "--replay", csv, "--db", db, "--kernel-log", "none"}, {}, 120);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err.find("is below the size of"), std::string::npos) << first.err;
  const auto size = std::filesystem::file_size(db);
  ASSERT_GT(size, 100u * 1024) << "the trace should fill more than the cap below";
  RunResult capped =
      RunVramwatch({"watch", "--replay", csv, "--db", db, "--db-max-size", "64KiB", "--kernel-log", "none"}, {}, 120);
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_NE(capped.err.find("--db-max-size 64 KiB is below the size of " + db), std::string::npos) << capped.err;
  EXPECT_NE(capped.err.find("SQLite does not shrink a file"), std::string::npos) << capped.err;
}

// A --db-max-size below what the retention keeps: at the cap the oldest samples make room for the
// newest (said once on stderr), and the raw retention still holds. (The expectation that history
// pauses at the cap and resumes as retention frees room was the bug: a longer trace never resumed.)
TEST(WatchE2E, HistoryAtItsSizeCapKeepsTheNewestSamplesAsRetentionFreesRoom) {
  Scratch s;
  const std::string csv = LongTrace(s, "3h.csv", 3, 4, 1);
  const std::string db = s.dir() + "/capped.db";
  RunResult r = RunVramwatch({"watch", "--replay", csv, "--db", db, "--db-max-size", "150KiB", "--raw-retention", "10m",
                              "--aggregate-retention", "30m"},
                             {}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("history is at its --db-max-size"), std::string::npos) << "the cap was never reached\n" << r.err;
  EXPECT_EQ(r.err.find("history paused"), std::string::npos) << r.err;
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto last = (*store)->db().Prepare("SELECT max(t) - min(t), max(t) FROM samples");
  ASSERT_TRUE(last.ok());
  ASSERT_TRUE(*last->Step());
  const double end = 1795996800.0 + 3 * 3600 - 1;  // 2026-11-30 02:59:59 (read as UTC)
  EXPECT_NEAR(last->ColumnDouble(1), end, 1.0) << "the newest samples were not kept";
  EXPECT_LE(last->ColumnDouble(0), 20 * 60.0) << "the retention (10 minutes, run every 10 minutes) held";
}

// The review's case: 6 h of 2 GPUs every 2 s under a 200 KiB cap with 2 h of raw retention, which
// the cap cannot hold. History paused at the cap for good (the whole backlog in one transaction,
// retention freeing 10 minutes' worth every 10 minutes) and retention then deleted every stored
// sample: the file ended with none. Now the newest samples are stored, and history, if it pauses,
// resumes.
TEST(WatchE2E, AHistoryCapBelowTheRawRetentionKeepsStoringTheNewestSamples) {
  Scratch s;
  const std::string csv = LongTrace(s, "6h.csv", 6, 2, 2);
  const std::string db = s.dir() + "/cap8.db";
  RunResult r = RunVramwatch({"watch", "--replay", csv, "--db", db, "--db-max-size", "200KiB", "--raw-retention", "2h",
                              "--kernel-log", "none"},
                             {}, 180);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t paused = r.err.rfind("history paused");
  if (paused != std::string::npos) {
    EXPECT_NE(r.err.find("history resumed", paused), std::string::npos) << "history never resumed\n" << r.err;
  }
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto st = (*store)->db().Prepare("SELECT count(*), max(t) FROM samples");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(*st->Step());
  EXPECT_GT(st->ColumnInt(0), 1000) << "the raw samples are gone\n" << r.err;
  const double end = 1795996800.0 + 6 * 3600 - 2;  // the trace's last line, 2026-11-30 05:59:58
  EXPECT_NEAR(st->ColumnDouble(1), end, 1.0) << "the newest samples were not stored\n" << r.err;
  for (const char* gpu : {"gpu:0", "gpu:1"}) {
    auto newest = (*store)->Raw(gpu, end - 1, end + 1);
    ASSERT_TRUE(newest.ok());
    EXPECT_EQ(newest->size(), 1u) << gpu;
  }
}

// A file size limit (ulimit -f) below what the history needs: the write fails and history pauses;
// the replay goes on to its end. (SIGXFSZ killed it.)
TEST(WatchE2E, AFileSizeLimitPausesHistoryInsteadOfKillingTheDaemon) {
  Scratch s;
  const std::string csv = LongTrace(s, "2h.csv", 2, 2, 1);
  const std::string db = s.dir() + "/limited.db";
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = 256 * 1024;  // room for the schema, not for 2 hours of samples
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  RunResult r = RunVramwatch({"watch", "--replay", csv, "--db", db, "--kernel-log", "none"}, {}, 120);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("history paused"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("GPU 1:"), std::string::npos) << "the replay did not reach its end\n" << r.out << r.err;
}

// A cap below what a new database's schema needs is an unusable --db: exit 3 at start.
TEST(WatchE2E, DbMaxSizeBelowTheFreshSchemaIsAUsageErrorAtStart) {
  Host h;
  const std::string db = h.s.dir() + "/tiny.db";
  RunResult r = RunVramwatch(
      FastWatchArgs(h.proc, FreePort(), {"--db", db, "--db-max-size", "16KiB", "--duration", "5s"}), h.env, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("database or disk is full"), std::string::npos) << r.err;
}

TEST(WatchE2E, ReplayRaisesTheLeakAlertOnALeakAndNothingOnAHealthyRun) {
  const std::string examples = std::string(VRAMWATCH_SOURCE_DIR) + "/examples/";
  RunResult leak = RunVramwatch({"watch", "--replay", examples + "training-leak.csv", "--speed", "max"}, {}, 120);
  EXPECT_EQ(leak.exit_code, 1) << leak.out << leak.err;  // a warning: the runway is days
  EXPECT_NE(leak.out.find("2026-03-14T"), std::string::npos) << "alert lines carry the trace's time\n" << leak.out;
  // nvidia-smi's timestamps carry no zone (the recording machine's local time): none is claimed,
  // the line starts "2026-03-14T10:41:20.035 alert firing".
  const size_t firing = leak.out.find(" alert firing GpuMemoryLeak");
  ASSERT_NE(firing, std::string::npos) << leak.out;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(leak.out[firing - 1]))) << leak.out;
  EXPECT_NE(leak.out.find("alert firing GpuMemoryLeak{gpu=0"), std::string::npos) << leak.out;
  EXPECT_NE(leak.out.find("GPU 0: leak"), std::string::npos) << leak.out;
  // The leak runs to the end of the trace: one firing, no resolve.
  size_t firing_lines = 0;
  for (size_t at = leak.out.find(" alert firing GpuMemoryLeak"); at != std::string::npos;
       at = leak.out.find(" alert firing GpuMemoryLeak", at + 1)) {
    ++firing_lines;
  }
  EXPECT_EQ(firing_lines, 1u) << leak.out;
  EXPECT_EQ(leak.out.find(" alert resolved"), std::string::npos) << leak.out;
  RunResult healthy = RunVramwatch({"watch", "--replay", examples + "training-healthy.csv"}, {}, 120);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  EXPECT_EQ(healthy.out.find("alert"), std::string::npos) << healthy.out;
}

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Two hours of history ending now, replayed into a database, then the live daemon on the emulator
// continuing the same leak on GPU 0 (1 GiB/h from the level the history ends at) beside a healthy
// plateau on GPU 1 and, on GPU 2, a trainer SIGKILLed 4 s in whose 12 GiB context stays held. The
// detector needs hours of data, so only an engine resumed from the database can call the leak
// within the seconds this test waits. Exactly two alerts: the leak on GPU 0, the orphan on GPU 2.
TEST(WatchE2E, LiveDaemonResumedFromHistoryRaisesTheLeakAndOrphanAlertsAndNothingOnTheHealthyGpu) {
  Scratch s;
  constexpr double kRateMiBPerHour = 1024, kSpan = 2 * 3600, kStep = 10, kStartMiB = 20000;
  const char* kUuid[] = {"GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111"};
  const double hist_start = WallNow() - kSpan;
  auto leak_mib = [&](double t) { return kStartMiB + kRateMiBPerHour * (t - hist_start) / 3600; };
  std::string rec = trace::RecordingHeaderLine({hist_start, "node1", "emulator", kStep}) + "\n";
  for (int i = 0; i * kStep <= kSpan; ++i) {
    const double t = hist_start + i * kStep;
    for (int g = 0; g < 2; ++g) {
      TraceRecord r;
      r.gpu.key = std::to_string(g);
      r.gpu.index = g;
      r.gpu.uuid = kUuid[g];
      r.gpu.name = "NVIDIA H100 80GB HBM3";
      r.sample.t = t;
      // GPU 1: a plateau with a few MiB of jitter.
      const double mib = g == 0 ? leak_mib(t) : 30000 + (i * 7919 % 17) - 8;
      r.sample.used_bytes = static_cast<uint64_t>(mib * kMiB);
      r.sample.total_bytes = 81559 * kMiB;
      r.sample.reserved_bytes = 479 * kMiB;
      rec += trace::RecordingRecordLine(r, true) + "\n";
    }
  }
  const std::string db = s.dir() + "/history.db";
  // --for 24h: the replay fills the history without raising (and storing) an alert itself.
  RunResult fill =
      RunVramwatch({"watch", "--replay", s.Write("history.jsonl", rec), "--db", db, "--for", "24h"}, {}, 120);
  ASSERT_EQ(fill.exit_code, 0) << fill.out << fill.err;
  ASSERT_NE(fill.out.find("GPU 0: leak"), std::string::npos) << fill.out;
  ASSERT_NE(fill.out.find("GPU 1: plateau"), std::string::npos) << fill.out;
  EXPECT_EQ(fill.out.find("alert"), std::string::npos) << fill.out;

  FakeProcess leaker;
  leaker.pid = 5100;
  leaker.state = 'R';
  leaker.argv = {"python3", "serve.py"};
  leaker.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"};
  FakeProcess steady;
  steady.pid = 5200;
  steady.state = 'R';
  steady.argv = {"python3", "train.py"};
  steady.fd_targets = {"/dev/nvidiactl", "/dev/nvidia1", "/dev/nvidia-uvm"};
  // Listed by NVML until it is killed at 4 s; no device file, so nobody holds /dev/nvidia2 after.
  FakeProcess killed;
  killed.pid = 5300;
  killed.state = 'R';
  killed.argv = {"python3", "train.py", "--config", "small.yaml"};
  const std::string proc = s.Proc({leaker, steady, killed});
  // Emulator time starts when the daemon initialises NVML, a moment after this.
  const double live_start = WallNow();
  const std::string scenario =
      fmt::format(R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "{}"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 90
    processes:
      - {{pid: 5100, type: compute, used_mib: [[0, {:.1f}], [3600, {:.1f}]], sm_util: 90}}
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "{}"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 90
    processes:
      - {{pid: 5200, type: compute, used_mib: 30000, sm_util: 90}}
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-22222222-2222-2222-2222-222222222222"
    minor: 2
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: [[0, 90], [4, 0]]
    unattributed_mib: [[0, 0], [4, 0], [4.5, 12288]]
    processes:
      - {{pid: 5300, type: compute, used_mib: 12288, sm_util: 95, start_s: 0, end_s: 4}}
)",
                  kUuid[0], leak_mib(live_start), leak_mib(live_start) + kRateMiBPerHour, kUuid[1]);
  const std::string alerts = s.dir() + "/alerts.jsonl";
  int port = FreePort();
  Daemon d(FastWatchArgs(proc, port, {"--kernel-log", "none", "--db", db, "--alert-log", alerts, "--for", "4s"}),
           {{"VRAMWATCH_EMULATOR_SCENARIO", s.Write("live.yaml", scenario)}}, s.dir() + "/d.log");
  // pending first (the verdict holds from the first assessment), firing once --for has passed.
  json st = WaitStatus(port, 30, [](const json& j) { return HasAlert(j, "GpuMemoryLeak", "0", "pending"); });
  EXPECT_TRUE(HasAlert(st, "GpuMemoryLeak", "0", "pending")) << st.dump(2) << d.Log();
  st = WaitStatus(port, 30, [](const json& j) {
    return HasAlert(j, "GpuMemoryLeak", "0") && HasAlert(j, "GpuOrphanedMemory", "2");
  });
  ASSERT_TRUE(HasAlert(st, "GpuMemoryLeak", "0")) << st.dump(2) << d.Log();
  ASSERT_TRUE(HasAlert(st, "GpuOrphanedMemory", "2")) << st.dump(2) << d.Log();
  EXPECT_LT(WallNow() - live_start, 40) << "bounded time";
  EXPECT_NE(d.Log().find("resumed "), std::string::npos) << d.Log();
  for (const auto& a : st["alerts"]) {
    const bool leak0 = a["name"] == "GpuMemoryLeak" && a["gpu"] == "0";
    const bool orphan2 = a["name"] == "GpuOrphanedMemory" && a["gpu"] == "2";
    EXPECT_TRUE(leak0 || orphan2) << a.dump();
  }
  ASSERT_EQ(st["gpus"].size(), 3u);
  EXPECT_EQ(st["gpus"][0]["analysis"]["verdict"], "leak") << st["gpus"][0].dump(2);
  // The live evidence names when the growth began on the clock (UTC), not as an offset from the
  // start of the series (which began with the history resumed from the database).
  std::string evidence;
  for (const auto& e : st["gpus"][0]["analysis"]["evidence"]) evidence += e.get<std::string>() + "\n";
  EXPECT_TRUE(
      std::regex_search(evidence, std::regex("Growing since [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC at ")))
      << evidence;
  EXPECT_EQ(evidence.find("since +"), std::string::npos) << evidence;
  // The same moment as a field (analyze's `leak_start`), ISO 8601 UTC, in the sentence's minute.
  const json& leak_start = st["gpus"][0]["analysis"]["leak_start"];
  ASSERT_TRUE(leak_start.is_string()) << st["gpus"][0]["analysis"].dump(2);
  const std::string start_text = leak_start.get<std::string>();
  EXPECT_EQ(start_text.back(), 'Z') << start_text;
  std::string minute = start_text.substr(0, 16);
  minute[10] = ' ';
  EXPECT_NE(evidence.find("Growing since " + minute + " UTC at "), std::string::npos) << start_text << "\n" << evidence;
  const double start_s = ParseTimestamp(start_text)->seconds;
  EXPECT_GE(start_s, hist_start - 1) << start_text;
  EXPECT_LE(start_s, WallNow()) << start_text;
  EXPECT_EQ(st["gpus"][1]["analysis"]["verdict"], "plateau") << st["gpus"][1].dump(2);
  EXPECT_TRUE(st["gpus"][1]["analysis"].contains("leak_start")) << st["gpus"][1]["analysis"].dump(2);
  EXPECT_TRUE(st["gpus"][1]["analysis"]["leak_start"].is_null()) << st["gpus"][1]["analysis"].dump(2);
  // Every process analysis has the field too (null until a process's own series shows a leak).
  int process_analyses = 0;
  for (const auto& g : st["gpus"]) {
    for (const auto& p : g["processes"]) {
      if (!p.contains("analysis")) continue;
      ++process_analyses;
      EXPECT_TRUE(p["analysis"].contains("leak_start")) << p.dump(2);
    }
  }
  EXPECT_GE(process_analyses, 1) << st.dump(2);

  // /metrics: the leak verdict and its rate on GPU 0, a plateau on GPU 1.
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m);
  const std::string g0 = "gpu=\"0\",uuid=\"" + std::string(kUuid[0]) + "\"";
  const std::string g1 = "gpu=\"1\",uuid=\"" + std::string(kUuid[1]) + "\"";
  for (size_t at = m->body.find("vramwatch_gpu_verdict{" + g0); at != std::string::npos;
       at = m->body.find("vramwatch_gpu_verdict{" + g0, at + 1)) {
    std::string line = m->body.substr(at, m->body.find('\n', at) - at);
    const bool is_leak = line.find("verdict=\"leak\"") != std::string::npos;
    EXPECT_EQ(line.substr(line.size() - 2), is_leak ? " 1" : " 0") << line;
  }
  EXPECT_NE(m->body.find(",verdict=\"plateau\"} 1"), std::string::npos) << m->body;
  EXPECT_EQ(MetricLine(m->body, "vramwatch_gpu_leak_rate_bytes_per_second{" + g1), "") << m->body;
  std::string rate = MetricLine(m->body, "vramwatch_gpu_leak_rate_bytes_per_second{" + g0);
  ASSERT_NE(rate, "") << m->body;
  const double mib_per_hour = std::stod(rate.substr(rate.rfind(' ') + 1)) * 3600 / kMiB;
  EXPECT_NEAR(mib_per_hour, kRateMiBPerHour, 0.15 * kRateMiBPerHour) << rate;
  std::string mf = s.Write("metrics.txt", m->body);
  EXPECT_EQ(std::system(("promtool check metrics < " + mf + " > /dev/null 2>&1").c_str()), 0);

  // The alert log: one firing leak on GPU 0, which became active in this run and waited --for,
  // and one firing orphan on GPU 2.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::istringstream log(ReadAll(alerts));
  int firing = 0, orphans = 0;
  for (std::string line; std::getline(log, line);) {
    json e = json::parse(line);
    if (e["alert"] == "GpuOrphanedMemory") {
      EXPECT_EQ(e["labels"]["gpu"], "2") << line;
      if (e["event"] == "firing") ++orphans;
      continue;
    }
    EXPECT_EQ(e["alert"], "GpuMemoryLeak") << line;
    EXPECT_EQ(e["labels"]["gpu"], "0") << line;
    if (e["event"] != "firing") continue;
    ++firing;
    auto since = ParseTimestamp(e["active_since"].get<std::string>());
    auto fired = ParseTimestamp(e["fired_at"].get<std::string>());
    ASSERT_TRUE(since.ok() && fired.ok()) << line;
    EXPECT_GE(since->seconds, live_start - 1) << line;
    EXPECT_GE(fired->seconds - since->seconds, 4 - 0.01) << line;
  }
  EXPECT_EQ(firing, 1) << ReadAll(alerts);
  EXPECT_EQ(orphans, 1) << ReadAll(alerts);
}

// The evidence of a replayed leak names moments as the trace's clock does: a UTC trace's in UTC, a
// zone-less trace's as written, and a trace without a clock (bare values) by its own times from its
// start. One hour of plateau, a restart at 08:00 (the drop the first evidence names), then a fast
// leak for three hours.
TEST(WatchE2E, ReplayEvidenceNamesClockTimesOfTheTraceAndOffsetsOnlyWithoutAClock) {
  Scratch s;
  const double start = ParseTimestamp("2026-11-27T07:00:00")->seconds;
  auto mib_at = [](int i) {
    return i * 10 < 3600 ? 30000.0 + (i * 7919 % 17) - 8 : 10000 + 1500.0 * (i * 10 - 3600) / 3600;
  };
  std::string values;
  for (int i = 0; i * 10 <= 4 * 3600; ++i) values += fmt::format("{:.0f}\n", mib_at(i));
  struct Case {
    std::string name, file, moment;  // moment: a regex on the description
    std::vector<std::string> extra;
  };
  std::vector<Case> cases;
  for (const std::string zone : {"Z", ""}) {
    std::string rec = trace::RecordingHeaderLine({start, "node1", "emulator", 10.0}) + "\n";
    for (int i = 0; i * 10 <= 4 * 3600; ++i) {
      TraceRecord r;
      r.gpu.key = "0";
      r.gpu.index = 0;
      r.gpu.uuid = "GPU-0";
      r.sample.t = start + i * 10;
      r.sample.used_bytes = static_cast<uint64_t>(mib_at(i) * kMiB);
      r.sample.total_bytes = 81559 * kMiB;
      rec += trace::RecordingRecordLine(r, zone == "Z") + "\n";
    }
    cases.push_back(
        {zone == "Z" ? "utc" : "wall",
         s.Write("rec" + zone + ".jsonl", rec),
         zone == "Z" ? "Growing since 2026-11-27 08:[0-9]{2} UTC at " : "Growing since 2026-11-27 08:[0-9]{2} at ",
         {}});
  }
  cases.push_back({"no clock",
                   s.Write("used.log", values),
                   R"(Growing since t\+1h [0-9]+m at )",
                   {"--format", "values", "--interval", "10s", "--total", "81559MiB"}});
  for (const Case& c : cases) {
    const std::string alerts = s.dir() + "/alerts-" + std::to_string(&c - cases.data()) + ".jsonl";
    std::vector<std::string> args = {"watch", "--replay", c.file, "--alert-log", alerts, "--for", "1m"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    RunResult r = RunVramwatch(args, {}, 120);
    EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.out << r.err;
    std::string description;
    json firing;
    std::istringstream log(ReadAll(alerts));
    for (std::string line; std::getline(log, line);) {
      json e = json::parse(line);
      if (e["alert"] == "GpuMemoryLeak" && e["event"] == "firing") {
        description = e["annotations"]["description"];
        firing = e;
      }
    }
    // The description is the leak's own sentences (the trend, then where the growth began), not the
    // evidence's first sentence, which here says where the analysis starts after the restart.
    EXPECT_EQ(description.rfind("Leak: the floor rose by ", 0), 0u) << c.name << ": " << description;
    EXPECT_EQ(description.find("Memory fell from a floor of"), std::string::npos) << c.name << ": " << description;
    EXPECT_TRUE(std::regex_search(description, std::regex(c.moment))) << c.name << ": " << description;
    // The alert's own times are on the same clock as its evidence: UTC, the wall clock as written,
    // or offsets from the start of a trace without a clock (not 1970 dates).
    ASSERT_TRUE(firing.is_object()) << c.name << "\n" << ReadAll(alerts);
    std::string line_time;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
      if (line.find(" alert firing GpuMemoryLeak{") != std::string::npos)
        line_time = line.substr(0, line.find(" alert "));
    }
    for (const std::string& t : {firing["time"].get<std::string>(), firing["active_since"].get<std::string>(),
                                 firing["fired_at"].get<std::string>(), line_time}) {
      if (c.name == "no clock") {
        EXPECT_TRUE(std::regex_match(t, std::regex(R"(t\+([0-9]+h )?[0-9]+m [0-9]+s)"))) << c.name << ": " << t;
      } else {
        EXPECT_EQ(t.rfind("2026-11-27T", 0), 0u) << c.name << ": " << t << "\n" << r.out;
        EXPECT_EQ(t.back() == 'Z', c.name == "utc") << c.name << ": " << t;
      }
    }
    EXPECT_EQ(firing["fired_at"], firing["time"]) << c.name;
    EXPECT_EQ(line_time, firing["fired_at"]) << c.name;
  }
}

// Two hours of a healthy two-GPU recording (07:00-11:00 on 2026-11-27) and a saved kernel log;
// `zone`: "" (wall clock as written) or "Z" (UTC).
std::string XidReplayRecording(const std::string& zone) {
  std::string rec = trace::RecordingHeaderLine({0, "node1", "emulator", 10.0}) + "\n";
  const double start = ParseTimestamp("2026-11-27T07:00:00")->seconds;
  for (int i = 0; i * 10 <= 4 * 3600; ++i) {
    for (int g = 0; g < 2; ++g) {
      TraceRecord r;
      r.gpu.key = std::to_string(g);
      r.gpu.index = g;
      r.gpu.uuid = g == 0 ? "GPU-0" : "GPU-1";
      r.gpu.pci_bus_id = g == 0 ? "00000000:3B:00.0" : "00000000:3C:00.0";
      r.sample.t = start + i * 10;
      r.sample.used_bytes = 30000 * kMiB;
      r.sample.total_bytes = 81559 * kMiB;
      rec += trace::RecordingRecordLine(r, zone == "Z") + "\n";
    }
  }
  return rec;
}

TEST(WatchE2E, ReplayFeedsKernelLogXidsAtTheirTimeInTheTrace) {
  Scratch s;
  const std::string klog = s.Write("kern.log",
                                   "[  123.456] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=a.out, MMU Fault\n"
                                   "[Fri Nov 27 10:00:00 2026] NVRM: Xid (PCI:0000:3c:00): 79, pid=0, GPU has fallen "
                                   "off the bus.\n"
                                   "2026-11-27T08:30:00+00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE\n"
                                   "[Fri Nov 27 12:00:00 2026] NVRM: Xid (PCI:0000:3c:00): 13, after the trace\n");
  // This machine two hours east of UTC: the zone-less trace and dmesg -T lines are its wall clock.
  const std::map<std::string, std::string> env = {{"TZ", "XST-2"}};
  RunResult wall =
      RunVramwatch({"watch", "--replay", s.Write("wall.jsonl", XidReplayRecording("")), "--kernel-log", klog}, env, 60);
  wall.out = "\n" + wall.out;                            // every line, the first too, follows a newline
  EXPECT_EQ(wall.exit_code, 2) << wall.out << wall.err;  // a hardware Xid is critical
  // Xid 79 at 10:00 reaches the findings with the next sample (10:00:10) and fires after
  // --finding-for (1m); Xid 48 at 08:30 UTC is 10:30 here. Times carry no zone, as the trace's.
  EXPECT_NE(wall.out.find("\n2026-11-27T10:01:10 alert firing GpuXidError{gpu=1,"), std::string::npos) << wall.out;
  // Keys and labels carry the recording header's host, as the live daemon on that host writes them.
  EXPECT_NE(wall.out.find("alert firing GpuXidError{gpu=1,hostname=node1,"), std::string::npos) << wall.out;
  EXPECT_NE(wall.out.find("\n2026-11-27T10:31:10 alert firing GpuXidError{gpu=0,"), std::string::npos) << wall.out;
  EXPECT_EQ(wall.out.find("alert firing GpuXidError{gpu=1", wall.out.find("GpuXidError{gpu=1") + 1), std::string::npos)
      << "one firing per GPU\n"
      << wall.out;
  EXPECT_EQ(wall.out.find("Z alert"), std::string::npos) << wall.out;
  // The line without an absolute time is counted from the start, the one after the trace not at all.
  EXPECT_NE(wall.out.find("GPU 0: plateau; Xid 31 x1, 48 x1\n"), std::string::npos) << wall.out;
  EXPECT_NE(wall.out.find("GPU 1: plateau; Xid 79 x1\n"), std::string::npos) << wall.out;
  EXPECT_NE(wall.err.find("1 Xid line of the kernel log carries no absolute time"), std::string::npos) << wall.err;
  EXPECT_NE(wall.err.find("later than the trace's end"), std::string::npos) << wall.err;

  // A UTC trace: alert times end in Z, and the dmesg -T line (10:00 here) is 08:00 UTC.
  RunResult utc =
      RunVramwatch({"watch", "--replay", s.Write("utc.jsonl", XidReplayRecording("Z")), "--kernel-log", klog}, env, 60);
  utc.out = "\n" + utc.out;
  EXPECT_EQ(utc.exit_code, 2) << utc.out << utc.err;
  EXPECT_NE(utc.out.find("\n2026-11-27T08:01:10Z alert firing GpuXidError{gpu=1,"), std::string::npos) << utc.out;
  EXPECT_NE(utc.out.find("\n2026-11-27T08:31:10Z alert firing GpuXidError{gpu=0,"), std::string::npos) << utc.out;

  // An unreadable log is a usage error naming it.
  RunResult missing =
      RunVramwatch({"watch", "--replay", s.dir() + "/wall.jsonl", "--kernel-log", s.dir() + "/no-such.log"}, env, 60);
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("no-such.log"), std::string::npos) << missing.err;
}

// --replay reads every analyze format: --interval gives the spacing of a file without timestamps,
// --total the card size, --columns the fields of a CSV without a header line, --format the format.
TEST(WatchE2E, ReplayTakesTheTraceFlagsThatFilesWithoutClockOrHeaderNeed) {
  Scratch s;
  std::string values;
  for (int i = 0; i < 288; ++i) values += std::to_string(20000 + 20 * i) + "\n";
  const std::string used = s.Write("used.log", values);
  RunResult bare = RunVramwatch({"watch", "--replay", used}, {}, 30);
  EXPECT_EQ(bare.exit_code, 3) << bare.out << bare.err;
  EXPECT_NE(bare.err.find("--interval"), std::string::npos) << bare.err;
  RunResult r =
      RunVramwatch({"watch", "--replay", used, "--format", "values", "--interval", "300s", "--total", "80GiB"}, {}, 60);
  EXPECT_NE(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find(": leak"), std::string::npos) << r.out << r.err;

  std::string rows;
  for (int i = 0; i < 120; ++i) {
    rows += fmt::format("2026/03/14 10:{:02d}:{:02d}.000, 0, {} MiB, 81559 MiB\n", i / 60, i % 60, 30000);
  }
  const std::string noheader = s.Write("noheader.csv", rows);
  RunResult cols =
      RunVramwatch({"watch", "--replay", noheader, "--columns", "timestamp,index,memory.used,memory.total"}, {}, 30);
  EXPECT_EQ(cols.exit_code, 0) << cols.out << cols.err;
  EXPECT_NE(cols.out.find("GPU 0: "), std::string::npos) << cols.out;

  // The trace flags need --replay, --speed too (it was accepted and ignored, even '0').
  for (const auto& flags : {std::vector<std::string>{"--total", "80GiB"}, std::vector<std::string>{"--speed", "0"},
                            std::vector<std::string>{"--speed", "60"}}) {
    std::vector<std::string> args{"watch", "--duration", "1s"};
    args.insert(args.end(), flags.begin(), flags.end());
    RunResult live = RunVramwatch(args, {}, 30);
    EXPECT_EQ(live.exit_code, 3) << flags[0] << live.out << live.err;
    EXPECT_NE(live.err.find("--replay"), std::string::npos) << live.err;
  }
}

// A PyTorch memory log counts steps, not time: --replay refuses it, found or named, and points to
// analyze (it was "cannot tell the trace format", or "unknown trace format 'torch'").
TEST(WatchE2E, ReplayRefusesAPytorchMemoryLogAndPointsToAnalyze) {
  Scratch s;
  std::string lines;
  for (int i = 0; i < 20; ++i) {
    lines += fmt::format("Mem memory (MB) | allocated: {:.1f} | reserved: 26.0\n", 20.4 + 0.1 * i);
  }
  const std::string log = s.Write("train.log", lines);
  for (const auto& flags : {std::vector<std::string>{}, std::vector<std::string>{"--format", "torch"}}) {
    std::vector<std::string> args{"watch", "--replay", log};
    args.insert(args.end(), flags.begin(), flags.end());
    RunResult r = RunVramwatch(args, {}, 30);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("PyTorch memory log"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("vramwatch analyze"), std::string::npos) << r.err;
  }
}

// A recording still being written ends mid-line: that line is left out, and the replay says so.
TEST(WatchE2E, ReplayLeavesOutALastLineWithoutItsEndAndSaysSo) {
  Scratch s;
  std::string rows = "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int i = 0; i < 120; ++i) {
    rows += fmt::format("2026/03/14 10:{:02d}:{:02d}.000, 0, {} MiB, 81559 MiB\n", i / 60, i % 60, 30000);
  }
  rows += "2026/03/14 10:02:00.000, 0, 3";  // cut in its memory.used
  const std::string live = s.Write("live.csv", rows);
  RunResult r = RunVramwatch({"watch", "--replay", live}, {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("its last line has no line end (29 bytes"), std::string::npos) << r.err;
}

// Two lines dated a day ahead (a clock off for two samples) are left out, as analyze leaves them
// out: the replay judged the GPU on the samples before them (every later one looked older).
TEST(WatchE2E, ReplayLeavesOutARunOfLinesDatedAhead) {
  Scratch s;
  std::string rows = "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int i = 0; i < 2160; ++i) {
    const int day = i == 700 || i == 701 ? 15 : 14;
    const int at = 9 * 3600 + 10 * i;
    rows += fmt::format("2026/03/{} {:02d}:{:02d}:{:02d}.000, 0, {} MiB, 81559 MiB\n", day, at / 3600, at / 60 % 60,
                        at % 60, 20000 + i * 300 * 10 / 3600);
  }
  const std::string csv = s.Write("glitch.csv", rows);
  RunResult r = RunVramwatch({"watch", "--replay", csv}, {}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("2 instant(s) out of time order left out"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("GPU 0: leak, 300 MiB/h"), std::string::npos) << r.out;
}

// The live daemon's own flags do nothing with --replay: one given there is a usage error naming it
// (not silently ignored); the flags a replay uses (--db, --alert-log) are taken.
TEST(WatchE2E, ReplayRejectsTheLiveDaemonsOwnFlagsByName) {
  Scratch s;
  const std::string csv = s.Write("run.csv",
                                  "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
                                  "2026/03/14 10:00:00.000, 0, 1000 MiB, 81559 MiB\n"
                                  "2026/03/14 10:00:10.000, 0, 1000 MiB, 81559 MiB\n");
  for (const auto& flags :
       {std::vector<std::string>{"--listen", "127.0.0.1:9490"},
        std::vector<std::string>{"--webhook", "http://127.0.0.1:9093"}, std::vector<std::string>{"--duration", "1s"},
        std::vector<std::string>{"--timeout", "1s"}, std::vector<std::string>{"--proc-root", "/proc"}}) {
    std::vector<std::string> args{"watch", "--replay", csv};
    args.insert(args.end(), flags.begin(), flags.end());
    RunResult r = RunVramwatch(args, {}, 30);
    EXPECT_EQ(r.exit_code, 3) << flags[0] << r.out << r.err;
    EXPECT_NE(r.err.find(flags[0] + " has no effect with --replay"), std::string::npos) << r.err;
  }
  RunResult used =
      RunVramwatch({"watch", "--replay", csv, "--db", s.dir() + "/h.db", "--alert-log", s.dir() + "/a.jsonl"}, {}, 30);
  EXPECT_EQ(used.exit_code, 0) << used.out << used.err;
  EXPECT_NE(used.out.find("GPU 0: "), std::string::npos) << used.out;
}

// A replay at a real-time --speed waits out the gaps between samples; SIGINT ends it at once
// (within a second, not after the gap), with the verdicts of what was read so far.
TEST(WatchE2E, AReplayWaitingOutAGapStopsAtOnceOnSigint) {
  Scratch s;
  const std::string csv = s.Write("gap.csv",
                                  "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
                                  "2026/03/14 10:00:00.000, 0, 1000 MiB, 81559 MiB\n"
                                  "2026/03/14 10:10:00.000, 0, 1000 MiB, 81559 MiB\n");
  Daemon d({"watch", "--replay", csv, "--speed", "1"}, {}, s.dir() + "/replay.log");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  kill(d.pid(), SIGINT);
  EXPECT_NE(d.Wait(3), -1000) << "still waiting out the 10-minute gap: " << d.Log();
  EXPECT_NE(d.Log().find("GPU 0: "), std::string::npos) << d.Log();
}

// A tiny --speed waits too (the 10-minute gap at 1e-12 is longer than the steady clock can count),
// rather than replaying at full speed, until SIGINT ends it.
TEST(WatchE2E, AReplayAtATinySpeedWaitsOutItsGap) {
  Scratch s;
  const std::string csv = s.Write("gap.csv",
                                  "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
                                  "2026/03/14 10:00:00.000, 0, 1000 MiB, 81559 MiB\n"
                                  "2026/03/14 10:10:00.000, 0, 1000 MiB, 81559 MiB\n"
                                  "2026/03/14 10:20:00.000, 0, 1000 MiB, 81559 MiB\n");
  for (const std::string speed : {"1e-9", "1e-12"}) {
    Daemon d({"watch", "--replay", csv, "--speed", speed}, {}, s.dir() + "/replay-" + speed + ".log");
    EXPECT_EQ(d.Wait(1.5), -1000) << "--speed " << speed << " did not wait out the gap: " << d.Log();
    kill(d.pid(), SIGINT);
    EXPECT_NE(d.Wait(3), -1000) << d.Log();
  }
}

// A pmon log has no clock and no GPU totals, only the processes: its replay is never stale for
// lack of the totals, and judges each PID as analyze does (the leaking one alerts, the flat one not).
TEST(WatchE2E, ReplayOfAPmonLogJudgesItsProcessesAndRaisesNoStaleAlert) {
  Scratch s;
  std::string pmon =
      "# gpu        pid  type    sm   mem   enc   dec    fb   command\n"
      "# Idx          #   C/G     %     %     %     %    MB   name\n";
  for (int i = 0; i * 10 <= 4 * 3600; ++i) {
    const int t = i * 10;
    const int flat = 20000 + (i * 7919 % 17) - 8;
    const int leak = t < 3600 ? 10000 + (i * 104729 % 13) - 6 : 10000 + 1500 * (t - 3600) / 3600;
    pmon += fmt::format("    0       1000     C    50    20     -     -  {:5d}   python3\n", flat);
    pmon += fmt::format("    0       2000     C    50    20     -     -  {:5d}   python3\n", leak);
  }
  const std::string file = s.Write("pmon.log", pmon);
  const std::vector<std::string> trace_flags = {"--format", "pmon", "--interval", "10s", "--total", "81559MiB"};
  std::vector<std::string> analyze = {"analyze", file};
  analyze.insert(analyze.end(), trace_flags.begin(), trace_flags.end());
  RunResult judged = RunVramwatch(analyze, {}, 120);
  EXPECT_NE(judged.out.find("PID 2000 python3 — leak"), std::string::npos) << judged.out << judged.err;

  const std::string alerts = s.dir() + "/alerts.jsonl";
  std::vector<std::string> args = {"watch", "--replay", file, "--speed", "max", "--alert-log", alerts};
  args.insert(args.end(), trace_flags.begin(), trace_flags.end());
  RunResult r = RunVramwatch(args, {}, 120);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a warning: the leak, with a runway of days
  EXPECT_EQ(r.out.find("GpuStale"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("has not answered NVML"), std::string::npos) << r.out;
  std::set<std::string> firing_pids;
  std::istringstream log(ReadAll(alerts));
  for (std::string line; std::getline(log, line);) {
    json e = json::parse(line);
    EXPECT_NE(e["alert"], "GpuStale") << line;
    if (e["alert"] == "GpuProcessMemoryLeak" && e["event"] == "firing") firing_pids.insert(e["labels"]["pid"]);
  }
  EXPECT_EQ(firing_pids, std::set<std::string>{"2000"}) << ReadAll(alerts) << r.out;
}

TEST(WatchE2E, RecordWritesARecordingThatReplayReads) {
  Host h;
  const std::string rec = h.s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch(
      {"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "2s", "--output", rec}, h.env, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = ReadAll(rec);
  EXPECT_NE(text.find("vramwatch.record/1"), std::string::npos);
  EXPECT_NE(text.find("\"processes\""), std::string::npos);
  RunResult replay = RunVramwatch({"watch", "--replay", rec}, {}, 30);
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("GPU 0: insufficient_data"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("GPU 1: insufficient_data"), std::string::npos) << replay.out;
}

// record reads no command lines: a process gets NVML's name (nvmlSystemGetProcessName), as in
// `check`, and one without a name gets null, never "".
TEST(WatchE2E, RecordWritesNvmlProcessNamesAndNullForAnUnknownCommand) {
  Scratch s;
  // PID 2000000000 is above any pid_max, so the emulator's /proc fallback finds no name either.
  const std::string scenario = s.Write("scenario.yaml", R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-00000000-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    processes:
      - {pid: 5100, type: compute, name: "trainer-7", used_mib: 1000, sm_util: 90}
      - {pid: 2000000000, type: compute, used_mib: 500, sm_util: 10}
)");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "1s",
                              "--output", rec, "--hostname", "node-a"},
                             {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(ReadAll(rec));
  std::string line;
  int with_processes = 0;
  while (std::getline(lines, line)) {
    json j = json::parse(line);
    if (!j.contains("processes")) continue;
    ++with_processes;
    std::map<int64_t, json> command;
    for (const auto& p : j["processes"]) command[p["pid"].get<int64_t>()] = p["command"];
    ASSERT_EQ(command.size(), 2u) << line;
    EXPECT_EQ(command[5100], "trainer-7") << line;
    EXPECT_TRUE(command[2000000000].is_null()) << line;
  }
  EXPECT_GT(with_processes, 0) << ReadAll(rec);
}

// Under MIG, NVML lists each process on its GPU instance: the recording keeps the instance and its
// memory (so that analyze and --replay judge the process against the instance, not the card).
TEST(WatchE2E, RecordKeepsTheMigInstanceOfAProcess) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-00000000-0000-0000-0000-000000000000"
    memory_total_mib: 81559
    mig_devices:
      - {gpu_instance_id: 9, compute_instance_id: 0, uuid: MIG-a, memory_total_mib: 9984,
         processes: [{pid: 5100, name: "serve", used_mib: 2048}]}
)");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r =
      RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "1s", "--output", rec},
                   {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(ReadAll(rec));
  std::string line;
  int seen = 0;
  while (std::getline(lines, line)) {
    json j = json::parse(line);
    if (!j.contains("processes")) continue;
    ASSERT_EQ(j["processes"].size(), 1u) << line;
    const json& p = j["processes"][0];
    EXPECT_EQ(p["pid"], 5100) << line;
    EXPECT_EQ(p["gpu_instance_id"], 9) << line;
    EXPECT_EQ(p["instance_total_bytes"], 9984ull << 20) << line;
    EXPECT_TRUE(p["instance_used_bytes"].is_number_unsigned()) << line;
    ++seen;
  }
  EXPECT_GT(seen, 0) << ReadAll(rec);
}

// On a MIG GPU, /metrics serves each GPU instance's memory (what its processes run out of), read
// from NVML's MIG device handles: once per GPU instance, with its profile and UUID.
TEST(WatchE2E, MetricsServeEachMigInstancesMemory) {
  Host h(R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-00000000-0000-0000-0000-000000000000"
    memory_total_mib: 81559
    mig_devices:
      - {gpu_instance_id: 9, compute_instance_id: 0, uuid: MIG-a, name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
         memory_total_mib: 9984, processes: [{pid: 5100, name: "serve", used_mib: 2048}]}
      - {gpu_instance_id: 2, compute_instance_id: 0, uuid: MIG-b, name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         memory_total_mib: 40192, unattributed_mib: 1024}
)");
  int port = FreePort();
  Daemon d(h.Args(port), h.env, h.s.dir() + "/d.log");
  json st = WaitStatus(port, 30, [](const json& j) {
    return ListsProcessWith(j, 5100, "command", "python3 train.py --config big.yaml");
  });
  auto m = Get(port, "/metrics");
  ASSERT_TRUE(m) << d.Log();
  const std::string total9 = MetricLine(m->body, "vramwatch_mig_instance_memory_total_bytes{gpu=\"0\"");
  EXPECT_NE(
      total9.find("gpu_instance_id=\"9\",mig_profile=\"1g.10gb\",mig_uuid=\"MIG-a\"} " + std::to_string(9984ull << 20)),
      std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("gpu_instance_id=\"2\",mig_profile=\"3g.40gb\",mig_uuid=\"MIG-b\"} " +
                         std::to_string(40192ull << 20)),
            std::string::npos)
      << m->body;
  const std::string used9 = MetricLine(m->body, "vramwatch_mig_instance_memory_used_bytes{gpu=\"0\"");
  EXPECT_NE(used9.find("mig_uuid=\"MIG-a\"}"), std::string::npos) << m->body;
  // Each instance's used memory that no process listed on it owns: none on 9, 1 GiB on 2.
  EXPECT_NE(m->body.find("vramwatch_mig_instance_memory_unattributed_bytes{gpu=\"0\""), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("gpu_instance_id=\"9\",mig_profile=\"1g.10gb\",mig_uuid=\"MIG-a\"} 0\n"), std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("gpu_instance_id=\"2\",mig_profile=\"3g.40gb\",mig_uuid=\"MIG-b\"} " +
                         std::to_string(1024ull << 20) + "\n"),
            std::string::npos)
      << m->body;
}

// A process list that could not be read is left out of the line (missing), never written as an
// empty list (that would say every process ended); a GPU that stops answering is said on stderr
// and keeps its lines, with the values it could not give as null.
TEST(WatchE2E, RecordLeavesOutAListItCouldNotReadAndSaysWhenAGpuStopsAnswering) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", R"(driver_version: "550.54.15"
gpus:
  - name: "list fails"
    uuid: "GPU-00000000-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    memory_total_mib: 24576
    processes:
      - {pid: 5100, type: compute, name: "trainer", used_mib: 1000}
    errors:
      - {function: nvmlDeviceGetComputeRunningProcesses, code: 999, from_s: 0, to_s: 1000}
  - name: "hangs"
    uuid: "GPU-00000000-0000-0000-0000-000000000001"
    pci_bus_id: "00000000:3C:00.0"
    memory_total_mib: 24576
    processes:
      - {pid: 5200, type: compute, name: "server", used_mib: 1000}
    hangs:
      - {function: nvmlDeviceGetMemoryInfo, at_s: 0, seconds: 30}
)");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--process-interval",
                              "200ms", "--timeout", "200ms", "--duration", "1s", "--output", rec},
                             {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("GPU 1 does not answer"), std::string::npos) << r.err;
  std::istringstream lines(ReadAll(rec));
  std::string line;
  std::map<std::string, int> lines_of;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    json j = json::parse(line);
    const std::string gpu = j["gpu"];
    ++lines_of[gpu];
    EXPECT_FALSE(j.contains("processes")) << line;
    if (gpu == "1") {
      EXPECT_TRUE(j["used_bytes"].is_null()) << line;
    }
    if (gpu == "0") {
      EXPECT_EQ(j["used_bytes"], 1000ll << 20) << line;
    }
  }
  EXPECT_GT(lines_of["0"], 0) << ReadAll(rec);
  EXPECT_GT(lines_of["1"], 0) << ReadAll(rec);
}

// No GPU is an UNKNOWN (exit 3) with the reason, as in `check`, not an empty recording.
TEST(WatchE2E, RecordWithNoGpuIsUnknown) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", "driver_version: \"550.54.15\"\ngpus: []\n");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--duration", "1s", "--output", rec},
                             {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("NVML sees no GPU"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(rec));
}

// A bad --hostname is refused before NVML is opened: the error names the flag, not the library.
TEST(WatchE2E, RecordRejectsABadHostnameBeforeOpeningNvml) {
  Scratch s;
  const std::string missing_lib = s.dir() + "/no-such-libnvidia-ml.so.1";
  for (const std::string& bad : {std::string(""), std::string("two words")}) {
    RunResult r = RunVramwatch(
        {"record", "--nvml-lib", missing_lib, "--duration", "1s", "--output", s.dir() + "/r.jsonl", "--hostname", bad},
        {}, 30);
    EXPECT_EQ(r.exit_code, 3) << bad << r.err;
    EXPECT_NE(r.err.find("--hostname"), std::string::npos) << bad << r.err;
    EXPECT_EQ(r.err.find("NVML"), std::string::npos) << bad << r.err;
    EXPECT_FALSE(std::filesystem::exists(s.dir() + "/r.jsonl")) << bad;
  }
}

}  // namespace
}  // namespace vw::e2e
