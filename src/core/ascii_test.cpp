#include "core/ascii.h"

#include <gtest/gtest.h>

namespace vw {
namespace {

TEST(AsciiLower, LowersAsciiLettersOnly) {
  EXPECT_EQ(AsciiLower("Memory.Used [GiB]"), "memory.used [gib]");
  EXPECT_EQ(AsciiLower("HTTPS"), "https");
  EXPECT_EQ(AsciiLower("\xC3\x84_Z9"), "\xC3\x84_z9");  // bytes above ASCII kept as they are
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(AsciiUpper, RaisesAsciiLettersOnly) {
  EXPECT_EQ(AsciiUpper("0000:3b:00.0"), "0000:3B:00.0");
  EXPECT_EQ(AsciiUpper("critical"), "CRITICAL");
  EXPECT_EQ(AsciiUpper("\xC3\xA4_a9"), "\xC3\xA4_A9");  // bytes above ASCII kept as they are
  EXPECT_EQ(AsciiUpper(""), "");
}

}  // namespace
}  // namespace vw
