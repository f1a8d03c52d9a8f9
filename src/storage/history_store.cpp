#include "storage/history_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace vw::storage {

namespace {

int64_t MinuteOf(double t) {
  return static_cast<int64_t>(std::floor(t / 60.0));
}

Status PrepareInto(Database& db, Statement& into, std::string_view sql) {
  auto st = db.Prepare(sql);
  if (!st.ok()) return st.status();
  into = std::move(*st);
  return Status::Ok();
}

}  // namespace

HistoryStore::HistoryStore(std::unique_ptr<Database> db, HistoryOptions options)
    : db_(std::move(db)), options_(std::move(options)) {
  processes_ = std::make_unique<ProcessLog>(*db_);
  baselines_ = std::make_unique<BaselineStore>(*db_);
  alerts_ = std::make_unique<AlertStateStore>(*db_);
  xids_ = std::make_unique<XidLog>(*db_);
  gpu_identities_ = std::make_unique<GpuIdentityStore>(*db_);
}

HistoryStore::~HistoryStore() = default;

HistoryStore::FileLock::~FileLock() {
  if (fd >= 0) ::close(fd);
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path, const HistoryOptions& options) {
  // The file is checked before it is switched to WAL (which writes its header): one refused is left
  // as it was.
  DatabaseOptions dbo = options.db;
  dbo.defer_wal = true;
  auto db = Database::Open(path, dbo);
  if (!db.ok()) return db.status();
  std::unique_ptr<HistoryStore> store(new HistoryStore(std::move(*db), options));
  // The file SQLite opened, also when `path` is a "file:" URI; empty for a database in memory.
  const char* opened = sqlite3_db_filename(store->db_->handle(), "main");
  const std::string file = opened == nullptr ? std::string() : std::string(opened);
  store->file_ = file;
  if (struct stat st{}; !file.empty() && ::stat(file.c_str(), &st) == 0) {
    store->file_id_ = std::make_pair(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
  }
  if (options.exclusive && !file.empty()) {
    // The file exists now (Database::Open creates it). SQLite's own locks are POSIX record locks,
    // which a flock does not touch.
    store->lock_.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (store->lock_.fd < 0) return Status::IoError(fmt::format("{}: {}", path, std::strerror(errno)));
    if (::flock(store->lock_.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return Status::Unavailable(fmt::format(
            "{} is in use by another vramwatch watch (two daemons on one --db would write its history twice "
            "and send every alert twice): stop that daemon, or give this one another --db",
            path));
      }
      return Status::IoError(fmt::format("{}: lock: {}", path, std::strerror(errno)));
    }
  }
  // Before anything is written: Init() would write its schema changes into a damaged file.
  if (options.check_at_open) VW_RETURN_IF_ERROR(store->CheckAtOpen(path));
  VW_RETURN_IF_ERROR(store->CheckSchema().WithContext("history database " + path));
  VW_RETURN_IF_ERROR(store->db_->UseWal());
  VW_RETURN_IF_ERROR(store->Init().WithContext("history database " + path));
  if (options.write_busy_timeout_ms >= 0) store->db_->SetBusyTimeout(options.write_busy_timeout_ms);
  return store;
}

std::string HistoryStore::FileGoneProblem() const {
  if (file_.empty() || !file_id_) return {};
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    if (errno != ENOENT) return {};  // cannot tell (a directory made unreadable): said elsewhere if it matters
    return file_ +
           " was deleted while open: history goes on into the deleted file and is lost when the daemon "
           "stops; restart the daemon to keep history in a new file";
  }
  if (std::make_pair(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)) != *file_id_) {
    return file_ +
           " now names another file (moved or replaced while open): history goes on into the file "
           "opened at start, wherever it is now; restart the daemon to use the file at " +
           file_;
  }
  return {};
}

Status HistoryStore::CheckAtOpen(const std::string& path) {
  auto list = db_->Prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
      " ORDER BY rootpage");
  auto failed = [&](const Status& s) {
    if (db_->LastErrorIsCorrupt()) return DamagedDatabase(path, db_->handle());
    return s.WithContext("check " + path);
  };
  if (!list.ok()) return failed(list.status());
  std::vector<std::string> tables;
  if (Status s = list->ForEachRow([&](Statement& row) { tables.push_back(row.ColumnText(0)); }); !s.ok()) {
    return failed(s);
  }
  for (const std::string& table : tables) {
    if (table == "minutes") continue;  // the aggregates: not read at start (see the header)
    auto verdict = db_->QuickCheck(table);
    if (!verdict.ok()) return verdict.status().WithContext("check " + path);
    if (*verdict != "ok") return CorruptDatabase(path, "table " + table + ": " + *verdict);
  }
  return Status::Ok();
}

Status HistoryStore::CheckSchema() {
  // The schema's version (PRAGMA user_version; 0 in files from before it was kept): a file written
  // by a newer vramwatch is refused before anything is written into it (its tables may have
  // columns this one would not fill, and every batch would fail); an older one is brought up to
  // date by Init() and marked.
  {
    auto v = db_->Prepare("PRAGMA user_version");
    if (!v.ok()) return db_->OpenFailure(v.status());
    auto row = v->Step();
    if (!row.ok()) return db_->OpenFailure(row.status());
    if (*row) version_at_open_ = v->ColumnInt(0);
  }
  if (version_at_open_ > kSchemaVersion) {
    return Status::InvalidArgument(
        fmt::format("written by a newer vramwatch (schema version {}; this one knows up to {}): run that version on "
                    "it, or give this one another --db",
                    version_at_open_, kSchemaVersion));
  }
  if (version_at_open_ > 0) return Status::Ok();
  // Version 0: a new file, one from before the version was kept, or another program's database,
  // which must not get vramwatch's tables (and WAL mode) added to it.
  static constexpr std::string_view kOwn[] = {"series",        "samples",    "minutes",    "processes",     "baselines",
                                              "firing_alerts", "xid_counts", "xid_events", "gpu_identities"};
  auto list = db_->Prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  if (!list.ok()) return db_->OpenFailure(list.status());
  std::vector<std::string> tables;
  bool own = false;
  if (Status s = list->ForEachRow([&](const Statement& row) {
        tables.push_back(row.ColumnText(0));
        own |= std::find(std::begin(kOwn), std::end(kOwn), tables.back()) != std::end(kOwn);
      });
      !s.ok()) {
    return db_->OpenFailure(s);
  }
  if (tables.empty() || own) return Status::Ok();
  std::string named;
  for (size_t i = 0; i < tables.size() && i < 3; ++i) named += (i ? ", " : "") + tables[i];
  if (tables.size() > 3) named += fmt::format(", ... ({} in all)", tables.size());
  return Status::InvalidArgument(
      fmt::format("not a vramwatch history: it holds other tables ({}) and none of vramwatch's, so it is another "
                  "program's database; it was left as it was: give vramwatch a file of its own",
                  named));
}

Status HistoryStore::Init() {
  const int64_t version = version_at_open_;
  VW_RETURN_IF_ERROR(db_->Exec(
      "CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
      "CREATE TABLE IF NOT EXISTS samples (series_id INTEGER NOT NULL, t REAL NOT NULL, used_bytes INTEGER NOT NULL,"
      " PRIMARY KEY (series_id, t)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS minutes (series_id INTEGER NOT NULL, minute INTEGER NOT NULL,"
      " min_bytes INTEGER NOT NULL, floor_bytes INTEGER NOT NULL, max_bytes INTEGER NOT NULL,"
      " last_bytes INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (series_id, minute)) WITHOUT ROWID;"));
  VW_RETURN_IF_ERROR(processes_->Init());
  VW_RETURN_IF_ERROR(baselines_->Init());
  VW_RETURN_IF_ERROR(alerts_->Init());
  VW_RETURN_IF_ERROR(xids_->Init());
  VW_RETURN_IF_ERROR(gpu_identities_->Init());
  VW_RETURN_IF_ERROR(
      PrepareInto(*db_, insert_sample_, "INSERT OR REPLACE INTO samples (series_id, t, used_bytes) VALUES (?,?,?)"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, upsert_agg_,
                                 "INSERT OR REPLACE INTO minutes (series_id, minute, min_bytes, floor_bytes,"
                                 " max_bytes, last_bytes, count) VALUES (?,?,?,?,?,?,?)"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, insert_series_, "INSERT OR IGNORE INTO series (id, name) VALUES (?, ?)"));
  VW_RETURN_IF_ERROR(PrepareInto(
      *db_, raw_range_, "SELECT t, used_bytes FROM samples WHERE series_id = ? AND t >= ? AND t <= ? ORDER BY t"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, agg_range_,
                                 "SELECT minute, min_bytes, floor_bytes, max_bytes, last_bytes, count FROM"
                                 " minutes WHERE series_id = ? AND minute >= ? AND minute <= ? ORDER BY minute"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, find_series_, "SELECT id FROM series WHERE name = ?"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, list_series_, "SELECT id, name FROM series ORDER BY name"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, delete_raw_, "DELETE FROM samples WHERE series_id = ? AND t < ?"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, delete_agg_, "DELETE FROM minutes WHERE series_id = ? AND minute < ?"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, minute_seed_,
                                 "SELECT used_bytes FROM samples WHERE series_id = ? AND t >= ? AND t < ? ORDER BY t"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, all_ids_, "SELECT id FROM series"));
  VW_RETURN_IF_ERROR(
      PrepareInto(*db_, empty_series_,
                  "SELECT id FROM series WHERE NOT EXISTS (SELECT 1 FROM samples WHERE series_id = series.id)"
                  " AND NOT EXISTS (SELECT 1 FROM minutes WHERE series_id = series.id)"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, delete_series_, "DELETE FROM series WHERE id = ?"));
  // Each series' oldest row is an index seek (the primary keys start with series_id).
  VW_RETURN_IF_ERROR(PrepareInto(*db_, oldest_raw_,
                                 "SELECT MIN((SELECT MIN(t) FROM samples WHERE series_id = series.id)) FROM series"));
  VW_RETURN_IF_ERROR(PrepareInto(
      *db_, oldest_agg_, "SELECT MIN((SELECT MIN(minute) FROM minutes WHERE series_id = series.id)) FROM series"));
  VW_RETURN_IF_ERROR(PrepareInto(*db_, max_id_, "SELECT COALESCE(MAX(id), 0) FROM series"));
  // Known series keep their ids across restarts (looked up when a series is first written).
  auto row = max_id_.Step();
  if (row.ok() && *row) max_series_id_ = max_id_.ColumnInt(0);
  max_id_.Reset();
  if (!row.ok()) return row.status();
  // A marker only: a file that cannot be written (read-only) is still read, and pauses history.
  if (version < kSchemaVersion) (void)db_->Exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  return Status::Ok();
}

HistoryStore::SeriesState& HistoryStore::State(const std::string& name) {
  auto it = series_.find(name);
  if (it != series_.end()) return it->second;
  auto known = KnownId(name);
  if (!known.ok()) {
    // Taken as new; Flush() finds its stored id, if it has one, before it writes a sample of it.
    NoteError(known.status().WithContext("history: looking up series " + name).ToString());
  } else if (*known) {
    SeriesState& s = series_[name];
    s.open.seeded = false;  // the first minute takes back what an earlier run stored
    return s;
  }
  SeriesState& s = series_[name];
  s.id = ++max_series_id_;
  s.open.seeded = true;  // a new series has nothing stored
  pending_series_.emplace_back(s.id, name);
  return s;
}

void HistoryStore::EvictIdle() {
  // Called after a commit: every idle series' last open minute was written with the batch that
  // held its last sample.
  for (auto it = series_.begin(); it != series_.end();) {
    if (it->second.last_t < latest_t_ - options_.idle_evict_s) {
      it = series_.erase(it);
    } else {
      ++it;
    }
  }
}

void HistoryStore::SeedMinute(SeriesState& s, double t) {
  // The first sample of a known series after a restart: take back what the earlier run stored for
  // this minute before it, so its aggregate covers the whole minute. Not from `t` on: those samples
  // are written again (a replay of the same file), and would count twice.
  s.open.seeded = true;
  const double start = static_cast<double>(s.open.minute) * 60.0;
  minute_seed_.Bind(1, s.id);
  minute_seed_.Bind(2, start);
  minute_seed_.Bind(3, t);
  std::vector<uint64_t> stored;
  const Status read =
      minute_seed_.ForEachRow([&](const Statement& row) { stored.push_back(static_cast<uint64_t>(row.ColumnInt(0))); });
  if (!read.ok()) {
    // The minute's aggregate then covers only the samples from now on.
    NoteError(read.WithContext("history: reading the samples stored earlier in this minute").ToString());
    return;
  }
  if (!stored.empty()) s.open.values.insert(s.open.values.begin(), stored.begin(), stored.end());
}

MinuteAggregate HistoryStore::Summarise(const OpenMinute& m) const {
  MinuteAggregate a;
  a.t = static_cast<double>(m.minute) * 60.0;
  a.count = static_cast<uint32_t>(m.values.size());
  a.last_bytes = m.last;
  if (m.values.empty()) return a;
  std::vector<uint64_t> v = m.values;
  std::sort(v.begin(), v.end());
  a.min_bytes = v.front();
  a.max_bytes = v.back();
  size_t k = static_cast<size_t>(std::floor(options_.floor_quantile * static_cast<double>(v.size() - 1)));
  a.floor_bytes = v[k];
  return a;
}

void HistoryStore::Append(const std::string& series, double t, uint64_t used_bytes) {
  SeriesState& s = State(series);
  const int64_t minute = MinuteOf(t);
  if (s.open.minute != minute) {
    if (s.open.minute >= 0 && !s.open.values.empty()) pending_aggs_.emplace_back(s.id, Summarise(s.open));
    s.open.minute = minute;
    s.open.values.clear();
    if (!s.open.seeded) SeedMinute(s, t);
  }
  s.open.values.push_back(used_bytes);
  s.open.last = used_bytes;
  s.last_t = t;
  latest_t_ = std::max(latest_t_, t);
  pending_.push_back({s.id, t, used_bytes});
  while (pending_.size() > options_.max_pending) {
    pending_.pop_front();
    ++dropped_;
  }
}

Status HistoryStore::FlushState() {
  VW_RETURN_IF_ERROR(db_->Begin().WithContext("history state flush"));
  auto fail = [&](const Status& s) {
    db_->Rollback();
    return s.WithContext("history state flush");
  };
  if (Status s = processes_->WritePending(); !s.ok()) return fail(s);
  if (Status s = baselines_->WritePending(); !s.ok()) return fail(s);
  if (Status s = alerts_->WritePending(); !s.ok()) return fail(s);
  if (Status s = xids_->WritePending(); !s.ok()) return fail(s);
  if (Status s = gpu_identities_->WritePending(); !s.ok()) return fail(s);
  if (Status s = db_->Commit(); !s.ok()) return fail(s);
  processes_->Committed();
  baselines_->Committed();
  alerts_->Committed();
  xids_->Committed();
  gpu_identities_->Committed();
  return Status::Ok();
}

template <class F>
Status HistoryStore::InTransaction(F&& body) {
  VW_RETURN_IF_ERROR(db_->Begin());
  Status s = body();
  if (s.ok()) s = db_->Commit();
  if (!s.ok()) db_->Rollback();
  return s;
}

void HistoryStore::NoteError(std::string error) {
  if (errors_.size() >= 16) errors_.erase(errors_.begin());
  errors_.push_back(std::move(error));
}

std::vector<std::string> HistoryStore::TakeErrors() {
  std::vector<std::string> out;
  out.swap(errors_);
  return out;
}

void HistoryStore::Remap(int64_t from, int64_t to) {
  for (PendingSample& p : pending_) {
    if (p.series_id == from) p.series_id = to;
  }
  for (auto& [id, a] : pending_aggs_) {
    if (id == from) id = to;
  }
  for (auto& [name, st] : series_) {
    if (st.id == from) st.id = to;
  }
}

Status HistoryStore::WriteSeriesNames() {
  for (auto it = pending_series_.begin(); it != pending_series_.end();) {
    const auto& [id, name] = *it;
    find_series_.Bind(1, name);
    auto row = find_series_.Step();
    std::optional<int64_t> stored;
    if (row.ok() && *row) stored = find_series_.ColumnInt(0);
    find_series_.Reset();
    if (!row.ok()) return row.status().WithContext("looking up series " + name);
    if (stored) {
      // Known after all (its lookup failed when it was first appended): its samples go under its id.
      if (*stored != id) Remap(id, *stored);
      max_series_id_ = std::max(max_series_id_, *stored);
      it = pending_series_.erase(it);
      continue;
    }
    insert_series_.Bind(1, id);
    insert_series_.Bind(2, name);
    if (Status s = insert_series_.Run(); !s.ok()) {
      insert_series_.Reset();
      return s;
    }
    if (sqlite3_changes(db_->handle()) == 0) {
      // The id is another name's: a new one, past every stored id.
      auto max = max_id_.Step();
      const int64_t top = max.ok() && *max ? max_id_.ColumnInt(0) : max_series_id_;
      max_id_.Reset();
      if (!max.ok()) return max.status();
      const int64_t fresh = std::max(top, max_series_id_) + 1;
      max_series_id_ = fresh;
      Remap(id, fresh);
      it->first = fresh;
      continue;  // inserted on the next turn
    }
    ++it;
  }
  return Status::Ok();
}

Status HistoryStore::WriteBatch(size_t from, bool rest, bool* full) {
  *full = false;
  VW_RETURN_IF_ERROR(db_->Begin());
  auto fail = [&](const Status& s) {
    *full = db_->LastErrorIsFull();
    db_->Rollback();
    return s;
  };
  if (Status s = WriteSeriesNames(); !s.ok()) return fail(s);
  for (size_t i = from; i < pending_.size(); ++i) {
    const PendingSample& p = pending_[i];
    insert_sample_.Bind(1, p.series_id);
    insert_sample_.Bind(2, p.t);
    insert_sample_.Bind(3, static_cast<int64_t>(p.used));
    if (Status s = insert_sample_.Run(); !s.ok()) {
      insert_sample_.Reset();
      return fail(s);
    }
  }
  if (rest) {
    auto write_agg = [&](int64_t id, const MinuteAggregate& a) {
      upsert_agg_.Bind(1, id);
      upsert_agg_.Bind(2, MinuteOf(a.t + 1));
      upsert_agg_.Bind(3, static_cast<int64_t>(a.min_bytes));
      upsert_agg_.Bind(4, static_cast<int64_t>(a.floor_bytes));
      upsert_agg_.Bind(5, static_cast<int64_t>(a.max_bytes));
      upsert_agg_.Bind(6, static_cast<int64_t>(a.last_bytes));
      upsert_agg_.Bind(7, static_cast<int64_t>(a.count));
      Status s = upsert_agg_.Run();
      if (!s.ok()) upsert_agg_.Reset();
      return s;
    };
    for (const auto& [id, a] : pending_aggs_) {
      if (Status s = write_agg(id, a); !s.ok()) return fail(s);
    }
    // Open minutes are written as they stand and rewritten when they grow.
    if (!pending_.empty()) {
      for (const auto& [name, st] : series_) {
        if (st.open.minute < 0 || st.open.values.empty()) continue;
        if (Status s = write_agg(st.id, Summarise(st.open)); !s.ok()) return fail(s);
      }
    }
    if (Status s = processes_->WritePending(); !s.ok()) return fail(s);
    if (Status s = baselines_->WritePending(); !s.ok()) return fail(s);
    if (Status s = alerts_->WritePending(); !s.ok()) return fail(s);
    if (Status s = xids_->WritePending(); !s.ok()) return fail(s);
    if (Status s = gpu_identities_->WritePending(); !s.ok()) return fail(s);
  }
  if (Status s = db_->Commit(); !s.ok()) return fail(s);
  pending_series_.clear();
  return Status::Ok();
}

Result<uint64_t> HistoryStore::MakeRoom(double older_than, double step_s) {
  auto oldest = [](Statement& st) -> Result<std::optional<double>> {
    auto row = st.Step();
    std::optional<double> out;
    if (row.ok() && *row && !st.ColumnIsNull(0)) out = st.ColumnDouble(0);
    st.Reset();
    if (!row.ok()) return row.status();
    return out;
  };
  auto ids = [&]() -> Result<std::vector<int64_t>> {
    std::vector<int64_t> out;
    VW_RETURN_IF_ERROR(all_ids_.ForEachRow([&](const Statement& row) { out.push_back(row.ColumnInt(0)); }));
    return out;
  };
  auto raw = oldest(oldest_raw_);
  if (!raw.ok()) return raw.status();
  auto all = ids();
  if (!all.ok()) return all.status();
  uint64_t deleted = 0;
  Status s;
  if (*raw && **raw < older_than) {
    const double cut = std::min(**raw + step_s, older_than);
    s = InTransaction([&] {
      for (int64_t id : *all) {
        delete_raw_.Bind(1, id);
        delete_raw_.Bind(2, cut);
        if (Status d = delete_raw_.Run(); !d.ok()) {
          delete_raw_.Reset();
          return d;
        }
        deleted += static_cast<uint64_t>(sqlite3_changes(db_->handle()));
      }
      return Status::Ok();
    });
  } else {
    // No raw sample older than what is written is left: the oldest aggregates go (a minute's row
    // is some 30 raw samples' worth, so the step is longer).
    auto agg = oldest(oldest_agg_);
    if (!agg.ok()) return agg.status();
    const int64_t limit = MinuteOf(older_than);
    if (!*agg || static_cast<int64_t>(**agg) >= limit) return uint64_t{0};
    const int64_t cut =
        std::min(static_cast<int64_t>(**agg) + std::max<int64_t>(60, static_cast<int64_t>(step_s / 2)), limit);
    s = InTransaction([&] {
      for (int64_t id : *all) {
        delete_agg_.Bind(1, id);
        delete_agg_.Bind(2, cut);
        if (Status d = delete_agg_.Run(); !d.ok()) {
          delete_agg_.Reset();
          return d;
        }
        deleted += static_cast<uint64_t>(sqlite3_changes(db_->handle()));
      }
      return Status::Ok();
    });
  }
  if (!s.ok()) return s.WithContext("making room at the size cap");
  evicted_rows_ += deleted;
  return deleted;
}

Status HistoryStore::Flush() {
  const bool room = options_.make_room_at_cap && options_.db.max_size_bytes > 0;
  size_t batch = kFlushBatch;
  double step_s = 60;
  bool rest_written = false;
  while (!rest_written || !pending_.empty()) {
    const size_t n = std::min(batch, pending_.size());
    const size_t from = pending_.size() - n;
    bool full = false;
    Status s = WriteBatch(from, !rest_written, &full);
    if (s.ok()) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(from), pending_.end());
      batch = std::min(kFlushBatch, batch * 2);
      if (!rest_written) {
        rest_written = true;
        pending_aggs_.clear();
        processes_->Committed();
        baselines_->Committed();
        alerts_->Committed();
        xids_->Committed();
        gpu_identities_->Committed();
      }
      continue;
    }
    if (!full || !room) return s.WithContext("history flush");
    // At the cap: room from what is older than everything in this batch.
    const double older_than = n > 0 ? pending_[from].t : latest_t_;
    if (n > 0) step_s = std::max(step_s, pending_.back().t - pending_[from].t);
    auto freed = MakeRoom(older_than, step_s);
    if (!freed.ok()) return freed.status().WithContext("history flush");
    if (*freed > 0) {
      step_s *= 2;
      continue;
    }
    // Nothing older is left to delete: a smaller batch of the newest samples may still fit; the
    // older ones cannot, and go (counted), so that the aggregates and state are written.
    if (n > 1) {
      batch = n / 2;
      continue;
    }
    if (pending_.empty()) return s.WithContext("history flush");
    dropped_ += pending_.size();
    pending_.clear();
  }
  ++flushed_batches_;
  EvictIdle();
  return Status::Ok();
}

Status HistoryStore::ApplyRetention(double now_s) {
  const double raw_cut = now_s - options_.raw_retention_s;
  const int64_t agg_cut = MinuteOf(now_s - options_.aggregate_retention_s);
  auto ids = [&](Statement& st) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> out;
    VW_RETURN_IF_ERROR(st.ForEachRow([&](const Statement& row) { out.push_back(row.ColumnInt(0)); }));
    return out;
  };
  auto all = ids(all_ids_);  // every stored series, in memory or not
  if (!all.ok()) return all.status().WithContext("history retention");
  auto delete_before = [&](Statement& st, auto cut) {
    return InTransaction([&] {
      for (int64_t id : *all) {
        st.Bind(1, id);
        st.Bind(2, cut);
        if (Status s = st.Run(); !s.ok()) {
          st.Reset();
          return s;
        }
      }
      return Status::Ok();
    });
  };
  // Each part on its own, so that one that fails (a corrupt table) does not hold the others back.
  std::vector<std::pair<std::string, Status>> parts;
  parts.emplace_back("raw samples", delete_before(delete_raw_, raw_cut));
  parts.emplace_back("aggregates", delete_before(delete_agg_, agg_cut));
  parts.emplace_back("series names", InTransaction([&]() -> Status {
                       // Names with nothing left go, except those of series in memory (still being written).
                       auto empty = ids(empty_series_);
                       if (!empty.ok()) return empty.status();
                       std::unordered_map<int64_t, bool> active;
                       for (const auto& [name, st] : series_) active[st.id] = true;
                       for (const auto& [id, name] : pending_series_) active[id] = true;
                       for (int64_t id : *empty) {
                         if (active.count(id)) continue;
                         delete_series_.Bind(1, id);
                         if (Status s = delete_series_.Run(); !s.ok()) {
                           delete_series_.Reset();
                           return s;
                         }
                       }
                       return Status::Ok();
                     }));
  parts.emplace_back("process records", InTransaction([&] {
                       return processes_->DeleteEndedBefore(now_s - options_.process_retention_s);
                     }));
  Status first;
  std::string failed;
  for (const auto& [what, s] : parts) {
    if (s.ok()) continue;
    if (first.ok()) first = s;
    failed += (failed.empty() ? "" : "; ") + what + ": " + s.message();
  }
  if (first.ok()) return first;
  return Status(first.code(), "history retention: " + failed);
}

Result<std::optional<int64_t>> HistoryStore::KnownId(const std::string& series) {
  if (auto it = series_.find(series); it != series_.end()) return std::optional<int64_t>(it->second.id);
  // Another connection (the sampler's) may have created it since this store was opened.
  find_series_.Bind(1, series);
  auto row = find_series_.Step();
  std::optional<int64_t> id;
  if (row.ok() && *row) id = find_series_.ColumnInt(0);
  find_series_.Reset();
  if (!row.ok()) return row.status();
  if (id) {
    SeriesState& s = series_[series];
    s.id = *id;
    s.last_t = latest_t_;  // a reader's lookup: kept until the writer's next idle sweep
    max_series_id_ = std::max(max_series_id_, *id);
  }
  return id;
}

Result<std::vector<HistoryPoint>> HistoryStore::Raw(const std::string& series, double from_s, double to_s) {
  std::vector<HistoryPoint> out;
  auto known = KnownId(series);
  if (!known.ok()) return known.status().WithContext("history query " + series);
  if (!*known) return out;
  raw_range_.Bind(1, **known);
  raw_range_.Bind(2, from_s);
  raw_range_.Bind(3, to_s);
  Status read = raw_range_.ForEachRow([&](const Statement& st) {
    out.push_back({st.ColumnDouble(0), static_cast<uint64_t>(st.ColumnInt(1))});
  });
  if (!read.ok()) return read.WithContext("history query " + series);
  return out;
}

Result<std::vector<MinuteAggregate>> HistoryStore::Aggregates(const std::string& series, double from_s, double to_s) {
  std::vector<MinuteAggregate> out;
  auto known = KnownId(series);
  if (!known.ok()) return known.status().WithContext("history query " + series);
  if (!*known) return out;
  agg_range_.Bind(1, **known);
  agg_range_.Bind(2, MinuteOf(from_s));
  agg_range_.Bind(3, MinuteOf(std::min(to_s, 1e15)));
  Status read = agg_range_.ForEachRow([&](const Statement& st) {
    MinuteAggregate a;
    a.t = static_cast<double>(st.ColumnInt(0)) * 60.0;
    a.min_bytes = static_cast<uint64_t>(st.ColumnInt(1));
    a.floor_bytes = static_cast<uint64_t>(st.ColumnInt(2));
    a.max_bytes = static_cast<uint64_t>(st.ColumnInt(3));
    a.last_bytes = static_cast<uint64_t>(st.ColumnInt(4));
    a.count = static_cast<uint32_t>(st.ColumnInt(5));
    out.push_back(a);
  });
  if (!read.ok()) return read.WithContext("history query " + series);
  return out;
}

Result<std::vector<std::string>> HistoryStore::SeriesNames() {
  std::vector<std::string> out;
  for (const auto& [id, name] : pending_series_) out.push_back(name);
  VW_RETURN_IF_ERROR(list_series_.ForEachRow([&](const Statement& st) { out.push_back(st.ColumnText(1)); }));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace vw::storage
