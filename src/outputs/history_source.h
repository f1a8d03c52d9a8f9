// HistorySource: where /api/v1/history gets its series. StoreHistorySource reads the daemon's SQLite
// history through its own connection (WAL lets it read while the sampler writes).
//
// Points are the raw samples in the range; where raw samples have aged out, each minute aggregate
// stands in as its lowest and highest value at the minute's middle. The floor is the minute
// aggregates' floor, at each minute's middle. Every point lies within [from, to] (a minute that
// overlaps an end is placed at it), and each list is thinned to max_points: the minimum and maximum
// of each stretch (so spikes and dips survive).
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
