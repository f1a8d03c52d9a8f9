#include "core/time.h"

#include <gtest/gtest.h>

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

TEST(FormatClock, MinutesOnly) {
  EXPECT_EQ(FormatClock(1784016758.0), "2026-07-14 08:12");
}

}  // namespace
}  // namespace vw
