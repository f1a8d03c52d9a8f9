// AlertStateStore: the alerts that are firing, kept in the history database (table `firing_alerts`)
// so that after a restart they are firing again at once instead of waiting out their `for:` again,
// and are resolved (with a notification) if their condition no longer holds.
//
// Writes are buffered (Put/Remove) and written by HistoryStore::Flush in the batch's transaction.
// Times are seconds since the Unix epoch. Threading: owned by its HistoryStore.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/sqlite_db.h"

namespace vw::storage {

struct StoredAlert {
  std::string key;  // dedup key
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int severity = 0;  // vw::Severity as an integer
  double active_since = 0;
  double fired_at = 0;
  // How long its condition had been seen not to hold while it fired (seconds, 0 while it held):
  // a restart goes on counting from there (AlertTracker::RestoreFiring).
  double unseen_s = 0;
};

class AlertStateStore {
 public:
  explicit AlertStateStore(Database& db) : db_(db) {}
  Status Init();
  void Put(const StoredAlert& a) { pending_[a.key] = a; }
  void Remove(const std::string& key) { pending_[key] = std::nullopt; }
  Status WritePending();
  void Committed() { pending_.clear(); }
  Result<std::vector<StoredAlert>> All();  // stored ones with pending changes applied, by key

 private:
  Database& db_;
  Statement put_, del_, all_;
  std::map<std::string, std::optional<StoredAlert>> pending_;
};

// "k=v" pairs joined by the unit separator (0x1f); values may hold anything but that byte.
std::string EncodePairs(const std::map<std::string, std::string>& m);
std::map<std::string, std::string> DecodePairs(const std::string& s);

}  // namespace vw::storage
