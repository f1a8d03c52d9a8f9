// Database and Statement: a thin RAII layer over one SQLite connection, so the stores above it never
// touch the C API. Opens in WAL mode with synchronous=NORMAL (a committed transaction survives a
// crash of this process; an OS crash may lose the last one), a bounded page cache, and an optional
// size cap (max_size_bytes) that makes SQLite report "database or disk is full" like a full disk.
//
// Errors become Status: SQLITE_FULL -> io_error "... database or disk is full", SQLITE_READONLY and
// SQLITE_PERM -> permission_denied, SQLITE_CANTOPEN -> io_error naming the path (and, at Open, the
// cause: a directory that does not exist or is not writable), SQLITE_CORRUPT -> io_error that says
// the file is corrupt (SQLite's own words, "database disk image is malformed", do not),
// SQLITE_NOTADB -> io_error that says it is no SQLite database or its header is damaged. A file
// that Open() finds corrupt is CorruptDatabase() (NotADatabase() for a bad header): named, with
// what to do. Open() refuses a -wal or -shm file beside the database that this user may not write
// (left by another user): SQLite would open it and fail every write.
// Threading: one Database and its Statements are used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vw::storage {

// SQLite result code -> Status; `what` names the operation ("insert sample", "open history.db").
Status FromSqlite(int rc, std::string_view what, sqlite3* db = nullptr);

// The database file at `path` is corrupt (SQLITE_CORRUPT, or a quick_check that is not "ok";
// `detail` is what SQLite said): an io_error naming the file and what to do (move it aside, or
// keep what it still holds with sqlite3's .dump).
Status CorruptDatabase(const std::string& path, std::string_view detail);
// The file at `path` is not a SQLite database, or its header (first 100 bytes) is damaged
// (SQLITE_NOTADB): an io_error naming it, with what to do.
Status NotADatabase(const std::string& path);
// CorruptDatabase or NotADatabase, after the last error on `db`.
Status DamagedDatabase(const std::string& path, sqlite3* db);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  void Bind(int index, int64_t value);
  void Bind(int index, double value);
  void Bind(int index, std::string_view value);
  void BindNull(int index);
  void Bind(int index, const std::optional<int64_t>& value);
  void Bind(int index, const std::optional<double>& value);

  // Runs one step: true when a row is available, false when done.
  Result<bool> Step();
  // Step() until done, for statements that return no rows; then resets.
  Status Run();
  void Reset();  // ready to bind and run again (bindings cleared)
  // Step() through every row, calling `row(*this)` on each (read the columns there); then
  // resets, also when a step fails (that error is returned).
  template <class F>
  Status ForEachRow(F&& row) {
    while (true) {
      auto more = Step();
      if (!more.ok()) {
        Reset();
        return more.status();
      }
      if (!*more) break;
      row(*this);
    }
    Reset();
    return Status::Ok();
  }

  int64_t ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
  double ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string ColumnText(int col) const;
  std::optional<int64_t> ColumnOptInt(int col) const;
  std::optional<double> ColumnOptDouble(int col) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// The -wal file beside a database is cut back to this after each checkpoint (bytes); it is not
// counted in DatabaseOptions::max_size_bytes.
inline constexpr int64_t kWalSizeLimitBytes = 8ll << 20;

struct DatabaseOptions {
  // Upper bound for the file (bytes); 0 = no cap. Reaching it behaves like a full disk.
  uint64_t max_size_bytes = 0;
  int cache_kib = 2048;  // SQLite page cache per connection
  int busy_timeout_ms = 2000;
  // Open() leaves the journal mode as it is; the caller calls UseWal() once it has checked the file
  // (so a file it refuses is left byte for byte as it was: the switch to WAL writes its header).
  bool defer_wal = false;
};

class Database {
 public:
  // Opens or creates `path` (":memory:" works for tests that need no file).
  static Result<std::unique_ptr<Database>> Open(const std::string& path, const DatabaseOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Switches the file to WAL mode (Open() does, unless DatabaseOptions::defer_wal).
  Status UseWal();
  // The database's size: its pages times the page size (bytes; the -wal file not counted).
  Result<uint64_t> SizeBytes();
  // How long a statement waits for another connection's lock before SQLITE_BUSY (ms).
  void SetBusyTimeout(int ms);
  // A failure while opening, explained: a corrupt or foreign file (DamagedDatabase), a directory
  // that is not writable; otherwise `s` with the path.
  Status OpenFailure(const Status& s);

  Status Exec(std::string_view sql);
  // Adds `column` (with its SQL `declaration`, "REAL NOT NULL DEFAULT 0") to `table` when a file
  // written before it was kept lacks it; nothing when it is there.
  Status AddColumnIfMissing(std::string_view table, std::string_view column, std::string_view declaration);
  Result<Statement> Prepare(std::string_view sql);
  Status Begin() { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() { return Exec("COMMIT"); }
  void Rollback();  // best effort; a failed rollback leaves SQLite to recover on next open

  // "ok" when the file is sound; otherwise SQLite's first complaint (also when SQLite cannot even
  // read the pages to check: "database disk image is malformed").
  Result<std::string> IntegrityCheck();
  // PRAGMA quick_check of `table` and its indexes (every table when empty): "ok" when their pages
  // are sound, otherwise SQLite's first complaint (a table whose pages cannot be read at all gives
  // "database disk image is malformed"). It reads every page of what it checks: about 1 s per
  // 300 MB from the page cache, several from a cold disk. An error only when SQLite fails otherwise
  // (busy, I/O).
  Result<std::string> QuickCheck(std::string_view table = {});
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // The last call failed because the file is corrupt (SQLITE_CORRUPT, or SQLITE_NOTADB).
  bool LastErrorIsCorrupt() const;
  // The last call failed for want of room (SQLITE_FULL: the size cap, or a full disk).
  bool LastErrorIsFull() const;

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Runs a check pragma (integrity_check, quick_check): its first complaint, or "ok".
  Result<std::string> CheckPragma(const std::string& sql);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace vw::storage
