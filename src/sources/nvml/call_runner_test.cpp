#include "sources/nvml/call_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace vw::nvml {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(CallRunnerTest, ReturnsTheValueOfACallThatFinishesInTime) {
  CallRunner runner;
  auto r = runner.Run<int>("answer", milliseconds(1000), [] { return 42; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_FALSE(runner.ever_abandoned());
}

TEST(CallRunnerTest, RunsEveryCallOnTheSameWorkerThread) {
  CallRunner runner;
  auto a = runner.Run<std::thread::id>("id", milliseconds(1000), [] { return std::this_thread::get_id(); });
  auto b = runner.Run<std::thread::id>("id", milliseconds(1000), [] { return std::this_thread::get_id(); });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, std::this_thread::get_id());
}

TEST(CallRunnerTest, TimesOutFailsFastWhileBlockedAndRecoversAfterwards) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  CallRunner runner;
  auto start = std::chrono::steady_clock::now();
  auto r = runner.Run<int>("nvmlStuck", milliseconds(100), [release] {
    while (!*release) std::this_thread::sleep_for(milliseconds(5));
    return 1;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout);
  EXPECT_THAT(r.status().message(), HasSubstr("nvmlStuck: no answer within the 100 ms deadline"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  EXPECT_TRUE(runner.blocked());

  auto fast = runner.Run<int>("nvmlNext", milliseconds(1000), [] { return 2; });
  ASSERT_FALSE(fast.ok());
  EXPECT_THAT(fast.status().message(), HasSubstr("nvmlNext: not called, the previous call nvmlStuck is still blocked"));
  // Said once: the same refusal a tick later compares equal without its time.
  std::this_thread::sleep_for(milliseconds(150));
  auto later = runner.Run<int>("nvmlNext", milliseconds(1000), [] { return 2; });
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.status().message(), fast.status().message());
  EXPECT_EQ(WithoutBlockedTime(later.status().message()), WithoutBlockedTime(fast.status().message()));
  EXPECT_EQ(WithoutBlockedTime("GPU 7: nvmlDeviceRegisterEvents: not called, the previous call nvmlDeviceGetMemoryInfo "
                               "is still blocked after 12.5 s; GPU 8: x"),
            "GPU 7: nvmlDeviceRegisterEvents: not called, the previous call nvmlDeviceGetMemoryInfo is still blocked; "
            "GPU 8: x");

  *release = true;
  for (int i = 0; i < 200 && runner.blocked(); ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_FALSE(runner.blocked());
  auto again = runner.Run<int>("nvmlNext", milliseconds(1000), [] { return 3; });
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, 3);
  EXPECT_TRUE(runner.ever_abandoned());
}

TEST(CallRunnerTest, DestructionDoesNotWaitForAnAbandonedCall) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto start = std::chrono::steady_clock::now();
  {
    CallRunner runner;
    auto r = runner.Run<int>("nvmlStuck", milliseconds(50), [release] {
      while (!*release) std::this_thread::sleep_for(milliseconds(5));
      return 1;
    });
    EXPECT_FALSE(r.ok());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  *release = true;  // lets the detached worker end
}

}  // namespace
}  // namespace vw::nvml
