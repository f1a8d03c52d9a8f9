#include "outputs/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/time.h"
#include "outputs/daemon_state_testing.h"
#include "outputs/daemon_status_json.h"
#include "storage/history_store.h"

namespace vw::outputs {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Fixture {
  StatePublisher publisher;
  std::unique_ptr<HttpServer> server;
  explicit Fixture(HttpOptions o = {}) {
    o.listen.port = 0;
    server = std::make_unique<HttpServer>(publisher, o);
  }
  void Publish(int gpus = 2, int procs = 2) {
    publisher.Publish(std::make_shared<const DaemonState>(testing::MakeDaemonState(gpus, procs, Now())));
  }
  // A raw TCP connection to the server (-1 when it fails), for clients that misbehave.
  int Connect() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(server->port()));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server->port());
    c.set_connection_timeout(5);
    c.set_read_timeout(5);
    return c;
  }
};

TEST(HttpServer, ServesMetricsFromThePublishedState) {
  Fixture f;
  ASSERT_TRUE(f.server->Start().ok());
  auto before = f.Client().Get("/metrics");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  f.Publish();
  auto res = f.Client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(res->body, HasSubstr("vramwatch_gpu_memory_used_bytes{gpu=\"1\""));
  EXPECT_THAT(res->body, HasSubstr("vramwatch_process_memory_used_bytes{"));
}

TEST(HttpServer, StatusIsTheCheckDocumentWithPerGpuAnalysis) {
  Fixture f;
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish(2, 1);
  auto res = f.Client().Get("/api/v1/status");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json j = json::parse(res->body);
  EXPECT_EQ(j["schema"], "vramwatch.check/1");
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["gpu"], "0");
  EXPECT_EQ(j["gpus"][0]["analysis"]["verdict"], "leak");
  EXPECT_DOUBLE_EQ(j["gpus"][0]["analysis"]["leak_rate_bytes_per_second"].get<double>(), 1048576.0);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["analysis"]["time_to_oom_seconds"].get<double>(), 40000.0);
  EXPECT_TRUE(j["gpus"][1]["analysis"]["leak_rate_bytes_per_second"].is_null());
  EXPECT_EQ(j["gpus"][0]["processes"][0]["pid"], 1000);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["kind"], "orphaned_memory");
  EXPECT_EQ(j["findings"][0]["severity"], "critical");
  EXPECT_EQ(j["status"], "critical");
  ASSERT_EQ(j["alerts"].size(), 1u);
  EXPECT_EQ(j["alerts"][0]["name"], "GpuMemoryLeak");
  EXPECT_EQ(j["alerts"][0]["state"], "firing");
}

// `analysis.leak_start` is analyze's field of that name: where the sustained growth began, ISO 8601
// (UTC here), null without a leak; in every analysis, the GPUs' and the processes'.
TEST(DaemonStatus, AnalysesNameWhereTheLeakStartedOrNull) {
  DaemonState s = testing::MakeDaemonState(2, 1);
  s.gpus[0].analysis.leak_start_t = 1764180000.25;  // 2025-11-26T18:00:00.250Z
  SeriesVerdict leaking_process = s.gpus[0].analysis;
  leaking_process.leak_start_t = 1764183600;
  s.gpus[0].process_analysis["1000"] = leaking_process;
  s.gpus[1].process_analysis["2000"] = s.gpus[1].analysis;
  auto j = StatusJson(s);
  EXPECT_EQ(j["gpus"][0]["analysis"]["leak_start"], "2025-11-26T18:00:00.250Z");
  ASSERT_TRUE(j["gpus"][1]["analysis"].contains("leak_start"));
  EXPECT_TRUE(j["gpus"][1]["analysis"]["leak_start"].is_null());
  ASSERT_EQ(j["gpus"][0]["processes"][0]["pid"], 1000);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["analysis"]["leak_start"], "2025-11-26T19:00:00Z");
  ASSERT_EQ(j["gpus"][1]["processes"][0]["pid"], 2000);
  ASSERT_TRUE(j["gpus"][1]["processes"][0]["analysis"].contains("leak_start"));
  EXPECT_TRUE(j["gpus"][1]["processes"][0]["analysis"]["leak_start"].is_null());
}

// A host blind to Xids says so in the status document, not only once on stderr.
TEST(DaemonStatus, KernelLogStateAndItsNoteAreInTheStatus) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  auto reading = StatusJson(s);
  EXPECT_EQ(reading["host"]["kernel_log_up"], true);
  EXPECT_TRUE(reading["notes"].empty()) << reading["notes"];
  s.kernel_log_up = false;
  s.kernel_log_note = "kernel log: /dev/kmsg: Operation not permitted: no Xid events";
  auto blind = StatusJson(s);
  EXPECT_EQ(blind["host"]["kernel_log_up"], false);
  ASSERT_EQ(blind["notes"].size(), 1u);
  EXPECT_EQ(blind["notes"][0], "kernel log: /dev/kmsg: Operation not permitted: no Xid events");
  s.kernel_log_up = std::nullopt;
  EXPECT_TRUE(StatusJson(s)["host"]["kernel_log_up"].is_null());
}

// The page and scripts can tell from the status whether the daemon keeps history (--db) without
// asking /api/v1/history and reading a 404.
TEST(DaemonStatus, SaysWhetherHistoryIsKeptAndWhetherItsWritesArePaused) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  auto kept = StatusJson(s);
  EXPECT_EQ(kept["host"]["history_kept"], true);
  EXPECT_EQ(kept["host"]["history_paused"], false);
  s.history_paused = true;
  EXPECT_EQ(StatusJson(s)["host"]["history_paused"], true);
  s.history_enabled = false;
  s.history_paused = false;
  auto off = StatusJson(s);
  EXPECT_EQ(off["host"]["history_kept"], false);
  EXPECT_EQ(off["host"]["history_paused"], false);
}

// The status document's host block says what the daemon read, as check's does: NVML's library,
// calls and versions, the kernel log and the Xid events read from it; null only when unknown.
TEST(DaemonStatus, HostBlockNamesTheNvmlLibraryVersionsAndKernelLog) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  auto unknown = StatusJson(s)["host"];
  EXPECT_TRUE(unknown["nvml_library"].is_null()) << unknown.dump(2);
  EXPECT_TRUE(unknown["cuda_driver_version"].is_null()) << unknown.dump(2);
  EXPECT_EQ(unknown["xid_events"], 0);
  s.nvml_library = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  s.nvml_functions = {"nvmlInit_v2", "nvmlDeviceGetMemoryInfo_v2"};
  s.nvml_version = "12.550.54.15";
  s.cuda_driver_version = 12040;
  s.kernel_log_source = "/dev/kmsg";
  s.xid_events = 3;
  auto host = StatusJson(s)["host"];
  EXPECT_EQ(host["nvml_library"], "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  EXPECT_EQ(host["nvml_functions"], nlohmann::json::array({"nvmlInit_v2", "nvmlDeviceGetMemoryInfo_v2"}));
  EXPECT_EQ(host["nvml_version"], "12.550.54.15");
  EXPECT_EQ(host["cuda_driver_version"], 12040);
  EXPECT_EQ(host["kernel_log"], "/dev/kmsg");
  EXPECT_EQ(host["xid_events"], 3);
}

// A started server whose history is a database of its own (removed at the end) holding `points`
// samples of "gpu:0", one a second from `t0`, `used(i)` bytes each.
struct HistoryFixture : Fixture {
  std::string dir;
  bool started = false;
  HistoryFixture(double t0, int points, const std::function<uint64_t(int)>& used) {
    char tmpl[] = "/tmp/vw_http_XXXXXX";
    dir = mkdtemp(tmpl);
    {
      auto store = storage::HistoryStore::Open(dir + "/h.db");
      EXPECT_TRUE(store.ok());
      if (!store.ok()) return;
      for (int i = 0; i < points; ++i) (*store)->Append("gpu:0", t0 + i, used(i));
      EXPECT_TRUE((*store)->Flush().ok());
    }
    auto source = StoreHistorySource::Open(dir + "/h.db");
    EXPECT_TRUE(source.ok());
    if (!source.ok()) return;
    server->SetHistorySource(std::shared_ptr<HistorySource>(std::move(*source)));
    started = server->Start().ok();
  }
  ~HistoryFixture() { std::filesystem::remove_all(dir); }
};

// Where raw samples have aged out, the minutes stand in with their lowest and highest values (a
// one-sample spike survives: it vanished, each minute was its last value), every point within
// [from, to] (a minute that began before `from` was placed before it, and the minute holding `to`
// was left out), and a long range is thinned like raw samples (30 days gave 43,000 points).
TEST(StoreHistorySource, AgedOutMinutesKeepTheirExtremesWithinTheRangeAndAreThinned) {
  char tmpl[] = "/tmp/vw_hist_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const double t0 = 1764189000;  // a whole minute
  {
    storage::HistoryOptions o;
    o.raw_retention_s = 60;
    auto store = storage::HistoryStore::Open(dir + "/h.db", o);
    ASSERT_TRUE(store.ok());
    for (int i = 0; i < 30 * 60; ++i) (*store)->Append("gpu:0", t0 + i, i == 5 * 60 + 17 ? 9000u : 1000u + i % 7);
    ASSERT_TRUE((*store)->Flush().ok());
    ASSERT_TRUE((*store)->ApplyRetention(t0 + 30 * 60).ok());
  }
  auto source = StoreHistorySource::Open(dir + "/h.db", 40);
  ASSERT_TRUE(source.ok());
  const double from = t0 + 5 * 60 + 30, to = t0 + 8 * 60 + 30;
  auto h = (*source)->Query("gpu:0", from, to);
  ASSERT_TRUE(h.ok() && h->has_value());
  const HistorySeries& s = **h;
  ASSERT_FALSE(s.points.empty());
  uint64_t highest = 0;
  for (const auto& [t, v] : s.points) {
    EXPECT_GE(t, from);
    EXPECT_LE(t, to);
    highest = std::max(highest, v);
  }
  EXPECT_EQ(highest, 9000u) << "the spike of minute 5 is kept";
  EXPECT_DOUBLE_EQ(s.points.back().first, to) << "minute 8, which holds `to`, is in";
  for (const auto& [t, v] : s.floor) {
    EXPECT_GE(t, from);
    EXPECT_LE(t, to);
  }
  EXPECT_EQ(s.floor.size(), 4u);  // minutes 5, 6, 7 and 8
  auto all = (*source)->Query("gpu:0", t0, t0 + 30 * 60);
  ASSERT_TRUE(all.ok() && all->has_value());
  EXPECT_LE((*all)->points.size(), 40u);
  EXPECT_LE((*all)->floor.size(), 40u);
  uint64_t top = 0;
  for (const auto& p : (*all)->points) top = std::max(top, p.second);
  EXPECT_EQ(top, 9000u) << "thinning keeps the spike";
  std::filesystem::remove_all(dir);
}

TEST(HttpServer, HistoryReturnsRawPointsAndMinuteFloorsInTheAgreedShape) {
  const double t0 = 1764189000;  // a whole minute
  HistoryFixture f(t0, 180, [](int i) { return 1000u + static_cast<uint64_t>(i); });
  ASSERT_TRUE(f.started);
  f.Publish(1, 0);
  const std::string path =
      "/api/v1/history?series=gpu:0&from=" + FormatIso8601(t0 + 60, true) + "&to=" + FormatIso8601(t0 + 119, true);
  auto res = f.Client().Get(path.c_str());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  EXPECT_EQ(j["schema"], "vramwatch.history/1");
  EXPECT_EQ(j["series"], "gpu:0");
  EXPECT_EQ(j["total_bytes"].get<uint64_t>(), 85520809984ull);
  ASSERT_EQ(j["points"].size(), 60u);
  EXPECT_DOUBLE_EQ(j["points"][0][0].get<double>(), t0 + 60);
  EXPECT_EQ(j["points"][0][1].get<uint64_t>(), 1060u);
  ASSERT_EQ(j["floor"].size(), 1u);
  EXPECT_EQ(j["floor"][0][1].get<uint64_t>(), 1060u + 5u);  // 10th percentile of 1060..1119
}

TEST(HttpServer, HistoryRejectsBadRequestsWithAReason) {
  HistoryFixture f(0, 0, [](int) { return 0u; });
  ASSERT_TRUE(f.started);
  auto c = f.Client();
  auto missing = c.Get("/api/v1/history");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_THAT(missing->body, HasSubstr("series"));
  auto bad_time = c.Get("/api/v1/history?series=gpu:0&from=yesterday");
  ASSERT_TRUE(bad_time);
  EXPECT_EQ(bad_time->status, 400);
  EXPECT_THAT(bad_time->body, HasSubstr("from"));
  auto unknown = c.Get("/api/v1/history?series=gpu:7");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

// A time without a zone is UTC; a 'from' after a 'to' that was left out says that 'to' was now.
TEST(HttpServer, HistoryReadsATimeWithoutAZoneAsUtcAndSaysWhenToDefaultedToNow) {
  const double t0 = 1764189000;  // 2025-11-26T20:30:00Z
  HistoryFixture f(t0, 120, [](int) { return 1000u; });
  ASSERT_TRUE(f.started);
  auto c = f.Client();
  auto zoneless = c.Get("/api/v1/history?series=gpu:0&from=2025-11-26T20:30:00&to=2025-11-26T20:30:59");
  ASSERT_TRUE(zoneless);
  ASSERT_EQ(zoneless->status, 200) << zoneless->body;
  EXPECT_EQ(json::parse(zoneless->body)["points"].size(), 60u) << zoneless->body;
  auto no_to = c.Get("/api/v1/history?series=gpu:0&from=2030-01-01T00:00:00Z");
  ASSERT_TRUE(no_to);
  EXPECT_EQ(no_to->status, 400);
  EXPECT_THAT(no_to->body, HasSubstr("'from' 2030-01-01T00:00:00Z is after 'to' (now, 20"));
  auto given_to = c.Get("/api/v1/history?series=gpu:0&from=2030-01-01T00:00:00Z&to=2029-12-31T00:00:00");
  ASSERT_TRUE(given_to);
  EXPECT_EQ(given_to->status, 400);
  EXPECT_THAT(given_to->body, HasSubstr("'from' 2030-01-01T00:00:00Z is after 'to' 2029-12-31T00:00:00Z"));
  auto bad = c.Get("/api/v1/history?series=gpu:0&to=soon");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("a time without a zone is UTC"));
}

TEST(HttpServer, HealthzFailsWhenTheSamplerStopsPublishing) {
  HttpOptions o;
  o.stale_after_s = 30;
  Fixture f(o);
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  auto ok = f.Client().Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  f.publisher.Publish(std::make_shared<const DaemonState>(testing::MakeDaemonState(1, 0, Now() - 120)));
  auto stale = f.Client().Get("/healthz");
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 503);
  EXPECT_THAT(stale->body, HasSubstr("stale"));
}

TEST(HttpServer, RootServesThePageHandlerOrAnEndpointList) {
  Fixture plain;
  ASSERT_TRUE(plain.server->Start().ok());
  auto list = plain.Client().Get("/");
  ASSERT_TRUE(list);
  EXPECT_THAT(list->body, HasSubstr("/api/v1/history"));
  Fixture paged;
  paged.server->SetPageHandler([] { return std::string("<html>live</html>"); });
  ASSERT_TRUE(paged.server->Start().ok());
  auto page = paged.Client().Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body, "<html>live</html>");
  EXPECT_THAT(page->get_header_value("Content-Type"), HasSubstr("text/html"));
}

// Every answer, the page, the JSON, an error, says its Content-Type is to be believed: a browser
// must not take a JSON body (holding names from the GPUs' processes) for HTML.
TEST(HttpServer, EveryAnswerTellsBrowsersNotToGuessItsType) {
  Fixture f;
  f.server->SetPageHandler([] { return std::string("<html>live</html>"); });
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  for (const char* path : {"/", "/api/v1/status", "/metrics", "/healthz", "/api/v1/history", "/nothing"}) {
    auto res = f.Client().Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << path << " (" << res->status << ")";
  }
  auto post = f.Client().Post("/api/v1/status", "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("X-Content-Type-Options"), "nosniff");
}

TEST(HttpServer, PortInUseGivesAStatusNamingTheAddressAndReason) {
  Fixture first;
  ASSERT_TRUE(first.server->Start().ok());
  StatePublisher p;
  HttpOptions o;
  o.listen.port = first.server->port();
  HttpServer second(p, o);
  Status s = second.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("127.0.0.1:" + std::to_string(first.server->port())));
  EXPECT_THAT(s.message(), HasSubstr("in use"));
}

TEST(HttpServer, SlowClientsNeitherBlockPublishingNorTheServerForLong) {
  HttpOptions o;
  o.read_timeout_s = 0.5;
  o.worker_threads = 2;
  Fixture f(o);
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  // Four clients that send half a request line and then nothing.
  std::vector<int> socks;
  for (int i = 0; i < 4; ++i) {
    int fd = f.Connect();
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "GET /metr", 9), 9);
    socks.push_back(fd);
  }
  // The sampler keeps publishing without waiting: a publish held by the slow clients would wait
  // for their 0.5 s read timeout, so the bound sits well under it and well above the scheduling
  // noise of a loaded machine (0.12 s seen with the whole suite running on two cores).
  double worst = 0;
  for (int i = 0; i < 200; ++i) {
    auto a = std::chrono::steady_clock::now();
    f.Publish(8, 12);
    worst = std::max(worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  EXPECT_LT(worst, 0.3);
  // A well-behaved client is served once the read timeouts have freed the workers.
  auto a = std::chrono::steady_clock::now();
  auto res = f.Client().Get("/metrics");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(took, 3.0);
  for (int fd : socks) close(fd);
}

// Browsers keep their connections open after a request (up to six per host, per tab): eight such
// idle connections must not keep another client waiting for their keep-alive to run out.
TEST(HttpServer, IdleKeepAliveConnectionsDoNotKeepOtherClientsWaiting) {
  Fixture f;
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  std::vector<int> socks;
  for (int i = 0; i < 8; ++i) {
    int fd = f.Connect();
    ASSERT_GE(fd, 0);
    const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
    char buf[512];
    ASSERT_GT(read(fd, buf, sizeof buf), 0);  // served; the connection stays open, idle
    socks.push_back(fd);
  }
  auto a = std::chrono::steady_clock::now();
  auto res = f.Client().Get("/healthz");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(took, 1.0) << "waited for idle keep-alive connections to close";
  for (int fd : socks) close(fd);
}

// Descriptors this process has open.
size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A flood of connections that send nothing: past the connections waiting for a worker, the rest
// stay in the kernel's listen backlog, not in descriptors of the daemon. httplib's own pool took
// them all (3000 ran a daemon out of descriptors for a minute); here 40 would have been 40 more.
TEST(HttpServer, AFloodOfIdleConnectionsWaitsInTheBacklogNotInOurDescriptors) {
  HttpOptions o;
  o.read_timeout_s = 2;
  o.worker_threads = 2;
  o.max_pending_connections = 4;
  Fixture f(o);
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const size_t before = OpenFds();
  std::vector<int> socks;
  for (int i = 0; i < 40; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(f.server->port()));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    const int rc = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS) << std::strerror(errno);
    socks.push_back(fd);
  }
  // The kernel takes a few at once (httplib listens with a short backlog) and the others as their
  // connects are tried again, after 1 s and 3 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  // Ours: the 40 client sockets; the server's: 2 served, 4 waiting, 1 served by the accepting thread.
  const size_t server_held = OpenFds() - before - socks.size();
  EXPECT_LE(server_held, 2u + 4u + 1u + 2u) << "accepted connections held open";
  for (int fd : socks) close(fd);
  // Once they are gone, a well-behaved client is served.
  auto res = f.Client().Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpServer, MalformedRequestGets400AndServingGoesOn) {
  Fixture f;
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  int fd = f.Connect();
  ASSERT_GE(fd, 0);
  const char junk[] = "\x01\x02 garbage\r\n\r\n";
  ASSERT_GT(write(fd, junk, sizeof junk - 1), 0);
  char buf[256] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  ASSERT_GT(n, 0);
  EXPECT_THAT(std::string(buf), HasSubstr("400"));
  auto res = f.Client().Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// Every endpoint is read-only: a POST, even one without a length (whose body would be read until
// the read timeout), is answered 405 at once, naming the methods allowed.
TEST(HttpServer, OtherMethodsThanGetAndHeadGet405) {
  Fixture f;
  ASSERT_TRUE(f.server->Start().ok());
  f.Publish();
  int fd = f.Connect();
  ASSERT_GE(fd, 0);
  const char post[] = "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(write(fd, post, sizeof post - 1), 0);
  char buf[512] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  ASSERT_GT(n, 0);
  EXPECT_THAT(std::string(buf), HasSubstr("HTTP/1.1 405"));
  EXPECT_THAT(std::string(buf), HasSubstr("Allow: GET, HEAD"));
  auto del = f.Client().Delete("/api/v1/status");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  EXPECT_THAT(del->body, HasSubstr("read-only"));
  auto head = f.Client().Head("/healthz");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

TEST(ListenAddress, ParsesTheSpellingsUsersWrite) {
  struct Case {
    const char* text;
    const char* host;
    int port;
  } cases[] = {
      {"127.0.0.1:9490", "127.0.0.1", 9490}, {"0.0.0.0:80", "0.0.0.0", 80}, {"[::1]:9490", "::1", 9490},
      {":9100", "127.0.0.1", 9100},          {"9100", "127.0.0.1", 9100},   {"localhost:1", "127.0.0.1", 1},
  };
  for (const auto& c : cases) {
    auto a = ParseListenAddress(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.status().ToString();
    EXPECT_EQ(a->host, c.host) << c.text;
    EXPECT_EQ(a->port, c.port) << c.text;
  }
  for (const char* bad : {"127.0.0.1:", "host:http", "1.2.3.4:70000", "[::1]9490", ""}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

TEST(ListenAddress, HttpUrlBracketsAnIpv6Address) {
  EXPECT_EQ(HttpUrl("127.0.0.1", 9490), "http://127.0.0.1:9490/");
  EXPECT_EQ(HttpUrl("::1", 9400), "http://[::1]:9400/");
  EXPECT_EQ(HttpUrl("node-7", 80), "http://node-7:80/");
}

TEST(HistoryThinning, KeepsEachStretchsExtremesAndTheEnds) {
  std::vector<storage::HistoryPoint> pts;
  for (int i = 0; i < 10000; ++i) pts.push_back({static_cast<double>(i), static_cast<uint64_t>(i % 100)});
  pts[5000].used_bytes = 999999;  // a one-sample spike must survive
  auto out = ThinMinMax(pts, 500);
  EXPECT_LE(out.size(), 500u);
  EXPECT_DOUBLE_EQ(out.front().first, 0);
  EXPECT_DOUBLE_EQ(out.back().first, 9999);
  bool spike = false;
  for (size_t i = 1; i < out.size(); ++i) {
    EXPECT_LT(out[i - 1].first, out[i].first);
    spike |= out[i].second == 999999;
  }
  EXPECT_TRUE(spike);
}

}  // namespace
}  // namespace vw::outputs
