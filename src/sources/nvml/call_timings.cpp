#include "sources/nvml/call_timings.h"

#include <algorithm>
#include <cstring>

namespace vw::nvml {

const std::vector<double>& DefaultCallLatencyBounds() {
  static const std::vector<double> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                              0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return kBounds;
}

CallTimings::CallTimings(const std::vector<double>& bounds) : bounds_(bounds) {
  if (bounds_.size() > kMaxBuckets) bounds_.resize(kMaxBuckets);
}

void CallTimings::Record(const char* call, double seconds) {
  if (call == nullptr) call = "unknown";
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = nullptr;
  for (size_t i = 0; i < used_ && e == nullptr; ++i) {
    if (entries_[i].key == call) e = &entries_[i];
  }
  for (size_t i = 0; i < used_ && e == nullptr; ++i) {
    if (std::strncmp(entries_[i].name.data(), call, kMaxName - 1) == 0) {
      e = &entries_[i];
      e->key = call;
    }
  }
  if (e == nullptr) {
    if (used_ == kMaxCalls) {
      ++dropped_;
      return;
    }
    e = &entries_[used_++];
    e->key = call;
    std::strncpy(e->name.data(), call, kMaxName - 1);
  }
  // First bucket whose bound holds the value; past the last bound only count and sum grow.
  const size_t b = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  if (b < bounds_.size()) ++e->per_bucket[b];
  ++e->count;
  e->sum += seconds;
}

std::vector<CallTiming> CallTimings::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CallTiming> out;
  out.reserve(used_);
  for (size_t i = 0; i < used_; ++i) {
    const Entry& e = entries_[i];
    CallTiming c;
    c.call = e.name.data();
    c.bucket_counts.resize(bounds_.size());
    uint64_t running = 0;
    for (size_t b = 0; b < bounds_.size(); ++b) {
      running += e.per_bucket[b];
      c.bucket_counts[b] = running;
    }
    c.count = e.count;
    c.sum_seconds = e.sum;
    out.push_back(std::move(c));
  }
  return out;
}

uint64_t CallTimings::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace vw::nvml
