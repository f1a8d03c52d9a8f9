// GpuIdentityStore: which card each GPU key of the history stood for, and since when.
//
// History is kept by GPU key (the NVML index, "0"), and an index is not a card: a card replaced,
// or one that fell off the bus so that every card after it moved down an index at the next boot,
// puts another card at a key that has history. The daemon records the UUID it sees at each key
// (table `gpu_identities`); after a restart it re-feeds a key's detector only with samples taken
// since the card now there was first seen at it, and when a different UUID answers at a key it
// starts that key's detector anew.
//
// Writes are buffered (Put) and written by HistoryStore::Flush in the batch's transaction.
// Units: seconds since the Unix epoch. Threading: owned by its HistoryStore.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/status.h"
#include "storage/sqlite_db.h"

namespace vw::storage {

struct GpuIdentity {
  std::string uuid;    // as NVML gives it ("GPU-8f2a…")
  double since_s = 0;  // first sample of this card at this key
};

class GpuIdentityStore {
 public:
  explicit GpuIdentityStore(Database& db) : db_(db) {}
  Status Init();
  void Put(const std::string& gpu, const GpuIdentity& id) { pending_[gpu] = id; }  // buffered until the flush
  Status WritePending();
  void Committed() { pending_.clear(); }
  // Every key's identity, stored ones with pending changes applied.
  Result<std::map<std::string, GpuIdentity>> All();

 private:
  Database& db_;
  Statement put_, all_;
  std::map<std::string, GpuIdentity> pending_;
};

}  // namespace vw::storage
