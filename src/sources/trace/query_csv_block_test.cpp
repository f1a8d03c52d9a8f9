// The block parser's own loop (QueryCsvBlockParser::ParseBlock): plain rows of the GPU the table
// predicts go through ParseQueryRowExpected straight into compact samples; everything else goes
// through the sequential reader's path. Each case parses a block both ways (the row fast paths on,
// and off: the general path for every line) and expects the same samples, GPU table, line count,
// carry, skips and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sources/trace/compact_sample.h"
#include "sources/trace/query_csv_row.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using testing_util::Bits;
using testing_util::GeneralPathOnly;
using testing_util::Layout;

constexpr const char* kHeader = "timestamp, index, uuid, memory.used [MiB], memory.total [MiB], utilization.gpu [%]";

// A row of GPU g at second s: "2026/07/14 08:MM:SS.mmm, g, GPU-...-g, used MiB, 81559 MiB, u %".
std::string Row(int s, int g, const std::string& used = "", const std::string& uuid = "") {
  char ts[48];
  std::snprintf(ts, sizeof ts, "2026/07/14 08:%02d:%02d.%03d", s / 60 % 60, s % 60, 100 + g);
  const std::string id = uuid.empty() ? "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f0" + std::to_string(g) : uuid;
  return std::string(ts) + ", " + std::to_string(g) + ", " + id + ", " +
         (used.empty() ? std::to_string(20000 + g * 100 + s % 77) + " MiB" : used) + ", 81559 MiB, " +
         std::to_string((s * 7 + g) % 101) + " %";
}

// `seconds` samples of `gpus` GPUs, each line ended by `eol`.
std::string Rows(int seconds, int gpus, const std::string& eol = "\n") {
  std::string text;
  for (int s = 0; s < seconds; ++s) {
    for (int g = 0; g < gpus; ++g) text += Row(s, g) + eol;
  }
  return text;
}

struct BlockResult {
  Status status;
  std::vector<CompactSample> samples;
  std::vector<GpuIdentity> gpus;
  size_t lines = 0;
  QueryCsvCarry end;
  QueryCsvBlockUse use;
  size_t skipped = 0;
  std::vector<SkippedLine> examples;
  bool has_zone = false;
  size_t compact_rows = 0;
};

BlockResult ParseOnce(const std::string& text, const TraceOptions& opt, const QueryCsvCarry& start) {
  auto parser = NewQueryCsvBlockParser(LineReader::OverText(text), "block.csv", opt, start);
  GpuTable table;
  std::vector<CompactSample> samples;
  std::vector<TraceRecord> scratch(5);  // fewer than the GPUs of most cases: shared scratch records too
  CompactBlockOutput out{&table, &samples, 0, scratch.data(), scratch.size()};
  BlockResult r;
  r.status = parser->ParseBlock(&out);
  r.samples.assign(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(out.count));
  for (size_t i = 0; i < table.size(); ++i) r.gpus.push_back(table[i]);
  r.lines = parser->lines_read();
  r.end = parser->carry();
  r.use = parser->use();
  r.skipped = parser->block_skipped_count();
  r.examples = parser->block_skipped_examples();
  r.has_zone = parser->block_has_zone();
  r.compact_rows = parser->compact_rows();
  return r;
}

BlockResult Parse(bool fast, const std::string& text, const TraceOptions& opt = {}, const QueryCsvCarry& start = {}) {
  if (fast) return ParseOnce(text, opt, start);
  GeneralPathOnly general;
  return ParseOnce(text, opt, start);
}

void ExpectSameBlock(const BlockResult& want, const BlockResult& got) {
  EXPECT_EQ(want.status.ToString(), got.status.ToString());
  ASSERT_EQ(want.samples.size(), got.samples.size());
  for (size_t i = 0; i < want.samples.size(); ++i) {
    const CompactSample& a = want.samples[i];
    const CompactSample& b = got.samples[i];
    EXPECT_EQ(Bits(a.t), Bits(b.t)) << "sample " << i;
    EXPECT_EQ(a.gpu, b.gpu) << "sample " << i;
    EXPECT_EQ(a.used(), b.used()) << "sample " << i;
    EXPECT_EQ(a.total(), b.total()) << "sample " << i;
    EXPECT_EQ(a.free(), b.free()) << "sample " << i;
    EXPECT_EQ(a.reserved(), b.reserved()) << "sample " << i;
    EXPECT_EQ(Bits(a.util()), Bits(b.util())) << "sample " << i;
  }
  ASSERT_EQ(want.gpus.size(), got.gpus.size());
  for (size_t i = 0; i < want.gpus.size(); ++i) {
    EXPECT_EQ(want.gpus[i].key, got.gpus[i].key) << "gpu " << i;
    EXPECT_EQ(want.gpus[i].index, got.gpus[i].index) << "gpu " << i;
    EXPECT_EQ(want.gpus[i].uuid, got.gpus[i].uuid) << "gpu " << i;
    EXPECT_EQ(want.gpus[i].pci_bus_id, got.gpus[i].pci_bus_id) << "gpu " << i;
    EXPECT_EQ(want.gpus[i].name, got.gpus[i].name) << "gpu " << i;
  }
  EXPECT_EQ(want.lines, got.lines);
  EXPECT_EQ(want.end.header_text, got.end.header_text);
  EXPECT_EQ(want.end.have_columns, got.end.have_columns);
  EXPECT_EQ(want.end.block_time, got.end.block_time);
  EXPECT_EQ(want.use.layout_read, got.use.layout_read);
  EXPECT_EQ(want.use.layout_set, got.use.layout_set);
  EXPECT_EQ(want.use.time_set, got.use.time_set);
  EXPECT_EQ(want.skipped, got.skipped);
  ASSERT_EQ(want.examples.size(), got.examples.size());
  for (size_t i = 0; i < want.examples.size(); ++i) {
    EXPECT_EQ(want.examples[i].line, got.examples[i].line);
    EXPECT_EQ(want.examples[i].reason, got.examples[i].reason);
  }
  EXPECT_EQ(want.has_zone, got.has_zone);
}

struct BlockCase {
  const char* name;
  std::string text;  // the block (the header is the carry's unless the text has one)
  size_t compact;    // rows the compact scan must take
  bool lenient = false;
  std::string error;  // part of the strict error, "" for none
  std::string header = kHeader;
  std::optional<uint64_t> total_bytes;
};

void PrintTo(const BlockCase& c, std::ostream* os) {
  *os << c.name;
}

class QueryCsvBlock : public ::testing::TestWithParam<BlockCase> {};

TEST_P(QueryCsvBlock, GivesTheGeneralPathsBlock) {
  const BlockCase& c = GetParam();
  TraceOptions opt;
  opt.lenient = c.lenient;
  opt.total_bytes = c.total_bytes;
  QueryCsvCarry start;
  start.header_text = c.header;
  start.have_columns = true;
  const BlockResult general = Parse(false, c.text, opt, start);
  const BlockResult fast = Parse(true, c.text, opt, start);
  ExpectSameBlock(general, fast);
  EXPECT_EQ(general.compact_rows, 0U);
  EXPECT_EQ(fast.compact_rows, c.compact);
  if (c.error.empty()) {
    EXPECT_TRUE(fast.status.ok()) << fast.status.ToString();
  } else {
    EXPECT_THAT(fast.status.ToString(), ::testing::HasSubstr(c.error));
  }
}

// Three samples of 4 GPUs: the first round fills the table (4 rows the other way), the rest are
// compact unless the case says otherwise.
const std::string kPlain = Rows(3, 4);

INSTANTIATE_TEST_SUITE_P(
    Blocks, QueryCsvBlock,
    ::testing::Values(
        BlockCase{"PlainRows", kPlain, 8}, BlockCase{"CrLf", Rows(3, 4, "\r\n"), 8},
        BlockCase{"LastLineWithoutNewline", kPlain.substr(0, kPlain.size() - 1), 8},
        BlockCase{"LastLineEndsInCarriageReturn", Rows(1, 4) + Row(1, 0) + "\r", 1},
        BlockCase{"TwoCarriageReturns", Rows(1, 4) + Row(1, 0) + "\r\r\n" + Row(1, 1) + "\r\n" + Row(1, 2) + "\r", 1,
                  true},
        BlockCase{"CarriageReturnInsideARow",
                  Rows(1, 4) + Row(1, 0) + "\r" + Row(1, 1) + "\n" + Row(1, 1) + "\n" + Row(1, 2) + "\n", 1, true},
        BlockCase{"BlankAndSeparatorLines", Rows(1, 4) + "\n   \n" + Rows(1, 4) + "-----\n====\n" + Rows(1, 4), 6},
        BlockCase{"HeaderRepeated", std::string(kHeader) + "\n" + Rows(2, 4) + kHeader + "\n" + Rows(1, 4), 7},
        BlockCase{"CommentAndDateLine", Rows(2, 4) + "# a comment\nSun May  4 04:27:32 AM EDT 2025\n" + Rows(1, 4), 7},
        BlockCase{"QuotedUuid",
                  Rows(1, 4) + Row(1, 0) + "\n" + "2026/07/14 08:00:01.101, 1, \"" +
                      "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f01\", 5 MiB, 6 MiB, 7 %\n" + Row(1, 2) + "\n" + Row(1, 3) +
                      "\n",
                  3},
        BlockCase{"UuidWithCommaInQuotesIsNeverComparedInPlace",
                  "2026/07/14 08:00:00.100, 0, \"GPU-a,b\", 5 MiB, 6 MiB, 7 %\n"
                  "2026/07/14 08:00:01.100, 0, \"GPU-a,b\", 6 MiB, 6 MiB, 7 %\n"
                  "2026/07/14 08:00:02.100, 0, GPU-a,b, 7 MiB, 6 MiB, 7 %\n",
                  0, true},
        BlockCase{"MissingUsedValue", Rows(1, 4) + Row(1, 0, "[N/A]") + "\n" + Row(1, 1, "[Not Supported]") + "\n", 2},
        BlockCase{"MissingUuid", Rows(1, 2) + Row(1, 0, "", "[N/A]") + "\n" + Row(2, 0, "", "[N/A]") + "\n", 0},
        BlockCase{"TrailingBlanks", Rows(1, 4) + Row(1, 0) + "  \n" + Row(1, 1) + "\t\n" + Row(1, 2) + "\n", 1},
        BlockCase{"UuidFollowedBySpaces",
                  Rows(1, 2) + "2026/07/14 08:00:01.100, 0, " +
                      "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00   , 5 MiB, 6 MiB, 7 %\n",
                  1},
        BlockCase{"UuidLongerThanExpected",
                  Rows(1, 2) + "2026/07/14 08:00:01.100, 0, " +
                      "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00x, 5 MiB, 6 MiB, 7 %\n",
                  0},
        BlockCase{"IndexWithLeadingZero",
                  Rows(1, 2) + "2026/07/14 08:00:01.100, 00, " +
                      "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00, 5 MiB, 6 MiB, 7 %\n",
                  0},
        BlockCase{"ShortRows", "2026/07/14 08:00:00.100, 0, G, 5, 6, 7\n2026/07/14 08:00:01.100, 0, G, 5, 6, 7\n", 0},
        BlockCase{"GpusOutOfOrder",
                  Rows(1, 4) + Row(1, 2) + "\n" + Row(1, 0) + "\n" + Row(1, 3) + "\n" + Row(1, 1) + "\n", 0},
        BlockCase{"NewGpuMidBlock",
                  Rows(2, 2) + Row(2, 0) + "\n" + Row(2, 1) + "\n" + Row(2, 5) + "\n" + Row(3, 0) + "\n" + Row(3, 1) +
                      "\n" + Row(3, 5) + "\n",
                  7},
        BlockCase{"BadValueStrict", Rows(2, 4) + Row(2, 0, "12x4 MiB") + "\n" + Rows(1, 4), 4, false,
                  "block.csv:9:71: expected a number of MiB in memory.used"},
        BlockCase{"BadValueLenient", Rows(2, 4) + Row(2, 0, "12x4 MiB") + "\n" + Rows(1, 4), 7, true},
        BlockCase{"TooManyFieldsStrict", Rows(2, 4) + Row(2, 0) + ", 9\n" + Rows(1, 4), 4, false,
                  "block.csv:9:99: expected 6 comma-separated fields"},
        BlockCase{"TotalFromOptions",
                  "2026/07/14 08:00:00.100, 0, GPU-0000000000000000000000, 5 MiB, 7 %\n"
                  "2026/07/14 08:00:01.100, 0, GPU-0000000000000000000000, 6 MiB, 7 %\n"
                  "2026/07/14 08:00:02.100, 0, GPU-0000000000000000000000, 7 MiB, 7 %\n",
                  2, false, "", "timestamp, index, uuid, memory.used [MiB], utilization.gpu [%]", 80ull << 30},
        BlockCase{"NoIndexColumn",
                  "2026/07/14 08:00:00.100, GPU-0000000000000000000000, 5 MiB, 9 MiB, 7 %\n"
                  "2026/07/14 08:00:01.100, GPU-0000000000000000000000, 6 MiB, 9 MiB, 7 %\n",
                  1, false, "", "timestamp, uuid, memory.used [MiB], memory.total [MiB], utilization.gpu [%]"},
        BlockCase{"NoIdentityColumns",
                  "2026/07/14 08:00:00.100, 5 MiB, 9 MiB, 7 %, 1, 2, 3, 4, 5, 6\n"
                  "2026/07/14 08:00:01.100, 6 MiB, 9 MiB, 7 %, 1, 2, 3, 4, 5, 6\n",
                  1, false, "",
                  "timestamp, memory.used [MiB], memory.total [MiB], utilization.gpu [%], a, b, c, d, e, f"},
        BlockCase{"NameAndPciBusId",
                  "2026/07/14 08:00:00.100, 0, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 5 MiB, 9 MiB\n"
                  "2026/07/14 08:00:01.100, 0, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 6 MiB, 9 MiB\n"
                  "2026/07/14 08:00:02.100, 0, NVIDIA H100 80GB HBM3, 0000:3b:00.0, 6 MiB, 9 MiB\n"
                  "2026/07/14 08:00:03.100, 0, NVIDIA H100 80GB HBM3 , 00000000:3B:00.0   , 6 MiB, 9 MiB\n",
                  2, false, "", "timestamp, index, name, pci.bus_id, memory.used [MiB], memory.total [MiB]"},
        BlockCase{"MissingName",
                  "2026/07/14 08:00:00.100, 0, [N/A], 00000000:3B:00.0, 5 MiB, 9 MiB\n"
                  "2026/07/14 08:00:01.100, 0, [N/A], 00000000:3B:00.0, 6 MiB, 9 MiB\n",
                  0, false, "", "timestamp, index, name, pci.bus_id, memory.used [MiB], memory.total [MiB]"},
        BlockCase{"TwoUuidColumns",
                  "2026/07/14 08:00:00.100, 0, GPU-0000000000000000000000, GPU-0000000000000000000000, 5 MiB\n"
                  "2026/07/14 08:00:01.100, 0, GPU-0000000000000000000000, GPU-0000000000000000000000, 6 MiB\n"
                  "2026/07/14 08:00:02.100, 0, GPU-0000000000000000000000, GPU-1111111111111111111111, 6 MiB\n"
                  "2026/07/14 08:00:03.100, 0, GPU-0000000000000000000000, GPU-1111111111111111111111, 6 MiB\n",
                  1, false, "", "timestamp, index, uuid, gpu_uuid, memory.used [MiB]"},
        BlockCase{"ZonedTimestamps",
                  "2026-07-14T08:00:00Z, 0, GPU-0000000000000000000000, 5 MiB, 9 MiB, 7 %\n"
                  "2026-07-14T08:00:01Z, 0, GPU-0000000000000000000000, 6 MiB, 9 MiB, 7 %\n",
                  1}),
    [](const ::testing::TestParamInfo<BlockCase>& p) { return std::string(p.param.name); });

TEST(QueryCsvBlock, HeaderInsideTheBlockSetsTheLayoutForTheRowsAfterIt) {
  // No layout at the start: the header in the block sets it, then rows take the compact scan.
  const std::string text = std::string(kHeader) + "\n" + kPlain;
  const BlockResult general = Parse(false, text);
  const BlockResult fast = Parse(true, text);
  ExpectSameBlock(general, fast);
  EXPECT_EQ(fast.compact_rows, 8U);
  EXPECT_TRUE(fast.use.layout_set);
}

TEST(QueryCsvBlock, RowWithoutLayoutIsTheGeneralPathsError) {
  const BlockResult general = Parse(false, kPlain);
  const BlockResult fast = Parse(true, kPlain);
  ExpectSameBlock(general, fast);
  EXPECT_FALSE(fast.status.ok());
  EXPECT_THAT(fast.status.ToString(), ::testing::HasSubstr("block.csv:1:1: this CSV has no header line"));
}

// Random blocks of good and odd lines: every way of leaving and re-entering the compact loop.
TEST(QueryCsvBlock, RandomBlocksParseTheSameWithAndWithoutTheCompactScan) {
  std::mt19937 rng(20261129);
  const std::vector<std::string> odd = {
      "",
      "   ",
      "-----",
      "# note",
      kHeader,
      "Sun May  4 04:27:32 AM EDT 2025",
      "2026/07/14 08:00:01.100, 1, \"GPU-x\", 5 MiB, 6 MiB, 7 %",
      "2026/07/14 08:00:01.100, 1, GPU-x, 5 MiB, 6 MiB",
      "2026/07/14 08:00:01.100, 9, GPU-9, [N/A], [N/A], [N/A]",
      "2026/07/14 08:00:01.100, 2, GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f02, 1.5 GiB, 2 GiB, 3 %",
      "2026/07/14 08:00:01.100, 2, GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f02, 5x MiB, 6 MiB, 7 %"};
  size_t compact = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int lines = 1 + static_cast<int>(rng() % 60);
    const int gpus = 1 + static_cast<int>(rng() % 6);
    int g = 0, s = 0;
    for (int i = 0; i < lines; ++i) {
      const unsigned pick = rng() % 10;
      if (pick == 0) {
        text += odd[rng() % odd.size()];
      } else {
        if (pick == 1) g = static_cast<int>(rng() % 8);  // out of turn
        text += Row(s, g);
        if (++g == gpus) {
          g = 0;
          ++s;
        }
      }
      text += rng() % 9 == 0 ? "\r\n" : "\n";
    }
    if (rng() % 4 == 0) text.pop_back();
    for (bool lenient : {false, true}) {
      SCOPED_TRACE(text);
      TraceOptions opt;
      opt.lenient = lenient;
      QueryCsvCarry start;
      start.header_text = kHeader;
      start.have_columns = true;
      const BlockResult general = Parse(false, text, opt, start);
      const BlockResult fast = Parse(true, text, opt, start);
      ExpectSameBlock(general, fast);
      compact += fast.compact_rows;
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(compact, 2000U);  // the compact scan took most rows
}

// --- ParseQueryRowExpected ------------------------------------------------------------------------

TEST(PlainIdentityTexts, OnlyTextsAFieldCanEqualByteForByte) {
  struct Case {
    const char* text;
    bool plain;
  };
  for (const Case& c : {Case{"GPU-5b8c1c1e", true}, Case{"", false}, Case{"[N/A]", false}, Case{"N/A", false},
                        Case{"-", false}, Case{"GPU-a,b", false}, Case{"GPU-\"a\"", false}, Case{" GPU-a", false},
                        Case{"GPU-a ", false}, Case{"GPU-a\t", false}, Case{"NVIDIA H100 80GB HBM3", true}}) {
    GpuIdentity g;
    g.uuid = c.text;
    g.name = c.text;
    EXPECT_EQ(PlainIdentityTexts(g), c.plain ? (kPlainUuid | kPlainName) : 0) << c.text;
  }
  GpuIdentity pci;
  pci.pci_bus_id = "00000000:3B:00.0";
  EXPECT_EQ(PlainIdentityTexts(pci), kPlainPci);
  pci.pci_bus_id = "0000:3b:00.0";  // not normalised: a row's "0000:3b:00.0" would normalise to another text
  EXPECT_EQ(PlainIdentityTexts(pci), 0);
}

// Random rows against random expected identities: whenever the compact scan takes a row, the fused
// scan takes it too, with that very identity and the same values.
TEST(ParseQueryRowExpected, TakesOnlyRowsTheFusedScanGivesTheExpectedGpu) {
  const std::vector<std::string> headers = {kHeader, "timestamp, uuid, memory.used [MiB], utilization.gpu [%]",
                                            "timestamp, index, name, pci.bus_id, memory.used [MiB], memory.free [MiB]",
                                            "timestamp, memory.used [MiB]"};
  const std::vector<std::string> indexes = {"0", "1", "01", "[N/A]", " 1 ", "12"};
  const std::vector<std::string> texts = {"GPU-aa",      "GPU-ab",           "GPU-aa ",      " GPU-aa",
                                          "GPU-aax",     "\"GPU-aa\"",       "[N/A]",        "GPU-a,a",
                                          "NVIDIA H100", "00000000:3B:00.0", "0000:3b:00.0", ""};
  const std::vector<std::string> values = {"5 MiB", "5", "5MiB", "[N/A]", "1.5 GiB", "5x", "100 %", "7", " 9 % "};
  std::mt19937 rng(7);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  size_t taken = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string header = pick(headers);
    const std::vector<CsvColumnSpec> cols = Layout(header);
    std::string row;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) row += rng() % 3 == 0 ? " ," : ", ";
      switch (cols[i].kind) {
        case CsvColumn::kTimestamp: row += "2026/07/14 08:00:0" + std::to_string(rng() % 3) + ".100"; break;
        case CsvColumn::kIndex: row += pick(indexes); break;
        case CsvColumn::kUuid:
        case CsvColumn::kName:
        case CsvColumn::kPciBusId: row += pick(texts); break;
        default: row += pick(values); break;
      }
    }
    // The expected GPU: half the time the identity of a similar row, else random pieces.
    GpuIdentity expected;
    if (rng() % 2 == 0) {
      DateCache cache;
      TraceRecord rec;
      bool zone = false;
      if (ParseQueryRowFast(row, cols.data(), cols.size(), &cache, &rec, &zone)) expected = rec.gpu;
      if (rng() % 4 == 0) expected.uuid = pick(texts);
    } else {
      expected.key = pick(indexes);
      if (rng() % 2 == 0) expected.index = static_cast<int>(rng() % 3);
      expected.uuid = pick(texts);
      expected.name = pick(texts);
      expected.pci_bus_id = pick(texts);
    }
    const ExpectedGpu expect{&expected, PlainIdentityTexts(expected)};
    DateCache cache_a, cache_b;
    CompactSample compact_a;
    bool zone_a = false;
    if (!ParseQueryRowExpected(row, cols.data(), cols.size(), &cache_a, expect, &compact_a, &zone_a)) continue;
    MemorySample values_a;
    FromCompact(compact_a, &values_a);
    ++taken;
    SCOPED_TRACE(header + " | " + row);
    TraceRecord rec;
    bool zone_b = false;
    ASSERT_TRUE(ParseQueryRowFast(row, cols.data(), cols.size(), &cache_b, &rec, &zone_b));
    EXPECT_TRUE(SameGpu(rec.gpu, expected));
    EXPECT_EQ(Bits(values_a.t), Bits(rec.sample.t));
    EXPECT_EQ(values_a.used_bytes, rec.sample.used_bytes);
    EXPECT_EQ(values_a.total_bytes, rec.sample.total_bytes);
    EXPECT_EQ(values_a.free_bytes, rec.sample.free_bytes);
    EXPECT_EQ(values_a.reserved_bytes, rec.sample.reserved_bytes);
    EXPECT_EQ(Bits(values_a.gpu_util_ratio), Bits(rec.sample.gpu_util_ratio));
    EXPECT_EQ(zone_a, zone_b);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(taken, 1000U);
}

TEST(ParseQueryRowExpected, RefusesAnotherGpuOrAnyDoubt) {
  const std::vector<CsvColumnSpec> cols = Layout(kHeader);
  GpuIdentity gpu0;
  gpu0.key = "0";
  gpu0.index = 0;
  gpu0.uuid = "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00";
  const ExpectedGpu expect{&gpu0, PlainIdentityTexts(gpu0)};
  struct Case {
    std::string row;
    bool taken;
  };
  const std::string uuid = gpu0.uuid;
  for (const Case& c :
       {Case{Row(0, 0), true}, Case{Row(0, 1), false}, Case{Row(0, 0, "[N/A]"), true},
        Case{Row(0, 0, "", uuid + " "), true}, Case{Row(0, 0, "", uuid.substr(0, 39)), false},
        Case{Row(0, 0, "", uuid + "0"), false}, Case{Row(0, 0, "", "\"" + uuid + "\""), false},
        Case{Row(0, 0, "", "[N/A]"), false}, Case{Row(0, 0) + ", 1", false}, Case{Row(0, 0, "5 parsecs"), false}}) {
    DateCache cache;
    CompactSample values;
    bool zone = false;
    EXPECT_EQ(ParseQueryRowExpected(c.row, cols.data(), cols.size(), &cache, expect, &values, &zone), c.taken) << c.row;
  }
  // Without a UUID the expected GPU cannot be the row's (the row names one).
  GpuIdentity no_uuid = gpu0;
  no_uuid.uuid.clear();
  DateCache cache;
  CompactSample values;
  bool zone = false;
  EXPECT_FALSE(ParseQueryRowExpected(Row(0, 0), cols.data(), cols.size(), &cache,
                                     ExpectedGpu{&no_uuid, PlainIdentityTexts(no_uuid)}, &values, &zone));
}

}  // namespace
}  // namespace vw::trace
