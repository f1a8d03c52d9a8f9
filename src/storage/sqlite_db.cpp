#include "storage/sqlite_db.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace vw::storage {
namespace {

// The last error on `db` was SQLITE_CORRUPT (or one of its extended codes), or SQLITE_NOTADB (a
// damaged header, or a file that is no database at all).
bool CorruptError(sqlite3* db) {
  const int primary = sqlite3_errcode(db) & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// The directory a database file lives in ("." for a bare name).
std::string DirectoryOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

Status FromSqlite(int rc, std::string_view what, sqlite3* db) {
  std::string m(what);
  m += ": ";
  const int primary = rc & 0xff;
  if (primary == SQLITE_FULL) {
    m += "database or disk is full";
  } else if (db != nullptr && sqlite3_errcode(db) == rc) {
    m += sqlite3_errmsg(db);
  } else {
    m += sqlite3_errstr(rc);
  }
  if (primary == SQLITE_CORRUPT) {
    m += " (the database file is corrupt)";
  } else if (primary == SQLITE_NOTADB) {
    m += " (not a SQLite database, or its header is damaged)";
  }
  switch (primary) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE: return Status::Ok();
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return Status::PermissionDenied(std::move(m));
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Status::Unavailable(std::move(m));
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH: return Status::Internal(std::move(m));
    default: return Status::IoError(std::move(m));
  }
}

Status CorruptDatabase(const std::string& path, std::string_view detail) {
  // `.recover` needs an sqlite3 shell built with the sqlite_dbpage table (Debian 12's is not);
  // `.dump` works everywhere and keeps what can still be read.
  return Status::IoError(path + " is corrupt (" + std::string(detail) +
                         "): move it aside to start a new history; to keep what it still holds, `sqlite3 " + path +
                         " .dump` it (change its last line, `ROLLBACK; -- due to errors`, to `COMMIT;`) into a new "
                         "file and start on that");
}

Status NotADatabase(const std::string& path) {
  return Status::IoError(path +
                         " is not a SQLite database, or its header is damaged (SQLite: file is not a database): if it "
                         "is a vramwatch history, it is corrupt: move it aside to start a new history; otherwise give "
                         "another file");
}

Status DamagedDatabase(const std::string& path, sqlite3* db) {
  if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB) return NotADatabase(path);
  return CorruptDatabase(path, sqlite3_errmsg(db));
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}
void Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void Statement::Bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}
void Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
}
void Statement::Bind(int index, const std::optional<int64_t>& value) {
  if (value) {
    Bind(index, *value);
  } else {
    BindNull(index);
  }
}
void Statement::Bind(int index, const std::optional<double>& value) {
  if (value) {
    Bind(index, *value);
  } else {
    BindNull(index);
  }
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status s = FromSqlite(rc, "sqlite step", db_);
  sqlite3_reset(stmt_);
  return s;
}

Status Statement::Run() {
  while (true) {
    auto r = Step();
    if (!r.ok()) return r.status();
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::optional<int64_t> Statement::ColumnOptInt(int col) const {
  if (ColumnIsNull(col)) return std::nullopt;
  return ColumnInt(col);
}

std::optional<double> Statement::ColumnOptDouble(int col) const {
  if (ColumnIsNull(col)) return std::nullopt;
  return ColumnDouble(col);
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, const DatabaseOptions& options) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = FromSqlite(rc, "open " + path, db);
    sqlite3_close(db);
    // SQLite's "unable to open database file" names no cause.
    const std::string dir = DirectoryOf(path);
    if ((rc & 0xff) == SQLITE_CANTOPEN && path != ":memory:" && path.rfind("file:", 0) != 0) {
      if (!Exists(dir)) {
        return Status::IoError(fmt::format(
            "open {}: its directory {} does not exist: create it, or give a file in a directory that does", path, dir));
      }
      if (!Exists(path) && access(dir.c_str(), W_OK) != 0) {
        return Status::PermissionDenied(fmt::format(
            "open {}: the file cannot be created: its directory {} is not writable by this user: make it writable, or "
            "give a file in a writable directory",
            path, dir));
      }
    }
    return s;
  }
  std::unique_ptr<Database> out(new Database(db, path));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  sqlite3_extended_result_codes(db, 1);
  // A file this user may not write is opened read-only by SQLite, and every write would fail later.
  if (sqlite3_db_readonly(db, "main") == 1) {
    return Status::PermissionDenied("open " + path +
                                    ": the file is read-only (vramwatch writes its history there): make it writable "
                                    "by this user, or give another file");
  }
  // A -wal or -shm file left by another user (root ran the daemon once, the service user runs it
  // now): SQLite opens the database, and every write fails later.
  if (const char* file = sqlite3_db_filename(db, "main"); file != nullptr && *file != '\0') {
    for (const char* suffix : {"-wal", "-shm"}) {
      const std::string side = std::string(file) + suffix;
      if (Exists(side) && access(side.c_str(), W_OK) != 0) {
        return Status::PermissionDenied(fmt::format(
            "open {}: {} is not writable by this user (left by another user that ran vramwatch on this file, such as "
            "root): give it to the user the daemon runs as (chown), or run the daemon as its owner",
            path, side));
      }
    }
  }
  // These read the file's header (and open the -wal of a file in WAL mode): a read-only directory,
  // a damaged or foreign file can show up here first.
  for (const std::string& pragma :
       {std::string("PRAGMA synchronous=NORMAL"),
        // The -wal file keeps its largest size unless told otherwise (a burst, or a reader that held
        // a checkpoint back); cut it back to this after each checkpoint.
        "PRAGMA journal_size_limit=" + std::to_string(kWalSizeLimitBytes),
        "PRAGMA cache_size=-" + std::to_string(options.cache_kib), std::string("PRAGMA temp_store=MEMORY")}) {
    if (Status s = out->Exec(pragma); !s.ok()) return out->OpenFailure(s);
  }
  if (options.max_size_bytes > 0) {
    // The page size is read from the file's header: a damaged or foreign file shows up here.
    auto ps = out->Prepare("PRAGMA page_size");
    if (!ps.ok()) return out->OpenFailure(ps.status());
    auto r = ps->Step();
    if (!r.ok()) return out->OpenFailure(r.status());
    int64_t page = *r ? ps->ColumnInt(0) : 4096;
    ps->Reset();
    int64_t pages = static_cast<int64_t>(options.max_size_bytes) / (page > 0 ? page : 4096);
    if (pages < 8) pages = 8;
    if (Status s = out->Exec("PRAGMA max_page_count=" + std::to_string(pages)); !s.ok()) return out->OpenFailure(s);
  }
  if (!options.defer_wal) VW_RETURN_IF_ERROR(out->UseWal());
  return out;
}

Status Database::OpenFailure(const Status& s) {
  if (CorruptError(db_)) return DamagedDatabase(path_, db_);
  // A writable file in a directory that is not: SQLite's "attempt to write a readonly database"
  // names neither.
  if (const std::string dir = DirectoryOf(path_);
      (sqlite3_errcode(db_) & 0xff) == SQLITE_READONLY && path_ != ":memory:" && access(dir.c_str(), W_OK) != 0) {
    return Status::PermissionDenied(
        fmt::format("open {}: its directory {} is not writable (SQLite keeps the -wal and -shm files beside the "
                    "database): make it writable by this user, or give a file in a writable directory",
                    path_, dir));
  }
  return s.WithContext("open " + path_);
}

Result<uint64_t> Database::SizeBytes() {
  int64_t values[2] = {0, 0};
  const char* pragmas[2] = {"PRAGMA page_count", "PRAGMA page_size"};
  for (int i = 0; i < 2; ++i) {
    auto st = Prepare(pragmas[i]);
    if (!st.ok()) return st.status();
    auto row = st->Step();
    if (!row.ok()) return row.status();
    values[i] = *row ? st->ColumnInt(0) : 0;
    st->Reset();
  }
  return static_cast<uint64_t>(std::max<int64_t>(0, values[0])) *
         static_cast<uint64_t>(std::max<int64_t>(0, values[1]));
}

Status Database::UseWal() {
  // journal_mode returns a row; a read-only file or directory shows up here first, and so does a
  // file whose first pages are damaged (a truncated one).
  auto mode = Prepare("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return OpenFailure(mode.status());
  auto row = mode->Step();
  if (!row.ok()) return OpenFailure(row.status());
  const bool wal = *row && mode->ColumnText(0) == "wal";
  mode->Reset();
  if (path_ != ":memory:" && !wal) {
    return Status::IoError("open " + path_ + ": could not switch the database to WAL mode");
  }
  return Status::Ok();
}

void Database::SetBusyTimeout(int ms) {
  sqlite3_busy_timeout(db_, ms);
}

bool Database::LastErrorIsFull() const {
  return (sqlite3_errcode(db_) & 0xff) == SQLITE_FULL;
}

Database::~Database() {
  sqlite3_close_v2(db_);
}

Status Database::AddColumnIfMissing(std::string_view table, std::string_view column, std::string_view declaration) {
  bool has = false;
  auto info = Prepare("PRAGMA table_info(" + std::string(table) + ")");
  if (!info.ok()) return info.status();
  VW_RETURN_IF_ERROR(info->ForEachRow([&](const Statement& row) { has |= row.ColumnText(1) == column; }));
  if (has) return Status::Ok();
  return Exec("ALTER TABLE " + std::string(table) + " ADD COLUMN " + std::string(column) + " " +
              std::string(declaration));
}

Status Database::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string what = "sqlite '" + s.substr(0, 60) + "'";
  sqlite3_free(err);
  return FromSqlite(rc, what, db_);
}

Result<Statement> Database::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return FromSqlite(rc, "prepare '" + std::string(sql.substr(0, 60)) + "'", db_);
  }
  return Statement(db_, stmt);
}

void Database::Rollback() {
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

bool Database::LastErrorIsCorrupt() const {
  return CorruptError(db_);
}

Result<std::string> Database::CheckPragma(const std::string& sql) {
  auto st = Prepare(sql);
  if (!st.ok()) return CorruptError(db_) ? Result<std::string>(std::string(sqlite3_errmsg(db_))) : st.status();
  auto r = st->Step();
  if (!r.ok()) return CorruptError(db_) ? Result<std::string>(std::string(sqlite3_errmsg(db_))) : r.status();
  if (!*r) return Status::IoError(sql + " returned no row");
  // The first complaint comes after a line naming the schema ("*** in database main ***").
  std::string verdict = st->ColumnText(0);
  if (const size_t nl = verdict.rfind('\n'); nl != std::string::npos) verdict.erase(0, nl + 1);
  return verdict;
}

Result<std::string> Database::IntegrityCheck() {
  return CheckPragma("PRAGMA integrity_check");
}

Result<std::string> Database::QuickCheck(std::string_view table) {
  std::string sql = "PRAGMA quick_check";
  if (!table.empty()) {
    // The pragma takes a name, not a bound value; quoted as an SQL identifier.
    sql += "(\"";
    for (char c : table) sql += c == '"' ? std::string("\"\"") : std::string(1, c);
    sql += "\")";
  }
  return CheckPragma(sql);
}

}  // namespace vw::storage
