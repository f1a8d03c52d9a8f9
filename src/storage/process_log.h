// ProcessLog: one lifecycle record per GPU memory holder (a PID on a GPU from the first time it was
// seen): first/last seen, peak memory, how it ended, and who it belonged to (container, pod, job).
// Kept in the history database (table `processes`) for the retention the caller applies.
//
// Writes are buffered (Upsert) and written by HistoryStore::Flush inside the batch's transaction.
// Units: times are seconds since the Unix epoch (UTC), sizes bytes.
// Threading: owned by its HistoryStore; same thread rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "storage/sqlite_db.h"

namespace vw::storage {

// How a holder's life ended.
enum class ProcessEnd {
  kRunning,             // still seen at the last sample
  kExited,              // gone, and its memory came back
  kKilled,              // gone after a signal we sent or saw (SIGKILL, OOM killer)
  kVanishedMemoryHeld,  // the process is gone but its memory stayed held (orphaned context)
};

std::string_view ProcessEndName(ProcessEnd e);  // "running", "exited", "killed", "vanished_memory_held"
Result<ProcessEnd> ParseProcessEnd(std::string_view name);

struct ProcessRecord {
  std::string gpu;          // GPU key ("0" or UUID)
  int64_t pid = 0;          // host PID
  double first_seen_s = 0;  // with gpu and pid, identifies the record (PID reuse gives a new one)
  double last_seen_s = 0;
  std::optional<uint64_t> peak_bytes;
  ProcessEnd end = ProcessEnd::kRunning;
  std::string command;
  std::string user;
  std::string container;       // container ID
  std::string pod;             // pod UID
  std::string pod_namespace;   // Kubernetes namespace, pod name and container name, when the
  std::string pod_name;        // daemon read them (--kube-logs); empty otherwise, and in records
  std::string container_name;  // of a database written before they were kept
  std::string slurm_job;
};

class ProcessLog {
 public:
  explicit ProcessLog(Database& db) : db_(db) {}
  Status Init();  // creates the table and prepares statements

  // Buffers the record; a later Upsert of the same (gpu, pid, first_seen_s) replaces it.
  void Upsert(const ProcessRecord& record);
  // Writes the buffer; the caller holds the transaction. The buffer is kept until Committed().
  Status WritePending();
  void Committed() { pending_.clear(); }
  size_t pending() const { return pending_.size(); }

  // Records whose life overlaps [from_s, to_s], oldest first (pending ones included).
  Result<std::vector<ProcessRecord>> Query(double from_s, double to_s);
  // Records still marked running (to resume tracking after a restart).
  Result<std::vector<ProcessRecord>> Running();
  Status DeleteEndedBefore(double t_s);

 private:
  Result<std::vector<ProcessRecord>> ReadRows(Statement& st);
  Database& db_;
  Statement upsert_, query_, running_, delete_;
  std::map<std::tuple<std::string, int64_t, double>, ProcessRecord> pending_;
};

}  // namespace vw::storage
