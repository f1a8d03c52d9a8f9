// HttpServer: the daemon's read-only HTTP endpoints (cpp-httplib), on --listen ADDR:PORT
// (default 127.0.0.1:9490, loopback only):
//   GET /metrics          Prometheus text (outputs/prometheus_text.h)
//   GET /api/v1/status    the `check --json` document with per-GPU analysis
//   GET /api/v1/history?series=gpu:0&from=ISO&to=ISO   (defaults: the last hour)
//   GET /healthz          "ok" while the sampler publishes, 503 when its state is older than
//                         stale_after_s
//   GET /                 the page from SetPageHandler(), or a short text list of the endpoints
//
// Handlers only copy the shared_ptr the sampler last published (StatePublisher) and render it: no
// handler calls NVML or waits on the sampler, and the sampler never waits on a client. Read and
// write timeouts bound how long a slow client can hold one of the worker threads, and an idle
// keep-alive connection is closed after 2 s, so a browser's open connections do not pin them;
// a client that trickles its request a byte at a time still holds one (restrict the port).
// Errors: an address in use or not local gives a Status naming the address and the OS reason.
// Threading: Start()/Stop() from one thread; handlers run on the server's worker threads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "outputs/daemon_state.h"
#include "outputs/history_source.h"

namespace httplib {
class Server;
}

namespace vw::outputs {

// Copy-on-publish holder of the latest DaemonState.
class StatePublisher {
 public:
  void Publish(std::shared_ptr<const DaemonState> state) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::move(state);
  }
  std::shared_ptr<const DaemonState> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const DaemonState> state_;
};

struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 9490;  // 0: any free port (tests)
};

// "127.0.0.1:9490", "0.0.0.0:9490", "[::1]:9490", ":9490" (loopback), "9490".
Result<ListenAddress> ParseListenAddress(const std::string& text);

// "http://HOST:PORT/", an IPv6 address in brackets ("http://[::1]:9490/").
std::string HttpUrl(const std::string& host, int port);

struct HttpOptions {
  ListenAddress listen;
  double read_timeout_s = 5;
  double write_timeout_s = 5;
  int worker_threads = 16;  // connections served at once; a browser opens up to six
  // Accepted connections waiting for a worker; past them the accepting thread serves the next one
  // itself, and the others wait in the kernel's listen backlog, which holds no descriptor of ours.
  int max_pending_connections = 64;
  double stale_after_s = 30;  // /healthz fails when the published state is older than this
};

class HttpServer {
 public:
  HttpServer(const StatePublisher& publisher, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Set before Start().
  void SetPageHandler(std::function<std::string()> page) { page_ = std::move(page); }
  void SetHistorySource(std::shared_ptr<HistorySource> history) { history_ = std::move(history); }

  // Binds and starts serving on a background thread.
  Status Start();
  void Stop();
  int port() const { return port_; }  // the bound port (useful with port 0)
  uint64_t requests_served() const { return requests_.load(); }

 private:
  void Routes();
  const StatePublisher& publisher_;
  HttpOptions options_;
  std::function<std::string()> page_;
  std::shared_ptr<HistorySource> history_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<uint64_t> requests_{0};
};

}  // namespace vw::outputs
