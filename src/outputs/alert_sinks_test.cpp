#include "outputs/alert_sinks.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
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
  // The system clock stepped a day ahead since the daemon started: Alertmanager gets its times on
  // the system clock, so a firing alert's endsAt is not a day in its past.
  json stepped = AlertmanagerAlert(Event(AlertEventKind::kFiring, 1764189400), "", 240, 86400);
  EXPECT_EQ(stepped["startsAt"], "2025-11-27T20:35:00Z");
  EXPECT_EQ(stepped["endsAt"], "2025-11-27T20:40:40Z");
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

// The sinks' notes (WebhookOptions::note, called on the webhook's sender thread), collected.
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

// The file cannot take the whole batch (a file size limit here, a full disk in life): the part
// written is taken back, so the file never holds a cut line, and the lines are written with the
// next batch that fits, in order; a note says when it fails and when it works again. (A cut line
// was left, the next one glued to it, and the lines in between lost, with nothing said.)
TEST(AlertSinks, JsonLinesFileNeverHoldsACutLineAndKeepsWhatItCouldNotWrite) {
  char tmpl[] = "/tmp/vw_alerts_full_XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  NoteLines notes;
  auto sink = JsonLinesAlertSink::Open(tmpl);
  ASSERT_TRUE(sink.ok());
  (*sink)->set_note(notes.Sink());
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
  const auto one_line = std::filesystem::file_size(tmpl);
  ASSERT_GT(one_line, 200u);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit tight = old;
  tight.rlim_cur = one_line + 100;  // room for part of a second line only
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  (*sink)->Send({Event(AlertEventKind::kResolved, 1764189400)});
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189500)});
  const auto size_while_full = std::filesystem::file_size(tmpl);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(size_while_full, one_line) << "the part of a line written is taken back";
  EXPECT_EQ((*sink)->write_errors(), 2u);
  (*sink)->Send({Event(AlertEventKind::kResolved, 1764189600)});
  std::vector<json> rows = ReadRows(tmpl);  // each line parses: none was cut
  unlink(tmpl);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1]["event"], "resolved");
  EXPECT_EQ(rows[2]["event"], "firing");
  EXPECT_EQ(rows[3]["event"], "resolved");
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("write alert log " + std::string(tmpl)));
  EXPECT_THAT(lines[0], HasSubstr("kept"));
  EXPECT_THAT(lines[1], HasSubstr("written again, with the 3 line(s) kept meanwhile"));
}

// The file's directory removed: the lines are not written into the deleted file (where no one
// would find them) but kept, and said; once the path can be created again they are written there.
TEST(AlertSinks, JsonLinesFileWhoseDirectoryIsGoneKeepsItsLinesUntilItCanBeCreated) {
  char dir_tmpl[] = "/tmp/vw_alertdir_XXXXXX";
  const std::string dir = mkdtemp(dir_tmpl);
  const std::string path = dir + "/alerts.jsonl";
  NoteLines notes;
  auto sink = JsonLinesAlertSink::Open(path);
  ASSERT_TRUE(sink.ok());
  (*sink)->set_note(notes.Sink());
  std::filesystem::remove_all(dir);
  (*sink)->Send({Event(AlertEventKind::kFiring, 1764189300)});
  EXPECT_EQ((*sink)->write_errors(), 1u);
  ASSERT_TRUE(std::filesystem::create_directory(dir));
  (*sink)->Send({Event(AlertEventKind::kResolved, 1764189400)});
  std::vector<json> rows = ReadRows(path);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["event"], "firing");
  EXPECT_EQ(rows[1]["event"], "resolved");
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("reopen alert log " + path));
  EXPECT_THAT(lines[1], HasSubstr("written again"));
}

TEST(AlertSinks, JsonLinesOpenFailureNamesThePath) {
  auto sink = JsonLinesAlertSink::Open("/nonexistent-dir/alerts.jsonl");
  ASSERT_FALSE(sink.ok());
  EXPECT_THAT(sink.status().message(), HasSubstr("/nonexistent-dir/alerts.jsonl"));
}

// A receiver that answers 503 to the first `fail_first` requests.
struct FlakyReceiver {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  int fail_first = 0;
  int fail_status = 503;
  std::string retry_after;  // the Retry-After header of a failing answer, when not empty
  std::mutex mu;
  std::vector<double> arrivals;
  std::vector<std::string> bodies;
  std::string path;
  std::string authorization;  // of the last request
  explicit FlakyReceiver(int fail, const std::string& prefix = "") : fail_first(fail) {
    server.Post(prefix + "/api/v2/alerts", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu);
      arrivals.push_back(Now());
      path = req.path;
      authorization = req.get_header_value("Authorization");
      if (static_cast<int>(arrivals.size()) <= fail_first) {
        res.status = fail_status;
        if (!retry_after.empty()) res.set_header("Retry-After", retry_after);
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
  // Each of these passed the check before and failed only when the first alert was sent.
  for (const char* bad :
       {"am:9093", "ftp://am:9093", "http://", "", "http://:9093", "http://127.0.0.1:notaport",
        "http://127.0.0.1:99999", "http://127.0.0.1:0", "http://127.0.0.1:", "http://[::1", "http://am host:9093",
        "http://am/x?y=1", "http://am#top", "http://@am", "http://u%zz:p@am"}) {
    WebhookOptions o;
    o.url = bad;
    auto s = WebhookAlertSink::Start(o);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr("expected http[s]://")) << bad;
  }
  for (const char* good : {"http://am:9093", "HTTPS://am.example.org/alertmanager/", "http://[::1]:9093",
                           "http://user:p%40ss@am:9093/api/v2/alerts", "http://am_1.local"}) {
    WebhookOptions o;
    o.url = good;
    EXPECT_TRUE(WebhookAlertSink::Start(o).ok()) << good;
  }
  // A password is never echoed, not even in the error of a URL that cannot be used.
  WebhookOptions o;
  o.url = "http://alice:s3cret@am:notaport";
  auto s = WebhookAlertSink::Start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), Not(HasSubstr("s3cret")));
}

// user:password@ in the URL is HTTP basic auth (it was passed on as part of the host name, so no
// delivery could ever succeed), %-decoded, and the notes name the URL without it.
TEST(AlertSinks, WebhookSendsTheUrlsCredentialsAsBasicAuthAndNeverPrintsThem) {
  FlakyReceiver rx(1, "/am");
  NoteLines notes;
  WebhookOptions o;
  o.url = "http://alice:s3cr%40t@127.0.0.1:" + std::to_string(rx.port) + "/am/";
  o.initial_backoff_s = 0.01;
  o.note = notes.Sink();
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->delivered(), 1u);
  {
    std::lock_guard<std::mutex> lock(rx.mu);
    EXPECT_EQ(rx.path, "/am/api/v2/alerts");
    EXPECT_EQ(rx.authorization, "Basic YWxpY2U6czNjckB0");  // base64("alice:s3cr@t")
  }
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  for (const std::string& line : lines) {
    EXPECT_THAT(line, Not(HasSubstr("s3cr")));
    EXPECT_THAT(line, Not(HasSubstr("alice")));
    EXPECT_THAT(line, HasSubstr("http://127.0.0.1:" + std::to_string(rx.port) + "/am/api/v2/alerts"));
  }
}

// A 429 with Retry-After: the next attempt waits that long, not the shorter backoff.
TEST(AlertSinks, WebhookWaitsWhatA429sRetryAfterSays) {
  FlakyReceiver rx(1);
  rx.fail_status = 429;
  rx.retry_after = "1";
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port);
  o.initial_backoff_s = 0.01;
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_EQ((*sink)->delivered(), 1u);
  std::lock_guard<std::mutex> lock(rx.mu);
  ASSERT_EQ(rx.arrivals.size(), 2u);
  EXPECT_GE(rx.arrivals[1] - rx.arrivals[0], 0.95);
}

// A receiver that accepts the request and then sends its answer one header line at a time, slower
// than nothing but never slow enough for a read timeout: until `stop`.
class TricklingReceiver {
 public:
  TricklingReceiver() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(listen_fd_, 4) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TricklingReceiver() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  void Serve() {
    std::vector<int> conns;
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) == 1) {
        int c = ::accept(listen_fd_, nullptr, nullptr);
        if (c >= 0) {
          conns.push_back(c);
          ++accepted_;
          const char status[] = "HTTP/1.1 200 OK\r\n";
          (void)!::send(c, status, sizeof(status) - 1, MSG_NOSIGNAL);
        }
      }
      for (int c : conns) {
        const char header[] = "X-Wait: 1\r\n";
        (void)!::send(c, header, sizeof(header) - 1, MSG_NOSIGNAL);
      }
    }
    for (int c : conns) ::close(c);
  }
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// An answer that trickles in never trips a read timeout: the whole attempt has a deadline (it hung
// the sender for good, and every later alert with it).
TEST(AlertSinks, WebhookCutsAnAttemptWhoseAnswerTricklesPastItsDeadline) {
  TricklingReceiver rx;
  ASSERT_GT(rx.port(), 0);
  NoteLines notes;
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port());
  o.timeout_s = 5;
  o.attempt_timeout_s = 0.5;
  o.initial_backoff_s = 0.01;
  o.max_attempts = 2;
  o.note = notes.Sink();
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  const double a = Now();
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  ASSERT_TRUE((*sink)->Drain(10));
  EXPECT_LT(Now() - a, 5);
  EXPECT_EQ((*sink)->failed_attempts(), 2u);
  EXPECT_EQ((*sink)->dropped_batches(), 1u);
  const std::vector<std::string> lines = notes.Lines();
  ASSERT_GE(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("no complete answer within 0.5 s"));
}

// Stopping (SIGTERM) while an answer trickles in does not wait for it: the attempt is cut.
TEST(AlertSinks, WebhookStopsPromptlyWithAnAttemptInFlight) {
  TricklingReceiver rx;
  ASSERT_GT(rx.port(), 0);
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(rx.port());
  o.timeout_s = 5;
  o.attempt_timeout_s = 600;
  auto sink = WebhookAlertSink::Start(o);
  ASSERT_TRUE(sink.ok());
  (*sink)->Send({Event(AlertEventKind::kFiring, 1)});
  for (int i = 0; i < 200 && rx.accepted() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(rx.accepted(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the answer is trickling in
  const double a = Now();
  sink->reset();
  EXPECT_LT(Now() - a, 2);
}

}  // namespace
}  // namespace vw::outputs
