// WatchPipeline::CheckIdentity: a GPU key is an NVML index, not a card. Another card at a key
// that has history (a replaced card, or cards renumbered after one fell off the bus) does not go
// on with the other card's series, process records or verdict.
#include <gtest/gtest.h>

#include <string>

#include "cli/watch_pipeline.h"
#include "cli/watch_pipeline_testing.h"

namespace vw::cli {
namespace {

using namespace vw::cli::testing;

constexpr double kNow = 1'790'000'000;

void RecordCards(const std::string& db, const std::string& card0, const std::string& card1) {
  auto store = storage::HistoryStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  (*store)->gpu_identities().Put("0", {card0, kNow - 86400});
  (*store)->gpu_identities().Put("1", {card1, kNow - 86400});
  ASSERT_TRUE((*store)->Flush().ok());
}

std::string VerdictOf(const outputs::DaemonState& s, unsigned index) {
  for (const auto& g : s.gpus) {
    if (g.snapshot.index == index) return g.analysis.verdict;
  }
  return "absent";
}

// GPU 0's stored two hours grow 1 GiB/h. The same card still there is a leak at once; another
// card at index 0 starts blind, and the next restart re-feeds only what that card was seen doing.
TEST(WatchPipelineIdentity, AnotherCardAtAStoredKeyStartsItsDetectorAnew) {
  for (const std::string card0 : {"GPU-0", "GPU-replaced"}) {
    SCOPED_TRACE(card0);
    const bool same = card0 == "GPU-0";  // testing::Gpu(i) answers with UUID "GPU-<i>"
    TempDb db;
    FillHistory(db.path(), kNow - 1);  // 721 samples per GPU
    RecordCards(db.path(), card0, "GPU-1");
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    {
      WatchPipeline p(WatchConfig{}, store->get(), {});
      EXPECT_EQ(p.Resume(kNow), 2u * 721u);
      p.Ingest(Host(kNow, {Gpu(0, kNow, 20000 + 2048), Gpu(1, kNow, 30000)}), true, false);
      auto state = p.BuildState(kNow);
      EXPECT_EQ(VerdictOf(*state, 0), same ? "leak" : "insufficient_data");
      EXPECT_EQ(VerdictOf(*state, 1), "plateau");
      EXPECT_EQ(state->alerts.size(), same ? 1u : 0u);
      p.Flush();
    }
    auto ids = (*store)->gpu_identities().All();
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(ids->at("0").uuid, "GPU-0");
    EXPECT_EQ(ids->at("0").since_s, same ? kNow - 86400 : kNow);
    EXPECT_EQ(ids->at("1").since_s, kNow - 86400);

    WatchPipeline again(WatchConfig{}, store->get(), {});
    // GPU 1: its 721 samples and the live one; GPU 0: all of them, or only the new card's one.
    EXPECT_EQ(again.Resume(kNow + 10), same ? 2u * 722u : 722u + 1u);
  }
}

// A process recorded as running on the card that was at index 0 ran on that card: it is closed at
// its last sighting, and a holder of the same PID and command on the new card is a new record.
TEST(WatchPipelineIdentity, ARecordOfTheOtherCardIsClosedNotResumed) {
  TempDb db;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    for (double t = kNow - 7201; t <= kNow - 1; t += 10) {
      (*store)->Append("gpu:0", t, static_cast<uint64_t>((9000 + 512 * (t - kNow + 7201) / 3600) * kMiB));
      (*store)->Append("gpu:0/pid:4242", t, static_cast<uint64_t>((8000 + 512 * (t - kNow + 7201) / 3600) * kMiB));
    }
    (*store)->processes().Upsert({.gpu = "0",
                                  .pid = 4242,
                                  .first_seen_s = kNow - 7201,
                                  .last_seen_s = kNow - 1,
                                  .peak_bytes = static_cast<uint64_t>(9024 * kMiB),
                                  .command = "python serve.py"});
    (*store)->gpu_identities().Put("0", {"GPU-replaced", kNow - 86400});
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  p.Resume(kNow);
  HostSnapshot snap = Host(kNow, {Gpu(0, kNow, 9100)});
  snap.gpus[0].processes = {Proc(4242, 9025, "python serve.py")};
  p.Ingest(snap, true, false);
  p.Flush();
  EXPECT_EQ(p.BuildState(kNow)->gpus[0].process_analysis.at("4242").verdict, "insufficient_data");
  auto records = AllRecords(**store);
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    if (r.first_seen_s == kNow - 7201) {
      EXPECT_EQ(r.end, storage::ProcessEnd::kExited);  // not vanished_memory_held: another card's
      EXPECT_EQ(r.last_seen_s, kNow - 1);
    } else {
      EXPECT_EQ(r.first_seen_s, kNow);
      EXPECT_EQ(r.end, storage::ProcessEnd::kRunning);
    }
  }
}

// The cards renumbered after one fell off the bus: the card that was GPU 1 answers as GPU 0 and
// index 1 is gone. The running records of index 1 are closed at their last sighting (no refresh
// of GPU 1 will come to close them), as are index 0's (another card there); the holders that go on
// on the card now at index 0 are new records there. Before that, a sample that lists no GPU of a
// key closes nothing of it while NVML still lists the key.
TEST(WatchPipelineIdentity, RecordsOfAGpuKeyNoLongerListedAreClosed) {
  TempDb db;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    for (double t = kNow - 601; t <= kNow - 1; t += 10) {
      (*store)->Append("gpu:0", t, static_cast<uint64_t>(30000 * kMiB));
      (*store)->Append("gpu:1", t, static_cast<uint64_t>(7000 * kMiB));
      (*store)->Append("gpu:0/pid:4100", t, static_cast<uint64_t>(30000 * kMiB));
      (*store)->Append("gpu:1/pid:4200", t, static_cast<uint64_t>(1000 * kMiB));
      (*store)->Append("gpu:1/pid:4300", t, static_cast<uint64_t>(4000 * kMiB));
    }
    for (const auto& [gpu, pid] : {std::pair<std::string, int64_t>{"0", 4100}, {"1", 4200}, {"1", 4300}}) {
      (*store)->processes().Upsert({.gpu = gpu,
                                    .pid = pid,
                                    .first_seen_s = kNow - 601,
                                    .last_seen_s = kNow - 1,
                                    .peak_bytes = static_cast<uint64_t>(4000 * kMiB),
                                    .command = "python3 job" + std::to_string(pid) + ".py"});
    }
    (*store)->gpu_identities().Put("0", {"GPU-fell-off", kNow - 86400});
    (*store)->gpu_identities().Put("1", {"GPU-0", kNow - 86400});  // testing::Gpu(0)'s card
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  p.Resume(kNow);
  HostSnapshot snap = Host(kNow, {Gpu(0, kNow, 7000)});
  snap.gpus[0].processes = {Proc(4200, 1000, "python3 job4200.py"), Proc(4300, 4000, "python3 job4300.py")};
  p.Ingest(snap, true, false);
  p.Ingest(Host(kNow + 5, {Gpu(0, kNow + 5, 7000)}), false, false);
  p.Flush();
  auto records = AllRecords(**store);
  int closed = 0, running = 0;
  for (const auto& r : records) {
    SCOPED_TRACE("gpu " + r.gpu + " pid " + std::to_string(r.pid));
    if (r.first_seen_s == kNow - 601) {
      ++closed;
      EXPECT_EQ(r.end, storage::ProcessEnd::kExited);
      EXPECT_EQ(r.last_seen_s, kNow - 1);
    } else {
      ++running;
      EXPECT_EQ(r.gpu, "0");
      EXPECT_EQ(r.end, storage::ProcessEnd::kRunning);
    }
  }
  EXPECT_EQ(closed, 3);
  EXPECT_EQ(running, 2);
}

// NVML listing GPU 1 while it does not answer keeps GPU 1's records for its first process refresh.
TEST(WatchPipelineIdentity, RecordsOfAListedGpuThatDoesNotAnswerStayOpen) {
  TempDb db;
  {
    auto store = storage::HistoryStore::Open(db.path());
    ASSERT_TRUE(store.ok());
    (*store)->processes().Upsert(
        {.gpu = "1", .pid = 4200, .first_seen_s = kNow - 601, .last_seen_s = kNow - 1, .command = "python3 a.py"});
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = storage::HistoryStore::Open(db.path());
  ASSERT_TRUE(store.ok());
  WatchPipeline p(WatchConfig{}, store->get(), {});
  p.Resume(kNow);
  GpuSnapshot hung = Gpu(1, kNow, 0);
  hung.responsive = false;
  hung.memory_used_bytes.reset();
  p.Ingest(Host(kNow, {Gpu(0, kNow, 100), hung}), true, false);
  p.Flush();
  auto records = AllRecords(**store);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, storage::ProcessEnd::kRunning);
}

}  // namespace
}  // namespace vw::cli
