#include "core/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vw {
namespace {

TEST(ParseDuration, AcceptsUsualSpellings) {
  struct Case {
    const char* text;
    double seconds;
  };
  for (const Case& c : {Case{"30s", 30}, Case{"5m", 300}, Case{"2h", 7200}, Case{"1h30m", 5400}, Case{"100ms", 0.1},
                        Case{"1d", 86400}, Case{"45", 45}, Case{" 1.5h ", 5400}}) {
    auto r = ParseDuration(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_DOUBLE_EQ(*r, c.seconds) << c.text;
  }
}

TEST(ParseDuration, RejectsGarbageWithAMessage) {
  for (const char* bad : {"", "abc", "5x", "-3s", "1h30", "s"}) {
    auto r = ParseDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("duration"), std::string::npos) << bad;
  }
}

TEST(ParseDuration, RejectsDurationsTooLargeForTheClocks) {
  // Past ~106751 days an int64 count of nanoseconds wraps round: such values are refused, not
  // turned into a negative deadline or a busy loop.
  for (const char* big : {"36526d", "110000d", "99999999999999999999d", "99999999999999h",
                          "99999999999999999999999999999999999999s", "3200000000"}) {
    auto r = ParseDuration(big);
    ASSERT_FALSE(r.ok()) << big;
    EXPECT_NE(r.status().message().find("too large"), std::string::npos) << big << ": " << r.status().message();
  }
  auto limit = ParseDuration("36525d");
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_DOUBLE_EQ(*limit, kMaxDurationSeconds);
}

TEST(ParseSize, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseSize("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseSize("80GiB"), 80ull << 30);
  EXPECT_EQ(*ParseSize("1.5GB"), 1500000000ull);
  EXPECT_EQ(*ParseSize("4096"), 4096ull);
  EXPECT_EQ(*ParseSize("81920 MiB"), 81920ull << 20);
  EXPECT_FALSE(ParseSize("12 parsecs").ok());
  // Units in any case, as captures write them; the short forms are binary.
  EXPECT_EQ(*ParseSize("80gib"), 80ull << 30);
  EXPECT_EQ(*ParseSize("512 mib"), 512ull << 20);
  EXPECT_EQ(*ParseSize("80G"), 80ull << 30);
  EXPECT_EQ(*ParseSize("2 mb"), 2000000ull);
  EXPECT_EQ(*ParseSize("80 gb", SizeUnits::kGpuMemory), 80ull << 30);
  EXPECT_NE(ParseSize("12 parsecs").status().message().find("or K, M, G, T for KiB to TiB"), std::string::npos);
  // GPU memory (--total, --orphan-threshold): MB and GB as nvidia-smi means them, as the traces are
  // read; binary units are the same either way.
  EXPECT_EQ(*ParseSize("24564MB", SizeUnits::kGpuMemory), 24564ull << 20);
  EXPECT_EQ(*ParseSize("1.5GB", SizeUnits::kGpuMemory), 3ull << 29);
  EXPECT_EQ(*ParseSize("80GiB", SizeUnits::kGpuMemory), 80ull << 30);
  EXPECT_EQ(*ParseSize("2kB", SizeUnits::kGpuMemory), 2048ull);
  EXPECT_FALSE(ParseSize("").ok());
  // A bare number of GPU memory is refused (nvidia-smi writes MiB, so `--orphan-threshold 256`
  // meant as MiB was read as 256 bytes); 0 needs no unit, and B says bytes.
  auto bare = ParseSize("256", SizeUnits::kGpuMemory);
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().message(), "bad size '256': give a unit (256MiB, or 256B for bytes)");
  EXPECT_EQ(*ParseSize("0", SizeUnits::kGpuMemory), 0ull);
  EXPECT_EQ(*ParseSize("256B", SizeUnits::kGpuMemory), 256ull);
}

TEST(FormatDurationFlag, WritesWhatParseDurationReadsBack) {
  EXPECT_EQ(FormatDurationFlag(600), "10m");
  EXPECT_EQ(FormatDurationFlag(5400), "1h30m");
  EXPECT_EQ(FormatDurationFlag(90), "1m30s");
  EXPECT_EQ(FormatDurationFlag(86400), "24h");
  EXPECT_EQ(FormatDurationFlag(86400 + 5), "24h5s");
  EXPECT_EQ(FormatDurationFlag(0), "0s");
  EXPECT_EQ(FormatDurationFlag(59.6), "1m");
  for (double s : {1.0, 59.0, 600.0, 3599.0, 3600.0, 5400.0, 86399.0, 90061.0, 36525.0 * 86400}) {
    const auto back = ParseDuration(FormatDurationFlag(s));
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(*back, s) << FormatDurationFlag(s);
  }
}

TEST(FormatDuration, ReadsLikeAPerson) {
  EXPECT_EQ(FormatDuration(33120), "9h 12m");
  EXPECT_EQ(FormatDuration(59), "59s");
  EXPECT_EQ(FormatDuration(90000), "1d 1h");
  EXPECT_EQ(FormatDuration(125), "2m 5s");
}

TEST(FormatDurationRange, NeverPrintsOneValueTwice) {
  // Ends that read differently stay as FormatDuration writes them.
  EXPECT_EQ(FormatDurationRange(90000, 180000), std::make_pair(std::string("1d 1h"), std::string("2d 2h")));
  // A tight range of days (the demo's 302 MiB/h leak: 4d 20h 16m to 4d 20h 49m) gets its minutes
  // (cut, as FormatDuration cuts its last unit) ...
  const double d4h20 = 4 * 86400 + 20 * 3600;
  EXPECT_EQ(FormatDurationRange(d4h20 + 16 * 60, d4h20 + 49 * 60 + 50),
            std::make_pair(std::string("4d 20h 16m"), std::string("4d 20h 49m")));
  // ... and one of hours its seconds.
  EXPECT_EQ(FormatDurationRange(73170, 73199), std::make_pair(std::string("20h 19m 30s"), std::string("20h 19m 59s")));
  // A range that never ends, and one under an hour (FormatDuration already has seconds there).
  EXPECT_EQ(FormatDurationRange(600, INFINITY).second, "never");
  EXPECT_EQ(FormatDurationRange(125, 126), std::make_pair(std::string("2m 5s"), std::string("2m 6s")));
}

TEST(FormatBytesAndRate, ChooseAReadableUnit) {
  EXPECT_EQ(FormatBytes(512.0 * 1024 * 1024), "512 MiB");
  EXPECT_EQ(FormatBytes(1.25 * 1024 * 1024 * 1024), "1.2 GiB");
  EXPECT_EQ(FormatRate(512.0 * 1024 * 1024 / 3600.0), "512 MiB/h");
  EXPECT_EQ(FormatRate(2.0 * 1024 * 1024 / 3600.0), "2.0 MiB/h");
}

}  // namespace
}  // namespace vw
