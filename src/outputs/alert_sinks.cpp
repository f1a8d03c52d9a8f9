#include "outputs/alert_sinks.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/time.h"
#include "outputs/json_text.h"

namespace vw::outputs {

using detection::AlertEvent;
using detection::AlertEventKind;
using nlohmann::json;

AlertClock AlertClockFor(bool has_zone, bool synthetic_time) {
  if (synthetic_time) return AlertClock::kTraceTime;
  return has_zone ? AlertClock::kUtc : AlertClock::kWallClock;
}

std::string AlertTimeText(double t, AlertClock clock) {
  if (clock != AlertClock::kTraceTime) return FormatIso8601(t, clock == AlertClock::kUtc);
  const long long s = std::llround(std::max(t, 0.0));
  const long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
  if (d > 0) return fmt::format("t+{}d {}h {}m {}s", d, h, m, sec);
  if (h > 0) return fmt::format("t+{}h {}m {}s", h, m, sec);
  if (m > 0) return fmt::format("t+{}m {}s", m, sec);
  return fmt::format("t+{}s", sec);
}

std::string AlertLogLine(const AlertEvent& e, AlertClock clock) {
  std::string line = AlertTimeText(e.t, clock);
  line += " alert ";
  line += detection::AlertEventKindName(e.kind);
  line += ' ';
  line += e.alert.key;
  line += " severity=";
  line += SeverityName(e.alert.condition.severity);
  auto it = e.alert.condition.annotations.find("summary");
  if (it != e.alert.condition.annotations.end()) {
    // A resolved alert's summary is what it said while firing, not what holds now.
    line += e.kind == AlertEventKind::kResolved ? ": no longer holds; it said: " : ": ";
    line += it->second;
  }
  return line;
}

json AlertmanagerAlert(const AlertEvent& e, const std::string& generator_url, double ends_after_s) {
  json labels = json::object();
  for (const auto& [k, v] : e.alert.condition.labels) labels[k] = v;
  labels["alertname"] = e.alert.condition.name;
  labels["severity"] = std::string(SeverityName(e.alert.condition.severity));
  json annotations = json::object();
  for (const auto& [k, v] : e.alert.condition.annotations) annotations[k] = v;
  json a;
  a["labels"] = labels;
  a["annotations"] = annotations;
  a["startsAt"] = FormatIso8601(e.alert.fired_at.value_or(e.alert.active_since), true);
  const double ends = e.kind == AlertEventKind::kResolved ? e.alert.resolved_at.value_or(e.t) : e.t + ends_after_s;
  a["endsAt"] = FormatIso8601(ends, true);
  if (!generator_url.empty()) a["generatorURL"] = generator_url;
  return a;
}

void LogAlertSink::Send(const std::vector<AlertEvent>& events) {
  for (const AlertEvent& e : events) write_(AlertLogLine(e, clock_));
}

Result<std::unique_ptr<JsonLinesAlertSink>> JsonLinesAlertSink::Open(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return FromErrno(errno, "open alert log " + path);
  return std::unique_ptr<JsonLinesAlertSink>(new JsonLinesAlertSink(f, path));
}

Status JsonLinesAlertSink::Reopen() {
  FILE* f = std::fopen(path_.c_str(), "a");
  if (f == nullptr) return FromErrno(errno, "reopen alert log " + path_);
  std::fclose(file_);
  file_ = f;
  return Status::Ok();
}

bool JsonLinesAlertSink::Moved() const {
  struct stat at_path {};
  struct stat open_file {};
  if (::fstat(fileno(file_), &open_file) != 0) return false;
  if (::stat(path_.c_str(), &at_path) != 0) return true;
  return at_path.st_ino != open_file.st_ino || at_path.st_dev != open_file.st_dev;
}

JsonLinesAlertSink::~JsonLinesAlertSink() {
  std::fclose(file_);
}

void JsonLinesAlertSink::Send(const std::vector<AlertEvent>& events) {
  std::string out;
  for (const AlertEvent& e : events) {
    // A resend re-announces a firing alert to Alertmanager every minute; in the file it would only
    // repeat the firing line (thousands of times for an alert that fires for days).
    if (e.kind == AlertEventKind::kResend) continue;
    json j;
    j["time"] = AlertTimeText(e.t, clock_);
    j["event"] = std::string(detection::AlertEventKindName(e.kind));
    j["state"] = std::string(detection::AlertStateName(e.alert.state));
    j["alert"] = e.alert.condition.name;
    j["key"] = e.alert.key;
    j["severity"] = std::string(SeverityName(e.alert.condition.severity));
    j["labels"] = e.alert.condition.labels;
    j["annotations"] = e.alert.condition.annotations;
    j["active_since"] = AlertTimeText(e.alert.active_since, clock_);
    j["fired_at"] = e.alert.fired_at ? json(AlertTimeText(*e.alert.fired_at, clock_)) : json();
    j["resolved_at"] = e.alert.resolved_at ? json(AlertTimeText(*e.alert.resolved_at, clock_)) : json();
    out += JsonText(j);
    out += '\n';
  }
  if (out.empty()) return;
  // Rotated away (logrotate's "create" mode moves it) or deleted: write to a new file at the path.
  if (Moved() && !Reopen().ok()) ++write_errors_;
  if (std::fwrite(out.data(), 1, out.size(), file_) != out.size() || std::fflush(file_) != 0) {
    ++write_errors_;
    std::clearerr(file_);
  }
}

Result<std::unique_ptr<WebhookAlertSink>> WebhookAlertSink::Start(WebhookOptions options) {
  const std::string& url = options.url;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return Status::InvalidArgument("--webhook '" + url + "': expected http://HOST[:PORT][/PATH]");
  }
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("--webhook '" + url + "': only http and https are supported");
  }
  size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  if (origin.size() <= scheme_end + 3) return Status::InvalidArgument("--webhook '" + url + "': no host");
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string api = "/api/v2/alerts";
  if (path.size() < api.size() || path.compare(path.size() - api.size(), api.size(), api) != 0) path += api;
  std::unique_ptr<WebhookAlertSink> sink(new WebhookAlertSink(std::move(options), origin, path));
  sink->thread_ = std::thread([s = sink.get()] { s->Run(); });
  return sink;
}

WebhookAlertSink::WebhookAlertSink(WebhookOptions options, std::string origin, std::string path)
    : options_(std::move(options)), origin_(std::move(origin)), path_(std::move(path)) {}

WebhookAlertSink::~WebhookAlertSink() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookAlertSink::Send(const std::vector<AlertEvent>& events) {
  if (events.empty()) return;
  json body = json::array();
  for (const AlertEvent& e : events)
    body.push_back(AlertmanagerAlert(e, options_.generator_url, options_.ends_after_s));
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(JsonText(body));
    while (queue_.size() > options_.max_queue) {
      queue_.pop_front();
      ++dropped_;
    }
  }
  cv_.notify_all();
}

bool WebhookAlertSink::Drain(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return queue_.empty() && !busy_; });
}

void WebhookAlertSink::Run() {
  httplib::Client client(origin_);
  const auto to = std::chrono::duration<double>(options_.timeout_s);
  client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string body = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    double backoff = options_.initial_backoff_s;
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
      lock.unlock();
      auto res = client.Post(path_.c_str(), body, "application/json");
      const bool ok = res && res->status >= 200 && res->status < 300;
      // 4xx other than 429 will not get better by retrying.
      const bool permanent = res && res->status >= 400 && res->status < 500 && res->status != 429;
      lock.lock();
      if (ok) {
        ++delivered_;
        if (failing_ && options_.note) {
          options_.note(fmt::format("alert webhook {}: delivering again after {} failed attempt(s)", origin_ + path_,
                                    streak_failed_));
        }
        failing_ = false;
        streak_failed_ = 0;
        streak_why_.clear();
        break;
      }
      ++failed_attempts_;
      ++streak_failed_;
      const std::string why = res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error());
      // One line per failure streak, and one more when the reason changes within it (a refusal
      // followed by timeouts must not read as the refusal for good).
      if ((!failing_ || why != streak_why_) && options_.note) {
        if (permanent) {
          options_.note(fmt::format(
              "alert webhook {}: delivery refused ({}); a 4xx answer other than 429 is not retried: this batch and "
              "every later one refused so are dropped (vramwatch_notifications_dropped_total counts them); check "
              "that the URL is Alertmanager's",
              origin_ + path_, why));
        } else {
          options_.note(fmt::format(
              "alert webhook {}: delivery failed ({}); retrying with backoff, up to {} attempts a batch, then it "
              "is dropped; a note follows when it works again (vramwatch_notifications_failed_total counts the "
              "attempts, vramwatch_notifications_dropped_total the batches dropped)",
              origin_ + path_, why, options_.max_attempts));
        }
      }
      streak_why_ = why;
      failing_ = true;
      if (permanent || stop_ || attempt == options_.max_attempts) {
        ++dropped_;  // given up: this batch is never delivered
        break;
      }
      cv_.wait_for(lock, std::chrono::duration<double>(backoff), [&] { return stop_; });
      if (stop_) break;
      backoff = std::min(backoff * 2, options_.max_backoff_s);
    }
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace vw::outputs
