#include "sources/nvml/call_runner.h"

#include <cctype>
#include <cstdio>
#include <string_view>

namespace vw::nvml {

// Shared by the runner and the worker thread; outlives whichever lets go last.
struct CallRunner::Worker {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> task;  // set by the caller, cleared by the worker when done
  bool busy = false;           // a task was handed over and has not finished
  bool stop = false;
  std::string current;  // name of the running call
  std::chrono::steady_clock::time_point started;
  std::thread thread;

  void Loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || (busy && task); });
      if (stop && !(busy && task)) return;
      std::function<void()> t = std::move(task);
      task = nullptr;
      lock.unlock();
      t();
      lock.lock();
      busy = false;
      cv.notify_all();
      if (stop) return;
    }
  }
};

CallRunner::~CallRunner() {
  if (worker_) {
    {
      std::lock_guard<std::mutex> lock(worker_->mu);
      worker_->stop = true;
    }
    worker_->cv.notify_all();
    worker_->thread.join();
  }
  // An abandoned worker was detached when it was abandoned; it ends when its call returns.
}

bool CallRunner::blocked() const {
  if (!abandoned_) return false;
  std::lock_guard<std::mutex> lock(abandoned_->mu);
  return abandoned_->busy;
}

namespace {
constexpr std::string_view kStillBlocked = " is still blocked after ";
}  // namespace

std::string WithoutBlockedTime(const std::string& message) {
  std::string out = message;
  for (size_t at = out.find(kStillBlocked); at != std::string::npos; at = out.find(kStillBlocked, at + 1)) {
    // " is still blocked after 2.5 s" -> " is still blocked"
    size_t end = at + kStillBlocked.size();
    while (end < out.size() && (std::isdigit(static_cast<unsigned char>(out[end])) || out[end] == '.')) ++end;
    if (out.compare(end, 2, " s") == 0) end += 2;
    out.erase(at + kStillBlocked.size() - 7, end - (at + kStillBlocked.size() - 7));  // keep " is still blocked"
  }
  return out;
}

Status CallRunner::RunErased(const char* name, std::chrono::milliseconds deadline, std::function<void()> task) {
  if (abandoned_) {
    std::lock_guard<std::mutex> lock(abandoned_->mu);
    if (abandoned_->busy) {
      auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - abandoned_->started).count();
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f", secs);
      return Status::Timeout(std::string(name) + ": not called, the previous call " + abandoned_->current +
                             std::string(kStillBlocked) + buf + " s");
    }
  }
  abandoned_.reset();
  if (!worker_) {
    worker_ = std::make_shared<Worker>();
    Worker* w = worker_.get();
    // The thread holds its own reference, so an abandoned worker stays valid until it ends.
    worker_->thread = std::thread([keep = worker_, w] { w->Loop(); });
  }
  std::unique_lock<std::mutex> lock(worker_->mu);
  worker_->task = std::move(task);
  worker_->busy = true;
  worker_->current = name;
  const auto started = std::chrono::steady_clock::now();
  worker_->started = started;
  worker_->cv.notify_all();
  const bool done = worker_->cv.wait_for(lock, deadline, [&] { return !worker_->busy; });
  if (timings_ != nullptr) {
    timings_->Record(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  if (done) return Status::Ok();
  // Deadline passed: leave the thread blocked in the call; it exits once the call returns.
  worker_->stop = true;
  lock.unlock();
  worker_->thread.detach();
  abandoned_ = std::move(worker_);
  ever_abandoned_ = true;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld ms", static_cast<long long>(deadline.count()));
  return Status::Timeout(std::string(name) + ": no answer within the " + buf + " deadline");
}

}  // namespace vw::nvml
