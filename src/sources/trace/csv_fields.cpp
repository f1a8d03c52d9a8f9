#include "sources/trace/csv_fields.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <string>

#include "core/ascii.h"

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

namespace {

void PushTrimmed(const char* b, const char* e, std::vector<std::string_view>* fields) {
  while (b != e && (*b == ' ' || *b == '\t')) ++b;
  while (e != b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  fields->push_back(std::string_view(b, static_cast<size_t>(e - b)));
}

// The common case, no quotes: finds the commas 16 bytes at a time. Returns false (fields
// unspecified) as soon as it sees a double quote, for the quote-aware path to take over.
bool SplitUnquoted(std::string_view line, std::vector<std::string_view>* fields) {
  const char* p = line.data();
  const size_t n = line.size();
  size_t start = 0, i = 0;
#ifdef __SSE2__
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i quote = _mm_set1_epi8('"');
  for (; i + 16 <= n; i += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(block, quote)) != 0) return false;
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(block, comma)));
    while (mask != 0) {
      const size_t pos = i + static_cast<size_t>(__builtin_ctz(mask));
      PushTrimmed(p + start, p + pos, fields);
      start = pos + 1;
      mask &= mask - 1;
    }
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == '"') return false;
    if (p[i] == ',') {
      PushTrimmed(p + start, p + i, fields);
      start = i + 1;
    }
  }
  PushTrimmed(p + start, p + n, fields);
  return true;
}

inline std::string_view Trimmed(const char* b, const char* e) {
  while (b != e && (*b == ' ' || *b == '\t')) ++b;
  while (e != b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  return std::string_view(b, static_cast<size_t>(e - b));
}

}  // namespace

size_t SplitUnquotedInto(std::string_view line, std::string_view* out, size_t max) {
  const char* p = line.data();
  const size_t n = line.size();
  size_t start = 0, i = 0, count = 0;
#ifdef __SSE2__
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i quote = _mm_set1_epi8('"');
  for (; i + 16 <= n; i += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(block, quote)) != 0) return kSplitFallback;
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(block, comma)));
    while (mask != 0) {
      const size_t pos = i + static_cast<size_t>(__builtin_ctz(mask));
      if (count == max) return kSplitFallback;
      out[count++] = Trimmed(p + start, p + pos);
      start = pos + 1;
      mask &= mask - 1;
    }
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == '"') return kSplitFallback;
    if (p[i] == ',') {
      if (count == max) return kSplitFallback;
      out[count++] = Trimmed(p + start, p + i);
      start = i + 1;
    }
  }
  if (count == max) return kSplitFallback;
  out[count++] = Trimmed(p + start, p + n);
  return count;
}

void SplitCsv(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  if (SplitUnquoted(line, fields)) return;
  fields->clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  for (;;) {
    while (p != end && (*p == ' ' || *p == '\t')) ++p;
    if (p != end && *p == '"') {
      // Quoted: runs to the closing quote ("" is an escaped quote and stays in the text).
      const char* q = p + 1;
      while (q != end && !(*q == '"' && (q + 1 == end || q[1] != '"'))) q += (*q == '"') ? 2 : 1;
      if (q != end) {
        fields->push_back(std::string_view(p + 1, static_cast<size_t>(q - p - 1)));
        p = q + 1;
        while (p != end && *p != ',') ++p;
        if (p == end) return;
        ++p;
        continue;
      }
      // No closing quote: a plain field.
    }
    const char* start = p;
    // Fields are short: a plain loop beats a memchr call per field.
    while (p != end && *p != ',') ++p;
    const char* last = p;
    while (last != start && (last[-1] == ' ' || last[-1] == '\t')) --last;
    fields->push_back(std::string_view(start, static_cast<size_t>(last - start)));
    if (p == end) return;
    ++p;
  }
}

bool ParseCsvColumn(std::string_view field, CsvColumnSpec* out) {
  std::string_view f = Trim(field);
  size_t n = 0;
  while (n < f.size() && IsNameChar(f[n])) ++n;
  if (n == 0 || !((f[0] >= 'a' && f[0] <= 'z') || (f[0] >= 'A' && f[0] <= 'Z') || f[0] == '_')) return false;
  // Names in any case ("Timestamp", "Memory.Used"), as a spreadsheet may write them back.
  const std::string name = AsciiLower(f.substr(0, n));
  std::string_view rest = Trim(f.substr(n));
  CsvColumnSpec spec;
  spec.kind = KindOf(name);
  if (!rest.empty()) {
    if (rest.front() != '[' || rest.back() != ']') return false;
    std::string_view unit = Trim(rest.substr(1, rest.size() - 2));
    auto mem = ParseMemUnit(unit);
    if (mem) {
      spec.unit = *mem;
    } else {
      // "[%]", "[W]", "[MHz]" are fine on other columns; on a memory column its values would be
      // taken for MiB: the reader refuses it.
      spec.unknown_unit = spec.kind == CsvColumn::kUsed || spec.kind == CsvColumn::kTotal ||
                          spec.kind == CsvColumn::kFree || spec.kind == CsvColumn::kReserved;
    }
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
