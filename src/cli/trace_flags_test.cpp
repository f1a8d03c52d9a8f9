#include "cli/trace_flags.h"

#include <gtest/gtest.h>

#include "core/time.h"

namespace vw::cli {
namespace {

TEST(SplitColumnsFlag, SplitsAndTrimsNamesAndRejectsEmptyOnesByPosition) {
  struct Case {
    std::string text;
    std::vector<std::string> want;  // empty: an error
    std::string error_part;
  };
  const Case cases[] = {
      {"memory.used", {"memory.used"}, ""},
      {"timestamp, index ,memory.used,memory.total", {"timestamp", "index", "memory.used", "memory.total"}, ""},
      {"memory.used [MiB],memory.total [MiB]", {"memory.used [MiB]", "memory.total [MiB]"}, ""},
      {"timestamp,,memory.used", {}, "column 2 is empty"},
      {"memory.used,", {}, "column 2 is empty"},
      {",memory.used", {}, "column 1 is empty"},
      {" ", {}, "column 1 is empty"},
  };
  for (const Case& c : cases) {
    auto got = SplitColumnsFlag(c.text);
    if (c.want.empty()) {
      ASSERT_FALSE(got.ok()) << c.text;
      EXPECT_NE(got.status().message().find(c.error_part), std::string::npos) << got.status().message();
      EXPECT_NE(got.status().message().find("--columns"), std::string::npos) << got.status().message();
    } else {
      ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().message();
      EXPECT_EQ(*got, c.want) << c.text;
    }
  }
}

TEST(ParseTimeFlag, EveryBadValueNamesTheFlagAndListsTheAcceptedForms) {
  auto good = ParseTimeFlag("--since", "2026/03/14 10:00:00");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_DOUBLE_EQ(*good, 1773482400.0);
  for (const char* text : {"garbage", "10:00", "2026/02/30", "2026/03/14 25:00:00", "20261129 9:1", "1.2.3",
                           "99999999999999", "2026-03-14T10:00:00+25:00", "Tue Oct 29 19:00:23 2024x"}) {
    auto got = ParseTimeFlag("--until", text);
    ASSERT_FALSE(got.ok()) << text;
    const std::string& m = got.status().message();
    EXPECT_EQ(m.rfind("--until: ", 0), 0u) << m;
    EXPECT_NE(m.find(std::string("'") + text + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(kTimestampForms), std::string::npos) << m;
    EXPECT_EQ(m.find(kTimestampForms), m.rfind(kTimestampForms)) << "listed twice: " << m;
  }
}

}  // namespace
}  // namespace vw::cli
