#include "sources/trace/query_csv_row.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace vw::trace {
namespace {

std::atomic<bool> g_fast_path{true};

inline bool IsDigit(char c) {
  return static_cast<unsigned>(c - '0') < 10;
}

// Skips spaces and tabs from *q; true when the field ends there (a ',' or the end of the line).
inline bool EndsField(const char** q, const char* end) {
  const char* r = *q;
  while (r != end && (*r == ' ' || *r == '\t')) ++r;
  *q = r;
  return r == end || *r == ',';
}

// Moves *p past field i of n, which ends at q: false unless the row holds one field per column, no
// more, no fewer.
inline bool NextField(const char** p, const char* q, const char* end, size_t i, size_t n) {
  if (q == end) return i + 1 == n;
  if (i + 1 == n) return false;
  *p = q + 1;
  return true;
}

// The first ',' at or after p, or `end`; nullptr when a double quote comes first (a quoted row is
// the general path's). 16 bytes at a time.
inline const char* FieldEnd(const char* p, const char* end) {
#ifdef __SSE2__
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i quote = _mm_set1_epi8('"');
  while (end - p >= 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto cm = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, comma)));
    const auto qm = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, quote)));
    if ((cm | qm) != 0) {
      const unsigned first = static_cast<unsigned>(__builtin_ctz(cm | qm));
      return ((qm >> first) & 1U) != 0 ? nullptr : p + first;
    }
    p += 16;
  }
#endif
  for (; p != end; ++p) {
    if (*p == ',') return p;
    if (*p == '"') return nullptr;
  }
  return end;
}

// The field [b, e) without trailing spaces and tabs (leading ones are already skipped).
inline std::string_view TrimBack(const char* b, const char* e) {
  while (e != b && (e[-1] == ' ' || e[-1] == '\t')) --e;
  return std::string_view(b, static_cast<size_t>(e - b));
}

// v / 100.0 for 0..100, the same doubles ParsePercentValue gives.
struct Percents {
  std::array<double, 101> v{};
  Percents() {
    for (unsigned i = 0; i <= 100; ++i) v[i] = i / 100.0;
  }
};
const Percents kPercents;

// a == b, checking the last 8 bytes first (UUIDs of one machine differ at the end).
inline bool SameBytes(const std::string& a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (b.size() >= 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + a.size() - 8, 8);
    std::memcpy(&y, b.data() + b.size() - 8, 8);
    if (x != y) return false;
  }
  return std::memcmp(a.data(), b.data(), b.size()) == 0;
}

// A memory value at p: "20011", "20011 MiB" or "20011MiB" (digits only when the column's unit is
// MiB or not given), as ParseMibFast takes them; else the general value parser on the whole field.
// Advances *q to the field's end (a ',' or the line end). False when the general path must decide.
// The number of leading decimal digits of the 8 bytes at p (0..8), and their value when below 8.
// Eight bytes at once: a byte b is a digit exactly when b ^ '0' <= 9.
inline unsigned LeadingDigits8(const char* p, uint64_t* value) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  const uint64_t t = x ^ 0x3030303030303030ULL;
  const uint64_t other = (((t & 0x7F7F7F7F7F7F7F7FULL) + 0x7676767676767676ULL) | t) & 0x8080808080808080ULL;
  if (other == 0) return 8;
  const unsigned n = static_cast<unsigned>(__builtin_ctzll(other)) >> 3;
  if (n == 0) return 0;
  // The n digits moved to the top bytes (leading zeros below), then pairs, quads and octets summed.
  uint64_t v = t << (64 - 8 * n);
  v = (v * 2561) >> 8 & 0x00FF00FF00FF00FFULL;      // 10 * 2^8 + 1
  v = (v * 6553601) >> 16 & 0x0000FFFF0000FFFFULL;  // 100 * 2^16 + 1
  v = (v * 42949672960001ULL) >> 32;                // 10000 * 2^32 + 1
  *value = v;
  return n;
}

// The general value parser on the whole field at p (the spellings TakeMemory does not take inline).
__attribute__((noinline)) bool TakeMemoryField(const char* p, const char* end, MemUnit unit, const char** q,
                                               std::optional<uint64_t>* out) {
  const char* c = FieldEnd(p, end);
  if (c == nullptr) return false;
  const std::string_view v = TrimBack(p, c);
  if (!ParseMibFast(v, unit, out) && ParseMemoryValue(v, unit, out) != ValueError::kOk) return false;
  *q = c;
  return true;
}

// The spellings TakeMemory takes inline: sets *bytes and *q and returns true, else false (then the
// general value parser must decide on the whole field).
__attribute__((always_inline)) inline bool ScanMib(const char* p, const char* end, MemUnit unit, const char** q,
                                                   uint64_t* bytes) {
  const char* r = p;
  uint64_t x = 0;
  unsigned n8 = 8;
  if (end - p >= 8) {
    n8 = LeadingDigits8(p, &x);
    r = p + n8;
  }
  if (n8 == 8) {  // a short field at the line's end, or 8 digits or more: one at a time
    r = p;
    x = 0;
    while (r != end && r - p < 12 && IsDigit(*r)) x = x * 10 + static_cast<uint64_t>(*r++ - '0');
  }
  if (r == p) return false;
  bool unit_ok;
  if (end - r >= 4 && r[0] == ' ' && r[1] == 'M' && r[2] == 'i' && r[3] == 'B') {
    r += 4;
    unit_ok = true;
  } else if (end - r >= 3 && r[0] == 'M' && r[1] == 'i' && r[2] == 'B') {
    r += 3;
    unit_ok = true;
  } else {
    unit_ok = unit == MemUnit::kNone || unit == MemUnit::kMiB;
  }
  if (!unit_ok || !EndsField(&r, end)) return false;
  *bytes = x << 20;
  *q = r;
  return true;
}

__attribute__((always_inline)) inline bool TakeMemory(const char* p, const char* end, MemUnit unit, const char** q,
                                                      std::optional<uint64_t>* out) {
  uint64_t bytes;
  if (ScanMib(p, end, unit, q, &bytes)) {
    *out = bytes;
    return true;
  }
  return TakeMemoryField(p, end, unit, q, out);
}

// TakeMemory into a compact sample's field: *bytes and `bit` of *present set when the value is
// there (a missing value leaves both alone).
__attribute__((always_inline)) inline bool TakeMemoryTo(const char* p, const char* end, MemUnit unit, const char** q,
                                                        uint64_t* bytes, uint8_t bit, uint8_t* present) {
  if (ScanMib(p, end, unit, q, bytes)) {
    *present |= bit;
    return true;
  }
  std::optional<uint64_t> v;
  if (!TakeMemoryField(p, end, unit, q, &v)) return false;
  if (v) {
    *bytes = *v;
    *present |= bit;
  }
  return true;
}

// A timestamp field at p (leading blanks skipped): *t in seconds, *zone whether it named one, *q the
// field's end. nvidia-smi's "YYYY/MM/DD HH:MM:SS.mmm" has a fixed width, so no search for the
// comma, and a row in the second of the previous row (the other GPUs of one sample) takes
// ParseTraceTimestamp's own shortcut inline. False when the field is no timestamp.
__attribute__((always_inline)) inline bool TakeTimestamp(const char* p, const char* end, DateCache* cache,
                                                         const char** q, double* t, bool* zone) {
  std::string_view v;
  if (end - p >= 23 && p[4] == '/' && p[7] == '/' && p[10] == ' ' && p[13] == ':' && p[16] == ':' && p[19] == '.' &&
      IsDigit(p[20]) && IsDigit(p[21]) && IsDigit(p[22])) {
    const char* r = p + 23;
    if (EndsField(&r, end)) {
      *q = r;
      if (cache->second_valid && SameSecond(cache->second, p)) {
        *t = cache->second_seconds +
             kMilliFractions[static_cast<size_t>((p[20] - '0') * 100 + (p[21] - '0') * 10 + (p[22] - '0'))];
        return true;
      }
      v = std::string_view(p, 23);
    }
  }
  if (v.empty()) {
    *q = FieldEnd(p, end);
    if (*q == nullptr) return false;
    v = TrimBack(p, *q);
  }
  Timestamp ts;
  if (!ParseTraceTimestamp(v, &ts, cache)) return false;
  *t = ts.seconds;
  *zone = ts.has_zone;
  return true;
}

// The spellings of a utilization field TakeUtil takes straight away ("87 %", "87%" or "87"): sets
// *ratio and *q and returns true, else false (then ParsePercentValue decides on the whole field).
__attribute__((always_inline)) inline bool ScanPercent(const char* p, const char* end, const char** q, double* ratio) {
  const char* r = p;
  unsigned pct = 0;
  while (r != end && r - p < 3 && IsDigit(*r)) pct = pct * 10 + static_cast<unsigned>(*r++ - '0');
  if (r == p || pct > 100) return false;
  if (end - r >= 2 && r[0] == ' ' && r[1] == '%') {
    r += 2;
  } else if (r != end && r[0] == '%') {
    r += 1;
  }
  if (!EndsField(&r, end)) return false;
  *ratio = kPercents.v[pct];
  *q = r;
  return true;
}

// The general percentage parser on the whole field at p (the spellings ScanPercent does not take).
__attribute__((noinline)) bool TakeUtilField(const char* p, const char* end, const char** q,
                                             std::optional<double>* out) {
  *q = FieldEnd(p, end);
  if (*q == nullptr) return false;
  return ParsePercentValue(TrimBack(p, *q), out) == ValueError::kOk;
}

// A utilization field at p, any spelling ParsePercentValue takes. *q the field's end; false when
// the field is no percentage.
__attribute__((always_inline)) inline bool TakeUtil(const char* p, const char* end, const char** q,
                                                    std::optional<double>* out) {
  double ratio;
  if (ScanPercent(p, end, q, &ratio)) {
    *out = ratio;
    return true;
  }
  return TakeUtilField(p, end, q, out);
}

// TakeUtil into a compact sample's field (as TakeMemoryTo).
__attribute__((always_inline)) inline bool TakeUtilTo(const char* p, const char* end, const char** q, double* ratio,
                                                      uint8_t* present) {
  if (ScanPercent(p, end, q, ratio)) {
    *present |= CompactSample::kUtil;
    return true;
  }
  std::optional<double> v;
  if (!TakeUtilField(p, end, q, &v)) return false;
  if (v) {
    *ratio = *v;
    *present |= CompactSample::kUtil;
  }
  return true;
}

// p[0..n) == t[0..n) for n >= 1 (both readable), 16 bytes at a time without a library call.
inline bool SameAt(const char* p, const char* t, size_t n) {
#ifdef __SSE2__
  if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i));
      if (_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) != 0xFFFF) return false;
    }
    if (i == n) return true;
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + n - 16));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) == 0xFFFF;
  }
#endif
  if (n >= 8) {
    uint64_t a0, b0, a1, b1;
    std::memcpy(&a0, p, 8);
    std::memcpy(&b0, t, 8);
    std::memcpy(&a1, p + n - 8, 8);
    std::memcpy(&b1, t + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != t[i]) return false;
  }
  return true;
}

// Whether the field at p (leading blanks skipped) is exactly the plain text `t` (see
// PlainIdentityTexts): t's bytes, then only spaces and tabs up to the ',' or the line's end. For a
// plain text that is what FieldEnd and TrimBack would give. Sets *q to the field's end.
inline bool FieldIs(const char* p, const char* end, const std::string& t, const char** q) {
  const size_t n = t.size();
  if (static_cast<size_t>(end - p) < n || !SameAt(p, t.data(), n)) return false;
  const char* r = p + n;
  if (!EndsField(&r, end)) return false;
  *q = r;
  return true;
}

// A short text equal to [p, p + n) (the index digits against a key).
inline bool SameShort(const std::string& a, const char* p, size_t n) {
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != p[i]) return false;
  }
  return true;
}

}  // namespace

void SetQueryRowFastPath(bool on) {
  g_fast_path.store(on, std::memory_order_relaxed);
}
bool QueryRowFastPath() {
  return g_fast_path.load(std::memory_order_relaxed);
}

bool ParseQueryRowFast(std::string_view line, const CsvColumnSpec* cols, size_t n, DateCache* cache, TraceRecord* rec,
                       bool* has_zone) {
  const char* p = line.data();
  const char* const end = p + line.size();
  std::string_view key_index, key_uuid, key_pci;
  bool have_time = false, have_uuid = false, have_name = false, zone = false;
  ResetRowFields(rec);
  MemorySample& s = rec->sample;
  for (size_t i = 0; i < n; ++i) {
    while (p != end && (*p == ' ' || *p == '\t')) ++p;
    const char* q = nullptr;  // the field's end: its ',' or the end of the line
    switch (cols[i].kind) {
      case CsvColumn::kTimestamp:
        if (!TakeTimestamp(p, end, cache, &q, &s.t, &zone)) return false;
        have_time = true;
        break;
      case CsvColumn::kIndex: {
        const char* r = p;
        uint32_t idx = 0;
        while (r != end && r - p < 7 && IsDigit(*r)) idx = idx * 10 + static_cast<uint32_t>(*r++ - '0');
        const char* digits_end = r;
        if (r != p && idx <= 1000000 && EndsField(&r, end)) {
          rec->gpu.index = static_cast<int>(idx);
          key_index = std::string_view(p, static_cast<size_t>(digits_end - p));
          q = r;
          break;
        }
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        const std::string_view v = TrimBack(p, q);
        uint64_t big = 0;
        const bool number = ParseUint(v, &big);
        if (!number && IsMissingValue(v)) break;
        if (!number || big > 1000000) return false;
        rec->gpu.index = static_cast<int>(big);
        key_index = v;
        break;
      }
      case CsvColumn::kUtil:
        if (!TakeUtil(p, end, &q, &s.gpu_util_ratio)) return false;
        break;
      case CsvColumn::kUsed:
        if (!TakeMemory(p, end, cols[i].unit, &q, &s.used_bytes)) return false;
        break;
      case CsvColumn::kTotal:
        if (!TakeMemory(p, end, cols[i].unit, &q, &s.total_bytes)) return false;
        break;
      case CsvColumn::kFree:
        if (!TakeMemory(p, end, cols[i].unit, &q, &s.free_bytes)) return false;
        break;
      case CsvColumn::kReserved:
        if (!TakeMemory(p, end, cols[i].unit, &q, &s.reserved_bytes)) return false;
        break;
      case CsvColumn::kUuid: {
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        const std::string_view v = TrimBack(p, q);
        if (!IsMissingValue(v)) {
          if (!SameBytes(rec->gpu.uuid, v)) rec->gpu.uuid.assign(v.data(), v.size());
          have_uuid = true;
          key_uuid = v;
        }
        break;
      }
      case CsvColumn::kName: {
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        const std::string_view v = TrimBack(p, q);
        if (!IsMissingValue(v)) {
          if (!SameBytes(rec->gpu.name, v)) rec->gpu.name.assign(v.data(), v.size());
          have_name = true;
        }
        break;
      }
      case CsvColumn::kPciBusId: {
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        const std::string_view v = TrimBack(p, q);
        if (!IsMissingValue(v)) {
          AssignPciBusId(v, &rec->gpu.pci_bus_id);
          key_pci = rec->gpu.pci_bus_id;
        }
        break;
      }
      case CsvColumn::kOther:
      case CsvColumn::kPid:
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        break;
    }
    if (!NextField(&p, q, end, i, n)) return false;
  }
  // A row without a clock takes its time from the lines before it: the general path's.
  if (!have_time) return false;
  FinishRowIdentity(rec, have_uuid, have_name, key_index, key_uuid, key_pci);
  *has_zone = zone;
  return true;
}

// ParseQueryRowFast's scan with the identity compared instead of stored: the same grammar field by
// field (timestamps, indexes, percentages, memory values and other fields as there), but the UUID,
// name and PCI bus ID are compared in place with the expected GPU's plain texts, and every spelling
// the fused scan takes through a general parser (an index that is not plain digits, a missing
// identity text) returns false. Kept next to ParseQueryRowFast: a change to one is a change to both
// (query_csv_block_test.cpp checks random rows both ways).
bool ParseQueryRowExpected(std::string_view line, const CsvColumnSpec* cols, size_t n, DateCache* cache,
                           const ExpectedGpu& expect, CompactSample* sample, bool* has_zone) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const GpuIdentity& g = *expect.gpu;
  bool have_time = false, have_index = false, have_uuid = false, have_pci = false, have_name = false, zone = false;
  CompactSample& s = *sample;
  uint8_t present = 0;
  for (size_t i = 0; i < n; ++i) {
    while (p != end && (*p == ' ' || *p == '\t')) ++p;
    const char* q = nullptr;  // the field's end: its ',' or the end of the line
    switch (cols[i].kind) {
      case CsvColumn::kTimestamp:
        if (!TakeTimestamp(p, end, cache, &q, &s.t, &zone)) return false;
        have_time = true;
        break;
      case CsvColumn::kIndex: {
        // Plain digits only (other spellings: ParseQueryRowFast's), equal to the expected GPU's
        // index and key in every index field of the row.
        const char* r = p;
        uint32_t idx = 0;
        while (r != end && r - p < 7 && IsDigit(*r)) idx = idx * 10 + static_cast<uint32_t>(*r++ - '0');
        const char* digits_end = r;
        if (r == p || idx > 1000000 || !EndsField(&r, end)) return false;
        if (!g.index || *g.index != static_cast<int>(idx) ||
            !SameShort(g.key, p, static_cast<size_t>(digits_end - p))) {
          return false;
        }
        have_index = true;
        q = r;
        break;
      }
      case CsvColumn::kUtil:
        if (!TakeUtilTo(p, end, &q, &s.gpu_util_ratio, &present)) return false;
        break;
      case CsvColumn::kUsed:
        if (!TakeMemoryTo(p, end, cols[i].unit, &q, &s.used_bytes, CompactSample::kUsed, &present)) return false;
        break;
      case CsvColumn::kTotal:
        if (!TakeMemoryTo(p, end, cols[i].unit, &q, &s.total_bytes, CompactSample::kTotal, &present)) return false;
        break;
      case CsvColumn::kFree:
        if (!TakeMemoryTo(p, end, cols[i].unit, &q, &s.free_bytes, CompactSample::kFree, &present)) return false;
        break;
      case CsvColumn::kReserved:
        if (!TakeMemoryTo(p, end, cols[i].unit, &q, &s.reserved_bytes, CompactSample::kReserved, &present))
          return false;
        break;
      case CsvColumn::kUuid:
        // Compared in place with the expected GPU's UUID: no search for the comma.
        if ((expect.plain & kPlainUuid) == 0 || !FieldIs(p, end, g.uuid, &q)) return false;
        have_uuid = true;
        break;
      case CsvColumn::kName:
        if ((expect.plain & kPlainName) == 0 || !FieldIs(p, end, g.name, &q)) return false;
        have_name = true;
        break;
      case CsvColumn::kPciBusId:
        if ((expect.plain & kPlainPci) == 0 || !FieldIs(p, end, g.pci_bus_id, &q)) return false;
        have_pci = true;
        break;
      case CsvColumn::kOther:
      case CsvColumn::kPid:
        q = FieldEnd(p, end);
        if (q == nullptr) return false;
        break;
    }
    if (!NextField(&p, q, end, i, n)) return false;
  }
  // A row without a clock takes its time from the lines before it: the general path's.
  if (!have_time) return false;
  // What the row does not name must be absent from the expected GPU too, and its key must be the
  // one FinishRowIdentity would choose: the index, else the UUID, else the PCI bus ID, else "0".
  if (!have_index && g.index) return false;
  if (!have_uuid && !g.uuid.empty()) return false;
  if (!have_pci && !g.pci_bus_id.empty()) return false;
  if (!have_name && !g.name.empty()) return false;
  if (!have_index) {
    const std::string_view key = have_uuid  ? std::string_view(g.uuid)
                                 : have_pci ? std::string_view(g.pci_bus_id)
                                            : std::string_view("0");
    if (g.key != key) return false;
  }
  s.present = present;
  *has_zone = zone;
  return true;
}

uint8_t PlainIdentityTexts(const GpuIdentity& gpu) {
  auto plain = [](const std::string& t) {
    if (t.empty() || t.front() == ' ' || t.front() == '\t' || t.back() == ' ' || t.back() == '\t') return false;
    if (t.find_first_of(",\"") != std::string::npos) return false;
    return !IsMissingValue(t);
  };
  uint8_t bits = 0;
  if (plain(gpu.uuid)) bits |= kPlainUuid;
  if (plain(gpu.name)) bits |= kPlainName;
  if (plain(gpu.pci_bus_id) && NormalizePciBusId(gpu.pci_bus_id) == gpu.pci_bus_id) bits |= kPlainPci;
  return bits;
}

}  // namespace vw::trace
