#include "sources/trace/trace_values.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "sources/trace/csv_fields.h"

namespace vw::trace {
namespace {

TEST(IsMissingValue, EveryNvidiaSmiSpelling) {
  for (const char* s : {"", "[N/A]", "[Not Supported]", "[Insufficient Permissions]", "[Unknown Error]",
                        "[GPU is lost]", "[GPU requires reset]", "N/A", "-", "ERR!"}) {
    EXPECT_TRUE(IsMissingValue(s)) << s;
  }
  for (const char* s : {"0", "0 MiB", "N/A MiB", "[N/A"}) EXPECT_FALSE(IsMissingValue(s)) << s;
}

struct MemCase {
  const char* text;
  MemUnit unit;
  ValueError err;
  std::optional<uint64_t> bytes;
};

class MemoryValues : public ::testing::TestWithParam<MemCase> {};

TEST_P(MemoryValues, ParseWithUnits) {
  std::optional<uint64_t> out = 99;
  EXPECT_EQ(ParseMemoryValue(GetParam().text, GetParam().unit, &out), GetParam().err) << GetParam().text;
  if (GetParam().err == ValueError::kOk) {
    EXPECT_EQ(out, GetParam().bytes) << GetParam().text;
  }
}

TEST_P(MemoryValues, FastPathAgreesOrDefers) {
  // ParseMibFast either gives ParseMemoryValue's answer or declines (and leaves *out alone).
  std::optional<uint64_t> fast = 99, full = 99;
  const ValueError err = ParseMemoryValue(GetParam().text, GetParam().unit, &full);
  if (ParseMibFast(GetParam().text, GetParam().unit, &fast)) {
    EXPECT_EQ(err, ValueError::kOk) << GetParam().text;
    EXPECT_EQ(fast, full) << GetParam().text;
  } else {
    EXPECT_EQ(fast, std::optional<uint64_t>(99)) << GetParam().text;
  }
}

TEST(ParseMibFast, TakesNvidiaSmiSpellingsAndDeclinesTheRest) {
  std::optional<uint64_t> out;
  EXPECT_TRUE(ParseMibFast("20011 MiB", MemUnit::kNone, &out));
  EXPECT_EQ(out, uint64_t{20011} << 20);
  EXPECT_TRUE(ParseMibFast("7", MemUnit::kMiB, &out));
  EXPECT_EQ(out, uint64_t{7} << 20);
  for (const char* s : {"12", "12 GiB", "12 MiBs", "1.5 MiB", "[N/A]", "", " 12", "1234567890123 MiB"}) {
    const MemUnit unit = std::string_view(s) == "12" ? MemUnit::kGiB : MemUnit::kNone;
    EXPECT_FALSE(ParseMibFast(s, unit, &out)) << s;
  }
}

constexpr uint64_t kM = 1024 * 1024;
INSTANTIATE_TEST_SUITE_P(Table, MemoryValues,
                         ::testing::Values(MemCase{"12", MemUnit::kNone, ValueError::kOk, 12 * kM},
                                           MemCase{"12 MiB", MemUnit::kNone, ValueError::kOk, 12 * kM},
                                           MemCase{"12MiB", MemUnit::kNone, ValueError::kOk, 12 * kM},
                                           MemCase{"12 MB", MemUnit::kNone, ValueError::kOk, 12 * kM},
                                           MemCase{"1.5 GiB", MemUnit::kNone, ValueError::kOk, 1536 * kM},
                                           MemCase{"2", MemUnit::kGiB, ValueError::kOk, 2048 * kM},
                                           MemCase{"512 KiB", MemUnit::kNone, ValueError::kOk, 512 * 1024},
                                           MemCase{"[N/A]", MemUnit::kNone, ValueError::kOk, std::nullopt},
                                           MemCase{"abc", MemUnit::kNone, ValueError::kNotNumber, std::nullopt},
                                           MemCase{"-5", MemUnit::kNone, ValueError::kNotNumber, std::nullopt},
                                           MemCase{"5 apples", MemUnit::kNone, ValueError::kBadUnit, std::nullopt},
                                           MemCase{"99999999999999999999 GiB", MemUnit::kNone, ValueError::kOutOfRange,
                                                   std::nullopt},
                                           MemCase{"1e3 GiB", MemUnit::kNone, ValueError::kBadUnit, std::nullopt}));

TEST(ParsePercentValue, RangeAndSpellings) {
  std::optional<double> v;
  EXPECT_EQ(ParsePercentValue("37 %", &v), ValueError::kOk);
  EXPECT_DOUBLE_EQ(*v, 0.37);
  EXPECT_EQ(ParsePercentValue("100%", &v), ValueError::kOk);
  EXPECT_DOUBLE_EQ(*v, 1.0);
  EXPECT_EQ(ParsePercentValue("[Not Supported]", &v), ValueError::kOk);
  EXPECT_FALSE(v.has_value());
  EXPECT_EQ(ParsePercentValue("101 %", &v), ValueError::kOutOfRange);
  EXPECT_EQ(ParsePercentValue("37 W", &v), ValueError::kBadUnit);
}

struct DateCase {
  const char* line;
  bool ok;
  const char* iso;
};

class DateLines : public ::testing::TestWithParam<DateCase> {};

TEST_P(DateLines, RecognisesClockOnlyLines) {
  Timestamp ts;
  EXPECT_EQ(ParseDateLine(GetParam().line, &ts), GetParam().ok) << GetParam().line;
  if (GetParam().ok) {
    EXPECT_EQ(FormatIso8601(ts.seconds, false), GetParam().iso) << GetParam().line;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, DateLines,
    ::testing::Values(DateCase{"2025-09-21 16:12:24", true, "2025-09-21T16:12:24"},
                      DateCase{"Sun May  4 04:27:32 AM EDT 2025", true, "2025-05-04T04:27:32"},
                      DateCase{"Sun May  4 12:03:16 AM EDT 2025", true, "2025-05-04T00:03:16"},
                      DateCase{"Sun May  4 11:57:50 PM EDT 2025", true, "2025-05-04T23:57:50"},
                      DateCase{"==== Mon May  5 12:03:16 PM EDT 2025 ====", true, "2025-05-05T12:03:16"},
                      DateCase{"Tue Oct 29 19:00:23 2024       ", true, "2024-10-29T19:00:23"},
                      DateCase{"Sun 04 May 2025 04:27:32 PM CEST", true, "2025-05-04T16:27:32"},
                      DateCase{"Tue Oct 29 19:00:23 UTC 2024", true, "2024-10-29T19:00:23"},
                      DateCase{"4321", false, ""}, DateCase{"2025/09/21 16:12:24.315, 0, 4", false, ""},
                      DateCase{"hello 12:00:00 world", false, ""}, DateCase{"----", false, ""}));

TEST(ParseTraceTimestamp, FastPathMatchesCoreParser) {
  for (const char* s : {"2026/07/14 08:12:38.696", "2026/07/14 08:12:38", "1999/12/31 23:59:59.999"}) {
    Timestamp fast;
    ASSERT_TRUE(ParseTraceTimestamp(s, &fast)) << s;
    auto core = ParseTimestamp(s);
    ASSERT_TRUE(core.ok());
    EXPECT_DOUBLE_EQ(fast.seconds, core->seconds) << s;
    EXPECT_FALSE(fast.has_zone);
  }
  Timestamp t;
  EXPECT_FALSE(ParseTraceTimestamp("2026/13/14 08:12:38.696", &t));
  EXPECT_FALSE(ParseTraceTimestamp("2026/07/14 08:12:38.6x6", &t));
}

TEST(ParseTraceTimestamp, DatesThatDoNotExistAreRejectedWithAndWithoutCache) {
  DateCache cache;
  for (const char* s :
       {"2026/02/30 08:12:38.696", "2026/04/31 08:12:38", "2025/02/29 00:00:00", "2026-02-30 10:00:00"}) {
    Timestamp t;
    EXPECT_FALSE(ParseTraceTimestamp(s, &t)) << s;
    EXPECT_FALSE(ParseTraceTimestamp(s, &t, &cache)) << s;
  }
  Timestamp leap;
  EXPECT_TRUE(ParseTraceTimestamp("2024/02/29 08:12:38.696", &leap, &cache));
  EXPECT_FALSE(ParseDateLine("Mon Feb 30 10:00:00 2026", &leap));
}

TEST(ParseTraceTimestamp, SecondAndDateCacheGiveTheSameTimesAsNoCache) {
  // Rows of several GPUs share a second; the cache must never leak one row's time into another.
  const std::vector<std::string> rows = {
      "2026/07/14 08:12:38.100", "2026/07/14 08:12:38.103", "2026/07/14 08:12:38",     "2026/07/14 08:12:39.000",
      "2026/07/14 08:12:39.999", "2026/07/15 08:12:39.999", "2026/07/15 08:12:39.5x0", "2026/07/15 08:12:39.001",
      "2026-07-15 08:12:39",     "2026/07/15 08:12:39.002", "2026/07/14 08:12:38.100"};
  DateCache cache;
  for (const std::string& s : rows) {
    Timestamp cached, plain;
    const bool ok_cached = ParseTraceTimestamp(s, &cached, &cache);
    const bool ok_plain = ParseTraceTimestamp(s, &plain);
    ASSERT_EQ(ok_cached, ok_plain) << s;
    if (!ok_plain) continue;
    EXPECT_EQ(cached.seconds, plain.seconds) << s;  // bit-identical, not just close
    EXPECT_EQ(cached.has_zone, plain.has_zone) << s;
  }
}

TEST(SplitUnquotedInto, SameFieldsAsSplitCsvOrFallsBack) {
  std::array<std::string_view, 8> out{};
  std::vector<std::string_view> want;
  for (std::string_view line :
       {"2026/07/14 08:12:38.100, 0, GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f00, 20011 MiB, 81559 MiB, 37 %",
        " a ,\tb\t,, e ", "", "single", "x,", ",y", "0123456789abcdef,0123456789abcdef0,z"}) {
    SplitCsv(line, &want);
    const size_t n = SplitUnquotedInto(line, out.data(), out.size());
    ASSERT_EQ(n, want.size()) << line;
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], want[i]) << line << " field " << i;
  }
  EXPECT_EQ(SplitUnquotedInto("a,\"b,c\",d", out.data(), out.size()), kSplitFallback) << "quotes need SplitCsv";
  EXPECT_EQ(SplitUnquotedInto("0123456789abcdef\"", out.data(), out.size()), kSplitFallback)
      << "a quote in the vector part";
  EXPECT_EQ(SplitUnquotedInto("a,b,c", out.data(), 2), kSplitFallback) << "more fields than room";
  EXPECT_EQ(SplitUnquotedInto("a,b", out.data(), 2), 2u);
}

TEST(NormalizePciBusId, PadsDomainAndUpperCases) {
  EXPECT_EQ(NormalizePciBusId("0000:3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(NormalizePciBusId(" 00000000:AB:00.0 "), "00000000:AB:00.0");
  EXPECT_EQ(NormalizePciBusId("weird"), "weird");
}

TEST(SplitCsv, TrimsAndKeepsQuotedCommas) {
  std::vector<std::string_view> f;
  SplitCsv(" a , b,\"c, d\" ,, e ", &f);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0], "a");
  EXPECT_EQ(f[1], "b");
  EXPECT_EQ(f[2], "c, d");
  EXPECT_EQ(f[3], "");
  EXPECT_EQ(f[4], "e");
  SplitCsv("", &f);
  EXPECT_EQ(f.size(), 1u);
}

TEST(CsvHeader, RecognisesQueryFieldNamesOnly) {
  std::vector<std::string_view> f;
  SplitCsv("timestamp, memory.used [MiB], power.draw [W]", &f);
  EXPECT_TRUE(IsCsvHeader(f));
  SplitCsv("NVIDIA GeForce RTX 4090, 1 %, 2 %", &f);
  EXPECT_FALSE(IsCsvHeader(f));
  SplitCsv("python, done", &f);
  EXPECT_FALSE(IsCsvHeader(f));
  CsvColumnSpec spec;
  ASSERT_TRUE(ParseCsvColumn("memory.total [GiB]", &spec));
  EXPECT_EQ(spec.kind, CsvColumn::kTotal);
  EXPECT_EQ(spec.unit, MemUnit::kGiB);
}

}  // namespace
}  // namespace vw::trace
