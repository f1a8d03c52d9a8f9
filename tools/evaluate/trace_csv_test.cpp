#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "core/units.h"
#include "trace_generator.h"

namespace vw::evaluate {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A fresh folder for one test, removed with everything in it when the test ends.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("vw_trace_csv_test_" + std::to_string(::getpid()) + "_" + test->name());
    std::filesystem::create_directories(dir_);
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

TEST(TraceCsv, TimestampsUseTheNvidiaSmiSpelling) {
  EXPECT_EQ(FormatNvidiaSmiTimestamp(1767571200.0), "2026/01/05 00:00:00.000");
  EXPECT_EQ(FormatNvidiaSmiTimestamp(1767571200.1), "2026/01/05 00:00:00.100");
  EXPECT_EQ(FormatNvidiaSmiTimestamp(1767571200 + 86399.9996), "2026/01/06 00:00:00.000");  // ms rounding
  EXPECT_EQ(FormatNvidiaSmiTimestamp(1709251199.25), "2024/02/29 23:59:59.250");
}

TEST(TraceCsv, WritesTheExactNvidiaSmiQueryGpuFormat) {
  Trace t;
  t.label.interval_s = 0.25;
  t.label.total_bytes = 81920 * kMiB;
  t.label.start_epoch_s = 1767571200.0 + 9 * 3600 + 59.5;
  t.label.duration_s = 0.75;
  t.used_mib = {512, 12345, 12346, 80000};
  const ScopedTempDir tmp;
  const std::string path = tmp.Path("trace.csv");
  ASSERT_TRUE(WriteNvidiaSmiCsv(t, path).ok());
  const auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "timestamp, index, memory.used [MiB], memory.total [MiB]");
  EXPECT_EQ(lines[1], "2026/01/05 09:00:59.500, 0, 512 MiB, 81920 MiB");
  EXPECT_EQ(lines[2], "2026/01/05 09:00:59.750, 0, 12345 MiB, 81920 MiB");
  EXPECT_EQ(lines[3], "2026/01/05 09:01:00.000, 0, 12346 MiB, 81920 MiB");
  EXPECT_EQ(lines[4], "2026/01/05 09:01:00.250, 0, 80000 MiB, 81920 MiB");
}

TEST(TraceCsv, GeneratedTraceRoundTripsThroughItsCsv) {
  const Trace t = TraceGenerator({.seed = 4, .max_hours = 1.2, .min_interval_s = 5}).Generate(7);
  const ScopedTempDir tmp;
  const std::string path = tmp.Path("generated.csv");
  ASSERT_TRUE(WriteNvidiaSmiCsv(t, path).ok());
  const auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), t.used_mib.size() + 1);
  const std::regex row(R"((\d{4})/(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3}), 0, (\d+) MiB, (\d+) MiB)");
  for (size_t i = 0; i < t.used_mib.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i + 1], m, row)) << lines[i + 1];
    EXPECT_EQ(std::stoi(m[8]), t.used_mib[i]);
    EXPECT_EQ(std::stod(m[9]), t.label.total_bytes / kMiB);
  }
}

TEST(TraceCsv, LabelsFileHasOneRowPerTrace) {
  const TraceGenerator gen({.seed = 4, .max_hours = 1.2, .min_interval_s = 5});
  std::vector<TraceLabel> labels = {gen.Generate(0).label, gen.Generate(7).label};
  std::vector<std::string> files = {"trace_00000.csv", "trace_00007.csv"};
  const ScopedTempDir tmp;
  const std::string path = tmp.Path("labels.csv");
  ASSERT_TRUE(WriteLabelsCsv(labels, files, path).ok());
  const auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "file,id,kind,shape,memory_total_mib,interval_s,duration_s,noise_mib,warmup_end_offset_s,"
            "leak_rate_bytes_per_second,"
            "leak_rate_mib_per_hour,leak_start,leak_start_offset_s,leak_chunk_mib,capped,load_cycle_mib,"
            "load_cycle_period_s,load_swing_mib");
  EXPECT_EQ(lines[1].rfind("trace_00000.csv,0,healthy,plateau,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("trace_00007.csv,7,leak,leak_linear,", 0), 0u) << lines[2];
  // A healthy trace leaves the leak columns empty (missing, not zero), and a plateau the load's.
  EXPECT_NE(lines[1].find(",,,,,"), std::string::npos) << lines[1];
  EXPECT_TRUE(lines[1].ends_with(",,,")) << lines[1];
}

TEST(TraceCsv, ServingLabelsGiveTheLoadsCycleAndSwings) {
  // Trace 6 of every corpus is the serving shape (shape number i mod 12), 11 leak_under_serving.
  const TraceGenerator gen({.seed = 4, .max_hours = 1.2, .min_interval_s = 5});
  const std::vector<TraceLabel> labels = {gen.Generate(6).label, gen.Generate(11).label};
  ASSERT_EQ(labels[0].shape, Shape::kServing);
  ASSERT_EQ(labels[1].shape, Shape::kLeakUnderServing);
  const ScopedTempDir tmp;
  const std::string path = tmp.Path("labels.csv");
  const std::vector<std::string> files = {"trace_00006.csv", "trace_00011.csv"};
  ASSERT_TRUE(WriteLabelsCsv(labels, files, path).ok());
  const auto lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    const TraceLabel& l = labels[i];
    // The generator's ranges: a cycle of 4-20 % of the card every 5-60 minutes, swings up to 1-8 %.
    const double card_mib = l.total_bytes / (1024.0 * 1024.0);
    EXPECT_GE(l.load_cycle_mib, 0.04 * card_mib - 1);
    EXPECT_LE(l.load_cycle_mib, 0.2 * card_mib + 1);
    EXPECT_GE(l.load_cycle_period_s, 300);
    EXPECT_LE(l.load_cycle_period_s, 3600);
    EXPECT_GE(l.load_swing_mib, 0.01 * card_mib);
    EXPECT_LE(l.load_swing_mib, 0.08 * card_mib);
    EXPECT_TRUE(lines[i + 1].ends_with(
        fmt::format(",{:.0f},{:.1f},{:.0f}", l.load_cycle_mib, l.load_cycle_period_s, l.load_swing_mib)))
        << lines[i + 1];
  }
}

TEST(TraceCsv, UnwritablePathIsAnErrorNamingThePath) {
  Trace t;
  t.used_mib = {1};
  const Status s = WriteNvidiaSmiCsv(t, "/nonexistent-dir/x/trace.csv");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x/trace.csv"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace vw::evaluate
