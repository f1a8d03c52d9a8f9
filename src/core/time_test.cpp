#include "core/time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>

namespace vw {
namespace {

TEST(ParseTimestamp, NvidiaSmiFormatIsWallClock) {
  auto r = ParseTimestamp("2026/07/14 08:12:38.696");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_zone);
  EXPECT_EQ(FormatIso8601(r->seconds, false), "2026-07-14T08:12:38.696");
}

TEST(ParseTimestamp, Iso8601WithAndWithoutZone) {
  auto z = ParseTimestamp("2026-07-14T08:12:38Z");
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(z->has_zone);
  EXPECT_DOUBLE_EQ(z->seconds, 1784016758.0);
  auto off = ParseTimestamp("2026-07-14T10:12:38+02:00");
  ASSERT_TRUE(off.ok());
  EXPECT_DOUBLE_EQ(off->seconds, z->seconds);
  auto naive = ParseTimestamp("2025-09-21 16:12:24");
  ASSERT_TRUE(naive.ok());
  EXPECT_EQ(FormatIso8601(naive->seconds, false), "2025-09-21T16:12:24");
}

TEST(ParseTimestamp, EpochSecondsAndCtime) {
  auto e = ParseTimestamp("1764189075");
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(e->seconds, 1764189075.0);
  auto c = ParseTimestamp("Tue Oct 29 19:00:23 2024");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(FormatIso8601(c->seconds, false), "2024-10-29T19:00:23");
  auto c2 = ParseTimestamp("Sun May  4 04:27:32 2025");
  ASSERT_TRUE(c2.ok()) << c2.status().ToString();
  EXPECT_EQ(FormatIso8601(c2->seconds, false), "2025-05-04T04:27:32");
}

TEST(ParseTimestamp, RejectsBadInputWithReason) {
  for (const char* bad : {"", "2026/13/01 00:00:00", "yesterday", "2026-07-14T25:00:00", "2026-07-14T08:12:38 junk"}) {
    auto r = ParseTimestamp(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

// Epoch seconds stop where four-digit years do: a time in milliseconds (or a number run together
// with the next field) is no time, and is named as the likely mistake.
TEST(ParseTimestamp, EpochSecondsFromTheYear10000AreRejected) {
  auto last = ParseTimestamp("253402300799.5");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(FormatIso8601(last->seconds, true), "9999-12-31T23:59:59.500Z");
  auto millis = ParseTimestamp("1764189075000");
  ASSERT_FALSE(millis.ok());
  EXPECT_NE(millis.status().message().find("after the year 9999 (milliseconds?"), std::string::npos)
      << millis.status().message();
  auto huge = ParseTimestamp("176418961518991664194121");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("after the year 9999"), std::string::npos);
  EXPECT_EQ(huge.status().message().find("milliseconds"), std::string::npos) << huge.status().message();
  EXPECT_FALSE(ParseTimestamp("253402300800").ok());
}

TEST(EpochBeyondRange, OnlyEpochSecondsFromTheYear10000On) {
  for (const char* s :
       {"253402300800", "1764189075000", " 1764189075000.5 ", "176418961518991664194121",
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"}) {
    EXPECT_TRUE(EpochBeyondRange(s)) << s;
  }
  for (const char* s : {"253402300799", "1764189075", "0", "", ".", "1.2.3", "2026/07/14 08:12:38", "-1764189075000",
                        "1e300", "yesterday"}) {
    EXPECT_FALSE(EpochBeyondRange(s)) << s;
  }
}

TEST(PlausibleTime, FiniteAndWithinTheFourDigitYears) {
  EXPECT_TRUE(PlausibleTime(0));
  EXPECT_TRUE(PlausibleTime(1764189075.25));
  EXPECT_TRUE(PlausibleTime(-86400));
  EXPECT_FALSE(PlausibleTime(kTimestampLimitSeconds));
  EXPECT_FALSE(PlausibleTime(-kTimestampLimitSeconds));
  EXPECT_FALSE(PlausibleTime(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(PlausibleTime(std::numeric_limits<double>::infinity()));
}

TEST(ParseTimestamp, DmonDateAndTimeIsWallClock) {
  auto r = ParseTimestamp("20261129 19:11:56");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_zone);
  EXPECT_EQ(FormatIso8601(r->seconds, false), "2026-11-29T19:11:56");
  for (const char* bad : {"20261329 19:11:56", "20261129 19:11", "20261129 25:00:00", "20261129 19:11:56 x"}) {
    EXPECT_FALSE(ParseTimestamp(bad).ok()) << bad;
  }
}

TEST(ParseTimestamp, RejectsDatesThatDoNotExist) {
  struct Case {
    const char* text;
    bool ok;
  };
  for (const Case& c :
       {Case{"2026-02-30T10:00:00", false}, Case{"2026/04/31 00:00:00", false}, Case{"2025-02-29", false},
        Case{"20260230 10:00:00", false}, Case{"Mon Feb 30 10:00:00 2026", false}, Case{"2024-02-29T10:00:00", true},
        Case{"2000-02-29", true}, Case{"2026-01-31 23:59:59", true}}) {
    auto r = ParseTimestamp(c.text);
    EXPECT_EQ(r.ok(), c.ok) << c.text;
    if (!c.ok && !r.ok()) {
      EXPECT_NE(r.status().message().find(c.text), std::string::npos) << r.status().message();
    }
  }
  EXPECT_FALSE(ValidCivilDate(1900, 2, 29));
  EXPECT_TRUE(ValidCivilDate(2000, 2, 29));
}

TEST(FormatClock, MinutesOnly) {
  EXPECT_EQ(FormatClock(1784016758.0), "2026-07-14 08:12");
}

}  // namespace
}  // namespace vw

namespace vw {
namespace {

// The steady wall clock starts at the system clock's reading and advances with the steady clock:
// the two agree while nobody steps the system clock (here), and it never goes back.
TEST(SteadyWallNow, ReadsTheWallClockAndNeverGoesBack) {
  const double system = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  double prev = SteadyWallNow();
  EXPECT_NEAR(prev, system, 1.0);
  for (int i = 0; i < 1000; ++i) {
    const double t = SteadyWallNow();
    EXPECT_GE(t, prev);
    prev = t;
  }
  EXPECT_NEAR(SystemClockStep(), 0.0, 0.5);
}

}  // namespace
}  // namespace vw
