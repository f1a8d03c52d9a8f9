// A GPU series shared by several processes: another holder's exit must not cut a leak that goes
// on (NoteDeparture), a trend test that is significant is never reported as a plateau, and a
// process series' runway counts what the other holders use (SetHeldByOthers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/units.h"
#include "detection/leak_engine.h"

namespace vw::detection {
namespace {

constexpr double kHour = 3600;
constexpr double kCard = 80 * kGiB;

std::string AllEvidence(const Assessment& a) {
  std::string s;
  for (const std::string& e : a.evidence) s += e + "\n";
  return s;
}

// PID A leaks `rate_mib_h` from 12 GiB (after a two-minute ramp); PID B holds 8 GiB until
// `b_exit_s`. The GPU holds A + B + 300 MiB of context. Samples every 10 s until `end_s`; the
// process list is read every `list_every_s` and B's memory is freed `release_lag_s` after B leaves
// the list (negative: before the list shows it gone). `note` = false: no departures are noted.
struct SharedGpu {
  double rate_mib_h = 3000;
  double b_arrive_s = 0;      // B comes (its 8 GiB at once)
  bool b_first_seen = false;  // the departure says when B was first listed
  double b_exit_s = 3 * kHour;
  double end_s = 3.5 * kHour;
  double list_every_s = 10;
  double release_lag_s = 0;
  bool note = true;
  double check_every_s = 600;
};

struct SharedRun {
  Assessment last;
  int leak_checks_after_exit = 0, checks_after_exit = 0;
  int plateaus_with_significant_trend = 0;
};

double MibA(double t, double rate) {
  return 12 * 1024 * (1 - std::exp(-t / 120)) + rate * t / kHour;
}

SharedRun FeedShared(const SharedGpu& s) {
  LeakEngine e;
  e.SetCapacity(kCard, 2 * kGiB);
  SharedRun run;
  std::optional<double> b_last_seen;
  bool b_listed = true;
  double next_check = 600;
  for (double t = 0; t <= s.end_s; t += 10) {
    const bool b_holds = t >= s.b_arrive_s && t < s.b_exit_s + s.release_lag_s;
    const double mib = std::round(300 + MibA(t, s.rate_mib_h) + (b_holds ? 8 * 1024 : 0));
    e.Add(t, mib * kMiB);
    if (std::fmod(t, s.list_every_s) == 0) {
      // The list names B while B runs.
      const bool listed = t >= s.b_arrive_s && t < s.b_exit_s;
      if (listed) b_last_seen = t;
      if (!listed && b_listed && s.note && b_last_seen)
        e.NoteDeparture(*b_last_seen, t, 8 * kGiB, 4343,
                        s.b_first_seen ? std::optional<double>(s.b_arrive_s) : std::nullopt);
      b_listed = listed;
    }
    if (t >= next_check) {
      next_check += s.check_every_s;
      const Assessment a = e.Assess();
      // A plateau cites its longest window's trend: neither test may say "up" there at a leak's rate.
      if (a.verdict == Verdict::kPlateau && a.trend && a.trend->slope_bps >= e.config().min_rate_bps &&
          ((a.trend->mk_z > 0 && a.trend->mk_p < e.config().alpha) || a.trend->slope_lo_bps > 0))
        ++run.plateaus_with_significant_trend;
      if (t > s.b_exit_s + 60) {
        ++run.checks_after_exit;
        run.leak_checks_after_exit += a.verdict == Verdict::kLeak;
      }
    }
  }
  run.last = e.Assess();
  return run;
}

TEST(DepartedHolder, WithoutTheDepartureTheDropAboveTheTwoHourLowHidesTheLeak) {
  // The case as it was: the fall lands above the lowest floor of the last two hours, so no new
  // segment starts and the window fails the keeps-going tests.
  SharedGpu s;
  s.note = false;
  const SharedRun run = FeedShared(s);
  EXPECT_NE(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_EQ(run.last.segment_start_t, 0.0);
}

TEST(DepartedHolder, LeakGoesOnWhenAnotherHolderLeaves) {
  const SharedGpu s;
  const SharedRun run = FeedShared(s);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_EQ(run.leak_checks_after_exit, run.checks_after_exit);
  ASSERT_TRUE(run.last.rate_bps);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 3000, 150);
  EXPECT_EQ(run.last.departures_explained, 1u);
  EXPECT_NEAR(run.last.departed_bytes, 8 * kGiB, 64 * kMiB);
  // B by PID, the moment it went (one list read apart), what it held and the fall taken off.
  EXPECT_NE(AllEvidence(run.last).find("PID 4343 left this GPU at +3h 0m holding 8.0 GiB: the fall of 8.0 GiB it "
                                       "left at +3h 0m is taken off the samples before it"),
            std::string::npos)
      << AllEvidence(run.last);
  // The runway is the room above the peak of what is held now: A's memory and the context.
  ASSERT_TRUE(run.last.peak_bytes);
  EXPECT_LT(*run.last.peak_bytes, (300 + MibA(s.end_s, 3000) + 100) * kMiB);
  ASSERT_TRUE(run.last.tto_s);
}

TEST(DepartedHolder, JobsOneAfterAnotherAreSegmentsNotAStaircaseBelowZero) {
  // A GPU that runs one job after another (seen in a real 22-hour log): each job ramps from the
  // idle 300 MiB to its own level, holds it for two and a half hours and leaves, and the next
  // starts a minute later. Each exit empties the GPU: no holder's memory goes on, so its fall is a drop that starts
  // a segment. Taking each departed job's memory off every earlier sample instead left the first
  // jobs tens of GiB below zero and the series rising by the sum of the jobs' levels.
  LeakEngine e;
  e.SetCapacity(48 * kGiB, 0);
  const double levels_gib[] = {11, 14, 12, 16, 13};
  double t = 0;
  int pid = 100;
  for (const double level : levels_gib) {
    const double start = t;
    for (; t < start + 2.5 * kHour; t += 10) {
      const double mib = 300 + level * 1024 * (1 - std::exp(-(t - start) / 120));
      e.Add(t, std::round(mib) * kMiB);
    }
    e.Add(t, 300 * kMiB);                             // the job's memory is freed ...
    e.NoteDeparture(t - 10, t, level * kGiB, pid++);  // ... and its PID is gone from the list
    for (const double end = t + 60; t < end; t += 10) e.Add(t, 300 * kMiB);
  }
  for (const double end = t + 1.5 * kHour; t < end; t += 10)
    e.Add(t, std::round(300 + 13 * 1024 * (1 - std::exp(-(t - end + 1.5 * kHour) / 120))) * kMiB);
  const Assessment a = e.Assess();
  EXPECT_EQ(a.departures_explained, 0u) << AllEvidence(a);
  EXPECT_NE(a.verdict, Verdict::kLeak) << AllEvidence(a);
  ASSERT_TRUE(a.segment_start_t);
  EXPECT_GT(*a.segment_start_t, 5 * 2.5 * kHour);  // the last job's segment
  ASSERT_TRUE(a.floor_bytes);
  EXPECT_GT(*a.floor_bytes, 12 * kGiB);
  for (const auto& b : e.buckets()) EXPECT_GT(b.min_bytes, 0) << "bucket at " << b.t_start;
}

TEST(DepartedHolder, JobsThatShareTheGpuAndEndInTurnAreNotAStaircaseUp) {
  // Three jobs share the GPU, staggered by a third of their life: each ramps to 15 GiB over ten
  // minutes, holds it for an hour and a half and leaves, and the next job of its slot starts half a
  // minute later. The GPU holds between 32 and 47 GiB all along. Taking each departed job's memory
  // off the samples it held, while the jobs that came after it stay in, made this a staircase up:
  // a critical leak of 29 GiB/h. Told which holders are still listed as one leaves (and when they
  // came), the engine sees the job was replaced by later ones, and its fall stays a drop.
  constexpr double kLife = 5400, kGap = 30, kPeriod = kLife + kGap, kRamp = 600;
  constexpr int kSlots = 3;
  LeakEngine e;
  e.SetCapacity(kCard, 479 * kMiB);
  auto job_of = [&](int slot, double t) {
    const double x = t + slot * kPeriod / kSlots;
    return std::pair<int, double>{static_cast<int>(x / kPeriod), std::fmod(x, kPeriod)};  // (generation, age)
  };
  auto mib_at = [&](double age) { return age >= kLife ? 0.0 : 1000 + std::min(age, kRamp) / kRamp * 14000; };
  std::vector<std::pair<int, double>> listed(kSlots, {-1, 0});  // per slot: generation listed, its MiB
  std::vector<double> first_seen(kSlots, 0);
  int leak_checks = 0;
  for (double t = 0; t <= 12 * kHour; t += 5) {
    double mib = 2000;
    for (int s = 0; s < kSlots; ++s) mib += mib_at(job_of(s, t).second);
    e.Add(t, mib * kMiB);
    std::vector<ListedHolder> still;
    std::vector<std::pair<int, double>> now(kSlots, {-1, 0});
    std::vector<double> seen_from = first_seen;  // the departing jobs' first listing
    for (int s = 0; s < kSlots; ++s) {
      const auto [gen, age] = job_of(s, t);
      if (age < kLife) {
        now[s] = {gen, mib_at(age)};
        if (listed[s].first != gen) first_seen[s] = t;
        still.push_back({first_seen[s], mib_at(age) * kMiB});
      }
    }
    for (int s = 0; s < kSlots; ++s) {
      if (listed[s].first >= 0 && listed[s].first != now[s].first) {
        e.NoteDeparture(t - 5, t, listed[s].second * kMiB, 1000 * s + listed[s].first, seen_from[s], still);
      }
    }
    listed = now;
    if (std::fmod(t, 600) == 0 && t > 0) leak_checks += e.Assess().verdict == Verdict::kLeak;
  }
  const Assessment a = e.Assess();
  EXPECT_NE(a.verdict, Verdict::kLeak) << AllEvidence(a);
  EXPECT_EQ(leak_checks, 0) << AllEvidence(a);
  for (const auto& b : e.buckets()) EXPECT_GT(b.min_bytes, 0) << "bucket at " << b.t_start;
}

TEST(DepartedHolder, AHolderThatCameLaterIsTakenOffFromItsArrival) {
  // A leaks from 0 (its two-minute ramp from the idle 300 MiB); B arrives at 1 h with 8 GiB and
  // leaves at 3 h. Told when B was first listed, the engine lowers only the samples from five
  // minutes after that (B's arrival is then a five-minute excursion the spike removal takes off),
  // and A's leak goes on through B's exit.
  SharedGpu s;
  s.b_arrive_s = kHour;
  s.b_first_seen = true;
  const SharedRun run = FeedShared(s);
  EXPECT_EQ(run.last.departures_explained, 1u) << AllEvidence(run.last);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_EQ(run.leak_checks_after_exit, run.checks_after_exit);
  ASSERT_TRUE(run.last.rate_bps);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 3000, 150);

  // Not told, it could only lower the whole segment, whose first hour (A's ramp from 300 MiB
  // among it) held less than B: the fall stays a drop, and nothing is lowered below zero.
  s.b_first_seen = false;
  const SharedRun blind = FeedShared(s);
  EXPECT_EQ(blind.last.departures_explained, 0u) << AllEvidence(blind.last);
}

TEST(DepartedHolder, NoScheduleOfHoldersTakesTheSeriesBelowZero) {
  // Holders come and go at random (up to six, 1–16 GiB, 20 minutes to 4 hours each) over 8 hours;
  // each exit is noted, with or without when the holder came. Whatever the departures explain, no bucket may end up
  // more than departure_min_bytes below zero, nor above what the GPU held at its fullest.
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    struct Holder {
      double from, to, gib;
      int pid;
    };
    std::vector<Holder> holders;
    const int count = 2 + static_cast<int>(u(rng) * 5);
    for (int i = 0; i < count; ++i) {
      const double from = u(rng) * 6 * kHour;
      holders.push_back({from, from + (1.0 / 3 + u(rng) * 11.0 / 3) * kHour, 1 + u(rng) * 15, 1000 + i});
    }
    LeakEngine e;
    e.SetCapacity(kCard, 0);
    double fullest = 0;
    std::vector<bool> gone(holders.size(), false);
    for (double t = 0; t <= 8 * kHour; t += 10) {
      double mib = 300;
      for (const Holder& h : holders)
        if (t >= h.from && t < h.to) mib += h.gib * 1024 * (1 - std::exp(-(t - h.from) / 120));
      fullest = std::max(fullest, std::round(mib) * kMiB);
      e.Add(t, std::round(mib) * kMiB);
      for (size_t i = 0; i < holders.size(); ++i) {
        if (gone[i] || t < holders[i].to) continue;
        gone[i] = true;
        // Odd seeds say when each holder was first listed, even ones do not.
        e.NoteDeparture(t - 10, t, holders[i].gib * kGiB, holders[i].pid,
                        seed % 2 ? std::optional<double>(holders[i].from) : std::nullopt);
      }
    }
    const double margin = e.config().departure_min_bytes;
    for (const auto& b : e.buckets()) {
      ASSERT_GE(b.min_bytes, -margin) << "seed " << seed << " bucket at " << b.t_start;
      ASSERT_LE(b.peak_bytes, fullest) << "seed " << seed << " bucket at " << b.t_start;
    }
    const Assessment a = e.Assess();
    if (a.floor_bytes) {
      EXPECT_GE(*a.floor_bytes, -margin) << "seed " << seed;
    }
  }
}

TEST(DepartedHolder, ExitNoticedAfterTheFallStillExplainsIt) {
  // The process list is read every 30 s (the memory every 10 s): the fall comes first.
  SharedGpu s;
  s.b_exit_s = 3 * kHour - 25;  // freed at once, found gone at the next list read (3h 0m)
  s.list_every_s = 30;
  const SharedRun run = FeedShared(s);
  EXPECT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_EQ(run.last.departures_explained, 1u);
}

TEST(DepartedHolder, MemoryFreedSecondsAfterTheExitIsExplained) {
  SharedGpu s;
  s.release_lag_s = 30;  // lazy reclaim
  const SharedRun run = FeedShared(s);
  EXPECT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_EQ(run.last.departures_explained, 1u);
}

TEST(DepartedHolder, TwoHoldersLeavingTogetherExplainTheWholeFall) {
  // A leaks 3000 MiB/h; B and C hold 4 GiB each and end in the same second.
  LeakEngine e;
  e.SetCapacity(kCard, 2 * kGiB);
  for (double t = 0; t <= 3.5 * kHour; t += 10) {
    const double others = t < 3 * kHour ? 8 * 1024 : 0;
    e.Add(t, std::round(300 + MibA(t, 3000) + others) * kMiB);
    if (t == 3 * kHour) {
      e.NoteDeparture(t - 10, t, 4 * kGiB);
      e.NoteDeparture(t - 10, t, 4 * kGiB);
    }
  }
  const Assessment a = e.Assess();
  EXPECT_EQ(a.verdict, Verdict::kLeak) << AllEvidence(a);
  EXPECT_EQ(a.departures_explained, 2u);
  EXPECT_NEAR(a.departed_bytes, 8 * kGiB, 64 * kMiB);
  // No PIDs given: the sentence counts them and names no one.
  EXPECT_NE(AllEvidence(a).find("2 processes left this GPU, the last at +3h 0m holding 4.0 GiB: the 8.0 GiB their "
                                "falls freed is taken off the samples before each"),
            std::string::npos)
      << AllEvidence(a);
}

TEST(DepartedHolder, AHolderFoundGoneLaterLeftInTheSpanSinceItWasLastSeen) {
  // B was last listed at 2h 0m and found gone at 3h 0m (the daemon was down). At the first sample
  // after, the series fell by 5.0 GiB: B's 8 GiB less the 100 MiB of its context that stayed and
  // the 2.9 GiB A leaked in that hour.
  LeakEngine e;
  e.SetCapacity(kCard, 2 * kGiB);
  for (double t = 0; t <= 3.5 * kHour; t += 10) {
    if (t > 2 * kHour && t < 3 * kHour) continue;  // nothing recorded while down
    const double b = t < 3 * kHour ? 8 * 1024 : 100;
    e.Add(t, std::round(300 + MibA(t, 3000) + b) * kMiB);
    if (t == 3 * kHour) e.NoteDeparture(2 * kHour, t, 8 * kGiB, 4242);
  }
  const Assessment a = e.Assess();
  ASSERT_EQ(a.departures_explained, 1u) << AllEvidence(a);
  ASSERT_TRUE(a.last_departed);
  EXPECT_EQ(a.last_departed->pid, 4242);
  EXPECT_NE(AllEvidence(a).find("PID 4242 left this GPU between +2h 0m and +3h 0m holding 8.0 GiB: the fall of "
                                "5.0 GiB it left at +3h 0m"),
            std::string::npos)
      << AllEvidence(a);
}

TEST(DepartedHolder, MemoryLeftBehindIsNotExplainedAndItsLaterFreeingIsADrop) {
  // B leaves the list but its 8 GiB stay held (orphaned) for ten minutes: no fall follows the exit
  // within the match window, so nothing is shifted, and the later fall is an ordinary drop.
  LeakEngine e;
  e.SetCapacity(kCard);
  for (double t = 0; t <= 2 * kHour; t += 10) {
    const double mib = 300 + 8 * 1024 + 2 * 1024 + (t < 1.5 * kHour + 600 ? 8 * 1024 : 0);
    e.Add(t, mib * kMiB);
    if (t == 1.5 * kHour) e.NoteDeparture(1.5 * kHour - 10, t, 8 * kGiB);
  }
  const Assessment a = e.Assess();
  EXPECT_EQ(a.departures_explained, 0u);
  ASSERT_TRUE(a.segment_start_t);
  EXPECT_GT(*a.segment_start_t, 1.5 * kHour);
}

TEST(DepartedHolder, ASignificantTrendIsNeverCalledAPlateau) {
  // Without the departure, the window spans the fall: Mann–Kendall, or Sen's interval, still
  // finds the leak's trend, which must not be reported as "no sustained growth". The finding's timing: two hours and
  // eight minutes of history, then the exit, checked every minute for the next half hour.
  SharedGpu s;
  s.note = false;
  s.b_exit_s = 2 * kHour + 8 * 60;
  s.end_s = 2 * kHour + 40 * 60;
  s.check_every_s = 60;
  const SharedRun run = FeedShared(s);
  EXPECT_EQ(run.plateaus_with_significant_trend, 0);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("below where it began, having moved between"), std::string::npos)
      << AllEvidence(run.last);
}

TEST(DepartedHolder, APlateauWithASlowSignificantTrendSaysSo) {
  // A flat floor creeping at 4 MiB/h (one MiB every 15 minutes): Mann–Kendall finds it, far under
  // the leak rate, so the verdict stays plateau and the sentence names the trend.
  LeakEngine e;
  e.SetCapacity(kCard);
  for (double t = 0; t <= 5 * kHour; t += 10) e.Add(t, std::round(30 * 1024 + 4 * t / kHour) * kMiB);
  const Assessment a = e.Assess();
  ASSERT_EQ(a.verdict, Verdict::kPlateau) << AllEvidence(a);
  ASSERT_TRUE(a.trend);
  ASSERT_LT(a.trend->mk_p, 0.01) << AllEvidence(a);
  EXPECT_NE(AllEvidence(a).find("a significant trend, but under the 38 MiB/h a leak needs: no sustained growth"),
            std::string::npos)
      << AllEvidence(a);
}

TEST(DepartedHolder, ProcessRunwayCountsWhatOtherHoldersUse) {
  // One process leaking 600 MiB/h from 10 GiB on an 80 GiB card with 2 GiB reserved, while others
  // hold 20 GiB: the room is 80 − 2 − 20 − its peak, not 80 − 2 − its peak.
  LeakEngine alone, shared;
  alone.SetCapacity(kCard, 2 * kGiB);
  shared.SetCapacity(kCard, 2 * kGiB);
  shared.SetHeldByOthers(20 * kGiB);
  for (double t = 0; t <= 4 * kHour; t += 10) {
    const double bytes = std::round(10 * 1024 * (1 - std::exp(-t / 120)) + 600 * t / kHour) * kMiB;
    alone.Add(t, bytes);
    shared.Add(t, bytes);
  }
  const Assessment a = alone.Assess(), b = shared.Assess();
  ASSERT_EQ(a.verdict, Verdict::kLeak);
  ASSERT_EQ(b.verdict, Verdict::kLeak);
  ASSERT_TRUE(a.tto_s && b.tto_s && b.rate_bps && b.peak_bytes);
  EXPECT_NEAR(*b.tto_s, (kCard - 2 * kGiB - 20 * kGiB - *b.peak_bytes) / *b.rate_bps, 1);
  EXPECT_NEAR(*a.tto_s - *b.tto_s, 20 * kGiB / *b.rate_bps, 60);
  ASSERT_TRUE(b.held_by_others_bytes);
  EXPECT_NE(AllEvidence(b).find("after the 20.0 GiB other holders of this GPU use"), std::string::npos)
      << AllEvidence(b);
}

}  // namespace
}  // namespace vw::detection
