#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

TraceOptions Every(double s, TraceFormat f = TraceFormat::kAuto) {
  TraceOptions o;
  o.interval_s = s;
  o.format = f;
  return o;
}

struct DmonCase {
  const char* name;
  std::string text;
  std::optional<double> interval;
  size_t records;
  const char* first_time;
  const char* last_time;
  std::optional<uint64_t> first_used_mib;
  std::optional<double> first_util;
  const char* last_key;
};

class DmonCases : public ::testing::TestWithParam<DmonCase> {};

TEST_P(DmonCases, ReadsColumnsByHeaderName) {
  const DmonCase& c = GetParam();
  TraceOptions o;
  o.interval_s = c.interval;
  ReadResult r = ReadText(c.text, o, std::string(c.name) + ".log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, TraceFormat::kDmon);
  ASSERT_EQ(r.records.size(), c.records);
  EXPECT_EQ(Iso(r.records.front().sample.t), c.first_time);
  EXPECT_EQ(Iso(r.records.back().sample.t), c.last_time);
  EXPECT_EQ(MiB(r.records.front().sample.used_bytes), c.first_used_mib);
  EXPECT_EQ(r.records.front().sample.gpu_util_ratio, c.first_util);
  EXPECT_EQ(r.records.back().gpu.key, c.last_key);
}

const DmonCase kDmonCases[] = {
    {"old_columns_fb_bar1",
     "# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk pviol tviol    fb  bar1 sbecc dbecc   pci rxpci txpci\n"
     "# Idx     W     C     %     %     %     %   MHz   MHz     %  bool    MB    MB  errs  errs  errs  MB/s  MB/s\n"
     "    0    15    59     3     4     0     0   405    27     0     0   145     5     -     -     0     5     0\n"
     "    0    14    59     0     4     0     0   405    26   100     0   146     5     -     -     0     0     0\n",
     1.0, 2, "1970-01-01T00:00:00", "1970-01-01T00:00:01", 145, 0.03, "0"},
    {"new_columns_no_fb",
     "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk \n"
     "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz \n"
     "    0    438     55     61      -      -      -      -      -      -   2619   1980 \n",
     2.0, 1, "1970-01-01T00:00:00", "1970-01-01T00:00:00", std::nullopt, std::nullopt, "0"},
    {"date_time_columns_fb_first",
     "#Date       Time        gpu     fb   bar1   ccpm     sm    mem    enc    dec    jpg    ofa  rxpci  txpci\n"
     "#YYYYMMDD   HH:MM:SS    Idx     MB     MB     MB      %      %      %      %      %      %   MB/s   MB/s\n"
     " 20240104   13:54:35      0    239      3      0      6      1      0      0      0      0      5     10\n"
     "\n"
     " 20240104   13:54:36      0     74     10      0      0      0      0      0      0      0    217    677\n",
     std::nullopt, 2, "2024-01-04T13:54:35", "2024-01-04T13:54:36", 239, 0.06, "0"},
    {"two_gpus_interleaved_synthetic_clock",
     "# gpu    sm   fb\n# Idx     %   MB\n    0    10  100\n    1    20  200\n    0    11  101\n    1    21  201\n",
     5.0, 4, "1970-01-01T00:00:00", "1970-01-01T00:00:05", 100, 0.10, "1"},
    {"repeated_header_changes_columns",
     "# gpu   sm   fb\n# Idx    %   MB\n    0    5   10\n# gpu   fb   sm\n# Idx   MB    %\n    0   20    7\n", 1.0, 2,
     "1970-01-01T00:00:00", "1970-01-01T00:00:01", 10, 0.05, "0"},
    {"time_only_wraps_past_midnight",
     "#Time        gpu    fb\n#HH:MM:SS    Idx    MB\n 23:59:59      0     1\n 00:00:00      0     2\n", std::nullopt,
     2, "1970-01-01T23:59:59", "1970-01-02T00:00:00", 1, std::nullopt, "0"},
};

INSTANTIATE_TEST_SUITE_P(Spellings, DmonCases, ::testing::ValuesIn(kDmonCases),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(DmonReader, LastColumnsMissingAreMissing) {
  ReadResult r = ReadText(
      "# gpu     sm    mem    enc    dec    jpg    ofa \n# Idx      %      %      %      %      %      % \n"
      "    0      0      0      0      0      0      0 \n    0      -      -      -      -      -      - \n",
      Every(1), "dash.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].sample.gpu_util_ratio, 0.0);
  EXPECT_FALSE(r.records[1].sample.gpu_util_ratio.has_value());
  EXPECT_FALSE(r.records[1].sample.used_bytes.has_value());
  EXPECT_TRUE(r.synthetic);
}

struct MonitorErrorCase {
  const char* name;
  std::string text;
  std::optional<double> interval;
  TraceFormat format;
  const char* message;
};

class MonitorErrors : public ::testing::TestWithParam<MonitorErrorCase> {};

TEST_P(MonitorErrors, NameLineColumnAndExpectation) {
  const MonitorErrorCase& c = GetParam();
  TraceOptions o;
  o.interval_s = c.interval;
  o.format = c.format;
  ReadResult r = ReadText(c.text, o, "m.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(), HasSubstr(c.message));
}

const MonitorErrorCase kMonitorErrors[] = {
    {"bad_fb", "# gpu   sm   fb\n# Idx    %   MB\n    0    5   lots\n", 1.0, TraceFormat::kAuto,
     "m.log:3:14: expected a number of MB in fb (or '-'), got 'lots'"},
    {"bad_gpu", "# gpu   sm   fb\n    x    5   1\n", 1.0, TraceFormat::kAuto, "m.log:2:5: expected a GPU index in gpu"},
    {"too_few_columns", "# gpu   sm   fb\n    0    5\n", 1.0, TraceFormat::kAuto,
     "m.log:2:11: expected 3 columns as in the header, got '2 columns'"},
    {"too_many_columns", "# gpu   sm   fb\n    0    5  1  9\n", 1.0, TraceFormat::kAuto,
     "m.log:2:16: expected 3 columns as in the header"},
    {"bad_date", "#Date       Time        gpu    fb\n 2024-13-04   13:54:35      0    239\n", std::nullopt,
     TraceFormat::kAuto, "m.log:2:2: expected a date YYYYMMDD in Date"},
    {"date_that_does_not_exist", "#Date       Time        gpu    fb\n 20260230   13:54:35      0    239\n",
     std::nullopt, TraceFormat::kAuto, "m.log:2:2: expected a date YYYYMMDD in Date"},
    {"bad_time", "#Date       Time        gpu    fb\n 20240104   13:54      0    239\n", std::nullopt,
     TraceFormat::kAuto, "m.log:2:13: expected a time HH:MM:SS in Time"},
    {"rows_before_header", "    0    5   1\n", 1.0, TraceFormat::kDmon,
     "m.log:1:5: expected a '# gpu ...' header line before the dmon rows"},
    {"no_clock_no_interval", "# gpu   sm   fb\n    0    5   1\n", std::nullopt, TraceFormat::kAuto,
     "m.log:2:1: this dmon log has no Date/Time columns (nvidia-smi dmon -o DT); pass the sampling interval"},
    {"no_clock_no_memory_says_no_memory_first",
     "# gpu     sm    mem    enc    dec    jpg    ofa \n# Idx      %      %      %      %      %      % \n"
     "    0      0      0      0      0      0      0 \n",
     std::nullopt, TraceFormat::kAuto, "m.log:3:1: no memory values: this dmon log has no fb column"},
    {"pmon_bad_pid", "# gpu   pid  type   sm   fb  command\n    0   abc     C    5   10  python\n", 1.0,
     TraceFormat::kAuto, "m.log:2:9: expected a PID in pid"},
    {"pmon_no_clock", "# gpu   pid  type   sm   fb  command\n    0   12     C    5   10  python\n", std::nullopt,
     TraceFormat::kAuto, "this pmon log has no Date/Time columns (nvidia-smi pmon -o DT)"},
};

INSTANTIATE_TEST_SUITE_P(Errors, MonitorErrors, ::testing::ValuesIn(kMonitorErrors),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(PmonReader, GroupsRowsIntoInstantsWithProcesses) {
  // Old -s um layout: fb per process; two samples, the second starts when (0, 4242) repeats.
  ReadResult r = ReadText(
      "# gpu        pid  type    sm   mem   enc   dec    fb   command\n"
      "# Idx          #   C/G     %     %     %     %    MB   name\n"
      "    0       4242     G     7     3     -     -    64   Xorg\n"
      "    0         11     C    50    20     1     2    12   cuda app\n"
      "    1          -     -     -     -     -     -     -   -\n"
      "    0       4242     G     8     3     -     -    65   Xorg\n"
      "    0         11     C    51    20     1     2    13   cuda app\n"
      "    1          -     -     -     -     -     -     -   -\n",
      Every(2), "p.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, TraceFormat::kPmon);
  ASSERT_EQ(r.records.size(), 4u);  // 2 instants x 2 GPUs
  const TraceRecord& g0 = r.records[0];
  EXPECT_EQ(g0.gpu.key, "0");
  EXPECT_EQ(g0.sample.t, 0.0);
  EXPECT_FALSE(g0.sample.used_bytes.has_value()) << "pmon does not give the device's used memory";
  ASSERT_TRUE(g0.sample.processes.has_value());
  ASSERT_EQ(g0.sample.processes->size(), 2u);
  const ProcessMemory& p = (*g0.sample.processes)[1];
  EXPECT_EQ(p.pid, 11);
  EXPECT_EQ(p.type, "C");
  EXPECT_EQ(p.command, "cuda app");
  EXPECT_EQ(p.used_bytes, 12 * kMiBBytes);
  EXPECT_DOUBLE_EQ(*p.sm_util_ratio, 0.5);
  EXPECT_EQ(r.records[1].gpu.key, "1");
  ASSERT_TRUE(r.records[1].sample.processes.has_value());
  EXPECT_TRUE(r.records[1].sample.processes->empty()) << "a '-' pid row means no processes";
  EXPECT_EQ(r.records[2].sample.t, 2.0);
  EXPECT_EQ((*r.records[2].sample.processes)[0].used_bytes, 65 * kMiBBytes);
}

TEST(PmonReader, DateTimeColumnsSplitInstantsAndUnknownValuesAreMissing) {
  ReadResult r = ReadText(
      "#Date       Time        gpu         pid   type     sm    mem    enc    dec    jpg    ofa     fb   "
      "ccpm    command \n"
      "#YYYYMMDD   HH:MM:SS    Idx           #    C/G      %      %      %      %      %      %     MB     "
      "MB    name \n"
      " 20250101   10:00:00      0      21180     C      -      -      -      -      -      -   2296      "
      "0    memhog \n"
      " 20250101   10:00:01      0      21180     C      -      -      -      -      -      -   2300      "
      "0    memhog \n",
      {}, "pdt.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(Iso(r.records[0].sample.t), "2025-01-01T10:00:00");
  EXPECT_EQ(Iso(r.records[1].sample.t), "2025-01-01T10:00:01");
  const ProcessMemory& p = (*r.records[1].sample.processes)[0];
  EXPECT_EQ(p.used_bytes, 2300 * kMiBBytes);
  EXPECT_FALSE(p.sm_util_ratio.has_value());
  EXPECT_EQ(p.command, "memhog");
  EXPECT_FALSE(r.synthetic);
}

}  // namespace
}  // namespace vw::trace
