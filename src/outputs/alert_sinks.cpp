#include "outputs/alert_sinks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <string_view>

#include "core/ascii.h"
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

json AlertmanagerAlert(const AlertEvent& e, const std::string& generator_url, double ends_after_s,
                       double to_system_clock_s) {
  json labels = json::object();
  for (const auto& [k, v] : e.alert.condition.labels) labels[k] = v;
  labels["alertname"] = e.alert.condition.name;
  labels["severity"] = std::string(SeverityName(e.alert.condition.severity));
  json annotations = json::object();
  for (const auto& [k, v] : e.alert.condition.annotations) annotations[k] = v;
  json a;
  a["labels"] = labels;
  a["annotations"] = annotations;
  a["startsAt"] = FormatIso8601(e.alert.fired_at.value_or(e.alert.active_since) + to_system_clock_s, true);
  const double ends = e.kind == AlertEventKind::kResolved ? e.alert.resolved_at.value_or(e.t) : e.t + ends_after_s;
  a["endsAt"] = FormatIso8601(ends + to_system_clock_s, true);
  if (!generator_url.empty()) a["generatorURL"] = generator_url;
  return a;
}

void LogAlertSink::Send(const std::vector<AlertEvent>& events) {
  for (const AlertEvent& e : events) write_(AlertLogLine(e, clock_));
}

namespace {

int OpenForAppend(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
}

}  // namespace

Result<std::unique_ptr<JsonLinesAlertSink>> JsonLinesAlertSink::Open(const std::string& path) {
  const int fd = OpenForAppend(path);
  if (fd < 0) return FromErrno(errno, "open alert log " + path);
  return std::unique_ptr<JsonLinesAlertSink>(new JsonLinesAlertSink(fd, path));
}

Status JsonLinesAlertSink::Reopen() {
  const int fd = OpenForAppend(path_);
  if (fd < 0) return FromErrno(errno, "reopen alert log " + path_);
  ::close(fd_);
  fd_ = fd;
  return Status::Ok();
}

bool JsonLinesAlertSink::Moved() const {
  struct stat at_path {};
  struct stat open_file {};
  if (::fstat(fd_, &open_file) != 0) return false;
  if (::stat(path_.c_str(), &at_path) != 0) return true;
  return at_path.st_ino != open_file.st_ino || at_path.st_dev != open_file.st_dev;
}

JsonLinesAlertSink::~JsonLinesAlertSink() {
  ::close(fd_);
}

Status JsonLinesAlertSink::WriteWhole(const std::string& text) {
  // Rotated away (logrotate's "create" mode moves it) or deleted: write to a new file at the path.
  // One that cannot be created (its directory is gone) is an error: the lines are not written into
  // a file no one can find.
  if (Moved()) VW_RETURN_IF_ERROR(Reopen());
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const Status err = FromErrno(n < 0 ? errno : ENOSPC, "write alert log " + path_);
    // A line cut short by a full disk is taken back, so the file holds whole lines only.
    if (done > 0 && sized && ::ftruncate(fd_, before.st_size) != 0) {
      return err.WithContext("a partial line is left at its end");
    }
    return err;
  }
  return Status::Ok();
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
  // Lines not written yet go first, so the file keeps the events' order.
  pending_ += out;
  const Status written = WriteWhole(pending_);
  if (written.ok()) {
    if (failing_ && note_) {
      note_(fmt::format("alert log {}: written again, with the {} line(s) kept meanwhile{}", path_,
                        std::count(pending_.begin(), pending_.end(), '\n'),
                        dropped_lines_ > 0 ? fmt::format(" ({} older line(s) were dropped)", dropped_lines_) : ""));
    }
    pending_.clear();
    failing_ = false;
    dropped_lines_ = 0;
    return;
  }
  ++write_errors_;
  // Kept for the next batch, up to kMaxPendingBytes; the oldest whole lines go beyond that.
  while (pending_.size() > kMaxPendingBytes) {
    const size_t eol = pending_.find('\n');
    pending_.erase(0, eol == std::string::npos ? pending_.size() : eol + 1);
    ++dropped_lines_;
  }
  if (note_ && (!failing_ || written.message() != failure_)) {
    note_(written.message() + "; the lines are kept and written with the next alert event (up to " +
          std::to_string(kMaxPendingBytes >> 10) + " KiB, the oldest dropped beyond)");
  }
  failing_ = true;
  failure_ = written.message();
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "%40" -> "@"; nullopt for a '%' not followed by two hex digits.
std::optional<std::string> PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool HostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

Result<std::unique_ptr<WebhookAlertSink>> WebhookAlertSink::Start(WebhookOptions options) {
  const std::string& url = options.url;
  const std::string expected = "expected http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH]";
  auto bad = [&](const std::string& why) {
    // The URL is not echoed: it may carry a password.
    return Status::InvalidArgument("--webhook: " + why + "; " + expected);
  };
  if (url.empty()) return bad("no URL");
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return bad("the URL has a space or a control character");
  }
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return bad("no scheme");
  const std::string scheme = AsciiLower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return bad("only http and https are supported");
  if (url.find_first_of("?#") != std::string::npos) {
    return bad("a query or fragment cannot be used (vramwatch appends Alertmanager's path, /api/v2/alerts)");
  }
  const size_t authority_start = scheme_end + 3;
  const size_t path_start = url.find('/', authority_start);
  std::string_view authority(url);
  authority = authority.substr(authority_start,
                               path_start == std::string::npos ? std::string::npos : path_start - authority_start);
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  std::string user, password;
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    const size_t colon = info.find(':');
    auto u = PercentDecoded(info.substr(0, colon));
    auto pw = colon == std::string_view::npos ? std::optional<std::string>("") : PercentDecoded(info.substr(colon + 1));
    if (!u || !pw || u->empty()) return bad("the user name before '@' is empty or badly %-encoded");
    user = std::move(*u);
    password = std::move(*pw);
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address without its closing ']'");
    host = authority.substr(0, close + 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return bad("something other than ':PORT' after the IPv6 address");
    if (!rest.empty()) port = rest.substr(1);
    if (host.size() <= 2) return bad("no host");
  } else {
    if (const size_t colon = authority.find(':'); colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (host.empty()) return bad("no host");
    if (!std::all_of(host.begin(), host.end(), HostNameChar))
      return bad("the host name has a character no host name has");
  }
  if (authority.find(':') != std::string_view::npos && port.empty() && host.front() != '[')
    return bad("no port after ':'");
  if (!port.empty()) {
    unsigned n = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec != std::errc() || p != port.data() + port.size() || n < 1 || n > 65535)
      return bad("the port is not 1-65535");
  }
  const std::string origin = scheme + "://" + std::string(authority);
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string api = "/api/v2/alerts";
  if (path.size() < api.size() || path.compare(path.size() - api.size(), api.size(), api) != 0) path += api;
  std::unique_ptr<WebhookAlertSink> sink(
      new WebhookAlertSink(std::move(options), origin, std::move(path), std::move(user), std::move(password)));
  sink->thread_ = std::thread([s = sink.get()] { s->Run(); });
  sink->watchdog_ = std::thread([s = sink.get()] { s->Watch(); });
  return sink;
}

WebhookAlertSink::WebhookAlertSink(WebhookOptions options, std::string origin, std::string path, std::string user,
                                   std::string password)
    : options_(std::move(options)),
      origin_(std::move(origin)),
      path_(std::move(path)),
      user_(std::move(user)),
      password_(std::move(password)),
      client_(std::make_unique<httplib::Client>(origin_)) {
  const auto to = std::chrono::duration<double>(options_.timeout_s);
  client_->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  client_->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  client_->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(to));
  if (!user_.empty()) client_->set_basic_auth(user_.c_str(), password_.c_str());
}

WebhookAlertSink::~WebhookAlertSink() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void WebhookAlertSink::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (!in_flight_) {
      if (stop_) return;
      cv_.wait(lock, [&] { return stop_ || in_flight_; });
      continue;
    }
    const uint64_t id = attempt_id_;
    cv_.wait_until(lock, attempt_deadline_, [&] { return stop_ || !in_flight_ || attempt_id_ != id; });
    if (!in_flight_ || attempt_id_ != id) continue;
    if (!stop_ && std::chrono::steady_clock::now() < attempt_deadline_) continue;
    // Past its deadline, or stopping: end it, again every 50 ms until it has ended (a stop() made
    // while the request was still opening its socket has nothing to end yet).
    cut_ = !stop_;
    while (in_flight_ && attempt_id_ == id) {
      client_->stop();
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return !in_flight_ || attempt_id_ != id; });
    }
  }
}

void WebhookAlertSink::Send(const std::vector<AlertEvent>& events) {
  if (events.empty()) return;
  json body = json::array();
  const double to_system_clock = options_.system_clock_step ? options_.system_clock_step() : 0;
  for (const AlertEvent& e : events)
    body.push_back(AlertmanagerAlert(e, options_.generator_url, options_.ends_after_s, to_system_clock));
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
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string body = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    double backoff = options_.initial_backoff_s;
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
      in_flight_ = true;
      cut_ = false;
      ++attempt_id_;
      attempt_deadline_ =
          std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(options_.attempt_timeout_s));
      cv_.notify_all();
      lock.unlock();
      auto res = client_->Post(path_.c_str(), body, "application/json");
      const bool ok = res && res->status >= 200 && res->status < 300;
      // 4xx other than 429 will not get better by retrying.
      const bool permanent = res && res->status >= 400 && res->status < 500 && res->status != 429;
      // 429 may say how long to wait (in seconds; the HTTP-date form is not followed).
      double retry_after = 0;
      if (res && res->status == 429 && res->has_header("Retry-After")) {
        const std::string v = res->get_header_value("Retry-After");
        unsigned n = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec == std::errc() && p == v.data() + v.size()) retry_after = std::min<double>(n, options_.max_backoff_s);
      }
      lock.lock();
      in_flight_ = false;
      cv_.notify_all();
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
      const std::string why = res    ? "HTTP " + std::to_string(res->status)
                              : cut_ ? fmt::format("no complete answer within {:g} s", options_.attempt_timeout_s)
                                     : httplib::to_string(res.error());
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
      cv_.wait_for(lock, std::chrono::duration<double>(std::max(backoff, retry_after)), [&] { return stop_; });
      if (stop_) break;
      backoff = std::min(backoff * 2, options_.max_backoff_s);
    }
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace vw::outputs
