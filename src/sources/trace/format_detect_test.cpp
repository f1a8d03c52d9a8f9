#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sources/trace/framework_log.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;

struct DetectCase {
  const char* name;
  const char* head;
  TraceFormat expected;
};

class DetectCases : public ::testing::TestWithParam<DetectCase> {};

TEST_P(DetectCases, PicksTheFormatFromTheFirstLines) {
  auto f = DetectTraceFormat(GetParam().head, true, "x");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, GetParam().expected) << TraceFormatName(*f);
}

const DetectCase kDetectCases[] = {
    {"query_header", "timestamp, memory.used [MiB]\n2026/01/01 00:00:00.000, 1 MiB\n", TraceFormat::kQueryCsv},
    {"header_without_timestamp", "memory.used [MiB], utilization.gpu [%]\n1 MiB, 2 %\n", TraceFormat::kQueryCsv},
    {"date_prefixed_noheader_block", "2025-09-21 16:12:24\n2025/09/21 16:12:24.315, 0, 0, 0, 4, 24564\n",
     TraceFormat::kQueryCsv},
    {"noheader_two_columns", "2 %, 588 MiB\n", TraceFormat::kQueryCsv},
    {"bare_number", "\n4321\n4322\n", TraceFormat::kValues},
    {"number_with_unit", "4321 MiB\n", TraceFormat::kValues},
    {"dmon", "# gpu   pwr  temp    sm\n# Idx     W     C     %\n", TraceFormat::kDmon},
    {"dmon_date_time", "#Date       Time        gpu     fb\n", TraceFormat::kDmon},
    {"pmon", "# gpu         pid   type     sm    mem    command \n", TraceFormat::kPmon},
    {"table_with_clock", "Tue Oct 29 19:00:23 2024       \n+-------------+\n| NVIDIA-SMI 550.54.15 |\n",
     TraceFormat::kSmiTable},
    {"table_with_banner", "==== Sun May  4 04:27:32 AM EDT 2025 ====\nSun May  4 04:27:32 2025\n+------+\n",
     TraceFormat::kSmiTable},
    {"recording", "{\"schema\":\"vramwatch.record/1\"}\n", TraceFormat::kRecording},
    {"comments_then_dmon", "# my log\n# started by hand\n# gpu sm\n", TraceFormat::kDmon},
};

INSTANTIATE_TEST_SUITE_P(Formats, DetectCases, ::testing::ValuesIn(kDetectCases),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(DetectTraceFormat, EmptyFileIsAClearError) {
  auto f = DetectTraceFormat("\n  \n", true, "empty.csv");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "empty.csv: the trace is empty (no samples)");
  auto g = DetectTraceFormat("", true, "empty.csv");
  EXPECT_FALSE(g.ok());
}

TEST(DetectTraceFormat, UnknownTextNamesTheLineAndTheChoices) {
  auto f = DetectTraceFormat("\nhello world\n", true, "odd.txt");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("odd.txt:2: cannot tell the trace format from 'hello world'"));
  EXPECT_THAT(f.status().message(), HasSubstr("--format"));
}

// A first line longer than the bytes looked at (a header padded with spaces, a file without line
// ends) is judged by its start, not called empty.
TEST(DetectTraceFormat, AFirstLineLongerThanTheHeadIsJudgedByItsStart) {
  const std::string header = "timestamp, memory.used [MiB], memory.total [MiB]" + std::string(70000, ' ');
  auto f = DetectTraceFormat(std::string_view(header).substr(0, 65536), false, "padded.csv");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(*f, TraceFormat::kQueryCsv);

  auto blank = DetectTraceFormat(std::string(65536, ' '), false, "blank.csv");
  ASSERT_FALSE(blank.ok());
  EXPECT_THAT(blank.status().message(), HasSubstr("blank.csv:1: line 1 is blank for the bytes looked at (65536"));
  auto third = DetectTraceFormat("\n\n" + std::string(65534, ' '), false, "blank3.csv");
  ASSERT_FALSE(third.ok());
  EXPECT_THAT(third.status().message(), HasSubstr("blank3.csv:3: line 3 is blank"));

  auto odd = DetectTraceFormat(std::string(65536, 'x'), false, "odd.txt");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(odd.status().message(), HasSubstr("odd.txt:1: cannot tell the trace format"));
  EXPECT_THAT(odd.status().message(), HasSubstr("longer than the 65536 bytes looked at"));
}

// A training log whose memory figures have thousands separators splits on its commas like a
// --query-gpu CSV without a header: it is taken for the training log it is, not for a CSV that
// cannot be read without --columns. A header-less CSV of GPU figures is still one.
TEST(DetectTraceFormat, ATrainingLogWithThousandsSeparatorsIsNoHeaderlessCsv) {
  const char* log = "step 0 allocated 1,000 MB\nstep 1 allocated 1,050 MB\n";
  EXPECT_FALSE(DetectTraceFormat(log, true, "t.log").ok());
  EXPECT_TRUE(IsFrameworkLogHead(log, true));
  const char* csv = "2026/03/14 09:00:00.000, 0, 30000 MiB, 81559 MiB\n";
  auto f = DetectTraceFormat(csv, true, "g.csv");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, TraceFormat::kQueryCsv);
  EXPECT_FALSE(IsFrameworkLogHead(csv, true));
}

TEST(DetectTraceFormat, LinesEndingInABareCrAreNamed) {
  auto f = DetectTraceFormat("timestamp, memory.used [MiB]\r2026/03/14 10:00:00, 1000 MiB\r", true, "mac.csv");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("mac.csv:1: expected lines ending in LF or CRLF"));
  EXPECT_THAT(f.status().message(), HasSubstr("tr '\\r' '\\n'"));
  auto crlf = DetectTraceFormat("timestamp, memory.used [MiB]\r\n2026/03/14 10:00:00, 1000 MiB\r\n", true, "win.csv");
  ASSERT_TRUE(crlf.ok()) << crlf.status().message();
}

// A compressed capture says which compression and how to read it; other binary data says it is
// no text (they were taken for lines ending in a bare CR, or a CSV without a header).
TEST(DetectTraceFormat, CompressedAndBinaryFilesAreNamedSo) {
  auto gz = DetectTraceFormat(std::string_view("\x1f\x8b\x08\x00\r\x1a\x91i", 10), true, "run.csv.gz");
  ASSERT_FALSE(gz.ok());
  EXPECT_EQ(gz.status().message(),
            "run.csv.gz: expected text, got a gzip-compressed file: decompress it first (zcat run.csv.gz | "
            "vramwatch analyze -, or watch --replay -)");
  auto zst = DetectTraceFormat("\x28\xb5\x2f\xfd\x04\x58", true, "a.zst");
  ASSERT_FALSE(zst.ok());
  EXPECT_THAT(zst.status().message(), HasSubstr("zstd-compressed"));
  std::string noise;
  for (int i = 0; i < 2000; ++i) noise += static_cast<char>(1 + (i * 7919) % 254);
  auto binary = DetectTraceFormat(noise, true, "x.bin");
  ASSERT_FALSE(binary.ok());
  EXPECT_THAT(binary.status().message(), HasSubstr("x.bin: expected text"));
  EXPECT_THAT(binary.status().message(), HasSubstr("got binary data"));
  // Text that starts like a magic number, and a log with terminal colours, are still text.
  auto bz_like = DetectTraceFormat("BZh, memory.used [MiB]\n1 MiB\n", true, "x");
  EXPECT_TRUE(bz_like.ok()) << bz_like.status().message();
  auto coloured = DetectTraceFormat("\x1b[32mtimestamp, memory.used [MiB]\n", true, "x");
  EXPECT_THAT(coloured.ok() ? std::string() : coloured.status().message(), ::testing::Not(HasSubstr("binary")));
}

TEST(OpenTrace, AHeaderLongerThanTheDetectionWindowIsRead) {
  std::string text = "timestamp, memory.used [MiB], memory.total [MiB]" + std::string(70000, ' ') + "\n";
  for (int i = 0; i < 3; ++i) text += fmt::format("2026/03/14 10:00:0{}.000, {} MiB, 81559 MiB\n", i, 1000 + i);
  auto path = testing_util::WriteTemp("padded-header.csv", text);
  auto read = testing_util::ReadTrace(path, {});
  ASSERT_TRUE(read.status.ok()) << read.status.message();
  ASSERT_EQ(read.records.size(), 3u);
  EXPECT_EQ(read.records[2].sample.used_bytes, 1002.0 * (1 << 20));
}

TEST(OpenTrace, EmptyFileAndMissingFile) {
  auto path = testing_util::WriteTemp("empty.log", "");
  auto r = OpenTrace(path, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("empty.log: the trace is empty"));
  auto m = OpenTrace(testing_util::TempPath("does-not-exist.csv"), {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  TraceOptions o;
  o.format = TraceFormat::kDmon;
  auto forced = testing_util::ReadTrace(path, o);
  ASSERT_FALSE(forced.status.ok()) << "an empty file is an error even with --format";
  EXPECT_THAT(forced.status.message(), HasSubstr("no samples"));
}

TEST(TraceFormatNames, RoundTrip) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kQueryCsv, TraceFormat::kValues, TraceFormat::kDmon,
                        TraceFormat::kPmon, TraceFormat::kSmiTable, TraceFormat::kRecording}) {
    auto back = ParseTraceFormat(TraceFormatName(f));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, f);
  }
  EXPECT_FALSE(ParseTraceFormat("xml").ok());
}

}  // namespace
}  // namespace vw::trace

namespace vw::trace {
namespace {

TEST(OpenTrace, ProgressCountsTheFileBytes) {
  std::string text = "timestamp, memory.used [MiB]\n";
  for (int i = 0; i < 50000; ++i) text += "2026/07/14 08:12:38.696, " + std::to_string(i) + " MiB\n";
  auto path = testing_util::WriteTemp("progress.csv", text);
  auto reader = OpenTrace(path, {});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->bytes_total(), text.size());
  EXPECT_EQ((*reader)->format(), TraceFormat::kQueryCsv);
  TraceRecord rec;
  size_t n = 0;
  for (;;) {
    auto got = (*reader)->NextInto(&rec);
    ASSERT_TRUE(got.ok());
    if (!*got) break;
    ++n;
  }
  EXPECT_EQ(n, 50000u);
  EXPECT_EQ(rec.sample.used_bytes, uint64_t{49999} * 1024 * 1024);
  EXPECT_EQ((*reader)->bytes_read(), text.size());
  auto again = (*reader)->NextInto(&rec);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << "the end stays the end";
}

}  // namespace
}  // namespace vw::trace
