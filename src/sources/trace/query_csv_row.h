// The fast path for one `--query-gpu` data row: a single scan that finds each field's comma and
// parses the field as it goes (timestamps, MiB values, percentages and indexes in their common
// spellings), instead of splitting the row first and parsing the fields after.
//
// It only takes rows it can parse exactly: for every row it accepts, the record equals what the
// general path (split with SplitCsv, then the per-column parser of the query-csv reader) gives.
// Anything else — a double quote, too many or too few fields, an unknown unit, a value out of
// range, a bad timestamp, a layout without a timestamp column — returns false, and the caller
// parses the row with the general path, which reports errors with their column and text, treats
// `[N/A]` as missing and applies --lenient as before. On false, *rec holds unspecified values
// (the general path resets every field) and only *cache may have changed.
//
// Units: memory values in bytes (MiB values × 2^20), utilization as a ratio 0..1, times in seconds
// since the epoch (wall clock, as ParseTraceTimestamp). Thread-safe for distinct `cache`/`rec`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/sample.h"
#include "sources/trace/compact_sample.h"
#include "sources/trace/csv_fields.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {

// Clears the time and the values a row sets in a sample (not its process list).
inline void ResetRowValues(MemorySample* s) {
  s->t = 0;
  s->used_bytes.reset();
  s->total_bytes.reset();
  s->free_bytes.reset();
  s->reserved_bytes.reset();
  s->gpu_util_ratio.reset();
}

// Clears what a row sets (everything but the UUID, name and key, which a row overwrites only when
// they differ), keeping the strings' capacity: both row parsers start here.
inline void ResetRowFields(TraceRecord* rec) {
  rec->gpu.index.reset();
  rec->gpu.pci_bus_id.clear();
  ResetRowValues(&rec->sample);
  rec->sample.processes.reset();
}

// *s = v unless it already holds v (short keys: no call for the common case).
inline void AssignIfDifferent(std::string* s, std::string_view v) {
  if (s->size() == v.size()) {
    size_t i = 0;
    while (i < v.size() && (*s)[i] == v[i]) ++i;
    if (i == v.size()) return;
  }
  s->assign(v.data(), v.size());
}

// Ends a row's identity: UUID and name cleared when the layout has no such column, and the key
// that tells GPUs apart: the index, else the UUID, else the PCI bus ID, else "0".
inline void FinishRowIdentity(TraceRecord* rec, bool have_uuid, bool have_name, std::string_view key_index,
                              std::string_view key_uuid, std::string_view key_pci) {
  if (!have_uuid) rec->gpu.uuid.clear();
  if (!have_name) rec->gpu.name.clear();
  const std::string_view key = !key_index.empty()  ? key_index
                               : !key_uuid.empty() ? key_uuid
                               : !key_pci.empty()  ? key_pci
                                                   : std::string_view("0");
  AssignIfDifferent(&rec->gpu.key, key);
}

// Parses `line` (one row, without its line end; leading/trailing spaces allowed) laid out as
// cols[0..n) into *rec. Sets *has_zone when the row's timestamp had a zone. True when parsed.
bool ParseQueryRowFast(std::string_view line, const CsvColumnSpec* cols, size_t n, DateCache* cache, TraceRecord* rec,
                       bool* has_zone);

// The GPU a row is expected to belong to (the entry of the block's GPU table predicted next) and
// which of its texts are plain (PlainIdentityTexts): only those are compared in place.
inline constexpr uint8_t kPlainUuid = 1, kPlainPci = 2, kPlainName = 4;
struct ExpectedGpu {
  const GpuIdentity* gpu = nullptr;
  uint8_t plain = 0;  // kPlainUuid | kPlainPci | kPlainName
};

// The bits of the texts of `gpu` that a row's field can be compared with byte for byte: not empty,
// not a missing-value spelling, no ',' or '"', no space or tab at either end (and a PCI bus ID
// already in its normalised form). Such a text equals a field exactly when the field's bytes are
// the text followed by nothing but spaces or tabs.
uint8_t PlainIdentityTexts(const GpuIdentity& gpu);

// ParseQueryRowFast for a row of a known GPU: the same scan, but the row's identity fields are
// compared with expect.gpu instead of being stored (the UUID, name and PCI bus ID byte for byte in
// place, without searching for their commas). True when ParseQueryRowFast would take the row and give exactly
// expect.gpu's identity (every field: key, index, UUID, PCI bus ID, name) and these values. False on any doubt —
// another GPU, a text that is not plain, an index that is not plain digits, anything ParseQueryRowFast refuses —
// leaving *sample unspecified and only *cache changed: then parse the row with ParseQueryRowFast. The values go
// straight into the compact sample: its time, values and `present` as ToCompact would write ParseQueryRowFast's sample
// (its `gpu` is left alone).
bool ParseQueryRowExpected(std::string_view line, const CsvColumnSpec* cols, size_t n, DateCache* cache,
                           const ExpectedGpu& expect, CompactSample* sample, bool* has_zone);

// Whether the query-csv reader tries ParseQueryRowFast first (default true). Read when a reader
// is created. Tests turn it off to compare the fast path with the general path.
void SetQueryRowFastPath(bool on);
bool QueryRowFastPath();

}  // namespace vw::trace
