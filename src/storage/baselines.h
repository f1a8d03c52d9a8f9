// Baselines: what a workload's memory normally plateaus at, learned across runs and kept across
// restarts, so an alert can say "4 % above this workload's plateau and rising". Keyed by a string
// the caller chooses (command line, container image, or a --label).
//
// A baseline is an exponentially weighted mean of the plateau floors observed for the key (level)
// and the weighted mean absolute deviation around it (spread). Learn() is pure; BaselineStore
// persists the results in the history database (table `baselines`).
// Units: bytes, seconds since the Unix epoch. Threading: owned by its HistoryStore.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/sqlite_db.h"

namespace vw::storage {

struct Baseline {
  std::string key;
  double level_bytes = 0;   // learned plateau level
  double spread_bytes = 0;  // typical deviation of a plateau from the level
  uint64_t observations = 0;
  double updated_s = 0;
};

// Folds one observed plateau level into `prev` (absent: the first observation). `weight` in (0,1]
// is the share of the new observation once the baseline has a few observations; the first ones are
// averaged evenly so a single early value does not dominate.
Baseline Learn(const std::optional<Baseline>& prev, const std::string& key, double plateau_bytes, double t_s,
               double weight = 0.2);

// How far `used_bytes` is above the baseline level, as a fraction of the level (0.04 = 4 % above);
// negative when below. Absent when the level is not positive.
std::optional<double> FractionAbove(const Baseline& b, double used_bytes);

class BaselineStore {
 public:
  explicit BaselineStore(Database& db) : db_(db) {}
  Status Init();

  void Put(const Baseline& b) { pending_[b.key] = b; }  // buffered until the next flush
  Status WritePending();
  void Committed() { pending_.clear(); }

  Result<std::optional<Baseline>> Get(const std::string& key);  // pending first, then stored
  Result<std::vector<Baseline>> All();                          // sorted by key

 private:
  Database& db_;
  Statement put_, get_, all_;
  std::map<std::string, Baseline> pending_;
};

}  // namespace vw::storage
