#include "storage/baselines.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/history_store.h"
#include "storage/sqlite_db.h"

namespace vw::storage {
namespace {

TEST(Baselines, FirstObservationsAverageEvenlyThenWeightRecentOnes) {
  auto b1 = Learn(std::nullopt, "train.py", 100, 1);
  EXPECT_DOUBLE_EQ(b1.level_bytes, 100);
  EXPECT_DOUBLE_EQ(b1.spread_bytes, 0);
  auto b2 = Learn(b1, "train.py", 200, 2);  // weight 1/2
  EXPECT_DOUBLE_EQ(b2.level_bytes, 150);
  EXPECT_DOUBLE_EQ(b2.spread_bytes, 50);
  EXPECT_EQ(b2.observations, 2u);
  Baseline b = b2;
  for (int i = 0; i < 50; ++i) b = Learn(b, "train.py", 1000, 3 + i);
  EXPECT_NEAR(b.level_bytes, 1000, 1);  // converges to a new steady level
  EXPECT_EQ(b.observations, 52u);
  EXPECT_DOUBLE_EQ(b.updated_s, 52);
}

TEST(Baselines, FractionAboveSaysHowFarOverThePlateau) {
  Baseline b;
  b.level_bytes = 1000;
  EXPECT_NEAR(*FractionAbove(b, 1040), 0.04, 1e-12);
  EXPECT_NEAR(*FractionAbove(b, 900), -0.10, 1e-12);
  b.level_bytes = 0;
  EXPECT_FALSE(FractionAbove(b, 5).has_value());
}

TEST(Baselines, SurviveAReopenOfTheDatabase) {
  char tmpl[] = "/tmp/vw_baseline_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/h.db";
  {
    auto store = HistoryStore::Open(path);
    ASSERT_TRUE(store.ok());
    (*store)->baselines().Put(Learn(std::nullopt, "image:pytorch/train:2.3", 4e9, 10));
    auto before = (*store)->baselines().Get("image:pytorch/train:2.3");  // pending is visible
    ASSERT_TRUE(before.ok() && before->has_value());
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = HistoryStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto got = (*store)->baselines().Get("image:pytorch/train:2.3");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_DOUBLE_EQ((*got)->level_bytes, 4e9);
  EXPECT_EQ((*got)->observations, 1u);
  auto none = (*store)->baselines().Get("other");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto all = (*store)->baselines().All();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vw::storage

namespace vw::storage {
namespace {

TEST(AlertState, FiringAlertsSurviveAReopenAndResolvedOnesAreRemoved) {
  char tmpl[] = "/tmp/vw_alertstate_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/h.db";
  {
    auto store = HistoryStore::Open(path);
    ASSERT_TRUE(store.ok());
    StoredAlert a;
    a.key = "GpuMemoryLeak{gpu=0}";
    a.name = "GpuMemoryLeak";
    a.labels = {{"gpu", "0"}, {"hostname", "n=1"}};
    a.annotations = {{"summary", "leaks 5 MiB/h; OOM in 9h"}};
    a.severity = 2;
    a.active_since = 100;
    a.fired_at = 700;
    (*store)->alerts().Put(a);
    StoredAlert b = a;
    b.key = "GpuStale{gpu=1}";
    b.name = "GpuStale";
    (*store)->alerts().Put(b);
    ASSERT_TRUE((*store)->Flush().ok());
    (*store)->alerts().Remove("GpuStale{gpu=1}");
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = HistoryStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto all = (*store)->alerts().All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "GpuMemoryLeak");
  EXPECT_EQ((*all)[0].labels.at("hostname"), "n=1");
  EXPECT_EQ((*all)[0].annotations.at("summary"), "leaks 5 MiB/h; OOM in 9h");
  EXPECT_DOUBLE_EQ((*all)[0].fired_at, 700);
  EXPECT_EQ((*all)[0].severity, 2);
  std::filesystem::remove_all(dir);
}

// A database written before the unseen time was kept: its alerts read with 0 (seen until the
// restart), and the column is added so that the time is kept from then on.
TEST(AlertState, AnOlderDatabaseGetsTheUnseenTimeColumn) {
  char tmpl[] = "/tmp/vw_alertstate_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/h.db";
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TABLE firing_alerts (key TEXT PRIMARY KEY, name TEXT NOT NULL, labels TEXT NOT "
                           "NULL, annotations TEXT NOT NULL, severity INTEGER NOT NULL, active_since REAL NOT NULL, "
                           "fired_at REAL NOT NULL);"
                           "INSERT INTO firing_alerts VALUES ('GpuMemoryLeak{gpu=0}', 'GpuMemoryLeak', 'gpu=0', '', "
                           "1, 100, 700)")
                    .ok());
  }
  {
    auto store = HistoryStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto all = (*store)->alerts().All();
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 1u);
    EXPECT_DOUBLE_EQ((*all)[0].fired_at, 700);
    EXPECT_DOUBLE_EQ((*all)[0].unseen_s, 0);
    StoredAlert a = (*all)[0];
    a.unseen_s = 345;
    (*store)->alerts().Put(a);
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = HistoryStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto all = (*store)->alerts().All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_DOUBLE_EQ((*all)[0].unseen_s, 345);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vw::storage
