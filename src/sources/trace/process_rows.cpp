#include "sources/trace/process_rows.h"

#include <algorithm>
#include <unordered_map>

namespace vw::trace {

const std::vector<ProcessMemory>& OnePerPid(const std::vector<ProcessMemory>& listed, std::vector<int64_t>* pids,
                                            std::vector<ProcessMemory>* merged) {
  pids->clear();
  for (const ProcessMemory& p : listed) pids->push_back(p.pid);
  std::sort(pids->begin(), pids->end());
  if (std::adjacent_find(pids->begin(), pids->end()) == pids->end()) return listed;
  merged->clear();
  std::unordered_map<int64_t, size_t> at;  // PID -> its entry in *merged
  for (const ProcessMemory& p : listed) {
    auto [it, added] = at.try_emplace(p.pid, merged->size());
    if (added) {
      merged->push_back(p);
      continue;
    }
    ProcessMemory& m = (*merged)[it->second];
    if (p.used_bytes) m.used_bytes = m.used_bytes.value_or(0) + *p.used_bytes;
    if (m.gpu_instance_id != p.gpu_instance_id) {
      m.gpu_instance_id.reset();
      m.instance_used_bytes.reset();
      m.instance_total_bytes.reset();
    }
  }
  return *merged;
}

}  // namespace vw::trace
