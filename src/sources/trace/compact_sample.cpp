#include "sources/trace/compact_sample.h"

#include <cstring>

namespace vw::trace {

void FromCompact(const CompactSample& c, MemorySample* out) {
  out->t = c.t;
  out->used_bytes = c.used();
  out->total_bytes = c.total();
  out->free_bytes = c.free();
  out->reserved_bytes = c.reserved();
  out->gpu_util_ratio = c.util();
  out->processes.reset();
}

namespace {

// *to = from, keeping to's capacity.
inline void CopyGpu(const GpuIdentity& from, GpuIdentity* to) {
  to->key.assign(from.key);
  to->index = from.index;
  to->uuid.assign(from.uuid);
  to->pci_bus_id.assign(from.pci_bus_id);
  to->name.assign(from.name);
}

}  // namespace

uint32_t GpuTable::InternSlow(const GpuIdentity& gpu) {
  const size_t n = size_;
  const size_t searched = n < kSearched ? n : kSearched;
  // The entries after the last hit first, wrapping round; in a long table only the kSearched
  // entries from there on.
  size_t i = last_ + 1;
  for (size_t k = 0; k < searched; ++k, ++i) {
    if (i >= n) i -= n;
    if (SameGpu(gpus_[i], gpu)) {
      last_ = i;
      return static_cast<uint32_t>(i);
    }
  }
  if (size_ == gpus_.size()) gpus_.emplace_back();
  CopyGpu(gpu, &gpus_[size_]);
  last_ = size_;
  return static_cast<uint32_t>(size_++);
}

}  // namespace vw::trace
