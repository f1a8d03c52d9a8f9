#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

std::vector<std::string> Cols(std::string_view csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size() && !csv.empty()) {
    size_t c = csv.find(',', start);
    if (c == std::string_view::npos) c = csv.size();
    out.emplace_back(csv.substr(start, c - start));
    start = c + 1;
  }
  return out;
}

struct CsvCase {
  const char* name;
  std::string text;
  const char* columns;  // --columns, "" for none
  std::optional<double> interval;
  size_t records;
  const char* first_key;
  const char* first_time;  // ISO 8601 as FormatIso8601(t, has_zone) prints it
  std::optional<uint64_t> first_used_mib;
  std::optional<uint64_t> first_total_mib;
  std::optional<double> first_util;
  const char* last_time;
  std::optional<uint64_t> last_used_mib;
};

class QueryCsvCases : public ::testing::TestWithParam<CsvCase> {};

TEST_P(QueryCsvCases, ReadsEverySpelling) {
  const CsvCase& c = GetParam();
  TraceOptions opt;
  opt.columns = Cols(c.columns);
  opt.interval_s = c.interval;
  ReadResult r = ReadText(c.text, opt, std::string(c.name) + ".csv");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), c.records);
  const TraceRecord& first = r.records.front();
  EXPECT_EQ(first.gpu.key, c.first_key);
  EXPECT_EQ(Iso(first.sample.t, r.has_zone), c.first_time);
  EXPECT_EQ(MiB(first.sample.used_bytes), c.first_used_mib);
  EXPECT_EQ(MiB(first.sample.total_bytes), c.first_total_mib);
  if (c.first_util) {
    ASSERT_TRUE(first.sample.gpu_util_ratio.has_value());
    EXPECT_DOUBLE_EQ(*first.sample.gpu_util_ratio, *c.first_util);
  } else {
    EXPECT_FALSE(first.sample.gpu_util_ratio.has_value());
  }
  const TraceRecord& last = r.records.back();
  EXPECT_EQ(Iso(last.sample.t, r.has_zone), c.last_time);
  EXPECT_EQ(MiB(last.sample.used_bytes), c.last_used_mib);
}

const CsvCase kCsvCases[] = {
    {"units_in_header_and_values",
     "timestamp, memory.used [MiB], utilization.gpu [%]\n"
     "2026/02/02 01:07:37.100, 17092 MiB, 0 %\n"
     "2026/02/02 01:07:52.106, 17406 MiB, 37 %\n",
     "", std::nullopt, 2, "0", "2026-02-02T01:07:37.100", 17092, std::nullopt, 0.0, "2026-02-02T01:07:52.106", 17406},
    {"nounits",
     "timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
     "2026/07/14 08:12:38.696, 0, 1234, 81559, 93\n",
     "", std::nullopt, 1, "0", "2026-07-14T08:12:38.696", 1234, 81559, 0.93, "2026-07-14T08:12:38.696", 1234},
    {"epoch_seconds_no_spaces",
     "timestamp,memory.used,memory.total,utilization.gpu\n1764189075,1, 24576, 0\n1764189135,442, 24576, 0\n", "",
     std::nullopt, 2, "0", "2025-11-26T20:31:15Z", 1, 24576, 0.0, "2025-11-26T20:32:15Z", 442},
    {"iso_with_zone", "timestamp, memory.used [MiB]\n2026-07-14T10:12:38+02:00, 5 MiB\n2026-07-14T08:12:39Z, 6 MiB\n",
     "", std::nullopt, 2, "0", "2026-07-14T08:12:38Z", 5, std::nullopt, std::nullopt, "2026-07-14T08:12:39Z", 6},
    {"iso_without_zone", "timestamp, memory.used [MiB]\n2026-07-14 10:12:38, 5 MiB\n", "", std::nullopt, 1, "0",
     "2026-07-14T10:12:38", 5, std::nullopt, std::nullopt, "2026-07-14T10:12:38", 5},
    {"header_repeated_before_every_row",
     "timestamp, index, memory.used [MiB]\n2023/06/22 18:56:56.252, 0, 841 MiB\n"
     "timestamp, index, memory.used [MiB]\n2023/06/22 18:56:57.252, 0, 842 MiB\n"
     "timestamp, index, memory.used [MiB]\n2023/06/22 18:56:58.252, 0, 843 MiB\n",
     "", std::nullopt, 3, "0", "2023-06-22T18:56:56.252", 841, std::nullopt, std::nullopt, "2023-06-22T18:56:58.252",
     843},
    {"header_changes_columns",
     "timestamp, memory.used [MiB]\n2026/01/01 00:00:00.000, 1 MiB\n"
     "timestamp, index, memory.total [MiB], memory.used [MiB]\n2026/01/01 00:00:01.000, 3, 100 MiB, 2 MiB\n",
     "", std::nullopt, 2, "0", "2026-01-01T00:00:00", 1, std::nullopt, std::nullopt, "2026-01-01T00:00:01", 2},
    {"noheader_with_columns",
     "2025/09/21 16:12:24.315, 0, 0, 0, 4, 24564\n2025/09/21 16:12:24.318, 1, 0, 0, 5, 24564\n",
     "timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total", std::nullopt, 2, "0",
     "2025-09-21T16:12:24.315", 4, 24564, 0.0, "2025-09-21T16:12:24.318", 5},
    {"columns_with_units_in_option", "2026/01/01 00:00:00.000, 2 GiB\n", "timestamp,memory.used [GiB]", std::nullopt, 1,
     "0", "2026-01-01T00:00:00", 2048, std::nullopt, std::nullopt, "2026-01-01T00:00:00", 2048},
    {"crlf_and_blank_lines",
     "timestamp, memory.used [MiB]\r\n\r\n2026/01/01 00:00:00.000, 7 MiB\r\n   \r\n2026/01/01 00:00:01.000, 8 MiB\r\n",
     "", std::nullopt, 2, "0", "2026-01-01T00:00:00", 7, std::nullopt, std::nullopt, "2026-01-01T00:00:01", 8},
    {"utf8_bom", "\xEF\xBB\xBFtimestamp, memory.used [MiB]\n2026/01/01 00:00:00.000, 9 MiB\n", "", std::nullopt, 1, "0",
     "2026-01-01T00:00:00", 9, std::nullopt, std::nullopt, "2026-01-01T00:00:00", 9},
    {"date_and_separator_lines_between_blocks",
     "# nvidia-smi loop\n2025-09-21 16:12:24\n2025/09/21 16:12:24.315, 0, 4, 24564\n2025/09/21 16:12:24.318, 1, 5, "
     "24564\n----\n"
     "Sun May  4 04:27:32 AM EDT 2025\n2025/09/21 16:12:39.360, 0, 6, 24564\n----\n",
     "timestamp,index,memory.used,memory.total", std::nullopt, 3, "0", "2025-09-21T16:12:24.315", 4, 24564,
     std::nullopt, "2025-09-21T16:12:39.360", 6},
    {"gpus_by_uuid",
     "timestamp, uuid, memory.used [MiB]\n2026/01/01 00:00:00.000, GPU-aaaa, 1 MiB\n"
     "2026/01/01 00:00:00.001, GPU-bbbb, 2 MiB\n",
     "", std::nullopt, 2, "GPU-aaaa", "2026-01-01T00:00:00", 1, std::nullopt, std::nullopt, "2026-01-01T00:00:00.001",
     2},
    {"gpus_by_pci_bus_id",
     "timestamp, name, pci.bus_id, memory.used [MiB]\n2026/01/01 00:00:00.000, NVIDIA X, 0000:3b:00.0, 1 MiB\n", "",
     std::nullopt, 1, "00000000:3B:00.0", "2026-01-01T00:00:00", 1, std::nullopt, std::nullopt, "2026-01-01T00:00:00",
     1},
    {"mb_and_gib_units",
     "timestamp, memory.used [MB], memory.total [GiB]\n2026/01/01 00:00:00.000, 512, 80\n"
     "2026/01/01 00:00:01.000, 1 GiB, 80 GiB\n",
     "", std::nullopt, 2, "0", "2026-01-01T00:00:00", 512, 81920, std::nullopt, "2026-01-01T00:00:01", 1024},
    {"no_timestamp_column_uses_interval_per_instant",
     "index, memory.used [MiB]\n0, 10 MiB\n1, 20 MiB\n0, 11 MiB\n1, 21 MiB\n", "", 15.0, 4, "0", "1970-01-01T00:00:00",
     10, std::nullopt, std::nullopt, "1970-01-01T00:00:15", 21},
    {"utilization_then_used_noheader_loop", "2 %, 588 MiB\n2 %, 589 MiB\n1 %, 590 MiB\n", "utilization.gpu,memory.used",
     2.0, 3, "0", "1970-01-01T00:00:00", 588, std::nullopt, 0.02, "1970-01-01T00:00:04", 590},
    {"per_process_block_is_skipped",
     "index, utilization.gpu [%], memory.used [MiB]\n0, 75 %, 77537 MiB\n"
     "gpu_uuid, pid, used_gpu_memory [MiB]\nGPU-e82a, 2069192, 77002 MiB\n",
     "", 1.0, 1, "0", "1970-01-01T00:00:00", 77537, std::nullopt, 0.75, "1970-01-01T00:00:00", 77537},
    {"quoted_field_with_comma", "timestamp, name, memory.used [MiB]\n2026/01/01 00:00:00.000, \"GPU, big\", 3 MiB\n",
     "", std::nullopt, 1, "0", "2026-01-01T00:00:00", 3, std::nullopt, std::nullopt, "2026-01-01T00:00:00", 3},
};

INSTANTIATE_TEST_SUITE_P(Spellings, QueryCsvCases, ::testing::ValuesIn(kCsvCases),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(QueryCsvReader, EveryMissingSpellingIsMissingNotZero) {
  const char* spellings[] = {"[N/A]",
                             "[Not Supported]",
                             "[Insufficient Permissions]",
                             "[Unknown Error]",
                             "[GPU is lost]",
                             "[GPU requires reset]",
                             "N/A",
                             ""};
  for (const char* s : spellings) {
    std::string text = std::string("timestamp, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n") +
                       "2026/01/01 00:00:00.000, " + s + ", " + s + ", " + s + "\n";
    ReadResult r = ReadText(text, {}, "missing.csv");
    ASSERT_TRUE(r.status.ok()) << s << ": " << r.status.ToString();
    ASSERT_EQ(r.records.size(), 1u) << s;
    EXPECT_FALSE(r.records[0].sample.used_bytes.has_value()) << s;
    EXPECT_FALSE(r.records[0].sample.total_bytes.has_value()) << s;
    EXPECT_FALSE(r.records[0].sample.gpu_util_ratio.has_value()) << s;
  }
}

TEST(QueryCsvReader, FillsTotalFreeReservedAndIdentity) {
  ReadResult r = ReadText(
      "timestamp, index, uuid, pci.bus_id, name, memory.total [MiB], memory.reserved [MiB], memory.used [MiB], "
      "memory.free [MiB], utilization.gpu [%]\n"
      "2026/07/14 09:00:27.792, 3, GPU-0000, 00000000:00:09.0, NVIDIA H100 80GB HBM3, 81559 MiB, 479 MiB, 59 MiB, "
      "81021 MiB, 12 %\n",
      {}, "full.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  const TraceRecord& rec = r.records[0];
  EXPECT_EQ(rec.gpu.key, "3");
  EXPECT_EQ(rec.gpu.index, 3);
  EXPECT_EQ(rec.gpu.uuid, "GPU-0000");
  EXPECT_EQ(rec.gpu.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(rec.gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rec.sample.total_bytes, 81559 * kMiBBytes);
  EXPECT_EQ(rec.sample.reserved_bytes, 479 * kMiBBytes);
  EXPECT_EQ(rec.sample.used_bytes, 59 * kMiBBytes);
  EXPECT_EQ(rec.sample.free_bytes, 81021 * kMiBBytes);
  EXPECT_DOUBLE_EQ(*rec.sample.gpu_util_ratio, 0.12);
  EXPECT_FALSE(r.synthetic);
  EXPECT_FALSE(r.has_zone);
}

TEST(QueryCsvReader, TotalFromOptionsWhenTheFileHasNone) {
  TraceOptions opt;
  opt.total_bytes = 24 * 1024 * kMiBBytes;
  ReadResult r = ReadText("timestamp, memory.used [MiB]\n2026/01/01 00:00:00.000, 3 MiB\n", opt, "tot.csv");
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.records[0].sample.total_bytes, 24 * 1024 * kMiBBytes);
}

TEST(QueryCsvReader, Utf16LeWithBomAndCrlf) {
  std::string utf8 =
      "timestamp, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\r\n"
      "2026/08/01 03:59:40.361, 10549 MiB, 11264 MiB, 100 %\r\n"
      "2026/08/01 03:59:41.371, 1764 MiB, 11264 MiB, 63 %\r\n";
  std::string utf16 = "\xFF\xFE";
  for (char c : utf8) {
    utf16.push_back(c);
    utf16.push_back('\0');
  }
  ReadResult r = ReadText(utf16, {}, "utf16.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(MiB(r.records[1].sample.used_bytes), 1764u);
  EXPECT_EQ(Iso(r.records[1].sample.t), "2026-08-01T03:59:41.371");
  EXPECT_DOUBLE_EQ(*r.records[1].sample.gpu_util_ratio, 0.63);
}

struct CsvErrorCase {
  const char* name;
  std::string text;
  const char* columns;
  std::optional<double> interval;
  const char* message;  // expected substring
};

class QueryCsvErrors : public ::testing::TestWithParam<CsvErrorCase> {};

TEST_P(QueryCsvErrors, NameFileLineColumnAndWhatWasExpected) {
  const CsvErrorCase& c = GetParam();
  TraceOptions opt;
  opt.columns = Cols(c.columns);
  opt.interval_s = c.interval;
  ReadResult r = ReadText(c.text, opt, "e.csv");
  ASSERT_FALSE(r.status.ok()) << c.name;
  EXPECT_EQ(r.status.code(), StatusCode::kParseError);
  EXPECT_THAT(r.status.message(), HasSubstr(c.message));
}

const CsvErrorCase kCsvErrors[] = {
    {"bad_number", "timestamp, memory.used [MiB]\n2026/07/14 08:12:38.696, abc MiB\n", "", std::nullopt,
     "e.csv:2:26: expected a number of MiB in memory.used, got 'abc MiB'"},
    {"bad_unit", "timestamp, memory.used [MiB]\n2026/07/14 08:12:38.696, 12 parsecs\n", "", std::nullopt,
     "e.csv:2:26: expected a number of MiB in memory.used (unknown unit), got '12 parsecs'"},
    {"bad_timestamp", "timestamp, memory.used [MiB]\nyesterday, 12 MiB\n", "", std::nullopt,
     "e.csv:2:1: expected a timestamp"},
    {"epoch_milliseconds", "timestamp, memory.used [MiB]\n1764189075, 12 MiB\n1764189076000, 12 MiB\n", "",
     std::nullopt,
     "e.csv:3:1: expected epoch seconds before the year 10000 in timestamp (a time in milliseconds is no time in "
     "seconds), got '1764189076000'"},
    {"util_over_100", "timestamp, utilization.gpu [%]\n2026/07/14 08:12:38.696, 140 %\n", "", std::nullopt,
     "e.csv:2:26: expected a percentage 0..100 in utilization.gpu (out of range), got '140 %'"},
    {"too_many_fields", "timestamp, memory.used [MiB]\n2026/07/14 08:12:38.696, 1 MiB, 7\n", "", std::nullopt,
     "e.csv:2:33: expected 2 comma-separated fields as in the header, got '3 fields'"},
    {"too_few_fields", "timestamp, index, memory.used [MiB]\n2026/07/14 08:12:38.696, 0\n", "", std::nullopt,
     "e.csv:2:27: expected 3 comma-separated fields as in the header, got '2 fields'"},
    {"bad_index", "index, memory.used [MiB]\nzero, 1 MiB\n", "", 1.0, "e.csv:2:1: expected a GPU index"},
    {"noheader_without_columns", "2025/09/21 16:12:24.315, 0, 0, 0, 4, 24564\n", "", std::nullopt,
     "e.csv:1:1: this CSV has no header line, so its columns are unknown; pass them in the order of the --query-gpu "
     "list, e.g. --columns timestamp,index,memory.used"},
    {"no_clock_without_interval", "index, memory.used [MiB]\n0, 1 MiB\n", "", std::nullopt,
     "e.csv:2:1: the rows have no timestamp column and no `date` lines; pass the sampling interval, e.g. --interval"},
    {"only_a_header", "timestamp, memory.used [MiB]\n", "", std::nullopt, "e.csv: no samples in the trace"},
    {"unknown_memory_unit_in_header", "timestamp, memory.used [parsecs]\n2026/07/14 08:12:38.696, 12\n", "",
     std::nullopt, "e.csv:1:12: column 2 'memory.used [parsecs]': unknown memory unit"},
    {"column_count_vs_columns_option", "2025/09/21 16:12:24.315, 4\n", "timestamp,index,memory.used", std::nullopt,
     "expected 3 comma-separated fields as in the --columns list"},
};

INSTANTIATE_TEST_SUITE_P(Errors, QueryCsvErrors, ::testing::ValuesIn(kCsvErrors),
                         [](const auto& p) { return std::string(p.param.name); });

// A unit in the header is read in any case ("[gb]" is GiB, as "[GB]" and "[GiB]"): it was taken
// for no unit, and the values for MiB, 1024 times too small. Another column's unit ("[W]") is not
// a memory unit and needs none.
TEST(QueryCsvReader, HeaderUnitsInAnyCase) {
  for (const char* unit : {"GiB", "gb", "GIB", "Gb"}) {
    const std::string text = fmt::format(
        "timestamp, memory.used [{0}], memory.total [{0}], power.draw [W]\n2026/07/14 08:12:38.696, 19.5, 79.5, 300\n",
        unit);
    ReadResult r = ReadText(text, {}, "u.csv");
    ASSERT_TRUE(r.status.ok()) << unit << ": " << r.status.ToString();
    ASSERT_EQ(r.records.size(), 1u) << unit;
    EXPECT_EQ(r.records[0].sample.used_bytes, uint64_t{39} << 29) << unit;
  }
  TraceOptions opt;
  opt.columns = {"timestamp", "memory.used [xyz]"};
  ReadResult bad = ReadText("2025/09/21 16:12:24.315, 4\n", opt, "c.csv");
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status.message(), HasSubstr("unknown memory unit"));
}

TEST(QueryCsvReader, BadColumnsOptionIsAnInvalidArgument) {
  TraceOptions opt;
  opt.columns = {"timestamp", "Memory Used!"};
  ReadResult r = ReadText("2025/09/21 16:12:24.315, 4\n", opt, "c.csv");
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status.message(), HasSubstr("'Memory Used!'"));
}

TEST(QueryCsvReader, LenientSkipsAndCountsBadLinesWithExamples) {
  std::string text = "timestamp, memory.used [MiB]\n";
  for (int i = 0; i < 15; ++i) text += "2026/07/14 08:12:38.696, oops\n";
  text += "2026/07/14 08:12:39.000, 5 MiB\n";
  TraceOptions opt;
  opt.lenient = true;
  ReadResult r = ReadText(text, opt, "l.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(MiB(r.records[0].sample.used_bytes), 5u);
  EXPECT_EQ(r.skipped, 15u);
  ASSERT_EQ(r.examples.size(), 10u);
  EXPECT_EQ(r.examples[0].line, 2u);
  EXPECT_THAT(r.examples[0].reason, HasSubstr("expected a number of MiB in memory.used, got 'oops'"));
}

// A capture written back by a spreadsheet or pandas: every field quoted (a comma inside a name
// kept), or the header's names capitalised. Both read as the plain capture does.
TEST(QueryCsvReader, AQuotedOrCapitalisedHeaderIsAHeader) {
  const testing_util::ReadResult plain = testing_util::ReadText(
      "timestamp, index, name, memory.used [MiB], memory.total [MiB]\n"
      "2026/03/14 09:00:00.000, 0, A100, 1000 MiB, 81559 MiB\n2026/03/14 09:00:10.000, 0, A100, 1001 MiB, 81559 MiB\n",
      {}, "plain.csv");
  const testing_util::ReadResult quoted = testing_util::ReadText(
      "\"timestamp\",\"index\",\"name\",\"memory.used [MiB]\",\"memory.total [MiB]\"\n"
      "\"2026/03/14 09:00:00.000\",\"0\",\"NVIDIA, Inc A100\",\"1000 MiB\",\"81559 MiB\"\n"
      "\"2026/03/14 09:00:10.000\",\"0\",\"NVIDIA \"\"A100\"\"\",\"1001 MiB\",\"81559 MiB\"\n",
      {}, "quoted.csv");
  const testing_util::ReadResult capitalised = testing_util::ReadText(
      "Timestamp, Index, Name, Memory.Used [MiB], Memory.Total [MiB]\n"
      "2026/03/14 09:00:00.000, 0, A100, 1000 MiB, 81559 MiB\n2026/03/14 09:00:10.000, 0, A100, 1001 MiB, 81559 MiB\n",
      {}, "capitalised.csv");
  ASSERT_TRUE(plain.status.ok()) << plain.status.ToString();
  for (const testing_util::ReadResult* r : {&quoted, &capitalised}) {
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    ASSERT_EQ(r->records.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r->records[i].sample.t, plain.records[i].sample.t);
      EXPECT_EQ(r->records[i].sample.used_bytes, plain.records[i].sample.used_bytes);
      EXPECT_EQ(r->records[i].sample.total_bytes, plain.records[i].sample.total_bytes);
    }
  }
  EXPECT_EQ(quoted.records[0].gpu.name, "NVIDIA, Inc A100");
  EXPECT_EQ(quoted.records[1].gpu.name, "NVIDIA \"A100\"") << "a doubled quote in a quoted field is one quote";
}

TEST(QueryCsvReader, ErrorIsStickyAfterTheFirstBadLine) {
  auto path = WriteTemp("sticky.csv",
                        "timestamp, memory.used [MiB]\n2026/07/14 08:12:38.696, x\n"
                        "2026/07/14 08:12:39.696, 5 MiB\n");
  auto reader = OpenTrace(path, {});
  ASSERT_TRUE(reader.ok());
  auto first = (*reader)->Next();
  ASSERT_FALSE(first.ok());
  auto second = (*reader)->Next();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), first.status().message());
}

}  // namespace
}  // namespace vw::trace

namespace vw::trace {
namespace {

TEST(QueryCsvReader, NextIntoReusingOneRecordMatchesNext) {
  // Later rows lack fields earlier rows had: a reused record must not keep stale values.
  const std::string text =
      "timestamp, index, uuid, pci.bus_id, name, memory.used [MiB], memory.free [MiB], utilization.gpu [%]\n"
      "2026/01/01 00:00:00.000, 0, GPU-a, 0000:3b:00.0, NVIDIA Long Name Here, 1 MiB, 2 MiB, 3 %\n"
      "2026/01/01 00:00:01.000, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n"
      "timestamp, memory.used [MiB]\n"
      "2026/01/01 00:00:02.000, 5 MiB\n";
  const std::string path = testing_util::WriteTemp("reuse.csv", text);
  auto a = OpenTrace(path, {});
  auto b = OpenTrace(path, {});
  ASSERT_TRUE(a.ok() && b.ok());
  TraceRecord reused;
  size_t n = 0;
  for (;;) {
    auto next = (*a)->Next();
    auto into = (*b)->NextInto(&reused);
    ASSERT_TRUE(next.ok() && into.ok());
    ASSERT_EQ(next->has_value(), *into);
    if (!*into) break;
    testing_util::ExpectSameRecord(**next, reused, n);
    ++n;
  }
  EXPECT_EQ(n, 3u);
  EXPECT_TRUE(reused.gpu.uuid.empty());
}

}  // namespace
}  // namespace vw::trace
