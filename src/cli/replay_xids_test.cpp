#include "cli/replay_xids.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace vw::cli {
namespace {

double At(const char* text) {
  auto ts = ParseTimestamp(text);
  EXPECT_TRUE(ts.ok()) << text;
  return ts.ok() ? ts->seconds : 0;
}

kernel::XidEvent Line(const std::string& line) {
  auto e = kernel::ParseXidLine(line);
  EXPECT_TRUE(e.has_value()) << line;
  return e.value_or(kernel::XidEvent{});
}

// Sets TZ for one test and restores it.
class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old_.empty()) {
      unsetenv("TZ");
    } else {
      setenv("TZ", old_.c_str(), 1);
    }
    tzset();
  }

 private:
  std::string old_;
};

TEST(XidWallTimeTest, ReadsEveryPrefixThatNamesAnAbsoluteTime) {
  const double ref = At("2026-11-27T09:00:00");
  struct Case {
    const char* line;
    std::optional<const char*> expect;  // as ParseTimestamp reads it
    bool zone = false;
  } cases[] = {
      {"[Fri Nov 27 10:00:00 2026] NVRM: Xid (PCI:0000:3c:00): 79, pid=0, GPU has fallen off the bus.",
       "2026-11-27T10:00:00"},
      {"Nov 27 10:00:05 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception", "2026-11-27T10:00:05"},
      {"Nov  3 08:00:00 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception", "2026-11-03T08:00:00"},
      {"Dec 31 23:00:00 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception", "2026-12-31T23:00:00"},
      {"2026-11-27T08:30:00.5+00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00.5Z", true},
      {"2026-11-27T10:30:00+0200 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00Z", true},
      // journalctl -o short-full, with the zone's name and without one.
      {"Fri 2026-11-27 08:30:00 UTC node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00Z", true},
      {"Fri 2026-11-27 08:30:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00"},
      // RFC 5424 as forwarded by a syslog daemon, with its priority.
      {"<4>1 2026-11-27T08:30:00.25Z node1 kernel - - - NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00.25Z",
       true},
      // dmesg --time-format=iso.
      {"2026-11-27T10:30:00,250000+02:00 NVRM: Xid (PCI:0000:3b:00): 48, DBE", "2026-11-27T08:30:00.25Z", true},
      // RFC 3164 with its priority.
      {"<4>Nov 27 10:00:05 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception", "2026-11-27T10:00:05"},
      {"[  123.456] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=a, MMU Fault", std::nullopt},
      {"6,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=a, MMU Fault", std::nullopt},
      {"NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=a, MMU Fault", std::nullopt},
  };
  for (const Case& c : cases) {
    auto t = XidWallTime(Line(c.line), ref);
    ASSERT_EQ(t.has_value(), c.expect.has_value()) << c.line;
    if (!t) continue;
    EXPECT_DOUBLE_EQ(t->seconds, At(*c.expect)) << c.line;
    EXPECT_EQ(t->has_zone, c.zone) << c.line;
  }
  // A syslog line of late December beside a trace of early January is from the year before.
  auto dec = XidWallTime(Line("Dec 31 23:00:00 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception"),
                         At("2027-01-01T01:00:00"));
  ASSERT_TRUE(dec.has_value());
  EXPECT_DOUBLE_EQ(dec->seconds, At("2026-12-31T23:00:00"));
  // And one of early January beside a trace that starts on New Year's Eve is from the year after.
  auto jan = XidWallTime(Line("Jan  1 01:30:00 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 79, GPU has fallen off"),
                         At("2026-12-31T22:00:00"));
  ASSERT_TRUE(jan.has_value());
  EXPECT_DOUBLE_EQ(jan->seconds, At("2027-01-01T01:30:00"));
  // A 29th of February is of the one leap year of the three.
  auto leap = XidWallTime(Line("Feb 29 12:00:00 node1 kernel: NVRM: Xid (PCI:0000:3c:00): 13, Graphics Exception"),
                          At("2027-01-05T00:00:00"));
  ASSERT_TRUE(leap.has_value());
  EXPECT_DOUBLE_EQ(leap->seconds, At("2028-02-29T12:00:00"));
}

// A time written but not readable (`dmesg -T` in another locale) is said as such, with the line's
// time and how to get one that reads, not as a line without a time.
TEST(ReplayXidsTest, ATimeThatCannotBeReadIsNamedApartFromLinesWithoutOne) {
  kernel::KernelLogScan scan = kernel::ScanKernelLog(
      "[Fr Nov 27 10:30:00 2026] NVRM: Xid (PCI:0000:3b:00): 13, late\n"
      "[Fr Nov 27 10:40:00 2026] NVRM: Xid (PCI:0000:3b:00): 13, later\n"
      "[  123.456] NVRM: Xid (PCI:0000:3b:00): 31, untimed\n");
  ReplayXids x(scan, /*trace_has_zone=*/false, At("2026-11-27T09:00:00"));
  EXPECT_EQ(x.untimed(), 3u);
  ASSERT_EQ(x.notes().size(), 2u);
  EXPECT_NE(x.notes()[0].find("1 Xid line of the kernel log carries no absolute time"), std::string::npos)
      << x.notes()[0];
  EXPECT_NE(x.notes()[1].find("2 Xid lines of the kernel log have a time that could not be read (the first: \"Fr Nov "
                              "27 10:30:00 2026\""),
            std::string::npos)
      << x.notes()[1];
  EXPECT_NE(x.notes()[1].find("LC_ALL=C"), std::string::npos) << x.notes()[1];
}

TEST(ReplayXidsTest, ReturnsEventsWhenTheTraceReachesThemAndUntimedOnesAtTheStart) {
  kernel::KernelLogScan scan = kernel::ScanKernelLog(
      "[Fri Nov 27 10:30:00 2026] NVRM: Xid (PCI:0000:3b:00): 13, late\n"
      "[Fri Nov 27 10:00:00 2026] NVRM: Xid (PCI:0000:3c:00): 79, early\n"
      "[  123.456] NVRM: Xid (PCI:0000:3b:00): 31, untimed\n");
  ReplayXids x(scan, /*trace_has_zone=*/false, At("2026-11-27T09:00:00"));
  EXPECT_EQ(x.untimed(), 1u);
  ASSERT_EQ(x.notes().size(), 1u);
  EXPECT_NE(x.notes()[0].find("no absolute time"), std::string::npos) << x.notes()[0];
  auto first = x.Due(At("2026-11-27T09:00:00"));
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].xid, 31);
  EXPECT_TRUE(x.Due(At("2026-11-27T09:59:59")).events.empty());
  auto at10 = x.Due(At("2026-11-27T10:00:00"));
  ASSERT_EQ(at10.events.size(), 1u);
  EXPECT_EQ(at10.events[0].xid, 79);
  EXPECT_EQ(x.not_yet_due(), 1u);
  auto later = x.Due(At("2026-11-27T11:00:00"));
  ASSERT_EQ(later.events.size(), 1u);
  EXPECT_EQ(later.events[0].xid, 13);
  EXPECT_TRUE(x.Due(At("2026-11-27T12:00:00")).events.empty());
}

TEST(ReplayXidsTest, ConvertsBetweenZonedAndWallClockWithThisMachinesZone) {
  ScopedTz tz("XST-2");  // POSIX: two hours east of UTC
  kernel::KernelLogScan scan = kernel::ScanKernelLog(
      "2026-11-27T08:30:00+00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 48, DBE\n"
      "[Fri Nov 27 10:00:00 2026] NVRM: Xid (PCI:0000:3c:00): 79, off the bus\n");
  // A zone-less trace: the zoned line moves to local wall clock (10:30), the dmesg -T one stays.
  ReplayXids wall(scan, false, At("2026-11-27T09:00:00"));
  EXPECT_EQ(wall.Due(At("2026-11-27T10:00:00")).events.size(), 1u);
  EXPECT_TRUE(wall.Due(At("2026-11-27T10:29:59")).events.empty());
  EXPECT_EQ(wall.Due(At("2026-11-27T10:30:00")).events.size(), 1u);
  ASSERT_EQ(wall.notes().size(), 1u);
  EXPECT_NE(wall.notes()[0].find("local time"), std::string::npos);
  // A UTC trace: the dmesg -T line (local 10:00) is 08:00 UTC, the zoned one stays at 08:30.
  ReplayXids utc(scan, true, At("2026-11-27T07:00:00Z"));
  EXPECT_TRUE(utc.Due(At("2026-11-27T07:59:59Z")).events.empty());
  auto at8 = utc.Due(At("2026-11-27T08:00:00Z"));
  ASSERT_EQ(at8.events.size(), 1u);
  EXPECT_EQ(at8.events[0].xid, 79);
  EXPECT_EQ(utc.Due(At("2026-11-27T08:30:00Z")).events.size(), 1u);
}

}  // namespace
}  // namespace vw::cli
