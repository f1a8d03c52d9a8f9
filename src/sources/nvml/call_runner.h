// CallRunner: runs blocking calls on a worker thread and waits for each at most a deadline.
//
// Run(name, deadline, fn) hands `fn` to the worker and waits. When fn returns in time its value is
// returned. When the deadline passes first, the worker is abandoned: its thread is detached and
// left blocked inside fn, and Run returns kTimeout. Until that abandoned call returns, every
// further Run fails at once with kTimeout ("still blocked in <name> for N s") rather than starting
// another thread that would likely block the same way; once it returns, the next Run starts a
// fresh worker.
//
// `fn` must own everything it touches (capture by value): after a timeout it may still run long
// after the caller's stack is gone. Its result is kept in storage shared with the worker.
//
// With set_timings(), the time each Run waited (until fn returned, or the deadline) is recorded
// under `name` (call_timings.h); a call refused at once because an abandoned one is still blocked
// is not recorded. `name` must then be a string literal (or live as long as the timings).
//
// Threading: Run is called by one thread at a time. Destruction joins an idle worker and never
// waits for an abandoned one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/status.h"
#include "sources/nvml/call_timings.h"

namespace vw::nvml {

// `message` without the time a refused call's predecessor has been blocked ("… is still blocked
// after 2.5 s" -> "… is still blocked"): the same trouble seen at each tick compares equal, so
// that it is said once.
std::string WithoutBlockedTime(const std::string& message);

class CallRunner {
 public:
  CallRunner() = default;
  ~CallRunner();
  CallRunner(const CallRunner&) = delete;
  CallRunner& operator=(const CallRunner&) = delete;

  template <typename T>
  Result<T> Run(const char* name, std::chrono::milliseconds deadline, std::function<T()> fn) {
    auto slot = std::make_shared<std::optional<T>>();
    Status s = RunErased(name, deadline, [slot, fn = std::move(fn)] { slot->emplace(fn()); });
    if (!s.ok()) return s;
    return std::move(**slot);
  }

  // Where the duration of each call goes; nullptr (the default): not recorded. Not owned.
  void set_timings(CallTimings* timings) { timings_ = timings; }

  // True when some call passed its deadline and has not returned yet.
  bool blocked() const;
  // True when any call ever passed its deadline (the library must then stay loaded).
  bool ever_abandoned() const { return ever_abandoned_; }

 private:
  struct Worker;
  Status RunErased(const char* name, std::chrono::milliseconds deadline, std::function<void()> task);

  std::shared_ptr<Worker> worker_;     // the live worker, or nullptr
  std::shared_ptr<Worker> abandoned_;  // the worker blocked past its deadline, until it returns
  bool ever_abandoned_ = false;
  CallTimings* timings_ = nullptr;
};

}  // namespace vw::nvml
