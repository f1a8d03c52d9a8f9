#include "storage/history_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace vw::storage {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vw_history_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

std::unique_ptr<HistoryStore> MustOpen(const std::string& path, const HistoryOptions& o = {}) {
  auto s = HistoryStore::Open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

int64_t CountRows(Database& db, const std::string& table) {
  auto st = db.Prepare("SELECT count(*) FROM " + table);
  EXPECT_TRUE(st.ok());
  auto r = st->Step();
  EXPECT_TRUE(r.ok() && *r);
  return st->ColumnInt(0);
}

// Two daemons on one --db: the second store that asks for the file alone is refused, naming it,
// while the first holds it; once the first is closed, it opens. A store that does not ask (a
// reader) is not refused.
TEST(HistoryStore, ExclusiveStoreRefusesAFileAnotherHolds) {
  TempDir dir;
  HistoryOptions o;
  o.exclusive = true;
  const std::string path = dir.File("h.db");
  auto first = MustOpen(path, o);
  ASSERT_NE(first, nullptr);
  auto second = HistoryStore::Open(path, o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(path + " is in use by another vramwatch watch"), std::string::npos)
      << second.status().message();
  EXPECT_NE(MustOpen(path), nullptr) << "a store that does not ask for the file alone opens";
  first.reset();
  EXPECT_NE(MustOpen(path, o), nullptr) << "the lock goes with the store that held it";
  EXPECT_NE(MustOpen(":memory:", o), nullptr) << "a database in memory has no file to hold";
}

// The file deleted or replaced while the store writes it: said, since the writes go where no
// restart looks; nothing to say while the path names the file, or for a database in memory.
TEST(HistoryStore, AFileDeletedOrReplacedWhileOpenIsSaid) {
  TempDir dir;
  const std::string path = dir.File("h.db");
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->FileGoneProblem(), "");
  fs::rename(path, dir.File("moved.db"));
  EXPECT_NE(store->FileGoneProblem().find(path + " was deleted while open"), std::string::npos)
      << store->FileGoneProblem();
  { std::ofstream(path) << "another file"; }
  EXPECT_NE(store->FileGoneProblem().find(path + " now names another file"), std::string::npos)
      << store->FileGoneProblem();
  fs::remove(path);
  fs::rename(dir.File("moved.db"), path);
  EXPECT_EQ(store->FileGoneProblem(), "") << "back where it was";
  EXPECT_EQ(MustOpen(":memory:")->FileGoneProblem(), "");
}

// Process churn opens a series per process: memory must hold only the series still written.
TEST(HistoryStore, IdleSeriesLeaveMemoryAndKeepTheirIdWhenTheyComeBack) {
  TempDir dir;
  HistoryOptions o;
  o.idle_evict_s = 120;
  auto store = MustOpen(dir.File("h.db"), o);
  for (int i = 0; i <= 10; ++i) store->Append("gpu:0/pid:1", i, 100);
  for (int i = 0; i <= 300; i += 5) store->Append("gpu:0", i, 500);
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(store->series_in_memory(), 1u) << "the process series, idle for 290 s, left memory";
  // It comes back (same name) within its last stored minute: same id, the minute's aggregate
  // covers the samples of both runs.
  store->Append("gpu:0/pid:1", 50, 130);
  ASSERT_TRUE(store->Flush().ok());
  auto names = store->SeriesNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"gpu:0", "gpu:0/pid:1"}));
  EXPECT_EQ(CountRows(store->db(), "series"), 2);
  auto pts = store->Raw("gpu:0/pid:1", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 12u);
  EXPECT_EQ(pts->back().used_bytes, 130u);
  auto agg = store->Aggregates("gpu:0/pid:1", 0, 59);
  ASSERT_TRUE(agg.ok());
  ASSERT_EQ(agg->size(), 1u);
  EXPECT_EQ((*agg)[0].count, 12u);
  EXPECT_EQ((*agg)[0].max_bytes, 130u);
}

TEST(HistoryStore, RetentionDropsTheNamesOfSeriesWithNothingLeft) {
  TempDir dir;
  HistoryOptions o;
  o.raw_retention_s = 600;
  o.aggregate_retention_s = 600;
  auto store = MustOpen(dir.File("h.db"), o);
  store->Append("gpu:0/pid:1", 1000, 100);
  store->Append("gpu:0", 1000, 500);
  store->Append("gpu:0", 5000, 500);
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->ApplyRetention(5000).ok());
  auto names = store->SeriesNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"gpu:0"}));
  // A series still written keeps its id even when retention leaves it nothing for a moment.
  store->Append("gpu:0", 9000, 600);
  ASSERT_TRUE(store->ApplyRetention(9700).ok());
  ASSERT_TRUE(store->Flush().ok());
  auto pts = store->Raw("gpu:0", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 1u);
  EXPECT_EQ(pts->front().used_bytes, 600u);
  names = store->SeriesNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"gpu:0"}));
}

TEST(HistoryStore, FlushedSamplesComeBackInTimeOrderWithinRange) {
  TempDir dir;
  auto store = MustOpen(dir.File("h.db"));
  for (int i = 0; i < 10; ++i) store->Append("gpu:0", 1000.0 + i, 100u + static_cast<uint64_t>(i));
  store->Append("gpu:1", 1000.0, 7);
  ASSERT_TRUE(store->Flush().ok());
  auto pts = store->Raw("gpu:0", 1002, 1005);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 4u);
  EXPECT_DOUBLE_EQ((*pts)[0].t, 1002);
  EXPECT_EQ((*pts)[0].used_bytes, 102u);
  EXPECT_EQ((*pts)[3].used_bytes, 105u);
  auto names = store->SeriesNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"gpu:0", "gpu:1"}));
  auto missing = store->Raw("gpu:9", 0, 1e12);
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

TEST(HistoryStore, NothingReachesTheFileBeforeFlush) {
  TempDir dir;
  auto store = MustOpen(dir.File("h.db"));
  store->Append("gpu:0", 1000, 1);
  store->Append("gpu:0", 1001, 2);
  auto reader = MustOpen(dir.File("h.db"));
  EXPECT_EQ(CountRows(reader->db(), "samples"), 0);
  EXPECT_EQ(store->pending_samples(), 2u);
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(CountRows(reader->db(), "samples"), 2);
  EXPECT_EQ(store->pending_samples(), 0u);
  // A reader opened before the series existed still finds it.
  auto pts = reader->Raw("gpu:0", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  EXPECT_EQ(pts->size(), 2u);
}

TEST(HistoryStore, MinuteAggregatesHoldMinFloorMaxLastAndCount) {
  TempDir dir;
  auto store = MustOpen(dir.File("h.db"));
  // Minute 20 (t = 1200..1259): values 10..19 then a spike of 500, last 15.
  for (int i = 0; i < 10; ++i) store->Append("gpu:0", 1200.0 + i, 10u + static_cast<uint64_t>(i));
  store->Append("gpu:0", 1230, 500);
  store->Append("gpu:0", 1259, 15);
  store->Append("gpu:0", 1260, 42);  // opens minute 21
  ASSERT_TRUE(store->Flush().ok());
  auto aggs = store->Aggregates("gpu:0", 1200, 1300);
  ASSERT_TRUE(aggs.ok());
  ASSERT_EQ(aggs->size(), 2u);
  const MinuteAggregate& a = (*aggs)[0];
  EXPECT_DOUBLE_EQ(a.t, 1200);
  EXPECT_EQ(a.count, 12u);
  EXPECT_EQ(a.min_bytes, 10u);
  EXPECT_EQ(a.max_bytes, 500u);
  EXPECT_EQ(a.last_bytes, 15u);
  // 10th percentile of 12 sorted values: index floor(0.1 * 11) = 1 -> 11.
  EXPECT_EQ(a.floor_bytes, 11u);
  EXPECT_EQ((*aggs)[1].count, 1u);
  EXPECT_EQ((*aggs)[1].last_bytes, 42u);
}

TEST(HistoryStore, OpenMinuteAggregateCoversSamplesFromBeforeARestart) {
  TempDir dir;
  {
    auto store = MustOpen(dir.File("h.db"));
    store->Append("gpu:0", 1200, 100);
    store->Append("gpu:0", 1210, 300);
    ASSERT_TRUE(store->Flush().ok());
  }
  auto store = MustOpen(dir.File("h.db"));
  store->Append("gpu:0", 1220, 200);
  ASSERT_TRUE(store->Flush().ok());
  auto aggs = store->Aggregates("gpu:0", 1200, 1259);
  ASSERT_TRUE(aggs.ok());
  ASSERT_EQ(aggs->size(), 1u);
  EXPECT_EQ((*aggs)[0].count, 3u);
  EXPECT_EQ((*aggs)[0].min_bytes, 100u);
  EXPECT_EQ((*aggs)[0].max_bytes, 300u);
  EXPECT_EQ((*aggs)[0].last_bytes, 200u);
}

TEST(HistoryStore, RetentionDropsOldRawSamplesButKeepsMinuteAggregates) {
  TempDir dir;
  HistoryOptions o;
  o.raw_retention_s = 3600;
  o.aggregate_retention_s = 7200;
  auto store = MustOpen(dir.File("h.db"), o);
  const double now = 100000;
  for (double t = now - 3 * 3600; t <= now; t += 60) store->Append("gpu:0", t, 5);
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->ApplyRetention(now).ok());
  auto raw = store->Raw("gpu:0", 0, now);
  ASSERT_TRUE(raw.ok());
  ASSERT_FALSE(raw->empty());
  EXPECT_GE(raw->front().t, now - 3600);
  EXPECT_EQ(raw->size(), 61u);
  auto aggs = store->Aggregates("gpu:0", 0, now);
  ASSERT_TRUE(aggs.ok());
  ASSERT_FALSE(aggs->empty());
  EXPECT_GE(aggs->front().t, now - 7200 - 60);
  EXPECT_LT(aggs->front().t, now - 3600);  // older than the raw window
}

TEST(HistoryStore, RecentReturnsWhatARestartedEngineNeeds) {
  TempDir dir;
  {
    auto store = MustOpen(dir.File("h.db"));
    for (int i = 0; i < 100; ++i) store->Append("gpu:0", 5000.0 + i, static_cast<uint64_t>(i));
    ASSERT_TRUE(store->Flush().ok());
  }
  auto store = MustOpen(dir.File("h.db"));
  auto pts = store->Recent("gpu:0", 5090);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 10u);
  EXPECT_EQ(pts->back().used_bytes, 99u);
}

TEST(HistoryStore, FullDiskReturnsStatusKeepsABoundedBatchAndRecovers) {
  TempDir dir;
  HistoryOptions o;
  o.db.max_size_bytes = 64 * 1024;  // behaves like a disk with 64 KiB
  o.max_pending = 5000;
  auto store = MustOpen(dir.File("h.db"), o);
  Status last;
  double t = 0;
  for (int batch = 0; batch < 200 && last.ok(); ++batch) {
    for (int i = 0; i < 100; ++i) store->Append("gpu:0", t++, 1u << 20);
    last = store->Flush();
  }
  ASSERT_FALSE(last.ok()) << "the size cap was never reached";
  EXPECT_EQ(last.code(), StatusCode::kIoError);
  EXPECT_NE(last.message().find("full"), std::string::npos) << last.message();
  EXPECT_EQ(store->pending_samples(), 100u);  // the failed batch is kept for the next try
  // Monitoring goes on: appends keep working, the buffer stays bounded.
  for (int i = 0; i < 10000; ++i) store->Append("gpu:0", t++, 1);
  EXPECT_EQ(store->pending_samples(), 5000u);
  EXPECT_EQ(store->dropped_samples(), 100u + 10000u - 5000u);
  auto check = store->db().IntegrityCheck();
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check, "ok");
}

// At the size cap the batch of samples does not fit, but the state a restart resumes from (a
// firing alert) does: FlushState writes it alone, and a restart finds it (the alert is not sent
// again); the samples stay pending.
TEST(HistoryStore, FlushStateSavesAFiringAlertWhenTheSamplesDoNotFit) {
  TempDir dir;
  HistoryOptions o;
  o.db.max_size_bytes = 64 * 1024;
  {
    auto store = MustOpen(dir.File("h.db"), o);
    Status last;
    double t = 0;
    for (int batch = 0; batch < 200 && last.ok(); ++batch) {
      for (int i = 0; i < 100; ++i) store->Append("gpu:0", t++, 1u << 20);
      last = store->Flush();
    }
    ASSERT_FALSE(last.ok()) << "the size cap was never reached";
    StoredAlert a;
    a.key = "GpuOrphanedMemory|gpu=0";
    a.name = "GpuOrphanedMemory";
    a.labels = {{"gpu", "0"}};
    a.severity = 2;
    a.active_since = a.fired_at = t;
    store->alerts().Put(a);
    EXPECT_FALSE(store->Flush().ok());
    const Status state = store->FlushState();
    ASSERT_TRUE(state.ok()) << state.ToString();
    EXPECT_EQ(store->pending_samples(), 100u);
  }
  auto again = MustOpen(dir.File("h.db"));
  auto alerts = again->alerts().All();
  ASSERT_TRUE(alerts.ok());
  ASSERT_EQ(alerts->size(), 1u);
  EXPECT_EQ((*alerts)[0].name, "GpuOrphanedMemory");
}

// A new file is marked with the schema's version; a file from a newer vramwatch (a higher
// version: its tables may have columns this one would not fill) is refused at open, naming both.
TEST(HistoryStore, AFileFromANewerSchemaIsRefusedAtOpen) {
  TempDir dir;
  {
    auto store = MustOpen(dir.File("h.db"));
    auto v = store->db().Prepare("PRAGMA user_version");
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE(*v->Step());
    EXPECT_EQ(v->ColumnInt(0), HistoryStore::kSchemaVersion);
    ASSERT_TRUE(store->db().Exec("PRAGMA user_version=7").ok());
  }
  auto newer = HistoryStore::Open(dir.File("h.db"));
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("written by a newer vramwatch (schema version 7; this one knows up to 1)"),
            std::string::npos)
      << newer.status().message();
}

// The same samples written again by a second run (a replay of the same file into one --db) count
// once in their minute's aggregate: the first minute was seeded with the stored samples and then
// given them again (120 for 60 samples).
TEST(HistoryStore, SamplesWrittenAgainAfterARestartCountOnceInTheirMinute) {
  TempDir dir;
  const double t0 = 1764189000;  // a whole minute
  for (int run = 0; run < 2; ++run) {
    auto store = MustOpen(dir.File("h.db"));
    for (int i = 0; i < 90; ++i) store->Append("gpu:0", t0 + i, 1000u + static_cast<uint64_t>(i));
    ASSERT_TRUE(store->Flush().ok());
  }
  auto store = MustOpen(dir.File("h.db"));
  auto aggs = store->Aggregates("gpu:0", t0, t0 + 119);
  ASSERT_TRUE(aggs.ok());
  ASSERT_EQ(aggs->size(), 2u);
  EXPECT_EQ((*aggs)[0].count, 60u);
  EXPECT_EQ((*aggs)[1].count, 30u);
  EXPECT_EQ((*aggs)[0].min_bytes, 1000u);
}

TEST(HistoryStore, ReadOnlyDatabaseGivesPermissionDenied) {
  TempDir dir;
  auto store = MustOpen(dir.File("h.db"));
  ASSERT_TRUE(store->db().Exec("PRAGMA query_only=1").ok());
  store->Append("gpu:0", 1, 1);
  Status s = store->Flush();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_EQ(store->pending_samples(), 1u);
}

// The -wal file grows past its usual size while a reader holds a checkpoint back (a burst of
// writes during a long chart query); once the reader is done it is cut back to the limit, not kept
// at its largest size for the life of the file.
TEST(HistoryStore, TheWriteAheadLogIsCutBackAfterABurst) {
  TempDir dir;
  const std::string path = dir.File("h.db");
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(x BLOB)").ok());
  auto reader = Database::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->Exec("BEGIN").ok());
  ASSERT_EQ(CountRows(**reader, "t"), 0);  // the read transaction starts here and holds the log
  for (int i = 0; i < 24; ++i) ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (zeroblob(1048576))").ok());
  const uintmax_t peak = fs::file_size(path + "-wal");
  EXPECT_GT(peak, static_cast<uintmax_t>(2 * kWalSizeLimitBytes));
  ASSERT_TRUE((*reader)->Exec("COMMIT").ok());
  reader->reset();
  ASSERT_TRUE((*db)->Exec("PRAGMA wal_checkpoint(PASSIVE)").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (1)").ok());  // the log starts over, cut to the limit
  EXPECT_LE(fs::file_size(path + "-wal"), static_cast<uintmax_t>(kWalSizeLimitBytes)) << "peak " << peak;
}

// Runs `open` as a user without privileges and returns its message: as is when not root, else in
// a child process that becomes `nobody` (file permissions do not bind root).
std::string OpenedAsUnprivileged(const std::string& path) {
  auto message = [&] {
    auto s = HistoryStore::Open(path);
    return s.ok() ? std::string("opened") : s.status().message();
  };
  if (geteuid() != 0) return message();
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    const std::string m = message();
    if (write(fds[1], m.data(), m.size()) < 0) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// A file this user may not write, and a writable file in a directory this user may not write
// (SQLite keeps the -wal and -shm files beside it), are refused at open with what to change: the
// first was opened read-only by SQLite and every batch failed, the second said only "attempt to
// write a readonly database".
TEST(HistoryStore, AReadOnlyFileOrDirectoryIsRefusedAtOpenSayingWhich) {
  TempDir dir;
  const fs::path root = fs::path(dir.File(""));
  fs::permissions(root, fs::perms::all);
  const std::string file = dir.File("ro.db");
  { MustOpen(file); }
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_NE(OpenedAsUnprivileged(file).find("ro.db: the file is read-only (vramwatch writes its history there)"),
            std::string::npos)
      << OpenedAsUnprivileged(file);
  const fs::path sub = root / "sub";
  fs::create_directory(sub);
  fs::copy_file(file, sub / "h.db");
  fs::permissions(sub / "h.db", fs::perms::all);
  fs::permissions(sub, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  const std::string in_sub = (sub / "h.db").string();
  const std::string m = OpenedAsUnprivileged(in_sub);
  fs::permissions(sub, fs::perms::all);
  EXPECT_NE(m.find("its directory " + sub.string() + " is not writable (SQLite keeps the -wal and -shm files"),
            std::string::npos)
      << m;
}

TEST(HistoryStore, OpenNamesTheFileWhenItCannotBeCreated) {
  auto s = HistoryStore::Open("/nonexistent-dir/sub/h.db");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent-dir/sub/h.db"), std::string::npos) << s.status().message();
}

// Overwrites `bytes` of the file at `offset` with pseudo-random bytes (the same every run).
void Scribble(const std::string& path, std::streamoff offset, size_t bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  std::mt19937 gen(7);
  std::string junk(bytes, '\0');
  for (char& c : junk) c = static_cast<char>(gen() & 0xff);
  f.seekp(offset);
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  ASSERT_TRUE(f.good());
}

// A history file holding ten minutes of samples, closed cleanly (checkpointed: everything is in
// the main file, nothing in the WAL).
void WriteHistory(const std::string& path) {
  auto store = MustOpen(path);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 600; ++i) store->Append("gpu:0", 1000.0 + i, 1ull << 30);
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
}

// The daemon's start: 8 KiB of garbage in the middle of the file (the series table's pages) is
// found by the check at open, which names the file, says it is corrupt and what to do.
TEST(HistoryStore, CheckAtOpenRefusesACorruptFileSayingWhatToDo) {
  TempDir dir;
  const std::string path = dir.File("corrupt.db");
  WriteHistory(path);
  Scribble(path, 8192, 8192);
  HistoryOptions o;
  o.check_at_open = true;
  auto s = HistoryStore::Open(path, o);
  ASSERT_FALSE(s.ok()) << "a corrupt file was accepted";
  const std::string& m = s.status().message();
  EXPECT_EQ(s.status().code(), StatusCode::kIoError);
  EXPECT_NE(m.find(path + " is corrupt"), std::string::npos) << m;
  EXPECT_NE(m.find("move it aside"), std::string::npos) << m;
  EXPECT_NE(m.find(".dump"), std::string::npos) << m;
}

TEST(HistoryStore, CheckAtOpenAcceptsASoundFileAndANewOne) {
  TempDir dir;
  const std::string path = dir.File("h.db");
  WriteHistory(path);
  HistoryOptions o;
  o.check_at_open = true;
  auto again = MustOpen(path, o);
  ASSERT_NE(again, nullptr);
  auto pts = again->Raw("gpu:0", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  EXPECT_EQ(pts->size(), 600u);
  EXPECT_NE(MustOpen(dir.File("new.db"), o), nullptr);
}

// A file cut short is corrupt too: said the same way, without the check.
TEST(HistoryStore, TruncatedFileIsCorruptAtOpen) {
  TempDir dir;
  const std::string path = dir.File("cut.db");
  WriteHistory(path);
  fs::resize_file(path, 100);
  auto s = HistoryStore::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(path + " is corrupt"), std::string::npos) << s.status().message();
}

// Damage met while running (here, a file opened without the check) pauses history with an error
// that says the file is corrupt, not only SQLite's "database disk image is malformed".
TEST(HistoryStore, FlushIntoACorruptFileSaysItIsCorrupt) {
  TempDir dir;
  const std::string path = dir.File("corrupt.db");
  WriteHistory(path);
  Scribble(path, 8192, 8192);
  auto store = HistoryStore::Open(path);
  Status s = store.ok() ? Status::Ok() : store.status();
  if (store.ok()) {
    (*store)->Append("gpu:0", 5000, 1);
    (*store)->Append("gpu:7", 5000, 1);
    s = (*store)->Flush();
  }
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("corrupt"), std::string::npos) << s.message();
}

// A child writes batches of 100 samples and reports each committed one through a pipe; it is
// killed with SIGKILL mid-run. The file must be sound and hold whole batches: every reported batch
// and at most the one in flight.
TEST(HistoryStore, SigkillDuringWritesLosesAtMostTheUnflushedBatch) {
  TempDir dir;
  const std::string path = dir.File("crash.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto s = HistoryStore::Open(path);
    if (!s.ok()) _exit(3);
    auto& store = **s;
    double t = 0;
    for (uint32_t batch = 1;; ++batch) {
      for (int i = 0; i < 100; ++i) {
        store.Append("gpu:0", t, static_cast<uint64_t>(t));
        store.Append("gpu:0/pid:1", t, 1);
        t += 1;
      }
      if (!store.Flush().ok()) _exit(4);
      if (write(fds[1], &batch, sizeof batch) != sizeof batch) _exit(5);
    }
  }
  close(fds[1]);
  uint32_t committed = 0;
  while (committed < 30) {
    ASSERT_EQ(read(fds[0], &committed, sizeof committed), static_cast<ssize_t>(sizeof committed));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  // Drain what was reported before the kill landed.
  uint32_t more = 0;
  while (read(fds[0], &more, sizeof more) == static_cast<ssize_t>(sizeof more)) committed = more;
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = MustOpen(path);
  auto check = store->db().IntegrityCheck();
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check, "ok");
  int64_t rows = CountRows(store->db(), "samples");
  EXPECT_EQ(rows % 200, 0) << "a batch was half-written";
  EXPECT_GE(rows / 200, committed);
  EXPECT_LE(rows / 200, committed + 1);
  auto pts = store->Raw("gpu:0", 0, 1e12);
  ASSERT_TRUE(pts.ok());
  for (size_t i = 0; i < pts->size(); ++i) ASSERT_EQ((*pts)[i].used_bytes, static_cast<uint64_t>(i));
}

// A cap below what the retention keeps: each flush at the cap deletes the oldest stored samples to
// make room and goes on, so the file keeps the newest samples; a backlog bigger than the whole cap
// keeps its newest samples and drops (and counts) the oldest. (A flush at the cap used to fail
// until retention, every 10 minutes, freed room, and never caught up with a backlog.)
TEST(HistoryStore, AtItsSizeCapAFlushMakesRoomForTheNewestSamples) {
  TempDir dir;
  HistoryOptions o;
  o.db.max_size_bytes = 160 * 1024;
  o.make_room_at_cap = true;
  auto store = MustOpen(dir.File("h.db"), o);
  double t = 0;
  for (int batch = 0; batch < 300; ++batch) {
    for (int i = 0; i < 100; ++i, t += 1) {
      store->Append("gpu:0", t, 1u << 20);
      store->Append("gpu:1", t, 2u << 20);
    }
    const Status s = store->Flush();
    ASSERT_TRUE(s.ok()) << "batch " << batch << ": " << s.ToString();
  }
  EXPECT_GT(store->evicted_rows(), 0u) << "the cap was never reached";
  EXPECT_EQ(store->dropped_samples(), 0u);
  auto newest = store->Raw("gpu:1", t - 1, t);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u) << "the newest sample is stored";
  auto oldest = store->Raw("gpu:0", 0, 100);
  ASSERT_TRUE(oldest.ok());
  EXPECT_TRUE(oldest->empty()) << "the oldest samples made room";
  // A backlog of more than the cap holds (a long pause): its newest samples are written.
  for (int i = 0; i < 40000; ++i, t += 1) store->Append("gpu:0", t, 3u << 20);
  const Status s = store->Flush();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store->pending_samples(), 0u);
  EXPECT_GT(store->dropped_samples(), 0u) << "40000 samples do not fit in 160 KiB";
  newest = store->Raw("gpu:0", t - 1, t);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ(newest->front().used_bytes, 3u << 20);
  auto check = store->db().IntegrityCheck();
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check, "ok");
}

// The daemon's writes wait only a short time for a write lock another program holds: the flush
// fails (Unavailable), keeps its batch, and goes through once the lock is released. (They waited
// SQLite's 2 s busy timeout each, on the sampling thread.)
TEST(HistoryStore, AWriteLockHeldElsewhereFailsAFlushWithinItsShortWait) {
  TempDir dir;
  HistoryOptions o;
  o.write_busy_timeout_ms = 150;
  const std::string path = dir.File("h.db");
  auto store = MustOpen(path, o);
  auto other = Database::Open(path);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE((*other)->Exec("BEGIN IMMEDIATE").ok());
  store->Append("gpu:0", 1, 1);
  const auto start = std::chrono::steady_clock::now();
  const Status s = store->Flush();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_LT(waited, 1.0);
  EXPECT_EQ(store->pending_samples(), 1u);
  ASSERT_TRUE((*other)->Exec("COMMIT").ok());
  EXPECT_TRUE(store->Flush().ok());
  EXPECT_EQ(store->pending_samples(), 0u);
}

// A "file:" URI names a file like a path does: it is locked for one daemon too. (Any name that
// began with "file:" skipped the lock.)
TEST(HistoryStore, ExclusiveStoreLocksAFileNamedByAUri) {
  TempDir dir;
  HistoryOptions o;
  o.exclusive = true;
  const std::string path = dir.File("h.db");
  auto first = MustOpen(path, o);
  ASSERT_NE(first, nullptr);
  auto second = HistoryStore::Open("file:" + path, o);
  ASSERT_FALSE(second.ok()) << "a URI for a file another store holds was opened";
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable) << second.status().ToString();
  first.reset();
  EXPECT_NE(MustOpen("file:" + path, o), nullptr);
}

// Writes a SQLite file the way another program would: rollback journal, its own tables.
void WriteForeignDatabase(const std::string& path, int user_version) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql =
      "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT);"
      "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER);"
      "INSERT INTO customers VALUES (1, 'ada');"
      "PRAGMA user_version=" +
      std::to_string(user_version) + ";";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Another program's database (tables, none of them vramwatch's) is refused, naming its tables, and
// left byte for byte as it was: no tables added, not switched to WAL. So is a file of a newer
// schema that is not in WAL mode. (The first got vramwatch's tables and WAL mode; the second was
// switched to WAL before it was refused.)
TEST(HistoryStore, AnotherProgramsDatabaseIsRefusedAndLeftAsItWas) {
  TempDir dir;
  HistoryOptions o;
  o.check_at_open = true;
  const std::string foreign = dir.File("app.db");
  WriteForeignDatabase(foreign, 0);
  const std::string before = FileBytes(foreign);
  auto s = HistoryStore::Open(foreign, o);
  ASSERT_FALSE(s.ok()) << "another program's database was taken over";
  EXPECT_NE(s.status().message().find("not a vramwatch history"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("customers, orders"), std::string::npos) << s.status().message();
  EXPECT_EQ(FileBytes(foreign), before);
  EXPECT_FALSE(fs::exists(foreign + "-wal"));

  const std::string newer = dir.File("newer.db");
  WriteForeignDatabase(newer, 9);
  const std::string newer_before = FileBytes(newer);
  auto n = HistoryStore::Open(newer, o);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("written by a newer vramwatch"), std::string::npos) << n.status().message();
  EXPECT_EQ(FileBytes(newer), newer_before) << "a refused file was written to";
}

// A file that is no SQLite database at all (a CSV given as --db) or whose header is damaged says
// so, with what to do; SQLite's "file is not a database" did not call it damaged.
TEST(HistoryStore, AFileThatIsNoDatabaseSaysSoWithWhatToDo) {
  TempDir dir;
  const std::string text = dir.File("notes.csv");
  std::ofstream(text) << "timestamp,memory.used\n2026-03-14T10:00:00,1\n" << std::string(4096, 'x') << "\n";
  const std::string header = dir.File("header.db");
  WriteHistory(header);
  Scribble(header, 0, 16);  // "SQLite format 3\0"
  for (const std::string& path : {text, header}) {
    for (bool check : {false, true}) {
      HistoryOptions o;
      o.check_at_open = check;
      auto s = HistoryStore::Open(path, o);
      ASSERT_FALSE(s.ok()) << path;
      EXPECT_NE(s.status().message().find(path + " is not a SQLite database, or its header is damaged"),
                std::string::npos)
          << s.status().message();
      EXPECT_NE(s.status().message().find("move it aside"), std::string::npos) << s.status().message();
    }
  }
}

// "unable to open database file" names no cause: a directory that does not exist, and a new file
// in a directory this user may not write, are named as such.
TEST(HistoryStore, OpenSaysWhyAFileCannotBeCreated) {
  TempDir dir;
  auto missing = HistoryStore::Open(dir.File("no/such/h.db"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("its directory " + dir.File("no/such") + " does not exist"),
            std::string::npos)
      << missing.status().message();
  const fs::path ro = fs::path(dir.File("ro"));
  fs::create_directory(ro);
  fs::permissions(fs::path(dir.File("")), fs::perms::all);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                          fs::perms::others_read | fs::perms::others_exec);
  const std::string m = OpenedAsUnprivileged((ro / "new.db").string());
  fs::permissions(ro, fs::perms::all);
  EXPECT_NE(m.find("the file cannot be created: its directory " + ro.string() + " is not writable"), std::string::npos)
      << m;
}

// -wal and -shm files left by another user (root ran the daemon once on the file) are refused at
// open, naming the file that cannot be written; SQLite opened the database and every write failed,
// so the daemon ran with history paused for good.
TEST(HistoryStore, AStaleWalOrShmFileThisUserMayNotWriteIsRefusedAtOpen) {
  TempDir dir;
  fs::permissions(fs::path(dir.File("")), fs::perms::all);
  const std::string path = dir.File("h.db");
  const std::string saved = dir.File("saved");
  {
    auto store = MustOpen(path);
    store->Append("gpu:0", 1, 1);
    ASSERT_TRUE(store->Flush().ok());
    fs::copy_file(path + "-wal", saved + "-wal");
    fs::copy_file(path + "-shm", saved + "-shm");
  }
  fs::permissions(path, fs::perms::all);
  for (const char* suffix : {"-wal", "-shm"}) {
    fs::copy_file(saved + suffix, path + suffix, fs::copy_options::overwrite_existing);
    fs::permissions(path + suffix,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }
  const std::string m = OpenedAsUnprivileged(path);
  EXPECT_NE(m.find(path + "-wal is not writable by this user"), std::string::npos) << m;
  fs::permissions(path + "-wal", fs::perms::all);
  const std::string shm = OpenedAsUnprivileged(path);
  EXPECT_NE(shm.find(path + "-shm is not writable by this user"), std::string::npos) << shm;
}

// The aggregates' pages are damaged: retention still deletes the raw samples past their retention
// (each part runs on its own) and its error names the part that failed. (One transaction rolled the
// raw samples' retention back with the aggregates', and the file grew without limit.)
TEST(HistoryStore, RetentionOfRawSamplesGoesOnWhenTheAggregatesAreCorrupt) {
  TempDir dir;
  const std::string path = dir.File("h.db");
  int64_t root = 0;
  {
    auto store = MustOpen(path);
    for (int i = 0; i < 3 * 3600; ++i) {
      store->Append("gpu:0", 1000.0 + i, 1ull << 30);
      store->Append("gpu:1", 1000.0 + i, 1ull << 30);
    }
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
    auto st = store->db().Prepare("SELECT rootpage FROM sqlite_master WHERE name = 'minutes'");
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(*st->Step());
    root = st->ColumnInt(0);
  }
  Scribble(path, (root - 1) * 4096, 4096);
  HistoryOptions o;
  o.raw_retention_s = 3600;
  auto store = MustOpen(path, o);
  ASSERT_NE(store, nullptr);
  const double now = 1000.0 + 3 * 3600;
  const Status s = store->ApplyRetention(now);
  ASSERT_FALSE(s.ok()) << "the aggregates were not damaged";
  EXPECT_NE(s.message().find("aggregates"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("raw samples"), std::string::npos) << s.message();
  auto old = store->Raw("gpu:0", 0, now - 3600 - 1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->empty()) << old->size() << " raw samples past their retention were kept";
}

// Two stores on one file (a writer opened after a reader took its ids): a series that the second
// names with an id the file already gives another name is stored under a new id with its own name,
// never under the other series' id. (Its samples went under the other name's id.)
TEST(HistoryStore, ASeriesIsNeverStoredUnderAnIdWithoutItsName) {
  TempDir dir;
  const std::string path = dir.File("h.db");
  auto first = MustOpen(path);
  auto second = MustOpen(path);
  first->Append("gpu:0", 1, 100);
  ASSERT_TRUE(first->Flush().ok());
  second->Append("gpu:1", 2, 200);  // the second store takes id 1 as well
  ASSERT_TRUE(second->Flush().ok());
  auto reader = MustOpen(path);
  auto gpu0 = reader->Raw("gpu:0", 0, 10);
  auto gpu1 = reader->Raw("gpu:1", 0, 10);
  ASSERT_TRUE(gpu0.ok() && gpu1.ok());
  ASSERT_EQ(gpu0->size(), 1u);
  EXPECT_EQ(gpu0->front().used_bytes, 100u);
  ASSERT_EQ(gpu1->size(), 1u);
  EXPECT_EQ(gpu1->front().used_bytes, 200u);
  EXPECT_EQ(CountRows(reader->db(), "samples"),
            CountRows(reader->db(), "samples WHERE series_id IN (SELECT id FROM series)"));
}

}  // namespace
}  // namespace vw::storage
