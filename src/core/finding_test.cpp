#include "core/finding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vw {
namespace {

TEST(GpuKeyLess, HostFirstThenIndicesInNumericOrderThenOtherKeys) {
  std::vector<std::string> keys = {"GPU-9f1c", "10", "", "2", "0000:3b:00.0", "11", "0"};
  std::stable_sort(keys.begin(), keys.end(),
                   [](const std::string& a, const std::string& b) { return GpuKeyLess(a, b); });
  EXPECT_EQ(keys, (std::vector<std::string>{"", "0", "2", "10", "11", "0000:3b:00.0", "GPU-9f1c"}));
  EXPECT_FALSE(GpuKeyLess("10", "10"));
  EXPECT_TRUE(GpuKeyLess("9", "10"));
  EXPECT_FALSE(GpuKeyLess("10", "9"));
  EXPECT_TRUE(GpuKeyLess("99999999999999999999", "100000000000000000000"));  // no overflow
}

}  // namespace
}  // namespace vw
