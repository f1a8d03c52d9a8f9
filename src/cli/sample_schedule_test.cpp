#include "cli/sample_schedule.h"

#include <gtest/gtest.h>

#include <vector>

namespace vw::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Samples every 330 ms with a little lateness each, lists due every 660 ms: every other sample
// carries one, whether a sample comes a few ms early or late of its tick.
TEST(SampleSchedule, AProcessListIsDueEveryOtherSampleWhenItsIntervalIsTwoSamples) {
  const std::vector<double> late = {0.0, 0.02, 0.0, 0.05, 0.01, 0.04, 0.0, 0.03};
  double last = -1e300;
  std::vector<bool> listed;
  for (size_t i = 0; i < late.size(); ++i) {
    const double now = 0.33 * static_cast<double>(i) + late[i];
    const bool due = ProcessListDue(now, last, 0.66, 0.33);
    if (due) last = now;
    listed.push_back(due);
  }
  EXPECT_EQ(listed, (std::vector<bool>{true, false, true, false, true, false, true, false}));
}

TEST(SampleSchedule, TheFirstSampleListsProcessesAndAnEqualIntervalListsEverySample) {
  EXPECT_TRUE(ProcessListDue(100, -1e300, 5, 1));
  EXPECT_TRUE(ProcessListDue(100.99, 100, 1, 1)) << "due within half an interval";
  EXPECT_FALSE(ProcessListDue(104.4, 100, 5, 1));
  EXPECT_TRUE(ProcessListDue(104.5, 100, 5, 1));
}

// Ticks stay on the grid of the first one; a tick already past is replaced by now (no catch-up).
TEST(SampleSchedule, NextTickKeepsTheGridAndDoesNotCatchUp) {
  const Clock::time_point t0{};
  EXPECT_EQ(NextTick(t0, 0.5, t0 + std::chrono::milliseconds(120)), t0 + std::chrono::milliseconds(500));
  const Clock::time_point behind = t0 + std::chrono::milliseconds(1700);
  EXPECT_EQ(NextTick(t0, 0.5, behind), behind);
}

TEST(SampleSchedule, DeadlineOfADurationAndOfNone) {
  const Clock::time_point t0{};
  EXPECT_FALSE(DeadlineOf(t0, std::nullopt).has_value());
  EXPECT_EQ(DeadlineOf(t0, 2.0), t0 + std::chrono::seconds(2));
  EXPECT_GT(*DeadlineOf(t0, 1e30), t0) << "a huge duration is capped, not overflowed";
}

// The wait ends at the deadline when it comes before the tick.
TEST(SampleSchedule, SleepEndsAtTheDeadlineBeforeTheTick) {
  std::atomic<bool> stop{false};
  const Clock::time_point start = Clock::now();
  SleepUntilTick(start + std::chrono::hours(1), start + std::chrono::milliseconds(50), stop);
  EXPECT_LT(Clock::now() - start, std::chrono::minutes(1));
}

// A step of the system clock is said when it moves by more than a second from the step said last,
// with which way it went and where the run's clock stands against the system's now.
TEST(SampleSchedule, ClockStepNoteSaysEachStepOnce) {
  double said = 0;
  EXPECT_EQ(ClockStepNote(0.4, &said, "the daemon"), "");
  EXPECT_EQ(said, 0);
  EXPECT_EQ(ClockStepNote(86400, &said, "the daemon"),
            "the system clock stepped ahead by 1d 0h; the sample times of the daemon keep to the clock it started "
            "with (which now is 1d 0h behind it) until it is restarted");
  EXPECT_EQ(said, 86400);
  EXPECT_EQ(ClockStepNote(86400.5, &said, "the daemon"), "") << "said once";
  EXPECT_EQ(ClockStepNote(0.2, &said, "the daemon"),
            "the system clock stepped back by 1d 0h; the sample times of the daemon keep to the clock it started "
            "with (which now agrees with it again) until it is restarted");
  const std::string back = ClockStepNote(-300, &said, "the recording");
  EXPECT_NE(back.find("stepped back by 5m 0s"), std::string::npos) << back;
  EXPECT_NE(back.find("which now is 5m 0s ahead of it"), std::string::npos) << back;
  EXPECT_EQ(ClockStepNote(-299.5, &said, "the recording"), "") << "under a second is not said";
}

}  // namespace
}  // namespace vw::cli
