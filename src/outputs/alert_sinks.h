// Alert sinks: where alert notifications (detection/alerts.h) go.
//   LogAlertSink        one human line per event to a callback (stderr, syslog, a test buffer)
//   JsonLinesAlertSink  one JSON object per firing or resolved event appended to a file (one write
//                       per batch); resends are left out. The file is reopened (created again) when
//                       it was moved or deleted (its inode at the path changed) and on Reopen()
//                       (SIGHUP), so logrotate's default "create" mode works. Lines are whole: a
//                       write cut short (disk full) is taken back, and lines that cannot be written
//                       are kept (1 MiB) for the next batch, with a note when it fails and when it
//                       works again.
//   WebhookAlertSink    HTTP POST of an Alertmanager v2 payload (`POST /api/v2/alerts`, a JSON array
//                       of {labels, annotations, startsAt, endsAt, generatorURL}) from a background
//                       thread with a bounded queue, retries and exponential backoff. One note
//                       (WebhookOptions::note) when deliveries start failing (and when the
//                       reason changes) and one when they work again; counters of failed
//                       attempts and of batches never delivered.
// Send() never blocks on I/O that can hang: the webhook only enqueues (dropping the oldest batch,
// counted, when the queue is full); the file sink does one append per batch.
// Times in payloads are ISO 8601 UTC; labels include alertname and severity. The log and file
// sinks write the times on the clock of what was watched (set_clock, AlertClock): UTC live and for
// a trace that named its zone; `watch --replay` of a trace whose times carry no zone (local wall
// clock of the machine that recorded it, core/time.h) prints them as written rather than claiming
// UTC, and of a trace without a clock (times are seconds from its first sample) as offsets,
// "t+2h 11m 50s", as its evidence names moments.
// Threading: Send() from the sampler thread; the webhook's own thread does the network I/O.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "detection/alerts.h"

namespace httplib {
class Client;
}

namespace vw::outputs {

class AlertSink {
 public:
  virtual ~AlertSink() = default;
  virtual void Send(const std::vector<detection::AlertEvent>& events) = 0;
};

// The clock alert times are written on.
enum class AlertClock {
  kUtc,        // epoch seconds, ISO 8601 with "Z": "2026-07-14T08:12:38Z"
  kWallClock,  // a zone-less trace's wall clock as written, ISO 8601 without a zone
  kTraceTime,  // a trace without a clock: seconds from its first sample, "t+2h 11m 50s"
};

// The clock of a trace (core/time.h): `synthetic_time` (no clock at all) wins over `has_zone`.
AlertClock AlertClockFor(bool has_zone, bool synthetic_time);

// `t` (seconds) on `clock`: "2026-07-14T08:12:38Z", "2026-07-14T08:12:38" (".500" when the
// milliseconds are not zero), or "t+2h 11m 50s" (to the second; the larger units written only
// when not zero: "t+50s", "t+1d 0h 5m 0s").
std::string AlertTimeText(double t, AlertClock clock);

// "2026-07-14T08:12:38Z alert firing GpuMemoryLeak{gpu=0} severity=critical: summary text"
// (the time as AlertTimeText writes it on `clock`).
std::string AlertLogLine(const detection::AlertEvent& e, AlertClock clock = AlertClock::kUtc);

// The Alertmanager v2 object for one event. A resolved alert has endsAt = its resolution time; a
// firing one gets endsAt = t + ends_after_s, so Alertmanager closes it if we stop re-announcing.
// `to_system_clock_s` is added to every time: the daemon's times keep to the clock it started with
// (core/time.h SteadyWallNow), Alertmanager's are the system clock's, and an endsAt a stepped clock
// put in Alertmanager's past would close a firing alert at once.
nlohmann::json AlertmanagerAlert(const detection::AlertEvent& e, const std::string& generator_url, double ends_after_s,
                                 double to_system_clock_s = 0);

class LogAlertSink : public AlertSink {
 public:
  explicit LogAlertSink(std::function<void(const std::string&)> write) : write_(std::move(write)) {}
  void Send(const std::vector<detection::AlertEvent>& events) override;
  void set_clock(AlertClock clock) { clock_ = clock; }

 private:
  std::function<void(const std::string&)> write_;
  AlertClock clock_ = AlertClock::kUtc;
};

class JsonLinesAlertSink : public AlertSink {
 public:
  static Result<std::unique_ptr<JsonLinesAlertSink>> Open(const std::string& path);
  ~JsonLinesAlertSink() override;
  void Send(const std::vector<detection::AlertEvent>& events) override;
  // Closes the file and opens the path again (appending, created when missing). On failure the old
  // file stays in use and the error is returned.
  Status Reopen();
  uint64_t write_errors() const { return write_errors_; }  // batches that could not be written
  void set_clock(AlertClock clock) { clock_ = clock; }     // of "time", "active_since", ...
  // Told one line when writing starts failing (and when the reason changes), and one when it works
  // again; may be empty.
  void set_note(std::function<void(const std::string&)> note) { note_ = std::move(note); }

  static constexpr size_t kMaxPendingBytes = 1 << 20;  // lines kept while the file cannot be written

 private:
  JsonLinesAlertSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  // True when the path no longer names the open file (moved, deleted, replaced).
  bool Moved() const;
  // Appends `text` (whole lines) to the file at the path, reopened first when it moved; a write
  // that fails part-way is taken back (truncated to the size before), so no line is split.
  Status WriteWhole(const std::string& text);
  int fd_;
  std::string path_;
  AlertClock clock_ = AlertClock::kUtc;
  uint64_t write_errors_ = 0;
  std::function<void(const std::string&)> note_;
  std::string pending_;         // lines not written yet, oldest first
  uint64_t dropped_lines_ = 0;  // dropped from pending_ in this failure streak
  bool failing_ = false;
  std::string failure_;  // why the last write failed
};

struct WebhookOptions {
  // Alertmanager base URL ("http://am:9093", "https://user:pass@am.example.org/alertmanager") or the
  // full .../api/v2/alerts; credentials in it are sent as HTTP basic auth and never printed.
  std::string url;
  std::string generator_url;  // link back to this daemon
  size_t max_queue = 64;      // batches waiting; the oldest is dropped beyond this
  int max_attempts = 8;       // per batch
  double initial_backoff_s = 1;
  double max_backoff_s = 60;
  double timeout_s = 5;           // connect, and each read and write, per attempt
  double attempt_timeout_s = 10;  // the whole attempt (a receiver that trickles its answer): cut then
  double ends_after_s = 240;      // endsAt of a firing alert (4 × the resend interval)
  // Told one line when deliveries start failing (and again when the reason changes: "HTTP 400",
  // "Timeout"), saying whether the batch is retried or dropped, and one when they work again
  // (called on the sender thread); may be empty.
  std::function<void(const std::string&)> note;
  // Seconds from the alerts' clock to the system clock, asked at each batch (the live daemon:
  // core/time.h SystemClockStep); empty: the same clock.
  std::function<double()> system_clock_step;
};

class WebhookAlertSink : public AlertSink {
 public:
  // Checks the URL (http or https, a host, a port 1-65535 when given, no query or fragment) and
  // starts the sender thread.
  static Result<std::unique_ptr<WebhookAlertSink>> Start(WebhookOptions options);
  // Cuts the attempt in flight (an answer not complete yet is not waited for; a name lookup is, up
  // to the resolver's own timeout); unsent batches are dropped.
  ~WebhookAlertSink() override;
  void Send(const std::vector<detection::AlertEvent>& events) override;

  // Waits until the queue is empty and nothing is in flight, or timeout_s passes. For tests and a
  // clean shutdown. Returns true when everything was delivered or given up on.
  bool Drain(double timeout_s);

  uint64_t delivered() const { return delivered_; }
  uint64_t failed_attempts() const { return failed_attempts_; }
  // Batches never delivered: pushed out of the full queue, or given up (last retry, or a 4xx).
  uint64_t dropped_batches() const { return dropped_; }

 private:
  WebhookAlertSink(WebhookOptions options, std::string origin, std::string path, std::string user,
                   std::string password);
  void Run();
  // Cuts an attempt that outlives attempt_timeout_s, and the one in flight at stop (sender thread's
  // client, from its own thread: httplib's stop() is the thread-safe way to end a request).
  void Watch();
  WebhookOptions options_;
  std::string origin_;           // scheme://host:port
  std::string path_;             // /api/v2/alerts
  std::string user_, password_;  // basic auth; empty user: none
  std::unique_ptr<httplib::Client> client_;
  bool in_flight_ = false;   // a POST is under way (guarded by mu_)
  uint64_t attempt_id_ = 0;  // counts attempts, so the watchdog cuts the one it timed
  std::chrono::steady_clock::time_point attempt_deadline_;
  bool cut_ = false;  // the attempt in flight was cut at its deadline
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // JSON bodies
  bool busy_ = false;
  bool stop_ = false;
  bool failing_ = false;        // in a streak of failed attempts (sender thread)
  uint64_t streak_failed_ = 0;  // attempts failed in the current streak
  std::string streak_why_;      // why the last attempt of the streak failed ("HTTP 400", "Timeout")
  std::atomic<uint64_t> delivered_{0}, failed_attempts_{0}, dropped_{0};
  std::thread thread_, watchdog_;
};

}  // namespace vw::outputs
