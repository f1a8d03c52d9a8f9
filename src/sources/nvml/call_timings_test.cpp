#include "sources/nvml/call_timings.h"

#include <gtest/gtest.h>

#include <string>

namespace vw::nvml {
namespace {

TEST(CallTimingsTest, CountsEachDurationInTheCumulativeBucketsOfItsCall) {
  CallTimings t({0.001, 0.01, 0.1});
  t.Record("nvmlDeviceGetMemoryInfo_v2", 0.0005);
  t.Record("nvmlDeviceGetMemoryInfo_v2", 0.01);  // a bound is inclusive (le)
  t.Record("nvmlDeviceGetMemoryInfo_v2", 0.05);
  t.Record("nvmlDeviceGetMemoryInfo_v2", 2.0);  // beyond the last bound: +Inf only
  t.Record("nvmlDeviceGetUtilizationRates", 0.002);
  auto s = t.Snapshot();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].call, "nvmlDeviceGetMemoryInfo_v2");
  EXPECT_EQ(s[0].bucket_counts, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(s[0].count, 4u);
  EXPECT_DOUBLE_EQ(s[0].sum_seconds, 0.0005 + 0.01 + 0.05 + 2.0);
  EXPECT_EQ(s[1].call, "nvmlDeviceGetUtilizationRates");
  EXPECT_EQ(s[1].bucket_counts, (std::vector<uint64_t>{0, 1, 1}));
  EXPECT_EQ(s[1].count, 1u);
}

TEST(CallTimingsTest, SameNameFromAnotherPointerIsTheSameCall) {
  CallTimings t({1});
  static const char kA[] = "nvmlDeviceGetCount_v2";
  static const char kB[] = "nvmlDeviceGetCount_v2";
  t.Record(kA, 0.1);
  t.Record(kB, 0.1);
  t.Record(kA, 0.1);
  auto s = t.Snapshot();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].count, 3u);
}

TEST(CallTimingsTest, NamesBeyondTheTableAreDroppedAndCounted) {
  CallTimings t({1});
  static std::string names[CallTimings::kMaxCalls + 2];
  for (size_t i = 0; i < CallTimings::kMaxCalls + 2; ++i) {
    names[i] = "call" + std::to_string(i);
    t.Record(names[i].c_str(), 0.5);
  }
  EXPECT_EQ(t.Snapshot().size(), CallTimings::kMaxCalls);
  EXPECT_EQ(t.dropped(), 2u);
  t.Record(names[0].c_str(), 0.5);  // a known name still counts
  EXPECT_EQ(t.Snapshot()[0].count, 2u);
}

}  // namespace
}  // namespace vw::nvml
