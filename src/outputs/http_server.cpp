#include "outputs/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/time.h"
#include "outputs/daemon_status_json.h"
#include "outputs/json_text.h"
#include "outputs/prometheus_text.h"

namespace vw::outputs {

namespace {

// Appended to a bad time parameter's error of /api/v1/history.
constexpr const char* kHistoryTimeNote = " (a time without a zone is UTC)";

// The daemon's sample clock (core/time.h): a health age against it does not go negative when the
// system clock steps back.
double NowSeconds() {
  return SteadyWallNow();
}

template <typename J>
void SendJson(httplib::Response& res, int status, const J& j) {
  res.status = status;
  res.set_content(JsonText(j), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, status, nlohmann::json{{"error", message}});
}

// Why a bind failed, asked of the OS directly (cpp-httplib only says that it failed).
std::string BindFailureReason(const ListenAddress& a) {
  const bool v6 = a.host.find(':') != std::string::npos;
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::strerror(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (v6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(a.port));
    if (inet_pton(AF_INET6, a.host.c_str(), &sa.sin6_addr) != 1) {
      close(fd);
      return "not an IPv6 address";
    }
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(a.port));
    if (inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr) != 1) {
      close(fd);
      return "not an IPv4 address";
    }
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  std::string reason = rc == 0 ? "could not listen" : std::strerror(errno);
  close(fd);
  return reason;
}

// The workers that serve accepted connections. httplib's own pool queues every connection it
// accepts, without limit: 3000 that sent nothing held a file descriptor each until a worker took
// it (the read timeout each), and ran the daemon out of descriptors for a minute (its history,
// /proc and the kernel log need them too). Past `max_pending` connections waiting here, the
// accepting thread serves the next one itself: it accepts nothing meanwhile, and the rest wait in
// the kernel's listen backlog.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(size_t workers, size_t max_pending) : max_pending_(max_pending) {
    for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
  }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (jobs_.size() < max_pending_) {
        jobs_.push_back(std::move(fn));
        ready_.notify_one();
        return;
      }
    }
    fn();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shutdown_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // shut down, nothing left
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  const size_t max_pending_;
  std::vector<std::thread> threads_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::mutex mutex_;
  std::condition_variable ready_;
};

}  // namespace

std::string HttpUrl(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  ListenAddress out;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close_br = text.find(']');
    if (close_br == std::string::npos || close_br + 1 >= text.size() || text[close_br + 1] != ':') {
      return Status::InvalidArgument("--listen '" + text + "': expected [IPv6]:PORT");
    }
    out.host = text.substr(1, close_br - 1);
    port_text = text.substr(close_br + 2);
  } else if (size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) out.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  } else {
    port_text = text;
  }
  if (out.host == "localhost") out.host = "127.0.0.1";
  char* end = nullptr;
  long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || end == nullptr || *end != '\0' || port < 0 || port > 65535) {
    return Status::InvalidArgument("--listen '" + text + "': expected ADDR:PORT with a port 0-65535, got '" +
                                   port_text + "'");
  }
  out.port = static_cast<int>(port);
  return out;
}

HttpServer::HttpServer(const StatePublisher& publisher, HttpOptions options)
    : publisher_(publisher), options_(std::move(options)) {}

HttpServer::~HttpServer() {
  Stop();
}

void HttpServer::Routes() {
  httplib::Server& s = *server_;
  // Every endpoint is read-only: any other method is answered 405 at once, before a body is read
  // (a POST without a length held a worker until the read timeout, then got 400).
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    ++requests_;
    res.set_header("Allow", "GET, HEAD");
    res.set_header("Connection", "close");  // an unread body must not be taken for the next request
    SendError(res, 405, "method " + req.method + " not allowed: every endpoint is read-only (GET, HEAD)");
    return httplib::Server::HandlerResponse::Handled;
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    ++requests_;
    auto state = publisher_.Get();
    if (!state) {
      res.status = 503;
      res.set_content("# no sample taken yet\n", kPrometheusContentType);
      return;
    }
    res.set_content(RenderPrometheus(*state, NowSeconds()), kPrometheusContentType);
  });
  s.Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    ++requests_;
    auto state = publisher_.Get();
    if (!state) return SendError(res, 503, "no sample taken yet");
    SendJson(res, 200, StatusJson(*state));
  });
  s.Get("/api/v1/history", [this](const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    if (!history_) return SendError(res, 404, "history is off (start the daemon with --db PATH)");
    if (!req.has_param("series")) return SendError(res, 400, "missing parameter 'series' (e.g. series=gpu:0)");
    const std::string series = req.get_param_value("series");
    // Times are ISO 8601 or epoch seconds; one without a zone is UTC (the stored times are).
    double to = NowSeconds();
    const bool to_given = req.has_param("to");
    if (to_given) {
      auto t = ParseTimestamp(req.get_param_value("to"));
      if (!t.ok()) return SendError(res, 400, "parameter 'to': " + t.status().message() + kHistoryTimeNote);
      to = t->seconds;
    }
    double from = to - 3600;
    if (req.has_param("from")) {
      auto t = ParseTimestamp(req.get_param_value("from"));
      if (!t.ok()) return SendError(res, 400, "parameter 'from': " + t.status().message() + kHistoryTimeNote);
      from = t->seconds;
    }
    if (from > to) {
      // A 'to' left out is now: say so, or "after 'to'" puzzles a caller who never gave one.
      return SendError(res, 400,
                       "'from' " + FormatIso8601(from, true) + " is after 'to' " +
                           (to_given ? FormatIso8601(to, true) : "(now, " + FormatIso8601(to, true) + ")"));
    }
    auto h = history_->Query(series, from, to);
    if (!h.ok()) return SendError(res, 500, h.status().ToString());
    if (!h->has_value()) return SendError(res, 404, "unknown series '" + series + "'");
    HistorySeries out = std::move(**h);
    // A GPU series carries the card size from the latest state.
    if (auto state = publisher_.Get(); state && series.rfind("gpu:", 0) == 0 && series.find('/') == std::string::npos) {
      for (const GpuState& g : state->gpus) {
        if (GpuSeriesName(GpuKey(g.snapshot)) == series) out.total_bytes = g.snapshot.memory_total_bytes;
      }
    }
    SendJson(res, 200, HistoryJson(out));
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    ++requests_;
    auto state = publisher_.Get();
    if (!state) {
      res.status = 503;
      res.set_content("starting: no sample taken yet\n", "text/plain");
      return;
    }
    const double age = NowSeconds() - state->t;
    if (age > options_.stale_after_s) {
      res.status = 503;
      res.set_content("stale: the sampler last published " + std::to_string(static_cast<long>(age)) + " s ago\n",
                      "text/plain");
      return;
    }
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    ++requests_;
    if (page_) {
      res.set_content(page_(), "text/html; charset=utf-8");
      return;
    }
    res.set_content(
        "vramwatch\n\n"
        "/metrics         Prometheus metrics\n"
        "/api/v1/status   current GPUs, holders, findings and verdicts (JSON)\n"
        "/api/v1/history  ?series=gpu:0&from=ISO&to=ISO (JSON; ISO 8601 or epoch seconds, a time without a\n"
        "                 zone is UTC; to: now when left out, from: an hour before to)\n"
        "/healthz         liveness\n",
        "text/plain; charset=utf-8");
  });
}

Status HttpServer::Start() {
  if (server_) return Status::Internal("HTTP server started twice");
  server_ = std::make_unique<httplib::Server>();
  const int workers = options_.worker_threads > 0 ? options_.worker_threads : 1;
  const int pending = std::max(1, options_.max_pending_connections);
  server_->new_task_queue = [workers, pending] {
    return new BoundedPool(static_cast<size_t>(workers), static_cast<size_t>(pending));
  };
  auto secs = [](double s) { return static_cast<time_t>(s); };
  auto usecs = [](double s) { return static_cast<time_t>((s - static_cast<double>(static_cast<time_t>(s))) * 1e6); };
  server_->set_read_timeout(secs(options_.read_timeout_s), usecs(options_.read_timeout_s));
  server_->set_write_timeout(secs(options_.write_timeout_s), usecs(options_.write_timeout_s));
  server_->set_keep_alive_max_count(20);
  server_->set_keep_alive_timeout(2);  // seconds an idle keep-alive connection holds a worker
  server_->set_payload_max_length(64 * 1024);
  // Each answer is what its Content-Type says: a browser must not guess HTML from a JSON body.
  server_->set_default_headers({{"X-Content-Type-Options", "nosniff"}});
  // SO_REUSEADDR only: cpp-httplib's default SO_REUSEPORT would let a second daemon share the port.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  Routes();
  const ListenAddress& a = options_.listen;
  if (a.port == 0) {
    port_ = server_->bind_to_any_port(a.host);
    if (port_ <= 0) {
      server_.reset();
      return Status::Unavailable("listen " + a.host + ":0: " + BindFailureReason(a));
    }
  } else {
    if (!server_->bind_to_port(a.host, a.port)) {
      server_.reset();
      std::string where =
          (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
      return Status::Unavailable("listen " + where + ": " + BindFailureReason(a) +
                                 " (choose another address with --listen ADDR:PORT)");
    }
    port_ = a.port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so do not return before it does.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace vw::outputs
