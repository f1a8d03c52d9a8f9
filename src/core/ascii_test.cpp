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

}  // namespace
}  // namespace vw
