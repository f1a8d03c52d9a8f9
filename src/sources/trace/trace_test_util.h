// Test helpers for the trace readers: write text to a temporary file and read every record back.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
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

}  // namespace vw::trace::testing_util
