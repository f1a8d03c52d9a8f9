#include "core/units.h"

#include <gtest/gtest.h>

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
  EXPECT_FALSE(ParseSize("").ok());
}

TEST(FormatDuration, ReadsLikeAPerson) {
  EXPECT_EQ(FormatDuration(33120), "9h 12m");
  EXPECT_EQ(FormatDuration(59), "59s");
  EXPECT_EQ(FormatDuration(90000), "1d 1h");
  EXPECT_EQ(FormatDuration(125), "2m 5s");
}

TEST(FormatBytesAndRate, ChooseAReadableUnit) {
  EXPECT_EQ(FormatBytes(512.0 * 1024 * 1024), "512 MiB");
  EXPECT_EQ(FormatBytes(1.25 * 1024 * 1024 * 1024), "1.2 GiB");
  EXPECT_EQ(FormatRate(512.0 * 1024 * 1024 / 3600.0), "512 MiB/h");
  EXPECT_EQ(FormatRate(2.0 * 1024 * 1024 / 3600.0), "2.0 MiB/h");
}

}  // namespace
}  // namespace vw
