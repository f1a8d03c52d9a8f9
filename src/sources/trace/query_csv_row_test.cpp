#include "sources/trace/query_csv_row.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using namespace testing_util;

ReadResult ReadWith(bool fast, const std::string& text, bool lenient, const std::string& name) {
  TraceOptions opt;
  opt.lenient = lenient;
  if (fast) return ReadText(text, opt, name);
  GeneralPathOnly general;
  return ReadText(text, opt, name);
}

constexpr const char* kHeader = "timestamp, index, uuid, memory.used [MiB], memory.total [MiB], utilization.gpu [%]";
constexpr const char* kUuid = "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00";

struct FastCase {
  const char* name;
  const char* header;
  std::string row;
  std::optional<uint64_t> used_mib;  // what the row must give (also checked against the general path)
  std::optional<double> util;
};

class QueryRowFastTakes : public ::testing::TestWithParam<FastCase> {};

TEST_P(QueryRowFastTakes, GivesTheGeneralPathsRecord) {
  const FastCase& c = GetParam();
  const std::vector<CsvColumnSpec> cols = Layout(c.header);
  DateCache cache;
  TraceRecord fast;
  bool zone = true;
  ASSERT_TRUE(ParseQueryRowFast(c.row, cols.data(), cols.size(), &cache, &fast, &zone)) << c.row;
  EXPECT_FALSE(zone);
  EXPECT_EQ(MiB(fast.sample.used_bytes), c.used_mib);
  if (c.util) {
    ASSERT_TRUE(fast.sample.gpu_util_ratio.has_value());
    EXPECT_DOUBLE_EQ(*fast.sample.gpu_util_ratio, *c.util);
  } else {
    EXPECT_FALSE(fast.sample.gpu_util_ratio.has_value());
  }
  // The same row twice: the second takes the cached second of the first.
  const std::string text = std::string(c.header) + "\n" + c.row + "\n" + c.row + "\n";
  ReadResult general = ReadWith(false, text, false, std::string(c.name) + ".csv");
  ASSERT_TRUE(general.status.ok()) << general.status.ToString();
  ASSERT_EQ(general.records.size(), 2U);
  ExpectSameRecord(fast, general.records[0]);
  TraceRecord again = fast;
  ASSERT_TRUE(ParseQueryRowFast(c.row, cols.data(), cols.size(), &cache, &again, &zone));
  ExpectSameRecord(again, general.records[1]);
  ReadResult through_reader = ReadWith(true, text, false, std::string(c.name) + "-fast.csv");
  ASSERT_TRUE(through_reader.status.ok());
  ASSERT_EQ(through_reader.records.size(), 2U);
  ExpectSameRecord(through_reader.records[1], general.records[1]);
}

const std::string kTs = "2026/07/14 08:12:38.696";
const std::string kRowTail = std::string(", ") + kUuid;

INSTANTIATE_TEST_SUITE_P(
    Rows, QueryRowFastTakes,
    ::testing::Values(
        FastCase{"Typical", kHeader, kTs + ", 3" + kRowTail + ", 20011 MiB, 81559 MiB, 37 %", 20011, 0.37},
        FastCase{"Zeros", kHeader, kTs + ", 0" + kRowTail + ", 0 MiB, 0 MiB, 0 %", 0, 0.0},
        FastCase{"Hundred", kHeader, kTs + ", 0" + kRowTail + ", 1 MiB, 1 MiB, 100 %", 1, 1.0},
        FastCase{"SevenDigits", kHeader, kTs + ", 0" + kRowTail + ", 9999999 MiB, 1 MiB, 5 %", 9999999, 0.05},
        FastCase{"EightDigits", kHeader, kTs + ", 0" + kRowTail + ", 12345678 MiB, 1 MiB, 5 %", 12345678, 0.05},
        FastCase{"TwelveDigits", kHeader, kTs + ", 0" + kRowTail + ", 123456789012 MiB, 1 MiB, 5 %", 123456789012,
                 0.05},
        FastCase{"ThirteenDigitsGeneralValueParser", kHeader,
                 kTs + ", 0" + kRowTail + ", 1234567890123 MiB, 1 MiB, 5 %", 1234567890123, 0.05},
        FastCase{"LeadingZeros", kHeader, kTs + ", 007" + kRowTail + ", 00020011 MiB, 081559 MiB, 007 %", 20011, 0.07},
        FastCase{"NotAvailable", kHeader, kTs + ", 0" + kRowTail + ", [N/A], [N/A], [Not Supported]", std::nullopt,
                 std::nullopt},
        FastCase{"NoSpacesAfterCommas", kHeader, kTs + ",1," + kUuid + ",20011 MiB,81559 MiB,37 %", 20011, 0.37},
        FastCase{"SpacesAndTabsAround", kHeader,
                 "  " + kTs + " ,\t2 ,  " + kUuid + "\t, 20011 MiB  , 81559 MiB\t, 37 %  ", 20011, 0.37},
        FastCase{"UnitGluedToNumber", kHeader, kTs + ", 0" + kRowTail + ", 20011MiB, 81559MiB, 37%", 20011, 0.37},
        FastCase{"NoUnitsInValues", kHeader, kTs + ", 0" + kRowTail + ", 20011, 81559, 37", 20011, 0.37},
        FastCase{"NoUnitsAnywhere", "timestamp, index, uuid, memory.used, memory.total, utilization.gpu",
                 kTs + ", 0" + kRowTail + ", 20011, 81559, 37", 20011, 0.37},
        FastCase{"GiBHeaderGeneralValueParser",
                 "timestamp, index, uuid, memory.used [GiB], memory.total [GiB], utilization.gpu [%]",
                 kTs + ", 0" + kRowTail + ", 2, 80, 37", 2048, 0.37},
        FastCase{"GiBValueGeneralValueParser", kHeader, kTs + ", 0" + kRowTail + ", 1.5 GiB, 80 GiB, 37.5 %", 1536,
                 0.375},
        FastCase{"NoMilliseconds", kHeader, "2026/07/14 08:12:38, 0" + kRowTail + ", 20011 MiB, 81559 MiB, 37 %", 20011,
                 0.37},
        FastCase{"IsoTimestamp", kHeader, "2026-07-14T08:12:38.5, 0" + kRowTail + ", 20011 MiB, 81559 MiB, 37 %", 20011,
                 0.37},
        FastCase{"EveryKnownColumn",
                 "timestamp, name, pci.bus_id, index, uuid, memory.free [MiB], memory.reserved [MiB], "
                 "memory.used [MiB], memory.total [MiB], utilization.gpu [%], temperature.gpu",
                 kTs + ", NVIDIA H100 80GB HBM3, 00000000:3b:00.0, 5" + kRowTail +
                     ", 61000 MiB, 548 MiB, 20011 MiB, 81559 MiB, 37 %, 45",
                 20011, 0.37},
        FastCase{"MissingIdentity", kHeader, kTs + ", [N/A], [N/A], 20011 MiB, 81559 MiB, [N/A]", 20011, std::nullopt},
        FastCase{"LastFieldEmpty", kHeader, kTs + ", 0" + kRowTail + ", 20011 MiB, 81559 MiB,", 20011, std::nullopt},
        FastCase{"IndexMillion", kHeader, kTs + ", 1000000" + kRowTail + ", 1 MiB, 1 MiB, 1 %", 1, 0.01}),
    [](const ::testing::TestParamInfo<FastCase>& p) { return std::string(p.param.name); });

struct FallbackCase {
  const char* name;
  std::string row;
  const char* message;  // a part of the general path's error for it ("" when the row is valid)
};

class QueryRowFastFallsBack : public ::testing::TestWithParam<FallbackCase> {};

TEST_P(QueryRowFastFallsBack, LeavesTheRowToTheGeneralPath) {
  const FallbackCase& c = GetParam();
  const std::vector<CsvColumnSpec> cols = Layout(kHeader);
  DateCache cache;
  TraceRecord rec;
  bool zone = false;
  EXPECT_FALSE(ParseQueryRowFast(c.row, cols.data(), cols.size(), &cache, &rec, &zone)) << c.row;

  // Through the reader, between two good rows: the same result as with the general path alone,
  // strict (error text with line and column) and lenient (skip count and reason).
  const std::string good = kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB, 7 %";
  const std::string text = std::string(kHeader) + "\n" + good + "\n" + c.row + "\n" + good + "\n";
  for (bool lenient : {false, true}) {
    // One file name for both: the messages name it.
    ReadResult general = ReadWith(false, text, lenient, std::string(c.name) + ".csv");
    ReadResult fast = ReadWith(true, text, lenient, std::string(c.name) + ".csv");
    EXPECT_EQ(fast.status.ToString(), general.status.ToString());
    ExpectSameRead(general, fast);
    if (std::string_view(c.message).empty()) {
      EXPECT_TRUE(fast.status.ok()) << fast.status.ToString();
      EXPECT_EQ(fast.records.size(), 3U);
    } else if (!lenient) {
      EXPECT_THAT(fast.status.ToString(), ::testing::HasSubstr(c.message));
      EXPECT_THAT(fast.status.ToString(), ::testing::HasSubstr(":3:"));
    } else {
      EXPECT_EQ(fast.skipped, 1U);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, QueryRowFastFallsBack,
    ::testing::Values(
        FallbackCase{"QuotedUuid", kTs + ", 0, \"" + std::string(kUuid) + "\", 5 MiB, 6 MiB, 7 %", ""},
        FallbackCase{"QuotedUuidShort", kTs + ", 0, \"GPU-1\", 5 MiB, 6 MiB, 7 %", ""},
        FallbackCase{"QuotedName", kTs + ", 0, \"GPU-a,b\", 5 MiB, 6 MiB, 7 %", ""},
        FallbackCase{"QuoteInLastField", kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB, \"7 %\"", ""},
        FallbackCase{"OddUnit", kTs + ", 0" + kRowTail + ", 5 parsecs, 6 MiB, 7 %", "unknown unit"},
        FallbackCase{"TooManyFields", kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB, 7 %, 8", "6 comma-separated fields"},
        FallbackCase{"TooFewFields", kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB", "6 comma-separated fields"},
        FallbackCase{"GarbageMemory", kTs + ", 0" + kRowTail + ", lots, 6 MiB, 7 %", "a number of MiB in memory.used"},
        FallbackCase{"DigitsThenGarbage", kTs + ", 0" + kRowTail + ", 5x MiB, 6 MiB, 7 %",
                     "a number of MiB in memory.used"},
        FallbackCase{"PercentOver100", kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB, 101 %", "out of range"},
        FallbackCase{"PercentFourDigits", kTs + ", 0" + kRowTail + ", 5 MiB, 6 MiB, 1000 %", "out of range"},
        FallbackCase{"IndexTooLarge", kTs + ", 1000001" + kRowTail + ", 5 MiB, 6 MiB, 7 %", "a GPU index"},
        FallbackCase{"IndexNegative", kTs + ", -1" + kRowTail + ", 5 MiB, 6 MiB, 7 %", "a GPU index"},
        FallbackCase{"BadMonth", "2026/13/14 08:12:38.696, 0" + kRowTail + ", 5 MiB, 6 MiB, 7 %", "a timestamp"},
        FallbackCase{"BadClock", "2026/07/14 08:61:38.696, 0" + kRowTail + ", 5 MiB, 6 MiB, 7 %", "a timestamp"},
        FallbackCase{"TimestampTail", kTs + "Z7, 0" + kRowTail + ", 5 MiB, 6 MiB, 7 %", "a timestamp"}),
    [](const ::testing::TestParamInfo<FallbackCase>& p) { return std::string(p.param.name); });

TEST(QueryRowFast, RowWithoutTimestampColumnIsLeftToTheGeneralPath) {
  const std::vector<CsvColumnSpec> cols = Layout("index, memory.used [MiB]");
  DateCache cache;
  TraceRecord rec;
  bool zone = false;
  EXPECT_FALSE(ParseQueryRowFast("0, 5 MiB", cols.data(), cols.size(), &cache, &rec, &zone));
}

TEST(QueryRowFast, ZonedTimestampOnTheFastPathIsReported) {
  const std::vector<CsvColumnSpec> cols = Layout("timestamp, index, memory.used [MiB]");
  DateCache cache;
  TraceRecord rec;
  bool zone = false;
  ASSERT_TRUE(ParseQueryRowFast("2026-07-14T08:12:38Z, 1, 5 MiB", cols.data(), cols.size(), &cache, &rec, &zone));
  EXPECT_TRUE(zone);
  EXPECT_EQ(Iso(rec.sample.t, true), "2026-07-14T08:12:38Z");
  const std::string text = "timestamp, index, memory.used [MiB]\n2026-07-14T08:12:38Z, 1, 5 MiB\n";
  ReadResult general = ReadWith(false, text, false, "zone-g.csv");
  ReadResult fast = ReadWith(true, text, false, "zone-f.csv");
  ASSERT_EQ(fast.records.size(), 1U);
  ASSERT_EQ(general.records.size(), 1U);
  ExpectSameRecord(fast.records[0], general.records[0]);
  EXPECT_TRUE(general.has_zone);
  EXPECT_TRUE(fast.has_zone);
}

TEST(QueryRowFast, ManyGpusOverManySecondsMatchTheGeneralPath) {
  // Seconds and days rolling over, 8 GPUs per instant, memory of every digit count.
  std::string text = std::string(kHeader) + "\n";
  uint64_t used = 1;
  for (int sec = 0; sec < 300; ++sec) {
    const int day = 14 + sec / 100;
    const int s = (sec * 29) % 60;
    for (int g = 0; g < 8; ++g) {
      char row[200];
      std::snprintf(row, sizeof row, "2026/07/%02d 23:59:%02d.%03d, %d, GPU-0000-%04d, %llu MiB, 81559 MiB, %d %%", day,
                    s, (sec * 7 + g) % 1000, g, g, static_cast<unsigned long long>(used), (sec + g) % 101);
      text += row;
      text += "\n";
      used = used * 3 % 100000000000ULL + static_cast<uint64_t>(g);
    }
  }
  ReadResult general = ReadWith(false, text, false, "many-g.csv");
  ReadResult fast = ReadWith(true, text, false, "many-f.csv");
  ASSERT_TRUE(general.status.ok()) << general.status.ToString();
  ASSERT_TRUE(fast.status.ok()) << fast.status.ToString();
  ASSERT_EQ(fast.records.size(), 2400U);
  ASSERT_EQ(general.records.size(), 2400U);
  for (size_t i = 0; i < fast.records.size(); ++i) ExpectSameRecord(fast.records[i], general.records[i]);
}

// Rows built from random pieces (good and bad spellings of every field, spaces, tabs, quotes,
// missing and extra fields), read leniently with and without the fast path: the same records, the
// same skipped lines with the same reasons. Then strictly: the same first error.
// The stamps of a file keep one clock (times with a zone and without cannot be mixed): one run
// with local times, one with zoned ones (ISO 8601 UTC and epoch seconds).
void RandomRowsReadTheSameWithAndWithoutIt(const std::vector<std::string>& stamps) {
  const std::vector<std::string> indexes = {"0", "7", "1000000", "1000001", "01", "-1", "[N/A]", "", "x", "12345678"};
  const std::vector<std::string> uuids = {kUuid, "GPU-1", "[N/A]", "", "\"GPU-q\"", "\"GPU-a,b\"", "N/A"};
  const std::vector<std::string> memory = {"0 MiB",
                                           "1 MiB",
                                           "20011 MiB",
                                           "20011MiB",
                                           "20011",
                                           "12345678 MiB",
                                           "99999999999",
                                           "1.5 GiB",
                                           "2 GB",
                                           "5 parsecs",
                                           "[N/A]",
                                           "N/A",
                                           "",
                                           "-",
                                           "5x MiB",
                                           "20011 MiB ",
                                           "\"7 MiB\"",
                                           "1234567890123",
                                           "20011  MiB",
                                           "MiB"};
  const std::vector<std::string> percents = {"0 %",    "37 %",  "37%", "37",   "100 %", "101 %", "1000 %",
                                             "37.5 %", "[N/A]", "",    "7 %%", "x %",   "%",     " 5 % "};
  const std::vector<std::string> seps = {", ", ",", " , ", ",\t", "  ,  "};
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto pick = [&state](size_t n) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<size_t>(state % n);
  };
  std::string text = std::string(kHeader) + "\n";
  for (int row = 0; row < 4000; ++row) {
    // Mostly well-formed rows, so that many take the fast path between the odd ones.
    const bool odd = pick(3) == 0;
    std::string line = odd ? stamps[pick(stamps.size())] : stamps[pick(3)];
    line += seps[pick(seps.size())] + (odd ? indexes[pick(indexes.size())] : indexes[pick(2)]);
    line += seps[pick(seps.size())] + (odd ? uuids[pick(uuids.size())] : uuids[0]);
    line += seps[pick(seps.size())] + (odd ? memory[pick(memory.size())] : memory[pick(6)]);
    line += seps[pick(seps.size())] + (odd ? memory[pick(memory.size())] : memory[2]);
    line += seps[pick(seps.size())] + (odd ? percents[pick(percents.size())] : percents[pick(5)]);
    if (odd && pick(8) == 0) line += ", 9";                           // a field too many
    if (odd && pick(8) == 0) line = line.substr(0, line.rfind(','));  // a field too few
    text += line + "\n";
  }
  ReadResult general = ReadWith(false, text, true, "random.csv");
  ReadResult fast = ReadWith(true, text, true, "random.csv");
  ASSERT_TRUE(general.status.ok()) << general.status.ToString();
  ASSERT_TRUE(fast.status.ok()) << fast.status.ToString();
  EXPECT_GT(general.records.size(), 2000U);
  EXPECT_GT(general.skipped, 100U);
  ExpectSameRead(general, fast);
  ReadResult general_strict = ReadWith(false, text, false, "random.csv");
  ReadResult fast_strict = ReadWith(true, text, false, "random.csv");
  EXPECT_FALSE(general_strict.status.ok());
  EXPECT_EQ(fast_strict.status.ToString(), general_strict.status.ToString());
  EXPECT_EQ(fast_strict.records.size(), general_strict.records.size());
}

TEST(QueryRowFast, RandomRowsReadTheSameWithAndWithoutIt) {
  RandomRowsReadTheSameWithAndWithoutIt({kTs, "2026/07/14 08:12:39.001", "2026/07/15 00:00:00.000",
                                         "2026/07/14 08:12:38", "2026/07/14 25:00:00.000", "2026/07/14 08:12:38.69x",
                                         "[N/A]"});
  RandomRowsReadTheSameWithAndWithoutIt({"2026-07-14T08:12:38Z", "1752480758.5", "2026-07-14T08:12:39.001+02:00",
                                         "2026-07-14T25:00:00Z", "2026-07-14T08:12:38.69xZ", "[N/A]"});
}

}  // namespace
}  // namespace vw::trace
