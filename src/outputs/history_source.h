// HistorySource: where /api/v1/history gets its series. StoreHistorySource reads the daemon's SQLite
// history through its own connection (WAL lets it read while the sampler writes).
//
// Points are the raw samples in the range; when there are more than max_points they are thinned to
// the minimum and maximum of each stretch (so spikes and dips survive); where raw samples have aged
// out, the minute aggregates' last values stand in. The floor is the minute aggregates' floor.
// Units: seconds since the Unix epoch, bytes.
// Threading: Query() may be called from several threads (calls are serialised).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "outputs/daemon_status_json.h"
#include "storage/history_store.h"

namespace vw::outputs {

class HistorySource {
 public:
  virtual ~HistorySource() = default;
  // std::nullopt when the series is unknown.
  virtual Result<std::optional<HistorySeries>> Query(const std::string& series, double from_s, double to_s) = 0;
};

// Keeps at most max_points points, in time order, each stretch's min and max (the first and last
// points are always kept).
std::vector<std::pair<double, uint64_t>> ThinMinMax(const std::vector<storage::HistoryPoint>& pts, size_t max_points);

class StoreHistorySource : public HistorySource {
 public:
  static Result<std::unique_ptr<StoreHistorySource>> Open(const std::string& db_path, size_t max_points = 4000);
  Result<std::optional<HistorySeries>> Query(const std::string& series, double from_s, double to_s) override;

 private:
  StoreHistorySource(std::unique_ptr<storage::HistoryStore> store, size_t max_points)
      : store_(std::move(store)), max_points_(max_points) {}
  std::mutex mu_;
  std::unique_ptr<storage::HistoryStore> store_;
  size_t max_points_;
};

}  // namespace vw::outputs
