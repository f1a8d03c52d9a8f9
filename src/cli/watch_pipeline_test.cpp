#include "cli/watch_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace vw::cli {
namespace {

constexpr double kMiB = 1048576.0;

GpuSnapshot Gpu(unsigned index, double t, double used_mib) {
  GpuSnapshot g;
  g.t = t;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.memory_total_bytes = static_cast<uint64_t>(81559 * kMiB);
  g.memory_reserved_bytes = static_cast<uint64_t>(479 * kMiB);
  g.memory_used_bytes = static_cast<uint64_t>(used_mib * kMiB);
  return g;
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

// Two hours of GPU 0 growing 1 GiB/h and GPU 1 flat, stored as a daemon would have stored them.
void FillHistory(const std::string& db, double end_t) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (double t = end_t - 7200; t <= end_t; t += 10) {
    (*store)->Append("gpu:0", t, static_cast<uint64_t>((20000 + 1024 * (t - end_t + 7200) / 3600) * kMiB));
    (*store)->Append("gpu:1", t, static_cast<uint64_t>(30000 * kMiB));
  }
  ASSERT_TRUE((*store)->Flush().ok());
}

std::string VerdictOf(const outputs::DaemonState& s, unsigned index) {
  for (const auto& g : s.gpus) {
    if (g.snapshot.index == index) return g.analysis.verdict;
  }
  return "absent";
}

TEST(WatchPipelineResume, EnginesResumedFromHistoryJudgeTheFirstLiveSample) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  EXPECT_EQ(p.Resume(now), 2u * 721u);
  HostSnapshot snap;
  snap.t = now;
  snap.gpus = {Gpu(0, now, 20000 + 2048), Gpu(1, now, 30000)};
  p.Ingest(snap, true, false);
  auto state = p.BuildState(now);
  EXPECT_EQ(VerdictOf(*state, 0), "leak");
  EXPECT_EQ(VerdictOf(*state, 1), "plateau");
  ASSERT_EQ(state->alerts.size(), 1u);
  EXPECT_EQ(state->alerts[0].name, "GpuMemoryLeak");
  EXPECT_EQ(state->alerts[0].gpu, "0");
  EXPECT_EQ(state->alerts[0].state, "pending");  // --for starts now, not in the stored past
}

TEST(WatchPipelineResume, OnlyTheResumeWindowIsRefed) {
  TempDb db;
  const double now = 1'790'000'000;
  FillHistory(db.path(), now - 1);
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchConfig c;
  c.resume_s = 600;  // too little to judge: the engine starts (almost) blind
  WatchPipeline p(c, store->get(), {});
  EXPECT_EQ(p.Resume(now), 2u * 60u);
  HostSnapshot snap;
  snap.t = now;
  snap.gpus = {Gpu(0, now, 20000 + 2048), Gpu(1, now, 30000)};
  p.Ingest(snap, true, false);
  EXPECT_EQ(VerdictOf(*p.BuildState(now), 0), "insufficient_data");
}

TEST(WatchPipelineResume, WithoutHistoryNothingIsResumed) {
  WatchPipeline p(WatchConfig{}, nullptr, {});
  EXPECT_EQ(p.Resume(1'790'000'000), 0u);
}

}  // namespace
}  // namespace vw::cli
