#include "cli/trace_flags.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace vw::cli
