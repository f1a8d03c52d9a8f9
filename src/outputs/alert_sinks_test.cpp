#include "outputs/alert_sinks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "core/testing/free_port.h"

namespace vw::outputs {
namespace {

using detection::AlertEvent;
using detection::AlertEventKind;
using detection::AlertState;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

AlertEvent Event(AlertEventKind kind, double t) {
  AlertEvent e;
  e.kind = kind;
  e.t = t;
  e.alert.condition.name = "GpuMemoryLeak";
  e.alert.condition.labels = {{"gpu", "0"}, {"hostname", "node-7"}};
  e.alert.condition.annotations = {{"summary", "GPU 0 leaks 512 MiB/h; OOM in 9h 12m"}};
  e.alert.condition.severity = Severity::kCritical;
  e.alert.key = detection::AlertKey(e.alert.condition);
  e.alert.active_since = 1764189000;
  e.alert.fired_at = 1764189300;
  e.alert.state = kind == AlertEventKind::kResolved ? AlertState::kResolved : AlertState::kFiring;
  if (kind == AlertEventKind::kResolved) e.alert.resolved_at = t;
  return e;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(AlertSinks, LogLineNamesTimeEventKeySeverityAndSummary) {
  std::vector<std::string> lines;
  LogAlertSink sink([&](const std::string& l) { lines.push_back(l); });
  sink.Send({Event(AlertEventKind::kFiring, 1764189300)});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "2025-11-26T20:35:00Z alert firing GpuMemoryLeak{gpu=0,hostname=node-7} severity=critical: GPU 0 "
            "leaks 512 MiB/h; OOM in 9h 12m");
}

// A resolved alert's summary is what it said while firing: the line says so, instead of reading as
// if the GPU still leaked.
TEST(AlertSinks, ResolvedLineSaysTheSummaryIsWhatItSaid) {
  std::vector<std::string> lines;
  LogAlertSink sink([&](const std::string& l) { lines.push_back(l); });
  sink.Send({Event(AlertEventKind::kResolved, 1764189300)});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "2025-11-26T20:35:00Z alert resolved GpuMemoryLeak{gpu=0,hostname=node-7} severity=critical: no longer "
            "holds; it said: GPU 0 leaks 512 MiB/h; OOM in 9h 12m");
}

TEST(AlertSinks, WallClockTimesAreWrittenWithoutAZone) {
  std::vector<std::string> lines;
  LogAlertSink sink([&](const std::string& l) { lines.push_back(l); });
  sink.set_clock(AlertClock::kWallClock);
  sink.Send({Event(AlertEventKind::kFiring, 1764189300.5)});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::StartsWith("2025-11-26T20:35:00.500 alert firing GpuMemoryLeak{"));

  char tmpl[] = "/tmp/vw_alerts_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  {
    auto file = JsonLinesAlertSink::Open(tmpl);
    ASSERT_TRUE(file.ok());
    (*file)->set_clock(AlertClock::kWallClock);
    (*file)->Send({Event(AlertEventKind::kResolved, 1764190000)});
  }
  std::ifstream in(tmpl);
  std::string line;
  std::getline(in, line);
  unlink(tmpl);
  json row = json::parse(line);
  EXPECT_EQ(row["time"], "2025-11-26T20:46:40");
  EXPECT_EQ(row["active_since"], "2025-11-26T20:30:00");
  EXPECT_EQ(row["fired_at"], "2025-11-26T20:35:00");
  EXPECT_EQ(row["resolved_at"], "2025-11-26T20:46:40");
}

// A trace without a clock: times are seconds from its first sample, written as offsets to the
// second (as its evidence names moments), never as dates in 1970.
TEST(AlertSinks, TimesOfATraceWithoutAClockAreOffsetsFromItsStart) {
  EXPECT_EQ(AlertTimeText(7910, AlertClock::kTraceTime), "t+2h 11m 50s");
  EXPECT_EQ(AlertTimeText(50, AlertClock::kTraceTime), "t+50s");
  EXPECT_EQ(AlertTimeText(600, AlertClock::kTraceTime), "t+10m 0s");
  EXPECT_EQ(AlertTimeText(86400 + 300, AlertClock::kTraceTime), "t+1d 0h 5m 0s");
  EXPECT_EQ(AlertTimeText(7910, AlertClock::kUtc), "1970-01-01T02:11:50Z");
  EXPECT_EQ(AlertClockFor(false, true), AlertClock::kTraceTime);
  EXPECT_EQ(AlertClockFor(true, false), AlertClock::kUtc);
  EXPECT_EQ(AlertClockFor(false, false), AlertClock::kWallClock);

  AlertEvent e = Event(AlertEventKind::kFiring, 7910);
  e.alert.active_since = 7310;
  e.alert.fired_at = 7910;
  std::vector<std::string> lines;
  LogAlertSink log([&](const std::string& l) { lines.push_back(l); });
  log.set_clock(AlertClock::kTraceTime);
  log.Send({e});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::StartsWith("t+2h 11m 50s alert firing GpuMemoryLeak{"));

  char tmpl[] = "/tmp/vw_alerts_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  {
    auto file = JsonLinesAlertSink::Open(tmpl);
    ASSERT_TRUE(file.ok());
    (*file)->set_clock(AlertClock::kTraceTime);
    AlertEvent resolved = Event(AlertEventKind::kResolved, 9000);
    resolved.alert.active_since = 7310;
    resolved.alert.fired_at = 7910;
    (*file)->Send({e, resolved});
  }
  std::ifstream in(tmpl);
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  unlink(tmpl);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["time"], "t+2h 11m 50s");
  EXPECT_EQ(rows[0]["active_since"], "t+2h 1m 50s");
  EXPECT_EQ(rows[0]["fired_at"], "t+2h 11m 50s");
  EXPECT_EQ(rows[0]["resolved_at"], nullptr);
  EXPECT_EQ(rows[1]["resolved_at"], "t+2h 30m 0s");
}

TEST(AlertSinks, AlertmanagerPayloadHasLabelsAnnotationsAndTimes) {
  json firing = AlertmanagerAlert(Event(AlertEventKind::kFiring, 1764189400), "http://node-7:9490/", 240);
  EXPECT_EQ(firing["labels"]["alertname"], "GpuMemoryLeak");
  EXPECT_EQ(firing["labels"]["severity"], "critical");
  EXPECT_EQ(firing["labels"]["gpu"], "0");
  EXPECT_EQ(firing["annotations"]["summary"], "GPU 0 leaks 512 MiB/h; OOM in 9h 12m");
  EXPECT_EQ(firing["startsAt"], "2025-11-26T20:35:00Z");
  EXPECT_EQ(firing["endsAt"], "2025-11-26T20:40:40Z");  // t + 240 s
  EXPECT_EQ(firing["generatorURL"], "http://node-7:9490/");
  json resolved = AlertmanagerAlert(Event(AlertEventKind::kResolved, 1764190000), "", 240);
  EXPECT_EQ(resolved["endsAt"], "2025-11-26T20:46:40Z");
  EXPECT_FALSE(resolved.contains("generatorURL"));
}

TEST(AlertSinks, JsonLinesFileGetsOneObjectPerEventAndIsAppended) {
  char tmpl[] = "/tmp/vw_alerts_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  {
    auto sink = JsonLinesAlertSink::Open(tmpl);
    ASSERT_TRUE(sink.ok());
    (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
  }
  {
    auto sink = JsonLinesAlertSink::Open(tmpl);
    ASSERT_TRUE(sink.ok());
    (*sink)->Send({Event(AlertEventKind::kResolved, 1764190000)});
  }
  std::ifstream in(tmpl);
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  unlink(tmpl);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["event"], "firing");
  EXPECT_EQ(rows[0]["key"], "GpuMemoryLeak{gpu=0,hostname=node-7}");
  EXPECT_EQ(rows[1]["event"], "resolved");
  EXPECT_EQ(rows[1]["resolved_at"], "2025-11-26T20:46:40Z");
}

std::vector<json> ReadRows(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

TEST(AlertSinks, JsonLinesFileLeavesResendsOut) {
  char tmpl[] = "/tmp/vw_alerts_XXXXXX";
  close(mkstemp(tmpl));
  {
    auto sink = JsonLinesAlertSink::Open(tmpl);
    ASSERT_TRUE(sink.ok());
    (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
    (*sink)->Send({Event(AlertEventKind::kResend, 1764189360)});
    (*sink)->Send({Event(AlertEventKind::kResend, 1764189420), Event(AlertEventKind::kResolved, 1764189450)});
  }
  std::vector<json> rows = ReadRows(tmpl);
  unlink(tmpl);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["event"], "firing");
  EXPECT_EQ(rows[1]["event"], "resolved");
}

TEST(AlertSinks, JsonLinesFileMovedAwayOrDeletedIsCreatedAgainAndReopenStartsANewOne) {
  char dir_tmpl[] = "/tmp/vw_alertdir_XXXXXX";
  const std::string dir = mkdtemp(dir_tmpl);
  const std::string path = dir + "/alerts.jsonl";
  auto sink = JsonLinesAlertSink::Open(path);
  ASSERT_TRUE(sink.ok());
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
  // logrotate's default: move the file away, then the daemon's next line goes to a new file.
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  (*sink)->Send({Event(AlertEventKind::kResolved, 1764189400)});
  std::vector<json> rotated = ReadRows(path + ".1"), current = ReadRows(path);
  ASSERT_EQ(rotated.size(), 1u);
  EXPECT_EQ(rotated[0]["event"], "firing");
  ASSERT_EQ(current.size(), 1u);
  EXPECT_EQ(current[0]["event"], "resolved");
  // Deleted: created again.
  ASSERT_EQ(unlink(path.c_str()), 0);
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189500)});
  EXPECT_EQ(ReadRows(path).size(), 1u);
  // Reopen (SIGHUP): after a copy-and-move done elsewhere, writes go to the file now at the path.
  ASSERT_EQ(std::rename(path.c_str(), (path + ".2").c_str()), 0);
  { std::ofstream touch(path); }
  ASSERT_TRUE((*sink)->Reopen().ok());
  (*sink)->Send({Event(AlertEventKind::kResolved, 1764189600)});
  EXPECT_EQ(ReadRows(path).size(), 1u);
  EXPECT_EQ(ReadRows(path + ".2").size(), 1u);
  EXPECT_EQ((*sink)->write_errors(), 0u);
  std::filesystem::remove_all(dir);
}

TEST(AlertSinks, JsonLinesOpenFailureNamesThePath) {
  auto sink = JsonLinesAlertSink::Open("/nonexistent-dir/alerts.jsonl");
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("/nonexistent-dir/alerts.jsonl"));
}

// The webhook's notes (WebhookOptions::note, called on its sender thread), collected.
class NoteLines {
 public:
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// A receiver that answers 503 to the first `fail_first` requests.
struct FlakyReceiver {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  int fail_first = 0;
  int fail_status = 503;
  std::mutex mu;
  std::vector<double> arrivals;
  std::vector<std::string> bodies;
  std::string path;
  explicit FlakyReceiver(int fail) : fail_first(fail) {
    server.Post("/api/v2/alerts", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      arrivals.push_back(Now());
      path = req.path;
      if (static_cast<int>(arrivals.size()) <= fail_first) {
        res.status = fail_status;
        return;
      }
      bodies.push_back(req.body);
      res.status = 200;
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FlakyReceiver() {
    server.stop();
    thread.join();
  }
};

TEST(AlertSinks, WebhookRetriesWithGrowingBackoffUntilDelivered) {
  FlakyReceiver rx(3);
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port);
  o.initial_backoff_s = 0.05;
  o.max_backoff_s = 1;
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->delivered(), 1u);
  EXPECT_EQ((*sink)->failed_attempts(), 3u);
  std::lock_guard<std::mutex> lock(rx.mu);
  ASSERT_EQ(rx.arrivals.size(), 4u);
  EXPECT_EQ(rx.path, "/api/v2/alerts");
  // Waits of 0.05, 0.1, 0.2 s between attempts.
  EXPECT_GE(rx.arrivals[1] - rx.arrivals[0], 0.045);
  EXPECT_GE(rx.arrivals[2] - rx.arrivals[1], 0.095);
  EXPECT_GE(rx.arrivals[3] - rx.arrivals[2], 0.19);
  ASSERT_EQ(rx.bodies.size(), 1u);
  json body = json::parse(rx.bodies[0]);
  ASSERT_TRUE(body.is_array());
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0]["labels"]["alertname"], "GpuMemoryLeak");
  EXPECT_EQ(body[0]["startsAt"], "2025-11-26T20:35:00Z");
}

TEST(AlertSinks, WebhookGivesUpAfterMaxAttempts) {
  FlakyReceiver rx(100);
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port) + "/api/v2/alerts";
  o.initial_backoff_s = 0.01;
  o.max_attempts = 3;
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->delivered(), 0u);
  EXPECT_EQ((*sink)->failed_attempts(), 3u);
  EXPECT_EQ((*sink)->dropped_batches(), 1u) << "a batch given up is never delivered";
  std::lock_guard<std::mutex> lock(rx.mu);
  EXPECT_EQ(rx.arrivals.size(), 3u);
}

TEST(AlertSinks, WebhookNotesOneLinePerFailureStreakAndOneWhenItRecovers) {
  FlakyReceiver rx(4);
  NoteLines notes;
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port);
  o.initial_backoff_s = 0.01;
  o.max_attempts = 3;
  o.note = notes.Sink();
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  // First batch: three 503s, given up. Second: one more 503, then delivered.
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  ASSERT_TRUE((*sink)->Drain(10));
  (*sink)->Send({Event(AlertEventKind::kFiring, 2)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->failed_attempts(), 4u);
  EXPECT_EQ((*sink)->dropped_batches(), 1u);
  EXPECT_EQ((*sink)->delivered(), 1u);
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("delivery failed (HTTP 503)"));
  EXPECT_THAT(lines[0], HasSubstr("127.0.0.1:" + std::to_string(rx.port) + "/api/v2/alerts"));
  EXPECT_THAT(lines[1], HasSubstr("delivering again after 4 failed attempt(s)"));
}

// A 4xx answer is not retried: its note says the batch is dropped, not "retrying with backoff".
TEST(AlertSinks, WebhookRefusedWithA4xxNotesTheBatchIsDropped) {
  FlakyReceiver rx(2);
  rx.fail_status = 400;
  NoteLines notes;
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port);
  o.initial_backoff_s = 0.01;
  o.note = notes.Sink();
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  for (int i = 0; i < 3; ++i) {
    (*sink)->Send({Event(AlertEventKind::kFiring, i)});
    ASSERT_TRUE((*sink)->Drain(10));
  }
  EXPECT_EQ((*sink)->failed_attempts(), 2u) << "one attempt per refused batch";
  EXPECT_EQ((*sink)->dropped_batches(), 2u);
  EXPECT_EQ((*sink)->delivered(), 1u);
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("delivery refused (HTTP 400)"));
  EXPECT_THAT(lines[0], HasSubstr("dropped"));
  EXPECT_THAT(lines[0], Not(HasSubstr("retrying")));
  EXPECT_THAT(lines[1], HasSubstr("delivering again after 2 failed attempt(s)"));
}

TEST(AlertSinks, WebhookToAPortNobodyListensOnNotesWhyOnce) {
  // A port that was free a moment ago: bound, read, closed again, so nothing listens there.
  const int port = vw::test_support::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  NoteLines notes;
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.initial_backoff_s = 0.01;
  o.max_attempts = 2;
  o.timeout_s = 1;
  o.note = notes.Sink();
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  for (int i = 0; i < 3; ++i) (*sink)->Send({Event(AlertEventKind::kFiring, i)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->failed_attempts(), 6u);
  EXPECT_EQ((*sink)->dropped_batches(), 3u);
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("delivery failed (Connection)"));
}

TEST(AlertSinks, WebhookSendNeverBlocksAndItsQueueIsBounded) {
  // A receiver that holds every request until released: the sender thread is stuck in flight.
  httplib::Server server;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int received = 0;
  server.Post("/api/v2/alerts", [&](const httplib::Request&, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu);
    ++received;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    res.status = 200;
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread th([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    WebhookOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(port);
    o.timeout_s = 10;
    o.max_queue = 4;
    auto sink = WebhookAlertSink::Start(o);
    ASSERT_TRUE(sink.ok());
    (*sink)->Send({Event(AlertEventKind::kFiring, 0)});
    {
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return received == 1; }));
    }
    const double a = Now();
    for (int i = 1; i <= 100; ++i) (*sink)->Send({Event(AlertEventKind::kFiring, i)});
    EXPECT_LT(Now() - a, 0.5);
    EXPECT_EQ((*sink)->dropped_batches(), 96u);  // 100 sent while one is in flight; 4 kept
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
    ASSERT_TRUE((*sink)->Drain(10));
    EXPECT_EQ((*sink)->delivered(), 5u);
  }
  server.stop();
  th.join();
}

TEST(AlertSinks, WebhookRejectsUrlsItCannotUse) {
  for (const char* bad : {"am:9093", "ftp://am:9093", "http://"}) {
    WebhookOptions o;
    o.url = bad;
    EXPECT_FALSE(WebhookAlertSink::Start(o).ok()) << bad;
  }
}

}  // namespace
}  // namespace vw::outputs
