// XidLog: the Xid events the daemon counted, kept in the history database so that a restart does
// not forget a hardware incident. Two tables:
//   xid_counts  (boot_id, gpu, xid) -> count: what vramwatch_xid_events_total shows, per host boot;
//   xid_events  the events that keep check's `xid` finding open (the hardware set), with enough of
//               the kernel log line to raise the same finding again after a restart.
// Everything is keyed by the host's boot id (/proc/sys/kernel/random/boot_id, empty when unknown):
// a reboot resets the GPUs, so the events of an earlier boot are forgotten (ForgetOtherBoots).
//
// Writes are buffered (Count/Keep) and written by HistoryStore::Flush in the batch's transaction.
// Units: times are seconds since the Unix epoch (UTC). Threading: owned by its HistoryStore.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/status.h"
#include "storage/sqlite_db.h"

namespace vw::storage {

struct StoredXid {
  std::string boot_id;  // host boot the event was seen in; empty when unknown
  std::string gpu;      // GPU key ("1"); empty when the event named no known GPU
  int xid = 0;
  double seen_s = 0;           // when the daemon read it from the kernel log
  std::string pci_bus_id;      // normalised "00000000:3C:00.0"
  std::optional<int64_t> pid;  // missing when the line named none
  std::string process_name;    // empty when unknown
  std::string message;         // the driver's text after the code
  std::optional<int> caused_by_xid;
  std::optional<unsigned> gpu_instance, compute_instance;  // MIG; missing when the event named none
  std::string line;                                        // the whole kernel log line
};

struct XidHistory {
  std::map<std::pair<std::string, int>, uint64_t> counts;  // (GPU key, Xid) -> events counted
  std::vector<StoredXid> events;                           // kept events, oldest first
};

class XidLog {
 public:
  explicit XidLog(Database& db) : db_(db) {}
  Status Init();
  // One more event of `xid` on GPU `gpu` in boot `boot_id` (buffered).
  void Count(const std::string& boot_id, const std::string& gpu, int xid) { pending_counts_[{boot_id, gpu, xid}]++; }
  // An event to restore after a restart (buffered).
  void Keep(const StoredXid& e) { pending_events_.push_back(e); }
  Status WritePending();
  void Committed() {
    pending_counts_.clear();
    pending_events_.clear();
  }
  // Counts and kept events of `boot_id`, stored ones plus those still pending.
  Result<XidHistory> Load(const std::string& boot_id);
  // Deletes the counts and events of every boot but `boot_id` (at once, not buffered).
  Status ForgetOtherBoots(const std::string& boot_id);

 private:
  Database& db_;
  Statement add_count_, add_event_, counts_, events_, forget_counts_, forget_events_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> pending_counts_;
  std::vector<StoredXid> pending_events_;
};

}  // namespace vw::storage
