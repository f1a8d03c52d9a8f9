#include "storage/xid_log.h"

#include <tuple>

namespace vw::storage {

namespace {

Status PrepareInto(Database& db, Statement& into, const char* sql) {
  auto st = db.Prepare(sql);
  if (!st.ok()) return st.status();
  into = std::move(*st);
  return Status::Ok();
}

std::optional<int64_t> OptionalInt(std::optional<unsigned> v) {
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

// A stored MIG instance; a value no instance can have (a hand-edited file) reads as none.
std::optional<unsigned> OptionalUnsigned(std::optional<int64_t> v) {
  if (!v || *v < 0 || *v > 0xFFFF) return std::nullopt;
  return static_cast<unsigned>(*v);
}

}  // namespace

Status XidLog::Init() {
  VW_RETURN_IF_ERROR(db_.Exec(
      "CREATE TABLE IF NOT EXISTS xid_counts (boot_id TEXT NOT NULL, gpu TEXT NOT NULL, xid INTEGER NOT NULL,"
      " count INTEGER NOT NULL, PRIMARY KEY (boot_id, gpu, xid)) WITHOUT ROWID;"
      "CREATE TABLE IF NOT EXISTS xid_events (id INTEGER PRIMARY KEY, boot_id TEXT NOT NULL, gpu TEXT NOT NULL,"
      " xid INTEGER NOT NULL, seen REAL NOT NULL, pci_bus_id TEXT NOT NULL, pid INTEGER, process_name TEXT NOT NULL,"
      " message TEXT NOT NULL, caused_by_xid INTEGER, line TEXT NOT NULL, gpu_instance INTEGER,"
      " compute_instance INTEGER);"));
  // A database written before MIG instances were kept: add their columns (its events read with
  // none).
  VW_RETURN_IF_ERROR(db_.AddColumnIfMissing("xid_events", "gpu_instance", "INTEGER"));
  VW_RETURN_IF_ERROR(db_.AddColumnIfMissing("xid_events", "compute_instance", "INTEGER"));
  VW_RETURN_IF_ERROR(PrepareInto(db_, add_count_,
                                 "INSERT INTO xid_counts (boot_id, gpu, xid, count) VALUES (?,?,?,?)"
                                 " ON CONFLICT (boot_id, gpu, xid) DO UPDATE SET count = count + excluded.count"));
  VW_RETURN_IF_ERROR(PrepareInto(db_, add_event_,
                                 "INSERT INTO xid_events (boot_id, gpu, xid, seen, pci_bus_id, pid, process_name,"
                                 " message, caused_by_xid, line, gpu_instance, compute_instance)"
                                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"));
  VW_RETURN_IF_ERROR(PrepareInto(db_, counts_, "SELECT gpu, xid, count FROM xid_counts WHERE boot_id = ?"));
  VW_RETURN_IF_ERROR(
      PrepareInto(db_, events_,
                  "SELECT gpu, xid, seen, pci_bus_id, pid, process_name, message, caused_by_xid, line,"
                  " gpu_instance, compute_instance FROM xid_events WHERE boot_id = ? ORDER BY seen, id"));
  VW_RETURN_IF_ERROR(PrepareInto(db_, forget_counts_, "DELETE FROM xid_counts WHERE boot_id != ?"));
  VW_RETURN_IF_ERROR(PrepareInto(db_, forget_events_, "DELETE FROM xid_events WHERE boot_id != ?"));
  return Status::Ok();
}

Status XidLog::WritePending() {
  for (const auto& [key, n] : pending_counts_) {
    const auto& [boot, gpu, xid] = key;
    add_count_.Bind(1, boot);
    add_count_.Bind(2, gpu);
    add_count_.Bind(3, static_cast<int64_t>(xid));
    add_count_.Bind(4, static_cast<int64_t>(n));
    if (Status s = add_count_.Run(); !s.ok()) {
      add_count_.Reset();
      return s.WithContext("write Xid count");
    }
  }
  for (const StoredXid& e : pending_events_) {
    add_event_.Bind(1, e.boot_id);
    add_event_.Bind(2, e.gpu);
    add_event_.Bind(3, static_cast<int64_t>(e.xid));
    add_event_.Bind(4, e.seen_s);
    add_event_.Bind(5, e.pci_bus_id);
    add_event_.Bind(6, e.pid);
    add_event_.Bind(7, e.process_name);
    add_event_.Bind(8, e.message);
    add_event_.Bind(9, e.caused_by_xid ? std::optional<int64_t>(*e.caused_by_xid) : std::nullopt);
    add_event_.Bind(10, e.line);
    add_event_.Bind(11, OptionalInt(e.gpu_instance));
    add_event_.Bind(12, OptionalInt(e.compute_instance));
    if (Status s = add_event_.Run(); !s.ok()) {
      add_event_.Reset();
      return s.WithContext("write Xid event");
    }
  }
  return Status::Ok();
}

Result<XidHistory> XidLog::Load(const std::string& boot_id) {
  XidHistory h;
  counts_.Bind(1, boot_id);
  Status read = counts_.ForEachRow([&](const Statement& st) {
    h.counts[{st.ColumnText(0), static_cast<int>(st.ColumnInt(1))}] += static_cast<uint64_t>(st.ColumnInt(2));
  });
  if (!read.ok()) return read.WithContext("read Xid counts");
  events_.Bind(1, boot_id);
  read = events_.ForEachRow([&](const Statement& st) {
    StoredXid e;
    e.boot_id = boot_id;
    e.gpu = st.ColumnText(0);
    e.xid = static_cast<int>(st.ColumnInt(1));
    e.seen_s = st.ColumnDouble(2);
    e.pci_bus_id = st.ColumnText(3);
    e.pid = st.ColumnOptInt(4);
    e.process_name = st.ColumnText(5);
    e.message = st.ColumnText(6);
    if (auto c = st.ColumnOptInt(7)) e.caused_by_xid = static_cast<int>(*c);
    e.line = st.ColumnText(8);
    e.gpu_instance = OptionalUnsigned(st.ColumnOptInt(9));
    e.compute_instance = OptionalUnsigned(st.ColumnOptInt(10));
    h.events.push_back(std::move(e));
  });
  if (!read.ok()) return read.WithContext("read Xid events");
  for (const auto& [key, n] : pending_counts_) {
    if (std::get<0>(key) == boot_id) h.counts[{std::get<1>(key), std::get<2>(key)}] += n;
  }
  for (const StoredXid& e : pending_events_) {
    if (e.boot_id == boot_id) h.events.push_back(e);
  }
  return h;
}

Status XidLog::ForgetOtherBoots(const std::string& boot_id) {
  for (Statement* st : {&forget_counts_, &forget_events_}) {
    st->Bind(1, boot_id);
    if (Status s = st->Run(); !s.ok()) {
      st->Reset();
      return s.WithContext("forget the Xid events of other boots");
    }
  }
  return Status::Ok();
}

}  // namespace vw::storage
