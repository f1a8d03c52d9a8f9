#include "sources/trace/csv_fields.h"

#include <cstring>

namespace vw::trace {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

CsvColumn KindOf(std::string_view name) {
  if (name == "timestamp") return CsvColumn::kTimestamp;
  if (name == "index") return CsvColumn::kIndex;
  if (name == "uuid" || name == "gpu_uuid") return CsvColumn::kUuid;
  if (name == "pci.bus_id" || name == "gpu_bus_id") return CsvColumn::kPciBusId;
  if (name == "name" || name == "gpu_name") return CsvColumn::kName;
  if (name == "memory.used") return CsvColumn::kUsed;
  if (name == "memory.total") return CsvColumn::kTotal;
  if (name == "memory.free") return CsvColumn::kFree;
  if (name == "memory.reserved") return CsvColumn::kReserved;
  if (name == "utilization.gpu") return CsvColumn::kUtil;
  if (name == "pid") return CsvColumn::kPid;
  return CsvColumn::kOther;
}

}  // namespace

void SplitCsv(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  const char* p = line.data();
  const char* end = p + line.size();
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* start = p;
    const char* stop;
    if (p < end && *p == '"') {
      const char* q = p + 1;
      for (;;) {
        q = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(end - q)));
        if (q == nullptr || q + 1 >= end || q[1] != '"') break;
        q += 2;
      }
      if (q != nullptr) {
        fields->push_back(std::string_view(p + 1, static_cast<size_t>(q - p - 1)));
        p = q + 1;
        const char* comma = static_cast<const char*>(std::memchr(p, ',', static_cast<size_t>(end - p)));
        if (comma == nullptr) return;
        p = comma + 1;
        continue;
      }
      // No closing quote: take the rest as a plain field.
    }
    const char* comma = static_cast<const char*>(std::memchr(p, ',', static_cast<size_t>(end - p)));
    stop = comma != nullptr ? comma : end;
    const char* last = stop;
    while (last > start && (last[-1] == ' ' || last[-1] == '\t')) --last;
    fields->push_back(std::string_view(start, static_cast<size_t>(last - start)));
    if (comma == nullptr) return;
    p = comma + 1;
  }
}

bool ParseCsvColumn(std::string_view field, CsvColumnSpec* out) {
  std::string_view f = Trim(field);
  size_t n = 0;
  while (n < f.size() && IsNameChar(f[n])) ++n;
  if (n == 0 || !((f[0] >= 'a' && f[0] <= 'z') || f[0] == '_')) return false;
  std::string_view name = f.substr(0, n);
  std::string_view rest = Trim(f.substr(n));
  CsvColumnSpec spec;
  spec.kind = KindOf(name);
  if (!rest.empty()) {
    if (rest.front() != '[' || rest.back() != ']') return false;
    std::string_view unit = Trim(rest.substr(1, rest.size() - 2));
    auto mem = ParseMemUnit(unit);
    if (mem) spec.unit = *mem;  // "[%]", "[W]", "[MHz]" are fine, just not memory units
  }
  *out = spec;
  return true;
}

bool IsCsvHeader(const std::vector<std::string_view>& fields) {
  bool known = false;
  for (std::string_view f : fields) {
    CsvColumnSpec spec;
    if (!ParseCsvColumn(f, &spec)) return false;
    if (spec.kind != CsvColumn::kOther) known = true;
    if (f.find('.') != std::string_view::npos || f.find('[') != std::string_view::npos) known = true;
  }
  return known;
}

}  // namespace vw::trace
