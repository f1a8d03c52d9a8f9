// Test helpers for the trace readers: write text to a temporary file and read every record back.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "sources/trace/csv_fields.h"
#include "sources/trace/query_csv_row.h"
#include "sources/trace/trace_reader.h"

namespace vw::trace::testing_util {

struct ReadResult {
  Status status;  // ok, or the first error (OpenTrace's or Next's)
  std::vector<TraceRecord> records;
  size_t skipped = 0;
  std::vector<SkippedLine> examples;
  bool synthetic = false;
  bool has_zone = false;
  TraceFormat format = TraceFormat::kAuto;
};

// The bits of a double: equal means bit for bit.
inline uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
inline std::optional<uint64_t> Bits(std::optional<double> d) {
  return d ? std::optional<uint64_t>(Bits(*d)) : std::nullopt;
}

// EXPECT_EQ that also says whether it held.
template <class T>
bool ExpectEq(const T& a, const T& b, const char* what, size_t i) {
  EXPECT_EQ(a, b) << what << " of record " << i;
  return a == b;
}

// Every field of two records (identity, sample, process list entry by entry), times and ratios bit
// for bit. Returns whether they are the same.
inline bool ExpectSameRecord(const TraceRecord& a, const TraceRecord& b, size_t i = 0) {
  bool same = ExpectEq(a.gpu.key, b.gpu.key, "gpu.key", i);
  same &= ExpectEq(a.gpu.index, b.gpu.index, "gpu.index", i);
  same &= ExpectEq(a.gpu.uuid, b.gpu.uuid, "gpu.uuid", i);
  same &= ExpectEq(a.gpu.name, b.gpu.name, "gpu.name", i);
  same &= ExpectEq(a.gpu.pci_bus_id, b.gpu.pci_bus_id, "gpu.pci_bus_id", i);
  same &= ExpectEq(Bits(a.sample.t), Bits(b.sample.t), "t", i);
  same &= ExpectEq(a.sample.used_bytes, b.sample.used_bytes, "used_bytes", i);
  same &= ExpectEq(a.sample.total_bytes, b.sample.total_bytes, "total_bytes", i);
  same &= ExpectEq(a.sample.free_bytes, b.sample.free_bytes, "free_bytes", i);
  same &= ExpectEq(a.sample.reserved_bytes, b.sample.reserved_bytes, "reserved_bytes", i);
  same &= ExpectEq(Bits(a.sample.gpu_util_ratio), Bits(b.sample.gpu_util_ratio), "gpu_util_ratio", i);
  if (!ExpectEq(a.sample.processes.has_value(), b.sample.processes.has_value(), "has a process list", i)) {
    return false;
  }
  if (!a.sample.processes) return same;
  const auto& pa = *a.sample.processes;
  const auto& pb = *b.sample.processes;
  if (!ExpectEq(pa.size(), pb.size(), "process count", i)) return false;
  for (size_t k = 0; k < pa.size(); ++k) {
    same &= ExpectEq(pa[k].pid, pb[k].pid, "process pid", i);
    same &= ExpectEq(pa[k].command, pb[k].command, "process command", i);
    same &= ExpectEq(pa[k].type, pb[k].type, "process type", i);
    same &= ExpectEq(pa[k].used_bytes, pb[k].used_bytes, "process used_bytes", i);
    same &= ExpectEq(Bits(pa[k].sm_util_ratio), Bits(pb[k].sm_util_ratio), "process sm_util_ratio", i);
  }
  return same;
}

// Two reads of the same input give the same answer: status and message, every record (stopping at
// the first that differs), skip count and examples, zone and clock flags.
inline void ExpectSameRead(const ReadResult& want, const ReadResult& got) {
  EXPECT_EQ(want.status.ok(), got.status.ok());
  EXPECT_EQ(want.status.message(), got.status.message());
  ASSERT_EQ(want.records.size(), got.records.size());
  for (size_t i = 0; i < want.records.size(); ++i) {
    if (!ExpectSameRecord(want.records[i], got.records[i], i)) break;
  }
  EXPECT_EQ(want.skipped, got.skipped);
  ASSERT_EQ(want.examples.size(), got.examples.size());
  for (size_t i = 0; i < want.examples.size(); ++i) {
    EXPECT_EQ(want.examples[i].line, got.examples[i].line) << i;
    EXPECT_EQ(want.examples[i].reason, got.examples[i].reason) << i;
  }
  EXPECT_EQ(want.has_zone, got.has_zone);
  EXPECT_EQ(want.synthetic, got.synthetic);
}

// Every record of a reader with NextRecord() (a pointer valid until the next call, nullptr at the
// end) into `out`, the first error into out.status, then checks that asking again after the end or
// the error gives the same answer (not a hang or another status). Skip counts and examples too.
template <class Reader>
void DrainNextRecord(Reader& p, ReadResult& out) {
  for (;;) {
    auto next = p.NextRecord();
    if (!next.ok()) {
      out.status = next.status();
      break;
    }
    if (*next == nullptr) break;
    out.records.push_back(**next);
  }
  auto again = p.NextRecord();
  EXPECT_EQ(again.ok(), out.status.ok());
  if (again.ok()) {
    EXPECT_EQ(*again, nullptr);
  }
  out.skipped = p.skipped_count();
  out.examples = p.skipped_examples();
}

// Per-process names: CTest runs test cases as separate processes in parallel, and two cases
// writing the same temp file would read each other's content.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "vw-trace-" + std::to_string(::getpid()) + "-" + name;
}

inline std::string WriteTemp(const std::string& name, std::string_view content) {
  std::string path = TempPath(name);
  // Unlink first: truncating a file in place makes ext4 flush it on close (slow in loops).
  std::remove(path.c_str());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

// Reads every record; stops at the first error. `max_records` bounds runaway readers.
inline ReadResult ReadTrace(const std::string& path, const TraceOptions& options, size_t max_records = 10'000'000) {
  ReadResult out;
  auto reader = OpenTrace(path, options);
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  for (size_t i = 0; i < max_records; ++i) {
    auto rec = (*reader)->Next();
    if (!rec.ok()) {
      out.status = rec.status();
      break;
    }
    if (!rec->has_value()) break;
    out.records.push_back(std::move(**rec));
  }
  out.skipped = (*reader)->skipped_count();
  out.examples = (*reader)->skipped_examples();
  out.synthetic = (*reader)->synthetic_time();
  out.has_zone = (*reader)->has_zone();
  out.format = (*reader)->format();
  return out;
}

inline ReadResult ReadText(std::string_view text, const TraceOptions& options, const std::string& name = "t.csv") {
  return ReadTrace(WriteTemp(name, text), options);
}

inline std::optional<uint64_t> MiB(std::optional<uint64_t> bytes) {
  if (!bytes) return std::nullopt;
  return *bytes / (1024 * 1024);
}

inline constexpr uint64_t kMiBBytes = 1024 * 1024;

// Records of one GPU, in file order.
inline std::vector<TraceRecord> OfGpu(const std::vector<TraceRecord>& all, const std::string& key) {
  std::vector<TraceRecord> out;
  for (const auto& r : all) {
    if (r.gpu.key == key) out.push_back(r);
  }
  return out;
}

inline std::string Iso(double t, bool zone = false) {
  return FormatIso8601(t, zone);
}

// The column layout of a query-csv header.
inline std::vector<CsvColumnSpec> Layout(std::string_view header) {
  std::vector<std::string_view> fields;
  SplitCsv(header, &fields);
  std::vector<CsvColumnSpec> cols;
  for (std::string_view f : fields) {
    CsvColumnSpec spec;
    EXPECT_TRUE(ParseCsvColumn(f, &spec)) << f;
    cols.push_back(spec);
  }
  return cols;
}

// Turns the query-csv row fast paths off for one scope (the general path for every line).
class GeneralPathOnly {
 public:
  GeneralPathOnly() { SetQueryRowFastPath(false); }
  ~GeneralPathOnly() { SetQueryRowFastPath(true); }
  GeneralPathOnly(const GeneralPathOnly&) = delete;
  GeneralPathOnly& operator=(const GeneralPathOnly&) = delete;
};

}  // namespace vw::trace::testing_util
