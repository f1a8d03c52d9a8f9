#include "storage/alert_state.h"

namespace vw::storage {

std::string EncodePairs(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) {
    if (!out.empty()) out += '\x1f';
    out += k;
    out += '=';
    for (char c : v) out += c == '\x1f' ? ' ' : c;
  }
  return out;
}

std::map<std::string, std::string> DecodePairs(const std::string& s) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\x1f', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

Status AlertStateStore::Init() {
  VW_RETURN_IF_ERROR(db_.Exec(
      "CREATE TABLE IF NOT EXISTS firing_alerts (key TEXT PRIMARY KEY, name TEXT NOT NULL, labels TEXT NOT NULL,"
      " annotations TEXT NOT NULL, severity INTEGER NOT NULL, active_since REAL NOT NULL, fired_at REAL NOT NULL,"
      " unseen_seconds REAL NOT NULL DEFAULT 0)"));
  // A database written before the unseen time was kept: add its column (its alerts read as seen
  // until the restart).
  VW_RETURN_IF_ERROR(db_.AddColumnIfMissing("firing_alerts", "unseen_seconds", "REAL NOT NULL DEFAULT 0"));
  auto p = db_.Prepare(
      "INSERT OR REPLACE INTO firing_alerts (key, name, labels, annotations, severity, active_since, fired_at,"
      " unseen_seconds) VALUES (?,?,?,?,?,?,?,?)");
  if (!p.ok()) return p.status();
  put_ = std::move(*p);
  auto d = db_.Prepare("DELETE FROM firing_alerts WHERE key = ?");
  if (!d.ok()) return d.status();
  del_ = std::move(*d);
  auto a = db_.Prepare(
      "SELECT key, name, labels, annotations, severity, active_since, fired_at, unseen_seconds FROM firing_alerts"
      " ORDER BY key");
  if (!a.ok()) return a.status();
  all_ = std::move(*a);
  return Status::Ok();
}

Status AlertStateStore::WritePending() {
  for (const auto& [key, a] : pending_) {
    Statement& st = a ? put_ : del_;
    st.Bind(1, key);
    if (a) {
      st.Bind(2, a->name);
      st.Bind(3, EncodePairs(a->labels));
      st.Bind(4, EncodePairs(a->annotations));
      st.Bind(5, static_cast<int64_t>(a->severity));
      st.Bind(6, a->active_since);
      st.Bind(7, a->fired_at);
      st.Bind(8, a->unseen_s);
    }
    Status s = st.Run();
    if (!s.ok()) {
      st.Reset();
      return s.WithContext("write alert state '" + key + "'");
    }
  }
  return Status::Ok();
}

Result<std::vector<StoredAlert>> AlertStateStore::All() {
  std::map<std::string, StoredAlert> merged;
  Status read = all_.ForEachRow([&](const Statement& st) {
    StoredAlert a;
    a.key = st.ColumnText(0);
    a.name = st.ColumnText(1);
    a.labels = DecodePairs(st.ColumnText(2));
    a.annotations = DecodePairs(st.ColumnText(3));
    a.severity = static_cast<int>(st.ColumnInt(4));
    a.active_since = st.ColumnDouble(5);
    a.fired_at = st.ColumnDouble(6);
    a.unseen_s = st.ColumnDouble(7);
    merged[a.key] = std::move(a);
  });
  if (!read.ok()) return read;
  for (const auto& [key, a] : pending_) {
    if (a) {
      merged[key] = *a;
    } else {
      merged.erase(key);
    }
  }
  std::vector<StoredAlert> out;
  for (auto& [k, a] : merged) out.push_back(std::move(a));
  return out;
}

}  // namespace vw::storage
