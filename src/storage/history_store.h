// HistoryStore: the daemon's memory of the past, in one SQLite file (WAL mode).
//
// Holds, per named series ("gpu:0", "gpu:0/pid:4242@1764189075" — the caller chooses the names):
//   - raw samples (time, used bytes), kept for raw_retention_s (default 24 h);
//   - 1-minute aggregates (min, floor = low quantile, max, last, count), kept for
//     aggregate_retention_s (default 30 days);
// plus the process lifecycle log (processes()), per-workload baselines (baselines()) and the
// alerts firing (alerts()), the Xid events counted (xids()) and the card seen at each GPU key
// (gpu_identities()).
//
// Writes are buffered: Append() is O(1) in memory, Flush() writes what is pending with prepared
// statements, newest first, in transactions of at most kFlushBatch samples (the first also holds the
// aggregates and the state a restart resumes from). A crash loses at most what was not flushed; a
// committed transaction is never half-written. When a flush fails (disk full, read-only file,
// another connection holding the write lock) it returns that Status and keeps what it did not write
// for the next try; the buffer is bounded (max_pending): beyond it the oldest raw samples are
// dropped and counted — monitoring never waits on the disk.
//
// At the size cap (db.max_size_bytes) with make_room_at_cap, a flush makes room instead of failing:
// it deletes the oldest stored raw samples older than what it writes, then, when none are left, the
// oldest aggregates, and writes on; pending samples older than anything it can make room for are
// dropped (counted in dropped_samples()). So a cap below what the retentions keep holds the newest
// samples. Such deletions are counted in evicted_rows().
//
// A corrupt file: with check_at_open, Open() refuses it (CorruptDatabase: named, with what to do)
// after a PRAGMA quick_check of every table but the 1-minute aggregates. Those are what a start
// reads (the series, the last resume window's samples, the running process records, baselines,
// alerts, Xids, GPU identities) and what the first flushes write next to them; the aggregates are
// most of a large file (30 days; 290 of 350 MB in a test file, whose full check took 7.5 s from a
// cold disk against 0.9 s for the rest) and a start reads none of them. Damage there is found
// when a flush or a chart reaches it: the flush fails with "the database file is corrupt" and
// history pauses.
//
// After a restart, Recent() returns a series' raw samples since a time so a live detector can be
// re-fed instead of starting blind.
//
// Memory is bounded by the series written recently, not by all series ever seen (a node with
// process churn opens a series per process): after a successful Flush(), a series with no sample
// for idle_evict_s (of sample time) leaves memory; its id stays in the database and is found
// again if the series comes back. ApplyRetention() also deletes the name of a series none of
// whose samples or aggregates are left.
// Units: times are seconds since the Unix epoch (UTC), sizes bytes.
// Threading: one thread at a time (the sampler); readers on other threads use their own store
// opened on the same file (WAL lets them read while the sampler writes).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "storage/alert_state.h"
#include "storage/baselines.h"
#include "storage/gpu_identity.h"
#include "storage/process_log.h"
#include "storage/sqlite_db.h"
#include "storage/xid_log.h"

namespace vw::storage {

struct HistoryOptions {
  double raw_retention_s = 24 * 3600.0;
  double aggregate_retention_s = 30 * 86400.0;
  double process_retention_s = 30 * 86400.0;
  double floor_quantile = 0.10;  // the aggregates' floor
  size_t max_pending = 200000;   // raw samples buffered while the disk refuses writes
  double idle_evict_s = 120;     // a series without samples this long leaves memory (see above)
  bool check_at_open = false;    // refuse a corrupt file at Open (see above); the daemon's --db
  // Hold the file for this store alone (an exclusive flock for the store's life): Open() refuses a
  // file another process holds so (Unavailable, naming it), so that two daemons on one --db do not write one
  // history twice and send every alert twice. The daemon's --db. Not for ":memory:" or a "file:"
  // URI (nothing to lock); on a network filesystem the lock may hold only on this host.
  bool exclusive = false;
  // At db.max_size_bytes, Flush() deletes the oldest stored samples (then aggregates) to make room
  // (see above) instead of failing as on a full disk. The daemon's --db-max-size.
  bool make_room_at_cap = false;
  // How long the writes after Open() (Flush, FlushState, ApplyRetention) wait for another
  // connection's write lock (ms) before they fail with Unavailable; < 0: db.busy_timeout_ms. The
  // daemon's is short: they run on the sampling thread.
  int write_busy_timeout_ms = -1;
  DatabaseOptions db;
};

struct HistoryPoint {
  double t = 0;
  uint64_t used_bytes = 0;
};

struct MinuteAggregate {
  double t = 0;  // start of the minute
  uint64_t min_bytes = 0, floor_bytes = 0, max_bytes = 0, last_bytes = 0;
  uint32_t count = 0;
};

class HistoryStore {
 public:
  // The version of the file's schema (PRAGMA user_version): raised with every change to a table,
  // whose migration Init() runs on an older file. Open() refuses a file of a higher version.
  static constexpr int64_t kSchemaVersion = 1;

  static Result<std::unique_ptr<HistoryStore>> Open(const std::string& path, const HistoryOptions& options = {});
  ~HistoryStore();

  // Buffers one sample. Samples of a series should come in time order; a sample at the same time as
  // a stored one replaces it.
  void Append(const std::string& series, double t, uint64_t used_bytes);

  // Samples written per transaction by Flush().
  static constexpr size_t kFlushBatch = 2000;

  // Writes all pending samples, closed and open minute aggregates, process records and baselines:
  // newest samples first, in transactions of at most kFlushBatch samples, the first of which also
  // holds everything but the samples. On failure what was not committed stays pending. At the size
  // cap with make_room_at_cap, room is made (see above); it fails only when nothing older is left
  // to delete and not even the aggregates and state fit.
  Status Flush();

  // Writes the state a restart resumes from (process records, baselines, alerts, Xids, GPU
  // identities) in one small transaction of its own, without the samples: for when Flush() fails
  // for want of room (a size cap, a full disk), so that an alert firing meanwhile is not sent again
  // after a restart. On failure nothing is written and the state stays pending.
  Status FlushState();

  // Deletes raw samples, aggregates and ended process records older than their retention at now_s,
  // each in a transaction of its own: one that fails (a corrupt aggregates table) does not keep the
  // others from running. The error names every part that failed.
  Status ApplyRetention(double now_s);

  // Stored samples of a series with from_s <= t <= to_s, in time order (pending ones not included).
  Result<std::vector<HistoryPoint>> Raw(const std::string& series, double from_s, double to_s);
  Result<std::vector<MinuteAggregate>> Aggregates(const std::string& series, double from_s, double to_s);
  // Samples since since_s, to re-feed a detector after a restart.
  Result<std::vector<HistoryPoint>> Recent(const std::string& series, double since_s) {
    return Raw(series, since_s, 1e18);
  }
  Result<std::vector<std::string>> SeriesNames();

  ProcessLog& processes() { return *processes_; }
  BaselineStore& baselines() { return *baselines_; }
  AlertStateStore& alerts() { return *alerts_; }
  XidLog& xids() { return *xids_; }
  GpuIdentityStore& gpu_identities() { return *gpu_identities_; }
  Database& db() { return *db_; }

  size_t pending_samples() const { return pending_.size(); }
  size_t series_in_memory() const { return series_.size(); }
  uint64_t dropped_samples() const { return dropped_; }
  uint64_t flushed_batches() const { return flushed_batches_; }
  // Stored raw samples and aggregates deleted before their retention to make room at the cap.
  uint64_t evicted_rows() const { return evicted_rows_; }
  // Empty while the path the store was opened with still names the file it writes; else what
  // happened to it ("... was deleted while open" or "... now names another file"): the writes go
  // on into the open file, which a restart no longer finds. Empty for a database in memory.
  std::string FileGoneProblem() const;
  // Reads that failed where no caller was there to be told (the lookup of a series' id, the samples
  // that seed a minute after a restart), oldest first, since the last call; at most 16 are kept.
  std::vector<std::string> TakeErrors();

 private:
  struct PendingSample {
    int64_t series_id;
    double t;
    uint64_t used;
  };
  struct OpenMinute {
    int64_t minute = -1;  // floor(t / 60)
    std::vector<uint64_t> values;
    uint64_t last = 0;
    bool seeded = false;  // loaded what an earlier run stored for this minute
  };
  struct SeriesState {
    int64_t id = 0;
    OpenMinute open;
    double last_t = 0;  // latest sample appended
  };

  HistoryStore(std::unique_ptr<Database> db, HistoryOptions options);
  // check_at_open: quick_check of every table but the aggregates; CorruptDatabase when one fails.
  Status CheckAtOpen(const std::string& path);
  // Reads the file's schema version and refuses a file that is not vramwatch's to take: written by a
  // newer vramwatch, or holding tables none of which are vramwatch's (another program's database).
  // Writes nothing.
  Status CheckSchema();
  Status Init();
  // One transaction of Flush(): names of new series, pending_[from, pending_.size()) and, with
  // `rest`, the aggregates and the state. `*full`: it failed for want of room.
  Status WriteBatch(size_t from, bool rest, bool* full);
  // Names the new series of pending_series_ inside the open transaction: a name the file already
  // holds (a lookup that failed earlier, KnownId) takes its stored id, an id another name holds is
  // replaced, so no sample is written under an id without its name.
  Status WriteSeriesNames();
  // Moves every sample, aggregate and state of series id `from` to `to`.
  void Remap(int64_t from, int64_t to);
  // At the cap: deletes, in a transaction, the oldest `step_s` seconds of raw samples older than
  // `older_than` (seconds), or when there are none the oldest aggregates of minutes before it. The
  // number of rows deleted (0: nothing older is left).
  Result<uint64_t> MakeRoom(double older_than, double step_s);
  // Runs `body` in a transaction (BEGIN IMMEDIATE ... COMMIT), rolled back when it fails.
  template <class F>
  Status InTransaction(F&& body);
  void NoteError(std::string error);
  // The series' state; a name the database does not know gets a new id (written with the batch).
  SeriesState& State(const std::string& name);
  void EvictIdle();
  MinuteAggregate Summarise(const OpenMinute& m) const;
  void SeedMinute(SeriesState& s, double t);
  // The series' id: in memory, else looked up in the file (unset when the file lacks it).
  Result<std::optional<int64_t>> KnownId(const std::string& series);

  // exclusive: the descriptor holding the flock. Declared before db_ so that it is closed after the
  // database: closing a descriptor of the file drops every POSIX lock this process holds on it,
  // SQLite's included, which must not happen while SQLite still uses the file.
  struct FileLock {
    int fd = -1;
    FileLock() = default;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    ~FileLock();
  } lock_;
  std::unique_ptr<Database> db_;
  HistoryOptions options_;
  int64_t version_at_open_ = 0;  // the file's schema version when it was opened (CheckSchema)
  std::unique_ptr<ProcessLog> processes_;
  std::unique_ptr<BaselineStore> baselines_;
  std::unique_ptr<AlertStateStore> alerts_;
  std::unique_ptr<XidLog> xids_;
  std::unique_ptr<GpuIdentityStore> gpu_identities_;
  Statement insert_sample_, upsert_agg_, find_series_, insert_series_, raw_range_, agg_range_, list_series_,
      delete_raw_, delete_agg_, minute_seed_, all_ids_, empty_series_, delete_series_, oldest_raw_, oldest_agg_,
      max_id_;
  std::unordered_map<std::string, SeriesState> series_;
  std::deque<PendingSample> pending_;
  std::vector<std::pair<int64_t, std::string>> pending_series_;
  int64_t max_series_id_ = 0;
  std::vector<std::pair<int64_t, MinuteAggregate>> pending_aggs_;  // closed minutes
  uint64_t dropped_ = 0;
  uint64_t flushed_batches_ = 0;
  uint64_t evicted_rows_ = 0;
  std::string file_;                                      // the file SQLite opened (empty: in memory)
  std::optional<std::pair<uint64_t, uint64_t>> file_id_;  // its device and inode at Open
  std::vector<std::string> errors_;                       // TakeErrors()
  double latest_t_ = -1e300;                              // latest sample appended to any series
};

}  // namespace vw::storage
