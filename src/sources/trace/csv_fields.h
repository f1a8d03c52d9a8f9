// CSV field splitting for nvidia-smi output: fields are separated by ',', surrounding spaces are
// dropped, and a field wrapped in double quotes keeps its commas (the quotes are removed; a doubled
// quote inside stays doubled). Fields are views into the line; no allocation once `fields` has grown.
// Also: the nvidia-smi query field names vramwatch reads, and header-line recognition.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sources/trace/trace_values.h"

namespace vw::trace {

void SplitCsv(std::string_view line, std::vector<std::string_view>* fields);

// The fast path of SplitCsv for a line without quotes: writes the trimmed fields into out[0..max)
// and returns their number. Returns kSplitFallback when the line holds a double quote or more than
// `max` fields: then call SplitCsv. For lines it accepts, the fields equal SplitCsv's.
inline constexpr size_t kSplitFallback = static_cast<size_t>(-1);
size_t SplitUnquotedInto(std::string_view line, std::string_view* out, size_t max);

// What a --query-gpu column means to vramwatch.
enum class CsvColumn : uint8_t {
  kOther,      // read, not used
  kTimestamp,  // timestamp
  kIndex,      // index
  kUuid,       // uuid, gpu_uuid
  kPciBusId,   // pci.bus_id, gpu_bus_id
  kName,       // name, gpu_name
  kUsed,       // memory.used
  kTotal,      // memory.total
  kFree,       // memory.free
  kReserved,   // memory.reserved
  kUtil,       // utilization.gpu
  kPid,        // pid: a per-process query (--query-compute-apps), not per-GPU rows
};

struct CsvColumnSpec {
  CsvColumn kind = CsvColumn::kOther;
  MemUnit unit = MemUnit::kNone;  // from "[MiB]" in the header; kNone = not given
  bool unknown_unit = false;      // a memory column whose "[...]" names no memory unit ("[xyz]")
};

// "memory.used [MiB]" -> {kUsed, kMiB}. False when the text is not shaped like a query field name
// (lower-case dotted identifier with an optional bracketed unit).
bool ParseCsvColumn(std::string_view field, CsvColumnSpec* out);

// True when every field is shaped like a query field name and at least one is a field vramwatch knows.
bool IsCsvHeader(const std::vector<std::string_view>& fields);

}  // namespace vw::trace
