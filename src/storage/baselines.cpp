#include "storage/baselines.h"

#include <algorithm>
#include <cmath>

namespace vw::storage {

Baseline Learn(const std::optional<Baseline>& prev, const std::string& key, double plateau_bytes, double t_s,
               double weight) {
  Baseline b;
  b.key = key;
  b.updated_s = t_s;
  if (!prev || prev->observations == 0) {
    b.level_bytes = plateau_bytes;
    b.spread_bytes = 0;
    b.observations = 1;
    return b;
  }
  b.observations = prev->observations + 1;
  // Even averaging for the first observations, then a fixed weight.
  double w = std::max(weight, 1.0 / static_cast<double>(b.observations));
  double dev = std::fabs(plateau_bytes - prev->level_bytes);
  b.level_bytes = prev->level_bytes + w * (plateau_bytes - prev->level_bytes);
  b.spread_bytes = prev->spread_bytes + w * (dev - prev->spread_bytes);
  return b;
}

std::optional<double> FractionAbove(const Baseline& b, double used_bytes) {
  if (!(b.level_bytes > 0)) return std::nullopt;
  return (used_bytes - b.level_bytes) / b.level_bytes;
}

Status BaselineStore::Init() {
  VW_RETURN_IF_ERROR(
      db_.Exec("CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, level_bytes REAL NOT NULL,"
               " spread_bytes REAL NOT NULL, observations INTEGER NOT NULL, updated REAL NOT NULL)"));
  auto p = db_.Prepare(
      "INSERT OR REPLACE INTO baselines (key, level_bytes, spread_bytes, observations, updated) VALUES (?,?,?,?,?)");
  if (!p.ok()) return p.status();
  put_ = std::move(*p);
  auto g = db_.Prepare("SELECT key, level_bytes, spread_bytes, observations, updated FROM baselines WHERE key = ?");
  if (!g.ok()) return g.status();
  get_ = std::move(*g);
  auto a = db_.Prepare("SELECT key, level_bytes, spread_bytes, observations, updated FROM baselines ORDER BY key");
  if (!a.ok()) return a.status();
  all_ = std::move(*a);
  return Status::Ok();
}

Status BaselineStore::WritePending() {
  for (const auto& [key, b] : pending_) {
    put_.Bind(1, b.key);
    put_.Bind(2, b.level_bytes);
    put_.Bind(3, b.spread_bytes);
    put_.Bind(4, static_cast<int64_t>(b.observations));
    put_.Bind(5, b.updated_s);
    Status s = put_.Run();
    if (!s.ok()) {
      put_.Reset();
      return s.WithContext("write baseline '" + key + "'");
    }
  }
  return Status::Ok();
}

namespace {
Baseline ReadBaseline(const Statement& st) {
  Baseline b;
  b.key = st.ColumnText(0);
  b.level_bytes = st.ColumnDouble(1);
  b.spread_bytes = st.ColumnDouble(2);
  b.observations = static_cast<uint64_t>(st.ColumnInt(3));
  b.updated_s = st.ColumnDouble(4);
  return b;
}
}  // namespace

Result<std::optional<Baseline>> BaselineStore::Get(const std::string& key) {
  if (auto it = pending_.find(key); it != pending_.end()) return std::optional<Baseline>(it->second);
  get_.Bind(1, key);
  auto row = get_.Step();
  if (!row.ok()) {
    get_.Reset();
    return row.status();
  }
  std::optional<Baseline> out;
  if (*row) out = ReadBaseline(get_);
  get_.Reset();
  return out;
}

Result<std::vector<Baseline>> BaselineStore::All() {
  std::map<std::string, Baseline> merged;
  Status read = all_.ForEachRow([&](const Statement& st) {
    Baseline b = ReadBaseline(st);
    merged[b.key] = b;
  });
  if (!read.ok()) return read;
  for (const auto& [k, b] : pending_) merged[k] = b;
  std::vector<Baseline> out;
  for (auto& [k, b] : merged) out.push_back(std::move(b));
  return out;
}

}  // namespace vw::storage
