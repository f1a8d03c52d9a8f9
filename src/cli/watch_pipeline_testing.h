// Test helpers shared by the WatchPipeline tests (watch_*_test.cpp; header-only, not part of the
// program): GPU, process and host snapshots, a scratch history database, two stored hours of
// history, an alert sink that records every event, and alert durations short enough for a test.
// Sizes are given in MiB and stored in bytes; times are epoch seconds.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/watch_pipeline.h"
#include "core/units.h"

namespace vw::cli::testing {

inline GpuSnapshot Gpu(unsigned index, double t, double used_mib) {
  GpuSnapshot g;
  g.t = t;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.minor = index;  // /dev/nvidia<index>: the fd scan can look for its holders
  g.memory_total_bytes = static_cast<uint64_t>(81559 * kMiB);
  g.memory_reserved_bytes = static_cast<uint64_t>(479 * kMiB);
  g.memory_used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  return g;
}

inline ProcessSnapshot Proc(int64_t pid, double used_mib, std::string command) {
  ProcessSnapshot p;
  p.pid = pid;
  p.compute = true;
  p.used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  p.info.alive = true;
  p.info.command = std::move(command);
  return p;
}

inline HostSnapshot Host(double t, std::vector<GpuSnapshot> gpus) {
  HostSnapshot s;
  s.t = t;
  s.hostname = "node-7";
  s.gpus = std::move(gpus);
  return s;
}

class TempDb {
 public:
  TempDb() {
    char tmpl[] = "/tmp/vw-pipeline-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDb() { std::filesystem::remove_all(dir_); }
  std::string path() const { return dir_ + "/history.db"; }

 private:
  std::string dir_;
};

// Every lifecycle record `store` holds; a query that fails fails the test (and gives none).
inline std::vector<storage::ProcessRecord> AllRecords(storage::HistoryStore& store) {
  auto r = store.processes().Query(0, 1e12);
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : std::vector<storage::ProcessRecord>{};
}

// Two hours of GPU 0 growing 1 GiB/h and GPU 1 flat, stored as a daemon would have stored them.
inline void FillHistory(const std::string& db, double end_t) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (double t = end_t - 7200; t <= end_t; t += 10) {
    (*store)->Append("gpu:0", t, static_cast<uint64_t>((20000 + 1024 * (t - end_t + 7200) / 3600) * kMiB));
    (*store)->Append("gpu:1", t, static_cast<uint64_t>(30000 * kMiB));
  }
  ASSERT_TRUE((*store)->Flush().ok());
}

// Records every alert event the pipeline sends.
struct RecordingSink : outputs::AlertSink {
  std::vector<detection::AlertEvent> events;
  void Send(const std::vector<detection::AlertEvent>& e) override { events.insert(events.end(), e.begin(), e.end()); }
  bool Fired(const std::string& name, const std::string& gpu) const {
    for (const auto& e : events) {
      auto g = e.alert.condition.labels.find("gpu");
      if (e.kind == detection::AlertEventKind::kFiring && e.alert.condition.name == name &&
          g != e.alert.condition.labels.end() && g->second == gpu) {
        return true;
      }
    }
    return false;
  }
};

inline bool Resolved(const RecordingSink& sink, const std::string& name) {
  for (const auto& e : sink.events) {
    if (e.kind == detection::AlertEventKind::kResolved && e.alert.condition.name == name) return true;
  }
  return false;
}

inline WatchConfig FastAlerts() {
  WatchConfig c;
  c.alerts.default_for_s = 1;
  c.alerts.for_by_name["GpuStale"] = 0;
  c.stale_alert_s = 5;
  return c;
}

}  // namespace vw::cli::testing
