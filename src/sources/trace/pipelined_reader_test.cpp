#include "sources/trace/pipelined_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using testing_util::WriteTemp;

// An 8-GPU --query-gpu capture of `seconds` samples; `bad_row` (1-based data row, 0 = none) gets a
// broken memory.used value.
std::string EightGpus(int seconds, int bad_row = 0) {
  std::string text = "timestamp, index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n";
  int row = 0;
  for (int s = 0; s < seconds; ++s) {
    for (int g = 0; g < 8; ++g) {
      ++row;
      const std::string used = row == bad_row ? "12x4" : std::to_string(20000 + g * 100 + s % 50);
      text += "2026/07/14 08:" + std::to_string(10 + s / 3600 % 40) + ":" + std::to_string(10 + s / 60 % 50) + "." +
              std::to_string(100 + g) + ", " + std::to_string(g) + ", GPU-aaaa-" + std::to_string(g) +
              ", NVIDIA H100 80GB HBM3, " + used + " MiB, 81559 MiB, " + std::to_string(s % 101) + " %\n";
    }
  }
  return text;
}

using testing_util::ExpectSameRecord;
using Drained = testing_util::ReadResult;

Drained Direct(const std::string& path, const TraceOptions& opt) {
  return testing_util::ReadTrace(path, opt);
}

Drained Pipelined(const std::string& path, const TraceOptions& opt) {
  Drained out;
  auto r = OpenTrace(path, opt);
  EXPECT_TRUE(r.ok());
  PipelinedTraceReader p(std::move(*r));
  testing_util::DrainNextRecord(p, out);
  return out;
}

void ExpectSame(const Drained& direct, const Drained& piped) {
  testing_util::ExpectSameRead(direct, piped);
}

TEST(PipelinedTraceReader, HandsOutEveryRecordInFileOrderAcrossBatches) {
  // Several ring laps (8 * 2000 records > kBatches * kBatchRecords).
  const std::string path = WriteTemp("pipe-order.csv", EightGpus(2000));
  Drained direct = Direct(path, {});
  ASSERT_EQ(direct.records.size(), 16000u);
  ASSERT_GT(direct.records.size(), PipelinedTraceReader::kBatches * PipelinedTraceReader::kBatchRecords);
  ExpectSame(direct, Pipelined(path, {}));
}

TEST(PipelinedTraceReader, ErrorComesAfterTheRecordsBeforeItWithTheSameLocation) {
  const int bad_row = 9000;  // in the middle of a batch, after a full lap of the ring
  const std::string path = WriteTemp("pipe-error.csv", EightGpus(2000, bad_row));
  Drained direct = Direct(path, {});
  ASSERT_FALSE(direct.status.ok());
  EXPECT_NE(direct.status.message().find(":" + std::to_string(bad_row + 1) + ":"), std::string::npos)
      << direct.status.message();
  EXPECT_EQ(direct.records.size(), static_cast<size_t>(bad_row - 1));
  ExpectSame(direct, Pipelined(path, {}));
}

TEST(PipelinedTraceReader, LenientSkipsAreCountedExactly) {
  std::string text = EightGpus(1500);
  // Break one value in every 997th line (after the header).
  size_t line = 0, pos = 0, broken = 0;
  while ((pos = text.find('\n', pos)) != std::string::npos) {
    ++pos;
    ++line;
    if (line % 997 == 0 && pos < text.size()) {
      text.insert(pos, "garbage,");
      ++broken;
    }
  }
  const std::string path = WriteTemp("pipe-lenient.csv", text);
  TraceOptions opt;
  opt.lenient = true;
  Drained direct = Direct(path, opt);
  ASSERT_TRUE(direct.status.ok()) << direct.status.message();
  EXPECT_EQ(direct.skipped, broken);
  ExpectSame(direct, Pipelined(path, opt));
}

TEST(PipelinedTraceReader, QuotedRowsTakeTheSlowPathWithTheSameRecords) {
  std::string text = EightGpus(700);
  size_t pos = 0;
  while ((pos = text.find("NVIDIA H100 80GB HBM3", pos)) != std::string::npos) {
    text.replace(pos, 21, "\"NVIDIA H100, 80GB\"");
    pos += 20;
  }
  const std::string path = WriteTemp("pipe-quoted.csv", text);
  Drained direct = Direct(path, {});
  ASSERT_EQ(direct.records.size(), 5600u);
  EXPECT_EQ(direct.records[0].gpu.name, "NVIDIA H100, 80GB");
  ExpectSame(direct, Pipelined(path, {}));
}

TEST(PipelinedTraceReader, StoppingEarlyJoinsTheWorker) {
  const std::string path = WriteTemp("pipe-early.csv", EightGpus(3000));
  auto r = OpenTrace(path, {});
  ASSERT_TRUE(r.ok());
  {
    PipelinedTraceReader p(std::move(*r));
    for (int i = 0; i < 10; ++i) {
      auto next = p.NextRecord();
      ASSERT_TRUE(next.ok());
      ASSERT_NE(*next, nullptr);
    }
  }  // the destructor must not hang while the worker waits for a free batch
  auto again = OpenTrace(path, {});
  ASSERT_TRUE(again.ok());
  PipelinedTraceReader unused(std::move(*again));  // never read: no worker to stop
}

TEST(PipelinedTraceReader, CopyingInterfacesMatchNextRecord) {
  const std::string path = WriteTemp("pipe-copy.csv", EightGpus(300));
  auto r = OpenTrace(path, {});
  ASSERT_TRUE(r.ok());
  PipelinedTraceReader p(std::move(*r));
  EXPECT_EQ(p.format(), TraceFormat::kQueryCsv);
  Drained direct = Direct(path, {});
  TraceRecord rec;
  size_t i = 0;
  for (;; ++i) {
    auto more = i % 2 == 0 ? p.NextInto(&rec) : [&]() -> Result<bool> {
      auto n = p.Next();
      if (!n.ok()) return n.status();
      if (!n->has_value()) return false;
      rec = **n;
      return true;
    }();
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    ASSERT_LT(i, direct.records.size());
    ExpectSameRecord(direct.records[i], rec, i);
  }
  EXPECT_EQ(i, direct.records.size());
  EXPECT_EQ(p.bytes_read(), p.bytes_total());
}

}  // namespace
}  // namespace vw::trace
