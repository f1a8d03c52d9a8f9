// Compact samples: how block-parallel parsing hands records from its worker threads to the caller.
//
// A TraceRecord is 256 bytes with four strings, of which the series feeding in `analyze` reads a
// few numbers. A CompactSample holds the numbers of one record (56 bytes) and a small GPU number
// into the identity table of its batch (GpuTable), so a worker writes, and the caller reads, about a
// quarter of the bytes, and the GPU strings cross threads once per distinct identity per batch.
//
// Only records without a process list can be compacted (the --query-gpu CSV never has one).
// ToCompact()/FromCompact() round-trip every other field of a MemorySample bit for bit.
//
// Units: as MemorySample (seconds, bytes, ratio 0..1). Threading: none of these types is shared;
// one thread fills a batch, another reads it after a hand-over with a happens-before edge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"

namespace vw::trace {

struct CompactSample {
  // Which values are present (MemorySample's optionals): bits of `present`.
  static constexpr uint8_t kUsed = 1, kTotal = 2, kFree = 4, kReserved = 8, kUtil = 16;

  double t = 0;                 // seconds, as MemorySample::t
  uint64_t used_bytes = 0;      // bytes, valid with kUsed
  uint64_t total_bytes = 0;     // bytes, valid with kTotal
  uint64_t free_bytes = 0;      // bytes, valid with kFree
  uint64_t reserved_bytes = 0;  // bytes, valid with kReserved
  double gpu_util_ratio = 0;    // 0..1, valid with kUtil
  uint32_t gpu = 0;             // index into the batch's GPU table
  uint8_t present = 0;

  std::optional<uint64_t> used() const { return Get(kUsed, used_bytes); }
  std::optional<uint64_t> total() const { return Get(kTotal, total_bytes); }
  std::optional<uint64_t> free() const { return Get(kFree, free_bytes); }
  std::optional<uint64_t> reserved() const { return Get(kReserved, reserved_bytes); }
  std::optional<double> util() const {
    return (present & kUtil) != 0 ? std::optional<double>(gpu_util_ratio) : std::nullopt;
  }

 private:
  std::optional<uint64_t> Get(uint8_t bit, uint64_t v) const {
    return (present & bit) != 0 ? std::optional<uint64_t>(v) : std::nullopt;
  }
};

// Writes the numbers of `s` into *out (its process list is not carried: callers only pass samples
// without one). Inline and field by field: a returned struct copied in wide pieces right after its
// narrow stores cost a store-forwarding stall per record (measured: ~15 % of the block workers' time).
inline void ToCompact(const MemorySample& s, uint32_t gpu, CompactSample* out) {
  uint8_t present = 0;
  out->t = s.t;
  out->gpu = gpu;
  if (s.used_bytes) {
    out->used_bytes = *s.used_bytes;
    present |= CompactSample::kUsed;
  }
  if (s.total_bytes) {
    out->total_bytes = *s.total_bytes;
    present |= CompactSample::kTotal;
  }
  if (s.free_bytes) {
    out->free_bytes = *s.free_bytes;
    present |= CompactSample::kFree;
  }
  if (s.reserved_bytes) {
    out->reserved_bytes = *s.reserved_bytes;
    present |= CompactSample::kReserved;
  }
  if (s.gpu_util_ratio) {
    out->gpu_util_ratio = *s.gpu_util_ratio;
    present |= CompactSample::kUtil;
  }
  out->present = present;
}
// Sets every field of *out from `c`; the process list is left empty.
void FromCompact(const CompactSample& c, MemorySample* out);

// a == b without a library call (the strings of an identity are short); the last 8 bytes first
// when there are 8 or more (UUIDs of one machine differ at the end).
inline bool SameText(const std::string& a, const std::string& b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n < 8) {
    for (size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  uint64_t u, v;
  std::memcpy(&u, x + n - 8, 8);
  std::memcpy(&v, y + n - 8, 8);
  if (u != v) return false;
  for (size_t i = 0; i + 8 < n; i += 8) {
    std::memcpy(&u, x + i, 8);
    std::memcpy(&v, y + i, 8);
    if (u != v) return false;
  }
  return true;
}

// Whether two identities are the same in every field (key, index, UUID, PCI bus id, name).
inline bool SameGpu(const GpuIdentity& a, const GpuIdentity& b) {
  return a.index == b.index && SameText(a.key, b.key) && SameText(a.uuid, b.uuid) &&
         SameText(a.pci_bus_id, b.pci_bus_id) && SameText(a.name, b.name);
}

// The GPU identities of one batch, each stored once in the common case. Intern() looks at most
// kSearched entries (the one after the last hit first: GPUs usually come round in the same order)
// and otherwise appends, so a batch with many distinct identities costs O(1) per record and may
// hold an identity twice (callers resolve each entry on its own, so that is only slower).
// Entries are reused across Clear() calls, keeping their strings' capacity.
class GpuTable {
 public:
  static constexpr size_t kSearched = 32;

  // The entry Intern() compares first: the one after the last hit (0 when the table is empty).
  size_t predicted() const { return last_ + 1 < size_ ? last_ + 1 : 0; }

  uint32_t Intern(const GpuIdentity& gpu) {
    const size_t next = predicted();
    if (size_ != 0 && SameGpu(gpus_[next], gpu)) {
      last_ = next;
      return static_cast<uint32_t>(next);
    }
    return InternSlow(gpu);
  }
  // Intern() of an identity known to equal entry i (a row compared with it field by field).
  uint32_t Reuse(size_t i) {
    last_ = i;
    return static_cast<uint32_t>(i);
  }
  void Clear() {
    size_ = 0;
    last_ = 0;
  }
  size_t size() const { return size_; }
  const GpuIdentity* data() const { return gpus_.data(); }
  const GpuIdentity& operator[](size_t i) const { return gpus_[i]; }

 private:
  uint32_t InternSlow(const GpuIdentity& gpu);

  std::vector<GpuIdentity> gpus_;  // the first size_ are in use
  size_t size_ = 0;
  size_t last_ = 0;  // the entry last returned
};

// What BlockParallelReader::NextBatch() hands out: `count` samples in file order, their GPUs in
// gpus[0..gpu_count). Valid until the next call.
struct SampleBatch {
  const CompactSample* samples = nullptr;
  size_t count = 0;
  const GpuIdentity* gpus = nullptr;
  size_t gpu_count = 0;
};

}  // namespace vw::trace
