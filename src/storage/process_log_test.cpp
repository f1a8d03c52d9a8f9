#include "storage/process_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "storage/history_store.h"
#include "storage/sqlite_db.h"

namespace vw::storage {
namespace {

ProcessRecord Rec(const std::string& gpu, int64_t pid, double first, double last, ProcessEnd end) {
  ProcessRecord r;
  r.gpu = gpu;
  r.pid = pid;
  r.first_seen_s = first;
  r.last_seen_s = last;
  r.end = end;
  r.peak_bytes = 1024;
  r.command = "python train.py";
  r.container = "abc123";
  r.pod = "trainer-0";
  r.pod_namespace = "ml";
  r.slurm_job = "";
  return r;
}

TEST(ProcessLog, LaterUpsertOfTheSameLifeReplacesIt) {
  auto store = HistoryStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProcessLog& log = (*store)->processes();
  log.Upsert(Rec("0", 42, 100, 110, ProcessEnd::kRunning));
  ASSERT_TRUE((*store)->Flush().ok());
  ProcessRecord later = Rec("0", 42, 100, 200, ProcessEnd::kVanishedMemoryHeld);
  later.peak_bytes = 4096;
  log.Upsert(later);
  ASSERT_TRUE((*store)->Flush().ok());
  auto all = log.Query(0, 1e12);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].end, ProcessEnd::kVanishedMemoryHeld);
  EXPECT_EQ((*all)[0].peak_bytes, 4096u);
  EXPECT_DOUBLE_EQ((*all)[0].last_seen_s, 200);
  EXPECT_EQ((*all)[0].pod, "trainer-0");
  EXPECT_EQ((*all)[0].pod_namespace, "ml");
}

TEST(ProcessLog, PidReuseMakesASecondRecordAndQueriesSelectOverlappingLives) {
  auto store = HistoryStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  ProcessLog& log = (*store)->processes();
  log.Upsert(Rec("0", 42, 100, 200, ProcessEnd::kExited));
  log.Upsert(Rec("0", 42, 500, 600, ProcessEnd::kRunning));
  log.Upsert(Rec("1", 7, 150, 160, ProcessEnd::kKilled));
  // Pending records are visible to queries before the flush.
  auto pending = log.Query(0, 1e12);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->size(), 3u);
  ASSERT_TRUE((*store)->Flush().ok());
  auto mid = log.Query(170, 400);
  ASSERT_TRUE(mid.ok());
  ASSERT_EQ(mid->size(), 1u);
  EXPECT_DOUBLE_EQ((*mid)[0].first_seen_s, 100);
  auto running = log.Running();
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_DOUBLE_EQ((*running)[0].first_seen_s, 500);
}

TEST(ProcessLog, RetentionRemovesEndedRecordsButNeverRunningOnes) {
  auto store = HistoryStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  ProcessLog& log = (*store)->processes();
  log.Upsert(Rec("0", 1, 0, 10, ProcessEnd::kExited));
  log.Upsert(Rec("0", 2, 0, 10, ProcessEnd::kRunning));
  ASSERT_TRUE((*store)->Flush().ok());
  ASSERT_TRUE(log.DeleteEndedBefore(100).ok());
  auto all = log.Query(0, 1e12);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].pid, 2);
}

TEST(ProcessLog, KeepsThePodsAndContainersNames) {
  auto store = HistoryStore::Open(":memory:");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ProcessRecord r = Rec("0", 42, 100, 110, ProcessEnd::kRunning);
  r.pod_name = "llm-serve-0";
  r.container_name = "vllm";
  (*store)->processes().Upsert(r);
  ASSERT_TRUE((*store)->Flush().ok());
  auto running = (*store)->processes().Running();
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].pod_name, "llm-serve-0");
  EXPECT_EQ((*running)[0].container_name, "vllm");
  EXPECT_EQ((*running)[0].pod_namespace, "ml");
}

// A database written before the names were kept has no columns for them: they are added when it
// is opened, its records read with empty names, and new records keep theirs.
TEST(ProcessLog, ADatabaseWithoutTheNameColumnsGetsThem) {
  char tmpl[] = "/tmp/vw_process_log_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/h.db";
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TABLE processes (gpu TEXT NOT NULL, pid INTEGER NOT NULL, first_seen REAL NOT "
                           "NULL, last_seen REAL NOT NULL, peak_bytes INTEGER, end_state TEXT NOT NULL, command "
                           "TEXT, user TEXT, container TEXT, pod TEXT, pod_namespace TEXT, slurm_job TEXT, PRIMARY "
                           "KEY (gpu, pid, first_seen)) WITHOUT ROWID;"
                           "INSERT INTO processes VALUES ('0', 7, 1, 2, 1024, 'running', 'python old.py', 'bob', "
                           "'', 'uid-1', 'ml', '');")
                    .ok());
  }
  {
    auto store = HistoryStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ProcessRecord r = Rec("0", 42, 100, 110, ProcessEnd::kRunning);
    r.pod_name = "llm-serve-0";
    (*store)->processes().Upsert(r);
    ASSERT_TRUE((*store)->Flush().ok());
    auto running = (*store)->processes().Running();
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    ASSERT_EQ(running->size(), 2u);
    EXPECT_EQ((*running)[0].command, "python old.py");
    EXPECT_EQ((*running)[0].pod_name, "");
    EXPECT_EQ((*running)[1].pod_name, "llm-serve-0");
  }
  auto again = HistoryStore::Open(path);  // the columns are there now: opened again as it is
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  std::filesystem::remove_all(dir);
}

TEST(ProcessLog, EndNamesRoundTripAndUnknownNamesAreRejected) {
  for (ProcessEnd e :
       {ProcessEnd::kRunning, ProcessEnd::kExited, ProcessEnd::kKilled, ProcessEnd::kVanishedMemoryHeld}) {
    auto back = ParseProcessEnd(ProcessEndName(e));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, e);
  }
  EXPECT_FALSE(ParseProcessEnd("crashed").ok());
}

}  // namespace
}  // namespace vw::storage
