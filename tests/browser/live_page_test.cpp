// The live page in a real browser: a cpp-httplib server on 127.0.0.1 (a free port) serves
// WebPageHtml() at "/" and fixture JSON at /api/v1/status and /api/v1/history, the way the `watch`
// daemon will; headless Chromium loads it with virtual time so the page's script polls and draws,
// and the DOM it built is checked: a card and a chart per GPU, the OOM marker on the leaking GPU,
// the process rows with their states and flags, the findings, the alert and the status notes. A
// second test makes the status endpoint fail and checks the page says the daemon is unreachable;
// a third checks that a status without notes shows no notes box; a fourth runs the browser in
// Tokyo's zone and checks that every clock time on the page is UTC and marked. Others check that
// a load asks for nothing the daemon does not serve (a favicon), that every point of a chart's
// lines is inside its plot, and that the alerts' and findings' text is readable in a narrow window.
// Others load the page at /probe with a script of their own: a browser clock an hour off, a reader
// whose focus, selection and sideways scroll must outlive a refresh, styles read back. One checks
// what assistive technology is told. Screenshots go to browser/live*.png in the build folder.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "chromium.h"
#include "core/snapshot.h"
#include "core/time.h"
#include "outputs/check_report.h"
#include "outputs/testing/series_fixtures.h"
#include "outputs/web_page.h"

namespace vw::browser_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One holder as the daemon lists it: built by the same ProcessJson that writes /api/v1/status,
// so the page is tested against the keys the daemon really sends. Its flags come from the findings.
struct Where {
  const char* container = "";  // IDs from the cgroup path
  const char* pod = "";
  const char* job = "";
  const char* pod_namespace = "";  // names from the kubelet's log directory
  const char* pod_name = "";
  const char* container_name = "";
};
json Process(int64_t pid, std::optional<int64_t> container_pid, const char* user, ProcState state, double gib,
             std::optional<double> sm, const char* command, const Where& where = {}) {
  ProcessSnapshot p;
  p.pid = pid;
  p.listed_by_nvml = true;
  p.compute = true;
  p.used_bytes = static_cast<uint64_t>(gib * kGiB);
  p.sm_util_ratio = sm;
  p.info.alive = state != ProcState::kGone;
  p.info.state = state;
  p.info.container_pid = container_pid;
  p.info.user = user;
  p.info.command = command;
  p.info.container_id = where.container;
  p.info.pod_uid = where.pod;
  p.info.slurm_job = where.job;
  p.info.pod_namespace = where.pod_namespace;
  p.info.pod_name = where.pod_name;
  p.info.container_name = where.container_name;
  return json::parse(outputs::ProcessJson(p).dump());
}

json Analysis(const detection::SeriesAnalysis& s) {
  const auto& a = s.assessment;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"verdict", a.verdict == detection::Verdict::kLeak ? "leak" : "plateau"},
          {"leak_rate_bytes_per_second", opt(a.rate_bps)},
          {"time_to_oom_seconds", opt(a.tto_s)},
          {"floor_bytes", opt(a.floor_bytes)},
          {"peak_bytes", opt(a.peak_bytes)}};
}

json Gpu(const detection::SeriesAnalysis& s, json processes) {
  return {{"index", *s.gpu.index},
          {"uuid", s.gpu.uuid},
          {"name", s.gpu.name},
          {"memory_total_bytes", *s.total_bytes},
          {"memory_used_bytes", static_cast<uint64_t>(s.raw.back().used_bytes)},
          {"memory_reserved_bytes", *s.reserved_bytes},
          {"processes", std::move(processes)},
          {"analysis", Analysis(s)}};
}

// The eval worker's container (a full 64-hex id) and Kubernetes pod UID.
const char* const kContainer = "3f2a9c1b5d7e4a6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";
const char* const kPod = "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c";
// The serving container, whose names the daemon read from the kubelet's log directory.
const char* const kContainer2 = "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9";
const char* const kPod2 = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";

// The status `notes` of the fixture host: why Xids cannot be read, and one with markup characters.
const char* const kKernelLogNote = "kernel log cannot be read: /dev/kmsg: permission denied; no Xid events";
const char* const kMarkupNote = "GPU 1: <no SM data> & not judged";

// The daemon's clock at its status: its last sample, when the fixture's series end.
const char* const kDaemonTime = "2026-07-14T14:00:00Z";
constexpr double kDaemonSeconds = 1784037600;  // kDaemonTime

// What the daemon's /api/v1/status answers for the two-GPU fixture host.
json StatusFixture(const std::vector<detection::SeriesAnalysis>& gpus, bool with_notes) {
  json g0 = Gpu(gpus[0], json::array({Process(4242, std::nullopt, "alice", ProcState::kRunning, 61.2, 0.94,
                                              "python train.py --config big.yaml"),
                                      Process(4310, 12, "alice", ProcState::kSleeping, 2.0, 0.0,
                                              "python -m eval_worker", {.container = kContainer, .pod = kPod}),
                                      Process(3981, std::nullopt, "bob", ProcState::kZombie, 1.5, std::nullopt,
                                              "python old_run.py", {.job = "81234"})}));
  json g1 =
      Gpu(gpus[1],
          json::array({Process(5120, std::nullopt, "carol", ProcState::kRunning, 70.4, 0.88, "torchrun serve.py",
                               {.container = kContainer2,
                                .pod = kPod2,
                                .pod_namespace = "ml",
                                .pod_name = "llm-serve-0",
                                .container_name = "vllm"}),
                       Process(5301, std::nullopt, "carol", ProcState::kDiskSleep, 3.1, 0.0, "python loader.py")}));
  // The serving GPU is no leak, but its load's memory rose with the cycle removed: worth watching.
  g1["analysis"]["load_rise_bytes_per_second"] = 300 * 1048576.0 / 3600;
  json findings = json::array({{{"kind", "zombie_holder"},
                                {"severity", "critical"},
                                {"gpu", "0"},
                                {"pid", 3981},
                                {"bytes", 1.5 * kGiB},
                                {"message", "pid 3981 is a zombie and still holds 1.5 GiB"},
                                {"action", "kill its parent (pid 3970) or wait for it to reap"}},
                               {{"kind", "idle_holder"},
                                {"severity", "warning"},
                                {"gpu", "0"},
                                {"pid", 4310},
                                {"bytes", 2.0 * kGiB},
                                {"message", "pid 4310 holds 2.0 GiB with no compute for 2h"},
                                {"action", "check whether the eval worker is still needed"}},
                               {{"kind", "stuck_holder"},
                                {"severity", "critical"},
                                {"gpu", "1"},
                                {"pid", 5301},
                                {"bytes", 3.1 * kGiB},
                                {"message", "pid 5301 is stuck in the driver (D state)"},
                                {"action", "look for Xid events; a GPU reset may be needed"}}});
  json alerts = json::array({{{"name", "VramwatchGpuMemoryLeak"},
                              {"state", "firing"},
                              {"gpu", "0"},
                              {"severity", "warning"},
                              {"since", "2026-07-14T13:20:00Z"},
                              {"summary", "GPU 0 leaks 1536 MiB/h, OOM in 7h 0m"}},
                             {{"name", "VramwatchIdleHolder"},
                              {"state", "pending"},
                              {"gpu", "0"},
                              {"since", "2026-07-14T13:55:00Z"},
                              {"summary", "pid 4310 idle"}},
                             {{"name", "GpuNvmlError"},
                              {"state", "firing"},
                              {"gpu", ""},
                              {"severity", "critical"},
                              {"since", "2026-07-14T13:58:00Z"},
                              {"summary", "cannot use NVML: nvmlInit_v2: driver/library version mismatch"}}});
  return {{"schema", "vramwatch.check/1"},
          {"time", kDaemonTime},
          {"host", {{"hostname", "gpu-node-07"}, {"driver_version", "550.54.15"}}},
          {"gpus", {g0, g1}},
          {"findings", findings},
          {"alerts", alerts},
          {"notes", with_notes ? json::array({kKernelLogNote, kMarkupNote}) : json::array()}};
}

// What /api/v1/history answers for one GPU: the raw curve every minute and the bucket floors.
json HistoryFixture(const detection::SeriesAnalysis& s) {
  json points = json::array(), floor = json::array();
  double next = 0;
  for (const auto& p : s.raw) {
    if (p.t < next) continue;
    points.push_back({p.t, p.used_bytes});
    next = p.t + 60;
  }
  for (const auto& b : s.buckets) floor.push_back({b.t_end, b.floor_bytes});
  return {{"schema", "vramwatch.history/1"},
          {"series", "gpu:" + s.gpu.key},
          {"total_bytes", *s.total_bytes},
          {"points", points},
          {"floor", floor}};
}

// A daemon stand-in on 127.0.0.1:<free port>.
class FixtureDaemon {
 public:
  explicit FixtureDaemon(bool status_fails, bool with_notes = true, bool gpu1_lost = false, bool history_off = false,
                         int extra_processes = 0) {
    auto gpus = outputs::testing::TwoGpus();
    json status = StatusFixture(gpus, with_notes);
    if (gpu1_lost) {  // GPU 1 fell off the bus after its last good sample
      json& g1 = status["gpus"][1];
      g1["stale"] = true;
      g1["lost"] = true;
      g1["processes"] = json::array();
      g1["sampled_at"] = "2026-07-14T13:40:00Z";
      status["time"] = "2026-07-14T13:42:05Z";
    }
    if (extra_processes > 0) {  // GPU 1 runs a swarm of small jobs
      for (int i = 0; i < extra_processes; ++i) {
        status["gpus"][1]["processes"].push_back(
            Process(7000 + i, std::nullopt, "dave", ProcState::kSleeping, 0.01 * (i + 1), 0.0, "python job.py"));
      }
    }
    status_ = status.dump();
    for (const auto& g : gpus) history_["gpu:" + g.gpu.key] = HistoryFixture(g).dump();
    server_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(outputs::WebPageHtml(), "text/html; charset=utf-8");
    });
    // The page with an image answered after `ms` of wall-clock time: Chromium's --dump-dom waits
    // for the load event, so the page runs that long in real time (virtual time stands still
    // while a request is open, so a request that never ends cannot be tested with it).
    server_.Get("/held", [this](const httplib::Request& req, httplib::Response& res) {
      res.set_content(outputs::WebPageHtml() + "<img alt=\"\" src=\"/slow?ms=" + req.get_param_value("ms") + "\">",
                      "text/html; charset=utf-8");
    });
    server_.Get("/slow", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(std::stoi(req.get_param_value("ms"))), [this] { return stopping_; });
      res.status = 404;
    });
    // The page with a script that writes where the alert and finding text cells (an alert's
    // summary, a finding's what and next step) are laid out (px from the left of the viewport) and
    // the viewport's width into <html data-measure>.
    server_.Get("/measured", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(outputs::WebPageHtml() + R"js(<script>
setInterval(function () {
  var cells = document.querySelectorAll('tr[data-role=alert] td:last-child, tr[data-role=finding] td:nth-last-child(-n+2)'),
      m = {vw: document.documentElement.clientWidth,
      n: cells.length, left: 1e9, right: 0, width: 1e9};
  cells.forEach(function (c) {
    var r = c.getBoundingClientRect();
    m.left = Math.min(m.left, r.left); m.right = Math.max(m.right, r.right); m.width = Math.min(m.width, r.width);
  });
  // The charts: how many have a plot, the smallest shown-to-drawn width ratio, and the text of
  // a chart that falls outside its drawing.
  m.charts = 0; m.scale = 1e9; m.textOut = [];
  document.querySelectorAll('svg.vw-chart').forEach(function (svg) {
    if (!svg.querySelector('[data-role=raw]')) return;
    var vb = svg.viewBox.baseVal;
    m.charts++;
    m.scale = Math.min(m.scale, svg.getBoundingClientRect().width / vb.width);
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBBox();
      if (b.x < 0 || b.x + b.width > vb.width || b.y < 0 || b.y + b.height > vb.height) m.textOut.push(t.textContent);
    });
  });
  document.documentElement.dataset.measure = JSON.stringify(m);
}, 250);
</script>)js",
                      "text/html; charset=utf-8");
    });
    // The page with the test's scripts: probe_head_ runs before the page's own script, probe_tail_
    // after it (set by Probe before the page loads).
    server_.Get("/probe", [this](const httplib::Request&, httplib::Response& res) {
      std::string page = outputs::WebPageHtml();
      page.insert(page.find("<head>") + 6, "<script>" + probe_head_ + "</script>");
      res.set_content(page + "<script>" + probe_tail_ + "</script>", "text/html; charset=utf-8");
    });
    server_.set_logger([this](const httplib::Request& req, const httplib::Response&) {
      static const std::set<std::string> kServed = {"/",      "/held",          "/slow",          "/measured",
                                                    "/probe", "/api/v1/status", "/api/v1/history"};
      if (kServed.count(req.path) == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        unserved_.push_back(req.path);
      }
    });
    server_.Get("/api/v1/status", [this, status_fails](const httplib::Request&, httplib::Response& res) {
      int call = ++status_calls_;
      if (hang_after_ >= 0 && call > hang_after_) {  // accepted, never answered (until the test ends)
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_; });
        return;
      }
      if (status_fails) {
        res.status = 503;
        res.set_content(R"({"error":"sampler not ready"})", "application/json");
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (changing_) {  // the daemon sampled again: 5 s later, GPU 1 and its largest holder 256 MiB more
        json sample = json::parse(status_);
        sample["time"] = FormatIso8601(kDaemonSeconds + 5.0 * call, true);
        json& gpu1 = sample["gpus"][1];
        gpu1["memory_used_bytes"] = gpu1["memory_used_bytes"].get<double>() + call * 256 * kMiB;
        gpu1["processes"][0]["used_bytes"] = gpu1["processes"][0]["used_bytes"].get<double>() + call * 256 * kMiB;
        res.set_content(sample.dump(), "application/json");
        return;
      }
      res.set_content(status_, "application/json");
    });
    server_.Get("/api/v1/history", [this, history_off](const httplib::Request& req, httplib::Response& res) {
      ++history_calls_;
      if (history_off) {  // as the daemon answers without --db
        res.status = 404;
        res.set_content(R"j({"error":"history is off (start the daemon with --db PATH)"})j", "application/json");
        return;
      }
      auto it = history_.find(req.get_param_value("series"));
      auto from = ParseTimestamp(req.get_param_value("from")), to = ParseTimestamp(req.get_param_value("to"));
      if (it == history_.end() || !from.ok() || !to.ok()) {
        res.status = 400;
        res.set_content(R"({"error":"want series=gpu:N, from and to"})", "application/json");
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      history_windows_.emplace_back(from->seconds, to->seconds);
      if (kept_since_ == 0) {
        res.set_content(it->second, "application/json");
        return;
      }
      // As the daemon answers: the points within [from, to], of those it kept.
      json h = json::parse(it->second);
      for (const char* line : {"points", "floor"}) {
        json within = json::array();
        for (const auto& p : h[line]) {
          const double t = p[0].get<double>();
          if (t >= from->seconds && t <= to->seconds && t >= kept_since_) within.push_back(p);
        }
        h[line] = within;
      }
      res.set_content(h.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 200 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~FixtureDaemon() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  int port() const { return port_; }
  int status_calls() const { return status_calls_; }
  int history_calls() const { return history_calls_; }
  // Status calls after the first `n` are held open and never answered.
  void HangStatusAfter(int n) { hang_after_ = n; }
  // Each GPU's history gets a floor point 30 s before its first raw point and one 30 s after its
  // last, as the daemon's floor points at the middle of each minute do for a GPU first seen late
  // in a minute. Call before the page loads.
  void FloorBeyondRawPoints() {
    EditHistories([](json& h) {
      h["floor"].insert(h["floor"].begin(), json::array({h["points"].front()[0].get<double>() - 30, 20 * kGiB}));
      h["floor"].push_back(json::array({h["points"].back()[0].get<double>() + 30, 20 * kGiB}));
    });
  }
  // Each GPU's history gets one more raw point an hour after its last (the daemon was stopped in
  // between, say): a point alone after a gap. Call before the page loads.
  void LoneRawPointAfterAGap() {
    EditHistories([](json& h) {
      h["points"].push_back(json::array({h["points"].back()[0].get<double>() + 3600, 30 * kGiB}));
    });
  }
  // The history answers hold only the points within the asked [from, to], as the daemon's do, and
  // only those from the last `minutes` before the daemon's time (a daemon started that long ago).
  // Call before the page loads.
  void HistoryOfTheLastMinutes(double minutes) { kept_since_ = kDaemonSeconds - 60 * minutes; }
  // Each status answer is a new sample: 5 s later than the last, GPU 1 and its first holder using
  // 256 MiB more. Call before the page loads.
  void StatusChangesEachCall() { changing_ = true; }
  // Changes the status document as `edit` says. Call before the page loads.
  void EditStatus(const std::function<void(json&)>& edit) {
    json status = json::parse(status_);
    edit(status);
    status_ = status.dump();
  }
  // The scripts of the page at /probe: `head` before the page's own script, `tail` after it. Call
  // before the page loads.
  void Probe(std::string head, std::string tail) {
    probe_head_ = std::move(head);
    probe_tail_ = std::move(tail);
  }
  // The [from, to] of each history request, epoch seconds.
  std::vector<std::pair<double, double>> history_windows() {
    std::lock_guard<std::mutex> lock(mu_);
    return history_windows_;
  }
  // The status says the daemon keeps no history, as a daemon without --db says it. Call before
  // the page loads.
  void StatusSaysHistoryIsOff() {
    json status = json::parse(status_);
    status["host"]["history_kept"] = false;
    status["host"]["history_paused"] = false;
    status_ = status.dump();
  }
  // Paths the browser asked for that this server does not serve (a favicon.ico, say).
  std::vector<std::string> unserved() {
    std::lock_guard<std::mutex> lock(mu_);
    return unserved_;
  }

 private:
  // Changes each GPU's /api/v1/history answer as `edit` says.
  void EditHistories(const std::function<void(json&)>& edit) {
    for (auto& [series, text] : history_) {
      json h = json::parse(text);
      edit(h);
      text = h.dump();
    }
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::string status_;
  std::map<std::string, std::string> history_;
  std::atomic<int> status_calls_{0}, history_calls_{0};
  std::atomic<int> hang_after_{-1};
  std::vector<std::string> unserved_;                       // guarded by mu_
  std::vector<std::pair<double, double>> history_windows_;  // guarded by mu_
  double kept_since_ = 0;                                   // 0: every point, whatever the window
  bool changing_ = false;
  std::string probe_head_, probe_tail_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

fs::path OutDir() {
  fs::path dir = fs::path(VRAMWATCH_BINARY_DIR) / "browser";
  fs::create_directories(dir);
  return dir;
}

TEST(LivePageInBrowser, ShowsCardsChartsProcessesFindingsAndAlerts) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 5000});
  ASSERT_EQ(r.error, "");
  const std::string& dom = r.dom;
  EXPECT_GE(daemon.status_calls(), 1);
  EXPECT_GE(daemon.history_calls(), 2) << "one history request per GPU";

  auto cards = Select(dom, "article", "data-gpu");
  ASSERT_EQ(cards.size(), 2u);
  EXPECT_TRUE(cards[0].Has("data-verdict", "leak"));
  EXPECT_TRUE(cards[1].Has("data-verdict", "plateau"));
  auto charts = Select(dom, "svg", "data-gpu");
  ASSERT_EQ(charts.size(), 2u) << "one chart per GPU";
  EXPECT_TRUE(charts[0].Has("data-gpu", "0"));
  EXPECT_TRUE(charts[1].Has("data-gpu", "1"));
  EXPECT_EQ(Select(dom, "path", "data-role", "raw").size(), 2u) << "both charts drew their history";
  auto oom = Select(dom, "*", "data-role", "oom");
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_GT(oom[0].offset, charts[0].offset);
  EXPECT_LT(oom[0].offset, charts[1].offset) << "the OOM marker is on GPU 0, the leaking one";

  auto rows = Select(dom, "tr", "data-pid");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_TRUE(rows[0].Has("data-pid", "4242") && rows[0].Has("data-state", "R"));
  EXPECT_TRUE(rows[2].Has("data-pid", "3981") && rows[2].Has("data-state", "Z"));
  EXPECT_TRUE(rows[4].Has("data-pid", "5301") && rows[4].Has("data-state", "D"));
  // Each holder's flags are the findings about its PID, in its own row.
  auto in_row = [&](const std::vector<Element>& found, size_t row) {
    size_t end = row + 1 < rows.size() ? rows[row + 1].offset : std::string::npos;
    return found.size() == 1 && found[0].offset > rows[row].offset && found[0].offset < end;
  };
  EXPECT_TRUE(in_row(Select(dom, "span", "data-flag", "idle"), 1)) << "pid 4310 has an idle_holder finding";
  EXPECT_TRUE(in_row(Select(dom, "span", "data-flag", "zombie"), 2));
  EXPECT_TRUE(in_row(Select(dom, "span", "data-flag", "stuck"), 4));
  EXPECT_EQ(Select(dom, "span", "data-flag").size(), 3u) << "no flag without a finding";
  // Where each holder runs, from the keys the daemon sends: short ids, the full ones in the tooltip.
  auto where = Select(dom, "div", "data-role", "where");
  ASSERT_EQ(where.size(), 3u);
  EXPECT_TRUE(in_row({where[0]}, 1) && in_row({where[1]}, 2) && in_row({where[2]}, 3));
  EXPECT_NE(dom.find("ctr 3f2a9c1b5d7e · pod 6b8e2a1c<"), std::string::npos);
  EXPECT_NE(dom.find(std::string("container ") + kContainer), std::string::npos);
  EXPECT_NE(dom.find(">job 81234<"), std::string::npos);
  EXPECT_NE(dom.find(">ctr vllm · pod ml/llm-serve-0<"), std::string::npos) << "names, when read, over IDs";

  EXPECT_EQ(Select(dom, "tr", "data-role", "finding").size(), 3u);
  auto alerts = Select(dom, "tr", "data-role", "alert");
  ASSERT_EQ(alerts.size(), 2u) << "only the firing alerts are shown";
  EXPECT_TRUE(alerts[0].Has("data-name", "VramwatchGpuMemoryLeak"));
  EXPECT_TRUE(alerts[1].Has("data-name", "GpuNvmlError"));
  // Each badge says its alert's severity: a leak with days of runway is a warning, not red.
  EXPECT_TRUE(alerts[0].Has("data-severity", "warning"));
  EXPECT_TRUE(alerts[1].Has("data-severity", "critical"));
  auto severities = Select(dom, "span", "data-role", "severity");
  ASSERT_EQ(severities.size(), 2u);
  EXPECT_TRUE(severities[0].Has("class", "vw-badge vw-sev-warning"));
  // An alert of no GPU (NVML cannot be used at all) is the host's, not "GPU " with nothing after it.
  EXPECT_NE(dom.find("<td>GPU 0</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td>host</td>"), std::string::npos);
  EXPECT_EQ(dom.find("<td>GPU </td>"), std::string::npos);
  EXPECT_EQ(Select(dom, "div", "data-state", "ok").size(), 1u) << "the connection line says live";

  // The first card's stats (GPU 0, leaking) and the second's (plateau).
  auto stat = [&](const std::string& role, size_t nth) {
    std::regex re("data-role=\"" + role + "\"[^>]*>([^<]*)<");
    auto it = std::sregex_iterator(dom.begin(), dom.end(), re);
    for (size_t i = 0; i < nth && it != std::sregex_iterator(); ++i) ++it;
    return it == std::sregex_iterator() ? std::string("(none)") : (*it)[1].str();
  };
  EXPECT_EQ(stat("rate", 0), "+1536 MiB/h") << "the unit the alert beside it uses: GiB/h only from 10 GiB/h";
  EXPECT_EQ(stat("runway", 0), "7h 0m");
  EXPECT_EQ(stat("rate", 1), "watch +300 MiB/h");  // no leak verdict: the load's rise worth watching
  EXPECT_EQ(stat("runway", 1), "—");
  std::string text = TextOf(dom);
  EXPECT_NE(text.find("gpu-node-07"), std::string::npos);

  // The status notes, each in its own item of the visible notes box, markup shown as text.
  auto box = Select(dom, "section", "data-role", "notes");
  ASSERT_EQ(box.size(), 1u);
  EXPECT_EQ(box[0].attrs.count("hidden"), 0u) << "the notes box is shown when there are notes";
  EXPECT_EQ(Select(dom, "li", "data-role", "note").size(), 2u);
  EXPECT_NE(text.find(kKernelLogNote), std::string::npos) << text;
  EXPECT_NE(text.find(kMarkupNote), std::string::npos) << text;
  EXPECT_TRUE(Elements(dom, "no").empty()) << "a note's '<' is escaped, not parsed as a tag";

  for (bool dark : {false, true}) {
    fs::path png = OutDir() / (dark ? "live-dark.png" : "live.png");
    EXPECT_EQ(
        Screenshot({.url = daemon.url(), .width = 1200, .height = 1000, .dark = dark, .virtual_time_budget_ms = 5000},
                   png.string()),
        "");
    EXPECT_GT(fs::file_size(png), 5000u);
  }
}

TEST(LivePageInBrowser, SaysDaemonUnreachableWhenStatusFails) {
  FixtureDaemon daemon(true);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  auto conn = Select(r.dom, "div", "data-role", "conn");
  ASSERT_EQ(conn.size(), 1u);
  EXPECT_TRUE(conn[0].Has("data-state", "down"));
  std::string text = TextOf(r.dom);
  EXPECT_NE(text.find("daemon unreachable (HTTP 503: sampler not ready)"), std::string::npos) << text;
  EXPECT_NE(text.find("no data yet"), std::string::npos);
  EXPECT_TRUE(Select(r.dom, "article", "data-gpu").empty());
  EXPECT_GE(daemon.status_calls(), 1);
}

// A daemon that answered once and then accepts requests it never answers: the page gives each up
// after 10 s, says the daemon is unreachable while still showing the data it had, and asks again
// 5 s after giving up (one request at a time, not one more every 5 s).
TEST(LivePageInBrowser, ADaemonThatStopsAnsweringIsUnreachableAfterTheTimeout) {
  FixtureDaemon daemon(false);
  daemon.HangStatusAfter(1);
  ASSERT_GT(daemon.port(), 0);
  // Polls at 0 s (answered), 5 s (held, given up at 15 s) and 20 s (held): 24 s of real time.
  DomResult r = DumpDom({.url = daemon.url() + "held?ms=24000"});
  ASSERT_EQ(r.error, "");
  auto conn = Select(r.dom, "div", "data-role", "conn");
  ASSERT_EQ(conn.size(), 1u);
  EXPECT_TRUE(conn[0].Has("data-state", "down"));
  std::string text = TextOf(r.dom);
  EXPECT_NE(text.find("daemon unreachable (no answer within 10 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("showing data from"), std::string::npos) << text;
  EXPECT_EQ(Select(r.dom, "article", "data-gpu").size(), 2u);  // the cards it had stay
  EXPECT_EQ(daemon.status_calls(), 3);                         // asked again after giving up, not every 5 s (5 calls)
}

TEST(LivePageInBrowser, StatusWithoutNotesShowsNoNotesBox) {
  FixtureDaemon daemon(false, /*with_notes=*/false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(Select(r.dom, "article", "data-gpu").size(), 2u) << "the status was drawn";
  auto box = Select(r.dom, "section", "data-role", "notes");
  ASSERT_EQ(box.size(), 1u);
  EXPECT_EQ(box[0].attrs.count("hidden"), 1u);
  EXPECT_TRUE(Select(r.dom, "li", "data-role", "note").empty());
}

// A lost GPU's card says so, with when its values were read, instead of a green verdict over
// frozen numbers; its processes are unknown, not "none".
TEST(LivePageInBrowser, ALostGpusCardSaysItIsLostAndWhenItWasLastRead) {
  FixtureDaemon daemon(false, true, /*gpu1_lost=*/true);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  auto cards = Select(r.dom, "article", "data-gpu");
  ASSERT_EQ(cards.size(), 2u);
  auto badges = Select(r.dom, "span", "data-role", "stale");
  ASSERT_EQ(badges.size(), 1u);
  EXPECT_GT(badges[0].offset, cards[1].offset) << "on GPU 1's card, not GPU 0's";
  // To the second, and how old they are by the daemon's clock (the status document's time).
  const size_t note =
      r.dom.find("GPU lost (NVML: GPU_IS_LOST); the values below were read at 2026-07-14 13:40:00 UTC, 2m 5s ago");
  EXPECT_NE(note, std::string::npos) << r.dom.substr(cards[1].offset, 1500);
  EXPECT_NE(r.dom.find("The processes of this GPU cannot be listed now."), std::string::npos);
}

// A history request answered with the daemon's 404 for "no --db" (a status that does not say
// whether history is kept): each chart says so in the daemon's words, and the page does not ask
// again every 15 s.
TEST(LivePageInBrowser, ADaemonWithoutHistorySaysSoOnceInsteadOfAnHttpError) {
  FixtureDaemon daemon(false, true, false, /*history_off=*/true);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 40000});
  ASSERT_EQ(r.error, "");
  auto why = Select(r.dom, "text", "data-role", "no-history");
  ASSERT_EQ(why.size(), 2u) << "one per card";
  EXPECT_NE(r.dom.find(">history is off (start the daemon with --db PATH)<"), std::string::npos);
  EXPECT_EQ(r.dom.find("HTTP 404"), std::string::npos);
  EXPECT_EQ(daemon.history_calls(), 2) << "asked once for each GPU, not again every 15 s over the 40 s";
}

// A daemon whose status says it keeps no history is not asked for any: the charts say why, and
// the browser logs no failed request.
TEST(LivePageInBrowser, ADaemonWhoseStatusSaysHistoryIsOffIsNotAskedForIt) {
  FixtureDaemon daemon(false, true, false, /*history_off=*/true);
  ASSERT_GT(daemon.port(), 0);
  daemon.StatusSaysHistoryIsOff();
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 40000});
  ASSERT_EQ(r.error, "");
  auto why = Select(r.dom, "text", "data-role", "no-history");
  ASSERT_EQ(why.size(), 2u) << "one per card";
  EXPECT_NE(r.dom.find(">history is off (start the daemon with --db PATH)<"), std::string::npos);
  EXPECT_EQ(daemon.history_calls(), 0) << "the status said there is none";
  EXPECT_GE(daemon.status_calls(), 2) << "the page goes on polling the status";
}

// A GPU with a swarm of small jobs shows its 20 largest and a row to show the rest, not a card
// thousands of pixels tall.
TEST(LivePageInBrowser, AGpuWithManyProcessesShowsItsLargestAndAButtonForTheRest) {
  FixtureDaemon daemon(false, true, false, false, /*extra_processes=*/40);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  auto cards = Select(r.dom, "article", "data-gpu");
  ASSERT_EQ(cards.size(), 2u);
  const std::string card1 = r.dom.substr(cards[1].offset);
  EXPECT_EQ(Select(card1, "tr", "data-pid").size(), 20u);
  EXPECT_NE(card1.find("data-pid=\"5120\""), std::string::npos) << "the largest holder stays";
  EXPECT_NE(card1.find("data-pid=\"7039\""), std::string::npos) << "the largest of the swarm";
  EXPECT_EQ(card1.find("data-pid=\"7000\""), std::string::npos) << "the smallest is behind the button";
  auto more = Select(card1, "button", "data-role", "show-all");
  ASSERT_EQ(more.size(), 1u);
  EXPECT_NE(card1.find("… and 22 more"), std::string::npos);
  const std::string card0 = r.dom.substr(cards[0].offset, cards[1].offset - cards[0].offset);
  EXPECT_TRUE(Select(card0, "button", "data-role", "show-all").empty()) << "GPU 0 has few processes";
}

// Clock times on the page are UTC and say so, whatever the browser's zone: the daemon's evidence
// names UTC times ("Growing since 2026-07-14 09:10 UTC"), so a reader in Tokyo must not see the
// OOM, the axis and the "updated" time in local time next to them. Chromium runs with
// TZ=Asia/Tokyo (UTC+9, no daylight saving), where a local-time label differs by nine hours.
TEST(LivePageInBrowser, ClockTimesAreUtcAndMarkedWhateverTheBrowserZone) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 5000, .tz = "Asia/Tokyo"});
  ASSERT_EQ(r.error, "");
  const std::string& dom = r.dom;
  const std::string text = TextOf(dom);
  // The two-digit hour and minute of epoch seconds `t` in UTC.
  auto hhmm = [](double t) { return FormatIso8601(t, true).substr(11, 5); };

  // The daemon's time of its last sample (kDaemonTime), to the second.
  EXPECT_TRUE(std::regex_search(text, std::regex("live · +updated 14:00:00 UTC"))) << text;

  // Each time-axis tick is labelled with the UTC time of where it stands, under a "time (UTC)" title.
  std::regex tick_re("data-role=\"xtick\" data-t=\"([0-9]+)\"[^>]*>([^<]*)<");
  int ticks = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tick_re); it != std::sregex_iterator(); ++it, ++ticks) {
    EXPECT_EQ((*it)[2].str(), hhmm(std::stod((*it)[1].str()))) << (*it)[0];
  }
  EXPECT_GE(ticks, 4) << "both charts have time ticks";
  EXPECT_EQ(Select(dom, "text", "data-role", "xtitle").size(), 2u);
  EXPECT_NE(text.find("time (UTC) · 2026-07-14"), std::string::npos) << text;

  // The OOM marker's label is the UTC clock time of its position, marked.
  auto oom = Select(dom, "circle", "data-role", "oom");
  ASSERT_EQ(oom.size(), 1u) << "the fixture's OOM falls inside the chart";
  const std::string oom_label = "OOM " + hhmm(std::stod(oom[0].attrs.at("data-t"))) + " UTC (in 7h 0m)";
  EXPECT_NE(text.find(oom_label), std::string::npos) << oom_label << "\n" << text;

  // The firing alerts' times as the evidence writes UTC times, not raw ISO 8601.
  EXPECT_NE(text.find("since 2026-07-14 13:20 UTC"), std::string::npos) << text;
  EXPECT_NE(text.find("since 2026-07-14 13:58 UTC"), std::string::npos) << text;
  EXPECT_EQ(text.find("13:20:00Z"), std::string::npos) << text;
}

// Each chart's markup on the page, from its <svg data-gpu> to the next one (the last to the end).
std::vector<std::string> ChartSvgs(const std::string& dom) {
  auto charts = Select(dom, "svg", "data-gpu");
  std::vector<std::string> out;
  for (size_t c = 0; c < charts.size(); ++c) {
    const size_t end = c + 1 < charts.size() ? charts[c + 1].offset : std::string::npos;
    out.push_back(dom.substr(charts[c].offset, end - charts[c].offset));
  }
  return out;
}

// The plot area of a chart, from its time axis: x from left to right, y above bottom (px).
struct PlotArea {
  double left = 0, right = 0, bottom = 0;
};
std::optional<PlotArea> PlotOf(const std::string& svg) {
  auto axis = Select(svg, "line", "class", "vw-axis");
  if (axis.size() != 1) return std::nullopt;
  return PlotArea{std::stod(axis[0].attrs.at("x1")), std::stod(axis[0].attrs.at("x2")),
                  std::stod(axis[0].attrs.at("y1"))};
}

// A page load asks only for what the daemon serves: no /favicon.ico answered 404, a console error
// on every load.
TEST(LivePageInBrowser, APageLoadAsksForNothingTheDaemonDoesNotServe) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(Select(r.dom, "article", "data-gpu").size(), 2u) << "the status was drawn";
  EXPECT_EQ(daemon.unserved(), std::vector<std::string>{});
}

// Every point of a chart's lines lies inside its plot: the time axis spans the floor points too,
// which the daemon places at the middle of their minute, before the first raw sample of a GPU seen
// late in a minute and after the last (a floor drawn from x = -16.6 across the axis labels).
TEST(LivePageInBrowser, ChartLinesStayInsideThePlot) {
  FixtureDaemon daemon(false);
  daemon.FloorBeyondRawPoints();
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 5000});
  ASSERT_EQ(r.error, "");
  const std::vector<std::string> charts = ChartSvgs(r.dom);
  ASSERT_EQ(charts.size(), 2u);
  for (size_t c = 0; c < charts.size(); ++c) {
    const std::string& svg = charts[c];
    const std::optional<PlotArea> plot = PlotOf(svg);
    ASSERT_TRUE(plot.has_value()) << "chart " << c << " has one time axis";
    const double left = plot->left, right = plot->right, bottom = plot->bottom;
    int points = 0;
    for (const char* role : {"raw", "floor"}) {
      auto path = Select(svg, "path", "data-role", role);
      ASSERT_EQ(path.size(), 1u) << "chart " << c << " draws its " << role << " line";
      const std::string d = path[0].attrs.at("d");
      std::regex xy("[ML](-?[0-9.]+),(-?[0-9.]+)");
      for (auto it = std::sregex_iterator(d.begin(), d.end(), xy); it != std::sregex_iterator(); ++it, ++points) {
        const double x = std::stod((*it)[1].str()), y = std::stod((*it)[2].str());
        EXPECT_TRUE(x >= left && x <= right && y >= 0 && y <= bottom)
            << "chart " << c << " " << role << " point " << (*it)[0] << " outside x " << left << "…" << right;
      }
    }
    EXPECT_GT(points, 10);
  }
}

// A raw point alone after a gap (the daemon was stopped for an hour) is a dot inside the plot, as
// in the reports of `analyze`; it was a 2 px dash of the thin raw line, hard to see.
TEST(LivePageInBrowser, APointAloneAfterAGapIsADot) {
  FixtureDaemon daemon(false);
  daemon.LoneRawPointAfterAGap();
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 5000});
  ASSERT_EQ(r.error, "");
  const std::vector<std::string> charts = ChartSvgs(r.dom);
  ASSERT_EQ(charts.size(), 2u);
  const std::string& svg = charts[0];
  auto dots = Select(svg, "circle", "data-role", "raw-dot");
  ASSERT_EQ(dots.size(), 1u) << svg.substr(0, 2000);
  const std::optional<PlotArea> plot = PlotOf(svg);
  ASSERT_TRUE(plot.has_value());
  const double cx = std::stod(dots[0].attrs.at("cx"));
  EXPECT_GT(cx, plot->left);
  EXPECT_LE(cx, plot->right);
  EXPECT_EQ(dots[0].attrs.at("r"), "2.5");
  const std::string d = Select(svg, "path", "data-role", "raw")[0].attrs.at("d");
  EXPECT_EQ(d.find(" h2"), std::string::npos) << "no dash for the lone point: " << d.substr(d.size() - 80);
}

// In a narrow window (500 px, the narrowest headless Chromium lays out) the alerts' and findings'
// text is laid out inside the window, each at a readable width, not pushed off to the right of a
// table scrolled sideways in rows 200 px tall.
TEST(LivePageInBrowser, AlertAndFindingTextIsReadableInANarrowWindow) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url() + "measured", .width = 500, .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.dom, m, std::regex("data-measure=\"([^\"]*)\""))) << r.dom.substr(0, 300);
  std::string text = m[1].str();
  text = std::regex_replace(text, std::regex("&quot;"), "\"");
  const json measure = json::parse(text);
  EXPECT_EQ(measure["n"].get<int>(), 2 + 3 * 2) << "two alerts' summaries, three findings' what and next step";
  const double vw = measure["vw"].get<double>();
  EXPECT_LE(vw, 500);
  EXPECT_GE(measure["left"].get<double>(), 0) << text;
  EXPECT_LE(measure["right"].get<double>(), vw) << text;
  EXPECT_GE(measure["width"].get<double>(), 200) << text;
}

// In a narrow window the charts are drawn at the width they are shown at, so their 11 px text is
// not scaled down (to 6 px at a phone's 360 px), and none of it falls outside the chart.
TEST(LivePageInBrowser, ChartsAreDrawnAtTheirShownWidthInANarrowWindow) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  DomResult r = DumpDom({.url = daemon.url() + "measured", .width = 500, .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.dom, m, std::regex("data-measure=\"([^\"]*)\""))) << r.dom.substr(0, 300);
  const json measure = json::parse(std::regex_replace(m[1].str(), std::regex("&quot;"), "\""));
  EXPECT_EQ(measure["charts"].get<int>(), 2) << measure;
  EXPECT_GE(measure["scale"].get<double>(), 0.99) << measure;
  EXPECT_LE(measure["scale"].get<double>(), 1.01) << measure;
  EXPECT_EQ(measure["textOut"], json::array()) << measure;
}

// A script for Probe's `head`: the browser's clock reads the daemon's time (kDaemonTime) shifted
// by `hours`, and runs on from there.
std::string BrowserClockOff(double hours) {
  return "(function () { var real = Date.now, shift = " + std::to_string((kDaemonSeconds + hours * 3600) * 1000) +
         " - real.call(Date); Date.now = function () { return real.call(Date) + shift; }; })();";
}

// The page goes by the daemon's clock, not the browser's: it asks for the daemon's last six hours
// and says "updated" at the daemon's time of its last sample. A browser an hour behind asked for
// six hours that ended an hour before the daemon's last sample, so on a daemon started half an
// hour before the charts stayed at "collecting history…"; an hour ahead, "updated" was an hour late.
TEST(LivePageInBrowser, HistoryAndTheUpdatedTimeGoByTheDaemonsClockNotTheBrowsers) {
  for (const double hours : {-1.0, 1.0}) {
    SCOPED_TRACE(hours < 0 ? "the browser's clock an hour behind" : "the browser's clock an hour ahead");
    FixtureDaemon daemon(false);
    ASSERT_GT(daemon.port(), 0);
    daemon.HistoryOfTheLastMinutes(30);
    daemon.Probe(BrowserClockOff(hours), "");
    DomResult r = DumpDom({.url = daemon.url() + "probe", .virtual_time_budget_ms = 3000});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(Select(r.dom, "path", "data-role", "raw").size(), 2u) << "both charts drew the daemon's half hour";
    EXPECT_TRUE(Select(r.dom, "text", "data-role", "no-history").empty());
    const auto windows = daemon.history_windows();
    ASSERT_GE(windows.size(), 2u);
    for (const auto& [from, to] : windows) {
      EXPECT_GE(to, kDaemonSeconds) << FormatIso8601(to, true);
      EXPECT_LT(to, kDaemonSeconds + 10) << FormatIso8601(to, true) << " is not the daemon's time";
      EXPECT_NEAR(to - from, 6 * 3600, 0.001);
    }
    const std::string text = TextOf(r.dom);
    EXPECT_TRUE(std::regex_search(text, std::regex("live · +updated 14:00:00 UTC"))) << text;
  }
}

// The state a probe script wrote into <html data-probe>, parsed; null when it wrote none.
json ProbeResult(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("data-probe=\"([^\"]*)\""))) return nullptr;
  std::string text = m[1].str();
  for (auto [from, to] :
       {std::pair<const char*, const char*>{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    text = std::regex_replace(text, std::regex(from), to);
  }
  return json::parse(text);
}

// A probe that, once the page has drawn, puts keyboard focus on GPU 1's "show all" button, scrolls
// GPU 1's process table to its right end and selects the command of GPU 0's first holder; 14 s
// later (two status polls on), it writes what it set and what is left of it into data-probe.
const char* const kKeepsYourPlaceProbe = R"js(
(function () {
  var out = {};
  function table() { return document.querySelector('article[data-gpu="1"] .vw-scroll'); }
  function usage() { var u = document.querySelector('article[data-gpu="1"] [data-role=usage]'); return u ? u.textContent : ''; }
  function active() {
    var a = document.activeElement;
    return a ? a.tagName + ':' + a.getAttribute('data-role') + ':' + a.getAttribute('data-gpu') : '';
  }
  setTimeout(function () {
    var button = document.querySelector('article[data-gpu="1"] [data-role=show-all]'), box = table(),
        cell = document.querySelector('article[data-gpu="0"] td.cmd div');
    if (!button || !box || !cell) { out.error = 'the page has no button, table or command to use'; return; }
    button.focus();
    box.scrollLeft = box.scrollWidth;
    var range = document.createRange();
    range.selectNodeContents(cell);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    out.before = {active: active(), scrollLeft: box.scrollLeft, room: box.scrollWidth - box.clientWidth,
                  selection: getSelection().toString(), usage: usage()};
  }, 2000);
  setTimeout(function () {
    var box = table();
    out.after = {active: active(), scrollLeft: box ? box.scrollLeft : -1, selection: getSelection().toString(),
                 usage: usage()};
    document.documentElement.dataset.probe = JSON.stringify(out);
  }, 16000);
})();
)js";

// "show all" removes itself: keyboard focus goes to the table it opened (it fell back to <body>,
// the page's start), and stays there over refreshes.
const char* const kShowAllProbe = R"js(
(function () {
  var out = {};
  function focused() {
    var a = document.activeElement, card = a && a.closest ? a.closest('article') : null;
    return a ? a.tagName + ':' + a.getAttribute('data-role') + ':' + (card ? card.getAttribute('data-gpu') : '') : '';
  }
  setTimeout(function () {
    var button = document.querySelector('article[data-gpu="1"] [data-role=show-all]');
    if (!button) { out.error = 'no show-all button'; return; }
    button.focus();
    button.click();
    out.clicked = focused();
    out.rows = document.querySelectorAll('article[data-gpu="1"] [data-role=processes] tbody tr').length;
  }, 2000);
  setTimeout(function () {
    out.later = focused();
    document.documentElement.dataset.probe = JSON.stringify(out);
  }, 9000);
})();
)js";

TEST(LivePageInBrowser, ShowAllHandsFocusToTheTableItOpened) {
  FixtureDaemon daemon(false, true, false, false, /*extra_processes=*/40);
  ASSERT_GT(daemon.port(), 0);
  daemon.StatusChangesEachCall();
  daemon.Probe("", kShowAllProbe);
  DomResult r = DumpDom({.url = daemon.url() + "probe", .virtual_time_budget_ms = 11000});
  ASSERT_EQ(r.error, "");
  const json probe = ProbeResult(r.dom);
  ASSERT_TRUE(probe.is_object()) << "the probe wrote nothing";
  ASSERT_FALSE(probe.contains("error")) << probe;
  EXPECT_GT(probe["rows"].get<int>(), 21) << "every holder is shown: " << probe;
  EXPECT_EQ(probe["clicked"], "TABLE:processes:1") << probe;
  EXPECT_EQ(probe["later"], "TABLE:processes:1") << "after a refresh: " << probe;
}

// A refresh every 5 s leaves the reader's place alone: keyboard focus stays on the "show all"
// button, a table scrolled sideways stays where it was and a selected command stays selected,
// though the status changed (GPU 1 and its largest holder use more memory at each poll). The page
// rewrote every panel at each poll: focus fell back to <body>, the table jumped back to its left
// edge and the selection was cleared.
TEST(LivePageInBrowser, ARefreshKeepsFocusTheSelectionAndATableScrolledSideways) {
  FixtureDaemon daemon(false, true, false, false, /*extra_processes=*/40);
  ASSERT_GT(daemon.port(), 0);
  daemon.StatusChangesEachCall();
  // A holder with a long user name, so GPU 1's table is wider than its card in a narrow window.
  daemon.EditStatus([](json& status) { status["gpus"][1]["processes"][0]["user"] = std::string(60, 'u'); });
  daemon.Probe("", kKeepsYourPlaceProbe);
  DomResult r = DumpDom({.url = daemon.url() + "probe", .width = 500, .virtual_time_budget_ms = 18000});
  ASSERT_EQ(r.error, "");
  const json probe = ProbeResult(r.dom);
  ASSERT_TRUE(probe.is_object()) << "the probe wrote nothing";
  ASSERT_FALSE(probe.contains("error")) << probe;
  const json& before = probe["before"];
  const json& after = probe["after"];
  ASSERT_EQ(before["active"], "BUTTON:show-all:1") << probe;
  ASSERT_GT(before["room"].get<double>(), 0) << "GPU 1's table is wider than its box: " << probe;
  ASSERT_GT(before["scrollLeft"].get<double>(), 0) << probe;
  ASSERT_EQ(before["selection"], "python train.py --config big.yaml") << probe;
  EXPECT_NE(after["usage"], before["usage"]) << "the page was refreshed with new numbers: " << probe;
  EXPECT_GE(daemon.status_calls(), 3);
  EXPECT_EQ(after["active"], before["active"]) << probe;
  EXPECT_EQ(after["scrollLeft"], before["scrollLeft"]) << probe;
  EXPECT_EQ(after["selection"], before["selection"]) << probe;
}

// What assistive technology is told: each chart's label says its verdict, rate and OOM time as the
// report's chart title does (it said only "GPU 0 memory"); every column header is marked a column
// header, and the firing alerts' table has them (it had none); each usage bar is a named meter
// whose value is said in words; the contact line is a polite live region, so "daemon unreachable"
// is announced; a host-wide finding's GPU cell shows a dash (it was empty); the tab's title names
// the host.
TEST(LivePageInBrowser, ThePageNamesItsPartsForAssistiveTechnology) {
  FixtureDaemon daemon(false);
  ASSERT_GT(daemon.port(), 0);
  daemon.EditStatus([](json& status) {
    status["findings"].push_back({{"kind", "xid"},
                                  {"severity", "critical"},
                                  {"gpu", ""},
                                  {"pid", nullptr},
                                  {"bytes", nullptr},
                                  {"message", "Xid 79 on a GPU NVML cannot name"},
                                  {"action", "read the kernel log"}});
  });
  DomResult r = DumpDom({.url = daemon.url(), .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  const std::string& dom = r.dom;

  auto charts = Select(dom, "svg", "data-gpu");
  ASSERT_EQ(charts.size(), 2u);
  auto oom = Select(dom, "circle", "data-role", "oom");
  ASSERT_EQ(oom.size(), 1u);
  const std::string oom_at = FormatIso8601(std::stod(oom[0].attrs.at("data-t")), true).substr(11, 5);
  EXPECT_EQ(charts[0].attrs.at("aria-label"),
            "GPU 0 · NVIDIA H100 80GB HBM3 memory: leak at +1536 MiB/h, OOM " + oom_at + " UTC (in 7h 0m)");
  EXPECT_EQ(charts[1].attrs.at("aria-label").rfind("GPU 1 · NVIDIA H100 80GB HBM3 memory: plateau; worth watching", 0),
            0u)
      << charts[1].attrs.at("aria-label");

  auto heads = Elements(dom, "th");
  EXPECT_EQ(heads.size(), 5u + 7u + 2 * 6u) << "alerts, findings and two process tables";
  for (const auto& th : heads) EXPECT_TRUE(th.Has("scope", "col")) << dom.substr(th.offset, 60);
  auto alerts = Select(dom, "section", "data-role", "alerts");
  auto findings = Select(dom, "section", "data-role", "findings");
  ASSERT_EQ(alerts.size(), 1u);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(Elements(dom.substr(alerts[0].offset, findings[0].offset - alerts[0].offset), "th").size(), 5u);

  auto meters = Select(dom, "div", "role", "meter");
  auto usage = Select(dom, "div", "data-role", "usage");
  ASSERT_EQ(meters.size(), 2u);
  ASSERT_EQ(usage.size(), 2u);
  for (size_t g = 0; g < meters.size(); ++g) {
    EXPECT_EQ(meters[g].attrs["aria-label"], "GPU " + std::to_string(g) + " memory used");
    const size_t text_at = dom.find('>', usage[g].offset) + 1;
    EXPECT_EQ(meters[g].attrs["aria-valuetext"], dom.substr(text_at, dom.find('<', text_at) - text_at));
    EXPECT_NE(meters[g].attrs["aria-valuetext"].find(" used ("), std::string::npos);
  }

  auto conn = Select(dom, "div", "data-role", "conn");
  ASSERT_EQ(conn.size(), 1u);
  EXPECT_TRUE(conn[0].Has("role", "status"));
  EXPECT_TRUE(conn[0].Has("aria-live", "polite"));

  auto xid = Select(dom, "tr", "data-kind", "xid");
  ASSERT_EQ(xid.size(), 1u);
  EXPECT_NE(dom.substr(xid[0].offset, dom.find("</tr>", xid[0].offset) - xid[0].offset).find("<td>xid</td><td>—</td>"),
            std::string::npos)
      << dom.substr(xid[0].offset, 400);
  EXPECT_NE(dom.find("<title>vramwatch · gpu-node-07</title>"), std::string::npos);
}

// A probe that writes, into data-probe, the colour and weight of GPU 1's stale note, the colour
// the page uses for alarms, and the name of each card heading cut by its box.
const char* const kStyleProbe = R"js(
setTimeout(function () {
  var note = document.querySelector('[data-role=stale-note]'), out = {cut: []};
  if (note) {
    var cs = getComputedStyle(note);
    out.noteColour = cs.color;
    out.noteWeight = cs.fontWeight;
  }
  var probe = document.createElement('span');
  probe.style.color = 'var(--leak)';
  document.body.appendChild(probe);
  out.alarmColour = getComputedStyle(probe).color;
  document.querySelectorAll('.vw-card h2').forEach(function (h) {
    if (h.scrollWidth > h.clientWidth) out.cut.push(h.textContent);
  });
  out.cards = document.querySelectorAll('.vw-card h2').length;
  document.documentElement.dataset.probe = JSON.stringify(out);
}, 2500);
)js";

// A lost GPU's note that its values are old is shown as an alarm (the page's alarm colour, bold),
// not as grey small print; and in a narrow window a long GPU name wraps instead of being cut to
// "GPU 1 · NVIDIA H…".
TEST(LivePageInBrowser, AStaleNoteIsAnAlarmAndALongGpuNameWrapsInANarrowWindow) {
  FixtureDaemon daemon(false, true, /*gpu1_lost=*/true);
  ASSERT_GT(daemon.port(), 0);
  daemon.EditStatus(
      [](json& status) { status["gpus"][1]["name"] = "NVIDIA H100 80GB HBM3 · MIG 3g.40gb · gpu-node-07 slot 1"; });
  daemon.Probe("", kStyleProbe);
  DomResult r = DumpDom({.url = daemon.url() + "probe", .width = 500, .virtual_time_budget_ms = 3000});
  ASSERT_EQ(r.error, "");
  const json probe = ProbeResult(r.dom);
  ASSERT_TRUE(probe.is_object()) << "the probe wrote nothing";
  ASSERT_TRUE(probe.contains("noteColour")) << "GPU 1's card has its stale note: " << probe;
  EXPECT_EQ(probe["noteColour"], probe["alarmColour"]) << probe;
  EXPECT_GE(std::stoi(probe["noteWeight"].get<std::string>()), 600) << probe;
  EXPECT_EQ(probe["cards"], 2) << probe;
  EXPECT_EQ(probe["cut"], json::array()) << probe;
}

}  // namespace
}  // namespace vw::browser_test
