#include "storage/process_log.h"

#include <algorithm>

namespace vw::storage {

std::string_view ProcessEndName(ProcessEnd e) {
  switch (e) {
    case ProcessEnd::kRunning: return "running";
    case ProcessEnd::kExited: return "exited";
    case ProcessEnd::kKilled: return "killed";
    case ProcessEnd::kVanishedMemoryHeld: return "vanished_memory_held";
  }
  return "running";
}

Result<ProcessEnd> ParseProcessEnd(std::string_view name) {
  for (ProcessEnd e :
       {ProcessEnd::kRunning, ProcessEnd::kExited, ProcessEnd::kKilled, ProcessEnd::kVanishedMemoryHeld}) {
    if (ProcessEndName(e) == name) return e;
  }
  return Status::ParseError("process end '" + std::string(name) +
                            "': expected running, exited, killed or vanished_memory_held");
}

Status ProcessLog::Init() {
  VW_RETURN_IF_ERROR(
      db_.Exec("CREATE TABLE IF NOT EXISTS processes ("
               " gpu TEXT NOT NULL, pid INTEGER NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,"
               " peak_bytes INTEGER, end_state TEXT NOT NULL, command TEXT, user TEXT, container TEXT, pod TEXT,"
               " pod_namespace TEXT, slurm_job TEXT, pod_name TEXT, container_name TEXT,"
               " PRIMARY KEY (gpu, pid, first_seen)) WITHOUT ROWID;"
               "CREATE INDEX IF NOT EXISTS processes_last_seen ON processes(last_seen);"));
  // A database written before the pod's and container's names were kept: add their columns (its
  // records read with the names empty).
  VW_RETURN_IF_ERROR(db_.AddColumnIfMissing("processes", "pod_name", "TEXT"));
  VW_RETURN_IF_ERROR(db_.AddColumnIfMissing("processes", "container_name", "TEXT"));
  const std::string cols =
      "gpu, pid, first_seen, last_seen, peak_bytes, end_state, command, user, container, pod, pod_namespace, "
      "slurm_job, pod_name, container_name";
  auto up = db_.Prepare("INSERT OR REPLACE INTO processes (" + cols + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!up.ok()) return up.status();
  upsert_ = std::move(*up);
  auto q = db_.Prepare("SELECT " + cols +
                       " FROM processes WHERE last_seen >= ? AND first_seen <= ? ORDER BY first_seen, gpu, pid");
  if (!q.ok()) return q.status();
  query_ = std::move(*q);
  auto r = db_.Prepare("SELECT " + cols + " FROM processes WHERE end_state = 'running' ORDER BY first_seen");
  if (!r.ok()) return r.status();
  running_ = std::move(*r);
  auto d = db_.Prepare("DELETE FROM processes WHERE last_seen < ? AND end_state != 'running'");
  if (!d.ok()) return d.status();
  delete_ = std::move(*d);
  return Status::Ok();
}

void ProcessLog::Upsert(const ProcessRecord& record) {
  pending_[{record.gpu, record.pid, record.first_seen_s}] = record;
}

Status ProcessLog::WritePending() {
  for (const auto& [key, r] : pending_) {
    upsert_.Bind(1, r.gpu);
    upsert_.Bind(2, r.pid);
    upsert_.Bind(3, r.first_seen_s);
    upsert_.Bind(4, r.last_seen_s);
    if (r.peak_bytes) {
      upsert_.Bind(5, static_cast<int64_t>(*r.peak_bytes));
    } else {
      upsert_.BindNull(5);
    }
    upsert_.Bind(6, ProcessEndName(r.end));
    upsert_.Bind(7, r.command);
    upsert_.Bind(8, r.user);
    upsert_.Bind(9, r.container);
    upsert_.Bind(10, r.pod);
    upsert_.Bind(11, r.pod_namespace);
    upsert_.Bind(12, r.slurm_job);
    upsert_.Bind(13, r.pod_name);
    upsert_.Bind(14, r.container_name);
    Status s = upsert_.Run();
    if (!s.ok()) {
      upsert_.Reset();
      return s.WithContext("write process record");
    }
  }
  return Status::Ok();
}

Result<std::vector<ProcessRecord>> ProcessLog::ReadRows(Statement& st) {
  std::vector<ProcessRecord> out;
  Status read = st.ForEachRow([&](const Statement& row) {
    ProcessRecord r;
    r.gpu = row.ColumnText(0);
    r.pid = row.ColumnInt(1);
    r.first_seen_s = row.ColumnDouble(2);
    r.last_seen_s = row.ColumnDouble(3);
    if (auto p = row.ColumnOptInt(4)) r.peak_bytes = static_cast<uint64_t>(*p);
    auto end = ParseProcessEnd(row.ColumnText(5));
    r.end = end.ok() ? *end : ProcessEnd::kRunning;
    r.command = row.ColumnText(6);
    r.user = row.ColumnText(7);
    r.container = row.ColumnText(8);
    r.pod = row.ColumnText(9);
    r.pod_namespace = row.ColumnText(10);
    r.slurm_job = row.ColumnText(11);
    r.pod_name = row.ColumnText(12);
    r.container_name = row.ColumnText(13);
    out.push_back(std::move(r));
  });
  if (!read.ok()) return read;
  return out;
}

Result<std::vector<ProcessRecord>> ProcessLog::Query(double from_s, double to_s) {
  query_.Bind(1, from_s);
  query_.Bind(2, to_s);
  auto rows = ReadRows(query_);
  if (!rows.ok()) return rows.status();
  // Pending records replace stored ones with the same key.
  std::map<std::tuple<std::string, int64_t, double>, ProcessRecord> merged;
  for (auto& r : *rows) merged[{r.gpu, r.pid, r.first_seen_s}] = std::move(r);
  for (const auto& [key, r] : pending_) {
    if (r.last_seen_s >= from_s && r.first_seen_s <= to_s) merged[key] = r;
  }
  std::vector<ProcessRecord> out;
  for (auto& [key, r] : merged) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(),
                   [](const ProcessRecord& a, const ProcessRecord& b) { return a.first_seen_s < b.first_seen_s; });
  return out;
}

Result<std::vector<ProcessRecord>> ProcessLog::Running() {
  return ReadRows(running_);
}

Status ProcessLog::DeleteEndedBefore(double t_s) {
  delete_.Bind(1, t_s);
  Status s = delete_.Run();
  if (!s.ok()) delete_.Reset();
  return s;
}

}  // namespace vw::storage
