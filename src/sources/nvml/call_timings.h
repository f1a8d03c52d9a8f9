// CallTimings: how long each NVML entry point took, aggregated per function name into a histogram
// with fixed bucket bounds, for vramwatch_nvml_call_duration_seconds{call}.
//
// A duration is the time the sampler waited for one call (CallRunner::Run): the call's own time
// plus the hand-off to its worker thread (microseconds), or the deadline when the call passed it.
// A two-call list (size query, then fill) and a string read count as one observation of their
// function. Calls refused at once because an earlier call is still blocked are not observed (no
// NVML call was made).
//
// Record() does not allocate: the names and counts live in a fixed table of kMaxCalls entries
// (a name longer than kMaxName - 1 bytes is cut; observations of names beyond the table are
// counted in dropped()). Snapshot() copies the table out.
// Units: seconds. Threading: Record() and Snapshot() may be called from any threads (a mutex).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace vw::nvml {

// Default upper bounds (seconds) of the buckets: 0.5 ms to 10 s.
const std::vector<double>& DefaultCallLatencyBounds();

struct CallTiming {
  std::string call;                     // "nvmlDeviceGetMemoryInfo_v2"
  std::vector<uint64_t> bucket_counts;  // cumulative: observations <= bounds[i]
  uint64_t count = 0;                   // all observations (the +Inf bucket)
  double sum_seconds = 0;
};

class CallTimings {
 public:
  static constexpr size_t kMaxCalls = 64;    // distinct function names
  static constexpr size_t kMaxBuckets = 32;  // bounds beyond this are ignored
  static constexpr size_t kMaxName = 64;

  // `bounds`: increasing upper bounds in seconds (at most kMaxBuckets are used).
  explicit CallTimings(const std::vector<double>& bounds = DefaultCallLatencyBounds());

  // `call` must have static storage duration (the binding passes string literals): the table
  // remembers the pointer to find the entry again without comparing the text.
  void Record(const char* call, double seconds);

  // One entry per function observed, in first-observed order.
  std::vector<CallTiming> Snapshot() const;
  const std::vector<double>& bounds() const { return bounds_; }
  uint64_t dropped() const;

 private:
  struct Entry {
    const char* key = nullptr;  // the pointer last recorded under this name (fast path)
    std::array<char, kMaxName> name{};
    std::array<uint64_t, kMaxBuckets> per_bucket{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };

  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::array<Entry, kMaxCalls> entries_{};
  size_t used_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace vw::nvml
