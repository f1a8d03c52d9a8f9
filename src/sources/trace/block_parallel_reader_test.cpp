#include "sources/trace/block_parallel_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sources/trace/line_trace_reader.h"
#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using testing_util::WriteTemp;

constexpr const char* kHeader =
    "timestamp, index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n";

// One --query-gpu data row of GPU `g` at second `s` (a different used value per row).
std::string Row(int s, int g, const std::string& used = "") {
  return "2026/07/14 " + std::to_string(10 + s / 3600 % 10) + ":" + std::to_string(10 + s / 60 % 50) + ":" +
         std::to_string(10 + s % 50) + "." + std::to_string(100 + g) + ", " + std::to_string(g) + ", GPU-aaaa-" +
         std::to_string(g) + ", NVIDIA H100 80GB HBM3, " +
         (used.empty() ? std::to_string(20000 + g * 100 + s % 77) + " MiB" : used) + ", 81559 MiB, " +
         std::to_string(s % 101) + " %\n";
}

// An 8-GPU capture of `seconds` samples with one header.
std::string EightGpus(int seconds) {
  std::string text = kHeader;
  for (int s = 0; s < seconds; ++s) {
    for (int g = 0; g < 8; ++g) text += Row(s, g);
  }
  return text;
}

struct Drained : testing_util::ReadResult {
  bool fell_back = false;
  uint64_t blocks = 0;
  uint64_t compact_rows = 0;
};

// The one-thread reader's answer: what every parallel run must equal.
Drained Sequential(const std::string& path, const TraceOptions& opt) {
  Drained out;
  static_cast<testing_util::ReadResult&>(out) = testing_util::ReadTrace(path, opt);
  return out;
}

std::unique_ptr<BlockParallelReader> OpenParallel(const std::string& path, const TraceOptions& opt, size_t block,
                                                  size_t threads) {
  auto r = BlockParallelReader::Open(path, opt, BlockParallelOptions{threads, block});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : nullptr;
}

Drained Drain(BlockParallelReader& p) {
  Drained out;
  testing_util::DrainNextRecord(p, out);
  out.has_zone = p.has_zone();
  out.synthetic = p.synthetic_time();
  out.fell_back = p.fell_back();
  out.blocks = p.parallel_blocks();
  out.compact_rows = p.compact_rows();
  return out;
}

Drained Parallel(const std::string& path, const TraceOptions& opt, size_t block, size_t threads = 3) {
  auto p = OpenParallel(path, opt, block, threads);
  if (p == nullptr) {
    ADD_FAILURE() << "not opened for block-parallel reading: " << path;
    return {};
  }
  return Drain(*p);
}

void ExpectSame(const Drained& want, const Drained& got, const std::string& what) {
  SCOPED_TRACE(what);
  testing_util::ExpectSameRead(want, got);
}

// Reads `text` sequentially and in blocks of several sizes (many boundaries, each landing in a
// different place of a line) and expects the same answer; returns the parallel runs.
std::vector<Drained> ExpectSameForBlockSizes(const std::string& name, const std::string& text,
                                             const TraceOptions& opt = {}) {
  const std::string path = WriteTemp(name, text);
  const Drained want = Sequential(path, opt);
  std::vector<Drained> runs;
  for (size_t block : {64, 97, 250, 1000, 4096, 1 << 20}) {
    for (size_t threads : {1, 3}) {
      runs.push_back(Parallel(path, opt, block, threads));
      ExpectSame(want, runs.back(), name + " block " + std::to_string(block) + " threads " + std::to_string(threads));
    }
  }
  return runs;
}

// --- LocateBlock --------------------------------------------------------------------------------

// The spans of every block of `text` for block size `b`, each located from its own window of the file.
std::vector<BlockSpan> Spans(const std::string& text, uint64_t b, uint64_t first = 0) {
  std::vector<BlockSpan> out;
  const uint64_t size = text.size();
  for (uint64_t i = 0; i * b < size; ++i) {
    const uint64_t from = i == 0 ? 0 : i * b - 1;
    const uint64_t to = std::min<uint64_t>(size, (i + 1) * b + kBlockSlack);
    out.push_back(LocateBlock(std::string_view(text).substr(from, to - from), from, i, b, first, size));
  }
  return out;
}

TEST(LocateBlock, BlocksTileTheFileAtLineStartsForEveryBlockSize) {
  const std::string text = "a,1\r\nbb,22\r\n\r\nccc,333\n\nd\r\neeeee,5\r\nf";  // CRLF, blank lines, no final '\n'
  for (uint64_t b = 1; b <= text.size() + 1; ++b) {
    SCOPED_TRACE("block " + std::to_string(b));
    uint64_t at = 0;
    for (const BlockSpan& s : Spans(text, b)) {
      ASSERT_TRUE(s.ok);
      if (s.begin == s.end) continue;  // no line starts in it
      EXPECT_EQ(s.begin, at);
      EXPECT_TRUE(s.begin == 0 || text[s.begin - 1] == '\n') << s.begin;
      EXPECT_TRUE(s.end == text.size() || text[s.end - 1] == '\n') << s.end;
      at = s.end;
    }
    EXPECT_EQ(at, text.size());
  }
}

TEST(LocateBlock, BoundaryBetweenCarriageReturnAndNewlineKeepsTheLineWhole) {
  const std::string text = "ab\r\ncd\r\nef\r\n";
  // Block 0 nominally ends after "ab\r" (3 bytes): its line ends after the '\n'.
  const auto spans = Spans(text, 3);
  EXPECT_EQ(spans[0].begin, 0u);
  EXPECT_EQ(spans[0].end, 4u);
  EXPECT_EQ(spans[1].begin, 4u);  // the line that starts at offset 4 is block 1's
  EXPECT_EQ(spans[1].end, 8u);
}

TEST(LocateBlock, UnterminatedLastLineEndsAtTheFileSize) {
  const std::string text = "x,1\ny,2\nz,3";
  const auto spans = Spans(text, 5);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[1].begin, 8u);
  EXPECT_EQ(spans[1].end, text.size());
  EXPECT_TRUE(spans[2].ok);
  EXPECT_EQ(spans[2].begin, spans[2].end);  // "3" is inside z's line: no line starts in block 2
}

TEST(LocateBlock, FileSmallerThanOneBlockIsOneBlockAfterTheByteOrderMark) {
  const std::string text = "\xEF\xBB\xBFh,1\nv,2\n";
  const auto spans = Spans(text, 1 << 20, 3);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_TRUE(spans[0].ok);
  EXPECT_EQ(spans[0].begin, 3u);
  EXPECT_EQ(spans[0].end, text.size());
}

TEST(LocateBlock, LineLongerThanTheSlackAcrossTheEndIsNotLocated) {
  const std::string text = "a\n" + std::string(kBlockSlack + 10, 'x') + "\nb\n";
  const auto spans = Spans(text, 8);
  EXPECT_FALSE(spans[0].ok);  // its second line does not end within the slack
  // A window that reaches the file's end finds it.
  const BlockSpan whole = LocateBlock(text, 0, 0, 8, 0, text.size());
  EXPECT_TRUE(whole.ok);
  EXPECT_EQ(whole.end, text.size() - 2);
}

// Every record through NextBatch(), rebuilt here from the compact samples and the batch's GPU
// table (not through NextRecord()), checking what each batch promises on the way.
Drained DrainBatches(BlockParallelReader& p) {
  Drained out;
  SampleBatch batch;
  for (;;) {
    auto more = p.NextBatch(&batch);
    if (!more.ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    EXPECT_GT(batch.count, 0u);
    EXPECT_GT(batch.gpu_count, 0u);
    EXPECT_LE(batch.gpu_count, batch.count);
    for (size_t i = 0; i < batch.count; ++i) {
      const CompactSample& c = batch.samples[i];
      if (c.gpu >= batch.gpu_count) {
        ADD_FAILURE() << "GPU " << c.gpu << " of a table of " << batch.gpu_count;
        return out;
      }
      TraceRecord rec;
      rec.gpu = batch.gpus[c.gpu];
      rec.sample.t = c.t;
      rec.sample.used_bytes = c.used();
      rec.sample.total_bytes = c.total();
      rec.sample.free_bytes = c.free();
      rec.sample.reserved_bytes = c.reserved();
      rec.sample.gpu_util_ratio = c.util();
      out.records.push_back(std::move(rec));
    }
  }
  auto again = p.NextBatch(&batch);  // after the end or the error: the same answer
  EXPECT_EQ(again.ok(), out.status.ok());
  if (again.ok()) {
    EXPECT_FALSE(*again);
  } else {
    EXPECT_EQ(again.status().message(), out.status.message());
  }
  out.skipped = p.skipped_count();
  out.examples = p.skipped_examples();
  out.has_zone = p.has_zone();
  out.synthetic = p.synthetic_time();
  out.fell_back = p.fell_back();
  return out;
}

// --- BlockParallelReader ------------------------------------------------------------------------

// Files that take each path of the block reader: blocks only, blocks then the sequential parser
// from the first row without a clock, an error in the middle, lenient skips, GPUs whose identity
// changes under the same key, and more distinct GPUs than one batch's table searches.
TEST(BlockParallelReader, BatchesHoldTheSameRecordsAsOneThread) {
  struct Case {
    const char* name;
    std::string text;
    TraceOptions options;
    bool falls_back;
  };
  TraceOptions lenient;
  lenient.lenient = true;
  TraceOptions interval;
  interval.interval_s = 2;
  std::vector<Case> cases;
  cases.push_back({"bb-plain.csv", EightGpus(200), {}, false});
  {
    std::string text = EightGpus(100);
    text += "index, memory.used [MiB], memory.reserved [MiB]\n";  // no clock from here on
    for (int s = 0; s < 100; ++s) {
      for (int g = 0; g < 8; ++g) text += std::to_string(g) + ", " + std::to_string(900 + s) + ", 256\n";
    }
    cases.push_back({"bb-tail.csv", text, interval, true});
  }
  {
    std::string text = kHeader;
    for (int s = 0; s < 300; ++s) {
      for (int g = 0; g < 8; ++g) text += Row(s, g, s == 170 && g == 6 ? "9q MiB" : "");
    }
    cases.push_back({"bb-error.csv", text, {}, true});
    cases.push_back({"bb-error-lenient.csv", text, lenient, false});
  }
  {
    // GPU 2's UUID and every GPU's name change half way (a reboot onto other cards): same keys,
    // other identities, which the batches must not fold into the first ones.
    std::string text = kHeader;
    for (int s = 0; s < 200; ++s) {
      for (int g = 0; g < 8; ++g) {
        std::string row = Row(s, g);
        if (s >= 100 && g == 2) row.replace(row.find("GPU-aaaa-2"), 10, "GPU-bbbb-2");
        if (s >= 120) row.replace(row.find("H100"), 4, "A100");
        text += row;
      }
    }
    cases.push_back({"bb-identity.csv", text, {}, false});
  }
  {
    // 80 GPUs round robin (more than GpuTable::kSearched), in blocks and after a fall-back.
    std::string text = kHeader;
    for (int s = 0; s < 30; ++s) {
      for (int g = 0; g < 80; ++g) text += Row(s, g);
    }
    cases.push_back({"bb-many.csv", text, {}, false});
    std::string tail = "index, uuid, memory.used [MiB]\n";
    for (int s = 0; s < 30; ++s) {
      for (int g = 0; g < 80; ++g) {
        tail += std::to_string(g) + ", GPU-cccc-" + std::to_string(g) + ", " + std::to_string(100 + s) + "\n";
      }
    }
    cases.push_back({"bb-many-tail.csv", tail, interval, true});
  }
  for (const Case& c : cases) {
    const std::string path = WriteTemp(c.name, c.text);
    const Drained want = Sequential(path, c.options);
    ASSERT_FALSE(want.records.empty()) << c.name;
    for (size_t block : {97, 1000, 1 << 20}) {
      for (size_t threads : {1, 3}) {
        const std::string what =
            std::string(c.name) + " block " + std::to_string(block) + " threads " + std::to_string(threads);
        auto p = OpenParallel(path, c.options, block, threads);
        ASSERT_NE(p, nullptr) << what;
        const Drained got = DrainBatches(*p);
        ExpectSame(want, got, what);
        if (block == 97) {
          EXPECT_EQ(got.fell_back, c.falls_back) << what;
        }
      }
    }
  }
}

TEST(BlockParallelReader, SameRecordsAsOneThreadAcrossManyBlocks) {
  auto runs = ExpectSameForBlockSizes("bp-plain.csv", EightGpus(300));
  EXPECT_EQ(runs[0].records.size(), 2400u);
  EXPECT_FALSE(runs[0].fell_back);
  EXPECT_GT(runs[0].blocks, 100u);  // 64-byte blocks: really many blocks, none read sequentially
  // Rows split across block boundaries are read whole; plain rows of the GPU expected next take the
  // compact scan: all but the first round of each block (runs 8 and 9: 4 KiB blocks, 10 and 11: one block).
  EXPECT_GT(runs[8].compact_rows, 1700u);
  EXPECT_EQ(runs[10].compact_rows, 2400u - 8);
  EXPECT_EQ(runs[11].compact_rows, 2400u - 8);
}

TEST(BlockParallelReader, RepeatedHeadersBlankLinesCrlfMissingValuesAndNoFinalNewline) {
  std::string text;
  for (int s = 0; s < 120; ++s) {
    text += kHeader;  // a header before every sample, as a shell loop around nvidia-smi writes
    if (s % 7 == 0) text += "\n\n";
    if (s % 11 == 0) text += "# comment\n";
    for (int g = 0; g < 8; ++g) text += Row(s, g, (s + g) % 13 == 0 ? "[N/A]" : "");
  }
  for (size_t p = 0; (p = text.find('\n', p)) != std::string::npos; p += 2) {
    if (p % 3 == 0) text.insert(p, "\r");
  }
  text.pop_back();  // no final newline
  auto runs = ExpectSameForBlockSizes("bp-messy.csv", text);
  EXPECT_FALSE(runs[0].fell_back);
}

TEST(BlockParallelReader, HeaderChangeInTheMiddleIsFollowed) {
  std::string text = EightGpus(50);
  text += "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int s = 50; s < 100; ++s) {
    for (int g = 0; g < 8; ++g) {
      text += "2026/07/14 11:00:" + std::to_string(10 + s % 50) + ".000, " + std::to_string(g) + ", " +
              std::to_string(1000 + s) + ", 81559\n";
    }
  }
  ExpectSameForBlockSizes("bp-layout.csv", text);
  TraceOptions lenient;
  lenient.lenient = true;  // rows of the new layout would otherwise just be skipped as malformed
  ExpectSameForBlockSizes("bp-layout-lenient.csv", text, lenient);
}

TEST(BlockParallelReader, ReorderedColumnsAfterAHeaderAreReadInTheNewOrder) {
  // Same field count, memory.used and memory.total swapped: only the header tells them apart.
  std::string text = "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int s = 0; s < 300; ++s) {
    if (s == 150) text += "timestamp, index, memory.total [MiB], memory.used [MiB]\n";
    for (int g = 0; g < 8; ++g) {
      const std::string used = std::to_string(1000 + s), total = "81559";
      text += "2026/07/14 08:10:" + std::to_string(10 + s % 50) + ".000, " + std::to_string(g) + ", " +
              (s < 150 ? used + ", " + total : total + ", " + used) + "\n";
    }
  }
  auto runs = ExpectSameForBlockSizes("bp-reordered.csv", text);
  ASSERT_EQ(runs[0].records.size(), 2400u);
  EXPECT_EQ(testing_util::MiB(runs[0].records.back().sample.used_bytes), 1299u);
}

TEST(BlockParallelReader, ErrorInOneBlockWhileLaterBlocksAreParsedWinsWithItsLine) {
  std::string text = kHeader;
  for (int s = 0; s < 400; ++s) {
    for (int g = 0; g < 8; ++g) text += Row(s, g, s == 200 && g == 3 ? "12x4 MiB" : "");
  }
  text += "this line is broken too\n";  // a later error must not win
  const std::string path = WriteTemp("bp-error.csv", text);
  const Drained want = Sequential(path, {});
  ASSERT_FALSE(want.status.ok());
  EXPECT_NE(want.status.message().find(":" + std::to_string(1 + 200 * 8 + 3 + 1) + ":"), std::string::npos)
      << want.status.message();
  for (size_t threads : {1, 2, 4}) {
    auto p = OpenParallel(path, {}, 512, threads);
    ASSERT_NE(p, nullptr);
    // Let the workers run ahead, so that blocks after the bad one are parsed before it is reached.
    auto first = p->NextRecord();
    ASSERT_TRUE(first.ok());
    ASSERT_NE(*first, nullptr);
    const TraceRecord first_record = **first;
    usleep(20000);
    Drained got = Drain(*p);
    got.records.insert(got.records.begin(), first_record);
    ExpectSame(want, got, "threads " + std::to_string(threads));
    EXPECT_TRUE(p->fell_back());
    EXPECT_GT(p->parallel_blocks(), 100u);  // everything before the bad block came from the blocks
    EXPECT_LT(p->fallback_offset(), text.find("12x4"));
  }
}

// Row(s, g) with its time in ISO 8601 UTC ("2026-07-14T10:10:10.100Z").
std::string RowInUtc(int s, int g) {
  std::string row = Row(s, g);
  row.replace(0, 11, "2026-07-14T");
  row.insert(row.find(','), "Z");
  return row;
}

// Rows whose times carry a zone after rows whose times do not (or the reverse) cannot be put on one
// clock: the error names the first row of the other kind, whichever block it falls in.
TEST(BlockParallelReader, RowsMixingTimesWithAndWithoutAZoneAreAnErrorAtTheFirstOfTheOtherKind) {
  for (const bool utc_first : {false, true}) {
    for (const int change : {200, 1}) {  // in a later block, and within the first one
      std::string text = kHeader;
      for (int s = 0; s < 400; ++s) {
        for (int g = 0; g < 8; ++g) text += (s < change) == utc_first ? RowInUtc(s, g) : Row(s, g);
      }
      const std::string path = WriteTemp("bp-mixed-zones.csv", text);
      const std::string line = ":" + std::to_string(1 + change * 8 + 1) + ":1: this timestamp carries ";
      const std::string context = fmt::format("utc first {}, change at {}", utc_first, change);
      const Drained want = Sequential(path, {});
      ASSERT_FALSE(want.status.ok()) << context;
      EXPECT_NE(want.status.message().find(line), std::string::npos) << context << ": " << want.status.message();
      EXPECT_NE(want.status.message().find(utc_first ? "carries no time zone" : "carries a time zone"),
                std::string::npos)
          << want.status.message();
      EXPECT_NE(want.status.message().find("(from line 2)"), std::string::npos) << want.status.message();
      TraceOptions lenient;
      lenient.lenient = true;
      EXPECT_FALSE(Sequential(path, lenient).status.ok()) << "no line is skipped to make a clock";
      for (size_t threads : {1, 2, 4}) {
        const Drained got = Parallel(path, {}, 512, threads);
        ASSERT_FALSE(got.status.ok()) << context;
        EXPECT_EQ(got.status.message(), want.status.message()) << context << ", threads " << threads;
      }
    }
  }
}

TEST(BlockParallelReader, LenientSkipsAreMergedInFileOrderWithFileLineNumbers) {
  std::string text = kHeader;
  for (int s = 0; s < 300; ++s) {
    for (int g = 0; g < 8; ++g) text += Row(s, g, (s * 8 + g) % 97 == 5 ? "lots" : "");
    if (s % 50 == 10) text += "1,2,3\n";  // wrong field count
  }
  TraceOptions opt;
  opt.lenient = true;
  auto runs = ExpectSameForBlockSizes("bp-lenient.csv", text, opt);
  EXPECT_GT(runs[0].skipped, kMaxSkippedExamples);
  EXPECT_EQ(runs[0].examples.size(), kMaxSkippedExamples);
  EXPECT_FALSE(runs[0].fell_back);
}

TEST(BlockParallelReader, DateLinesBetweenTimestampedRowsAndZones) {
  std::string text = "timestamp, index, memory.used [MiB], memory.total [MiB]\n";
  for (int s = 0; s < 200; ++s) {
    text += "==== Sun May  4 04:27:" + std::to_string(10 + s % 50) + " AM EDT 2025 ====\n";
    for (int g = 0; g < 4; ++g) {
      text += "2026-07-14T08:12:" + std::to_string(10 + s % 50) + "Z, " + std::to_string(g) + ", " +
              std::to_string(500 + s) + ", 81559\n";
    }
  }
  auto runs = ExpectSameForBlockSizes("bp-dates.csv", text);
  EXPECT_TRUE(runs[0].has_zone);
  EXPECT_FALSE(runs[0].fell_back);
}

TEST(BlockParallelReader, RowsTimedByDateLinesFallBackToOneThreadWithTheSameTimes) {
  std::string text = "index, memory.used [MiB], memory.total [MiB]\n";
  for (int s = 0; s < 150; ++s) {
    text += "2025-09-21 16:" + std::to_string(10 + s / 50) + ":" + std::to_string(10 + s % 50) + "\n";
    for (int g = 0; g < 4; ++g) text += std::to_string(g) + ", " + std::to_string(700 + s) + ", 81559\n";
  }
  auto runs = ExpectSameForBlockSizes("bp-date-timed.csv", text);
  EXPECT_TRUE(runs[0].fell_back);
}

TEST(BlockParallelReader, RowsWithoutAnyClockUseTheIntervalAsOneThreadDoes) {
  std::string text = "index, memory.used [MiB]\n";
  for (int s = 0; s < 100; ++s) {
    for (int g = 0; g < 2; ++g) text += std::to_string(g) + ", " + std::to_string(900 + s) + "\n";
  }
  TraceOptions opt;
  opt.interval_s = 5;
  auto runs = ExpectSameForBlockSizes("bp-interval.csv", text, opt);
  EXPECT_TRUE(runs[0].synthetic);
  // Without --interval: the same error, naming the same line.
  ExpectSameForBlockSizes("bp-no-interval.csv", text);
}

TEST(BlockParallelReader, ColumnsOptionForAHeaderlessFile) {
  std::string text;
  for (int s = 0; s < 200; ++s) {
    for (int g = 0; g < 4; ++g) {
      text += "2026/07/14 08:10:" + std::to_string(10 + s % 50) + ".000, " + std::to_string(g) + ", " +
              std::to_string(300 + s) + "\n";
    }
  }
  TraceOptions opt;
  opt.format = TraceFormat::kQueryCsv;
  opt.columns = {"timestamp", "index", "memory.used"};
  auto runs = ExpectSameForBlockSizes("bp-columns.csv", text, opt);
  EXPECT_EQ(runs[0].records.size(), 800u);
  EXPECT_FALSE(runs[0].fell_back);
}

TEST(BlockParallelReader, NoValidRowGivesTheNoSamplesErrorWithTheSkipCount) {
  std::string text = kHeader;
  for (int s = 0; s < 100; ++s) text += Row(s, s % 8, "lots");
  TraceOptions opt;
  opt.lenient = true;
  auto runs = ExpectSameForBlockSizes("bp-no-valid.csv", text, opt);
  EXPECT_FALSE(runs[0].status.ok());
  EXPECT_NE(runs[0].status.message().find("100 malformed lines skipped"), std::string::npos)
      << runs[0].status.message();
}

TEST(BlockParallelReader, LineLongerThanTheSlackFallsBackAndIsReportedTheSame) {
  std::string text = EightGpus(20);
  text += std::string(kBlockSlack + 100, '7') + "\n";
  text += EightGpus(20).substr(std::string(kHeader).size());
  TraceOptions lenient;
  lenient.lenient = true;
  auto runs = ExpectSameForBlockSizes("bp-long-line.csv", text, lenient);
  EXPECT_TRUE(runs[0].fell_back);
  ExpectSameForBlockSizes("bp-long-line-strict.csv", text);
}

TEST(BlockParallelReader, LinesLongerThanTheFirstReadPastABlockAreReadToTheirEnd) {
  // Comment lines of 5 to 60 KiB: a block's last line then ends beyond the 4 KiB read past the
  // block at first, but within the slack, so the block reads on instead of falling back.
  std::string text = kHeader;
  for (int s = 0; s < 60; ++s) {
    for (int g = 0; g < 8; ++g) text += Row(s, g);
    if (s % 6 == 3) text += "# " + std::string(static_cast<size_t>(5000 + s * 900), 'x') + "\n";
  }
  const std::string path = WriteTemp("bp-long-comments.csv", text);
  const Drained want = Sequential(path, {});
  ASSERT_TRUE(want.status.ok()) << want.status.message();
  ASSERT_EQ(want.records.size(), 480u);
  for (size_t block : {1000, 4096, 20000}) {
    const Drained got = Parallel(path, {}, block, 2);
    ExpectSame(want, got, "block " + std::to_string(block));
    EXPECT_FALSE(got.fell_back) << block;
  }
}

TEST(BlockParallelReader, FileTruncatedAfterOpeningEndsWhereTheFileNowEnds) {
  const std::string text = EightGpus(500);
  const std::string path = WriteTemp("bp-truncated.csv", text);
  const size_t keep = text.find('\n', text.size() / 2) + 1;
  const Drained want = Sequential(WriteTemp("bp-truncated-want.csv", text.substr(0, keep)), {});
  auto p = OpenParallel(path, {}, 4096, 3);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(keep)), 0);  // before the workers start
  Drained got = Drain(*p);
  ASSERT_TRUE(got.status.ok()) << got.status.message();
  EXPECT_EQ(got.records.size(), want.records.size());
  EXPECT_TRUE(got.fell_back);
}

TEST(BlockParallelReader, ByteOrderMarkAndSmallFile) {
  ExpectSameForBlockSizes("bp-bom.csv", "\xEF\xBB\xBF" + EightGpus(3));
  ExpectSameForBlockSizes("bp-one-row.csv", std::string(kHeader) + Row(0, 0));
}

TEST(BlockParallelReader, OpensOnlyRegularUtf8QueryCsvFiles) {
  auto none = [](const std::string& path, TraceOptions opt = {}) {
    auto r = BlockParallelReader::Open(path, opt, BlockParallelOptions{});
    EXPECT_TRUE(r.ok());
    return r.ok() && *r == nullptr;
  };
  EXPECT_TRUE(none("-"));
  EXPECT_TRUE(none(WriteTemp("bp-empty.csv", "")));
  EXPECT_TRUE(none(testing_util::TempPath("bp-missing.csv")));  // OpenTrace() names the error
  EXPECT_TRUE(none(WriteTemp("bp-values.txt", "100\n200\n300\n")));
  std::string utf16 = "\xFF\xFE";
  for (char c : EightGpus(2)) {
    utf16 += c;
    utf16 += '\0';
  }
  EXPECT_TRUE(none(WriteTemp("bp-utf16.csv", utf16)));
  TraceOptions dmon;
  dmon.format = TraceFormat::kDmon;
  EXPECT_TRUE(none(WriteTemp("bp-as-dmon.csv", EightGpus(2)), dmon));
  auto r = BlockParallelReader::Open(WriteTemp("bp-yes.csv", EightGpus(2)), {}, BlockParallelOptions{});
  ASSERT_TRUE(r.ok());
  ASSERT_NE(*r, nullptr);
  EXPECT_EQ((*r)->format(), TraceFormat::kQueryCsv);
}

TEST(BlockParallelReader, StoppingEarlyJoinsTheWorkers) {
  const std::string path = WriteTemp("bp-early.csv", EightGpus(2000));
  {
    auto p = OpenParallel(path, {}, 1000, 4);
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 10; ++i) {
      auto next = p->NextRecord();
      ASSERT_TRUE(next.ok());
      ASSERT_NE(*next, nullptr);
    }
  }  // must not hang with workers waiting for work or holding parsed blocks
  auto unused = OpenParallel(path, {}, 1000, 4);  // never read: no worker to stop
  EXPECT_NE(unused, nullptr);
}

TEST(BlockParallelReader, CopyingInterfacesAndProgress) {
  const std::string path = WriteTemp("bp-copy.csv", EightGpus(100));
  const Drained want = Sequential(path, {});
  auto p = OpenParallel(path, {}, 2000, 2);
  ASSERT_NE(p, nullptr);
  TraceRecord rec;
  size_t i = 0;
  for (;; ++i) {
    auto more = p->NextInto(&rec);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    ASSERT_LT(i, want.records.size());
    EXPECT_EQ(rec.sample.used_bytes, want.records[i].sample.used_bytes);
    EXPECT_LE(p->bytes_read(), p->bytes_total());
  }
  EXPECT_EQ(i, want.records.size());
  EXPECT_EQ(p->bytes_read(), p->bytes_total());
}

}  // namespace
}  // namespace vw::trace
