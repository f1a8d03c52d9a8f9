#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

struct ValuesCase {
  const char* name;
  std::string text;
  size_t records;
  std::vector<std::optional<uint64_t>> used_mib;
};

class ValuesCases : public ::testing::TestWithParam<ValuesCase> {};

TEST_P(ValuesCases, OneValuePerLineAtIntervalSteps) {
  TraceOptions o;
  o.interval_s = 30;
  o.total_bytes = 24564 * kMiBBytes;
  ReadResult r = ReadText(GetParam().text, o, "v.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, TraceFormat::kValues);
  ASSERT_EQ(r.records.size(), GetParam().records);
  for (size_t i = 0; i < r.records.size(); ++i) {
    EXPECT_EQ(r.records[i].sample.t, 30.0 * static_cast<double>(i));
    EXPECT_EQ(MiB(r.records[i].sample.used_bytes), GetParam().used_mib[i]) << i;
    EXPECT_EQ(r.records[i].sample.total_bytes, 24564 * kMiBBytes);
    EXPECT_EQ(r.records[i].gpu.key, "0");
  }
  EXPECT_TRUE(r.synthetic);
}

const ValuesCase kValuesCases[] = {
    {"bare_numbers", "4321\n4322\n4330\n", 3, {4321, 4322, 4330}},
    {"with_units", "4321 MiB\n4 GiB\n", 2, {4321, 4096}},
    {"crlf_blank_and_separators", "10\r\n\r\n----\r\n11\r\n", 2, {10, 11}},
    {"missing_values", "10\nN/A\n[N/A]\n12\n", 4, {10, std::nullopt, std::nullopt, 12}},
    {"last_line_without_its_end_left_out", "7\n8\n9", 2, {7, 8}},
};

INSTANTIATE_TEST_SUITE_P(Spellings, ValuesCases, ::testing::ValuesIn(kValuesCases),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(ValuesReader, RequiresInterval) {
  ReadResult r = ReadText("4321\n", {}, "v.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(),
              HasSubstr("v.log:1:1: a value-per-line trace has no clock; pass the sampling interval, e.g. --interval"));
}

TEST(ValuesReader, BadValueNamesLineAndColumn) {
  TraceOptions o;
  o.interval_s = 1;
  o.format = TraceFormat::kValues;
  ReadResult r = ReadText("4321\n  12 furlongs\n", o, "v.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(),
              HasSubstr("v.log:2:3: expected a memory.used value in MiB (e.g. 4321 or 4321 MiB), got '12 furlongs'"));
  r = ReadText("4321\n2 %, 588 MiB\n", o, "v.log");
  EXPECT_THAT(r.status.message(), HasSubstr("v.log:2:1: expected one memory.used value per line (for several columns "
                                            "pass --columns"));
}

TEST(ValuesReader, ColumnsTurnTheLoopIntoCsv) {
  TraceOptions o;
  o.interval_s = 1;
  o.format = TraceFormat::kValues;
  o.columns = {"utilization.gpu", "memory.used"};
  ReadResult r = ReadText("2 %, 588 MiB\n1 %, 590 MiB\n", o, "v2.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.format, TraceFormat::kValues);
  EXPECT_EQ(MiB(r.records[1].sample.used_bytes), 590u);
  EXPECT_DOUBLE_EQ(*r.records[1].sample.gpu_util_ratio, 0.01);
  EXPECT_EQ(r.records[1].sample.t, 1.0);
}

}  // namespace
}  // namespace vw::trace
