// Behaviour of the leak engine on synthetic series built here: healthy shapes must never be called
// a leak at any point of the run, leaks must be found with the right rate, start and runway.
#include "detection/leak_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <regex>
#include <string>

#include "core/time.h"
#include "core/units.h"

namespace vw::detection {
namespace {

constexpr double kHour = 3600;
constexpr double kCard = 80 * kGiB;

// A series in MiB as a function of time (seconds); samples are whole MiB like nvidia-smi's.
using Shape = std::function<double(double)>;

struct Trace {
  std::vector<Assessment> checks;  // one per check_every
  Assessment last;
};

// Feeds `shape` from 0 to `duration` every `dt` seconds with Gaussian noise (MiB), assessing every
// `check_every` seconds and at the end.
Trace Feed(LeakEngine& engine, const Shape& shape, double duration, double dt, double noise_mib = 0, uint64_t seed = 1,
           double check_every = 600) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 1);
  Trace run;
  double next_check = check_every;
  const auto n = static_cast<size_t>(std::floor(duration / dt));
  for (size_t i = 0; i <= n; ++i) {
    const double t = static_cast<double>(i) * dt;
    while (next_check < t) {
      run.checks.push_back(engine.Assess());
      next_check += check_every;
    }
    const double mib = std::max(0.0, std::round(shape(t) + noise_mib * noise(rng)));
    engine.Add(t, mib * kMiB);
  }
  run.last = engine.Assess();
  run.checks.push_back(run.last);
  return run;
}

LeakEngine CardEngine(double reserved = 0) {
  LeakEngine e;
  e.SetCapacity(kCard, reserved);
  return e;
}

// An engine with other settings on the same card.
LeakEngine CardEngine(const EngineConfig& config) {
  LeakEngine e(config);
  e.SetCapacity(kCard, 0);
  return e;
}

// The test of steady growth under a swinging load (imminent_fill.h) off, both its forms.
void TurnOffFillTest(EngineConfig& config) {
  config.fill_runway_seconds = 0;
  config.fill_swings_multiple = 0;
}

// Warm-up ramp from 300 MiB to `base` with a 2-minute time constant.
double Ramp(double t, double base) {
  return 300 + (base - 300) * (1 - std::exp(-t / 120));
}

int LeakChecks(const Trace& run) {
  int n = 0;
  for (const Assessment& a : run.checks) n += a.verdict == Verdict::kLeak;
  return n;
}

std::string AllEvidence(const Assessment& a) {
  std::string s;
  for (const std::string& e : a.evidence) s += e + "\n";
  return s;
}

Shape LeakAfterPlateau(double base, double rate_mib_h, double start) {
  return [=](double t) { return Ramp(t, base) + (t > start ? rate_mib_h * (t - start) / kHour : 0); };
}

TEST(LeakEngine, FlagsSteadyGrowthAfterPlateau) {
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, LeakAfterPlateau(20000, 200, 2 * kHour), 6 * kHour, 1.0, 3);
  const Assessment& a = run.last;
  ASSERT_EQ(a.verdict, Verdict::kLeak) << AllEvidence(a);
  ASSERT_TRUE(a.rate_bps && a.rate_lo_bps && a.rate_hi_bps && a.leak_start_t && a.trend);
  EXPECT_NEAR(*a.rate_bps * kHour / kMiB, 200, 10);
  EXPECT_NEAR(*a.leak_start_t, 2 * kHour, 20 * 60);
  EXPECT_LE(*a.rate_lo_bps, *a.rate_bps);  // whole-MiB floors tie many pairwise slopes
  EXPECT_GE(*a.rate_hi_bps, *a.rate_bps);
  EXPECT_LT(*a.rate_hi_bps - *a.rate_lo_bps, 0.1 * *a.rate_bps);
  const std::string ev = AllEvidence(a);
  EXPECT_NE(ev.find("Mann–Kendall z="), std::string::npos) << ev;
  EXPECT_NE(ev.find("every third"), std::string::npos) << ev;
  EXPECT_NE(ev.find("MiB/h"), std::string::npos) << ev;
  // Nothing before the leak began.
  for (const Assessment& c : run.checks) {
    if (c.end_t < 2 * kHour) {
      EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;
    }
  }
}

// On epoch-second times the live daemon wants clock times in the evidence ("Growing since 02:15
// UTC"), `analyze` of a trace without absolute times the offset from the first sample.
TEST(LeakEngine, EvidenceNamesMomentsAsOffsetsOrClockTimesAsConfigured) {
  constexpr double kStart = 1795996800;  // 2026-11-30T00:00:00Z
  using Style = EngineConfig::EvidenceTimes;
  struct Case {
    Style style;
    std::string suffix;  // after the clock time
  };
  for (const Case& c : {Case{Style::kOffset, ""}, Case{Style::kUtcClock, " UTC"}, Case{Style::kWallClock, ""}}) {
    EngineConfig config;
    config.evidence_times = c.style;
    LeakEngine e = CardEngine(config);
    const Shape shape = LeakAfterPlateau(20000, 200, 2 * kHour);
    for (double t = 0; t <= 6 * kHour; t += 5) e.Add(kStart + t, std::round(shape(t)) * kMiB);
    const Assessment a = e.Assess();
    ASSERT_EQ(a.verdict, Verdict::kLeak) << AllEvidence(a);
    ASSERT_TRUE(a.leak_start_t);
    const std::string ev = AllEvidence(a);
    const std::string when = c.style == Style::kOffset ? "+" + FormatDuration(*a.leak_start_t - kStart)
                                                       : FormatClock(*a.leak_start_t) + c.suffix;
    EXPECT_NE(ev.find("Growing since " + when + " at "), std::string::npos) << when << "\n" << ev;
    if (c.style != Style::kOffset) {
      EXPECT_EQ(when.rfind("2026-11-30 0", 0), 0u) << when;
      EXPECT_EQ(ev.find("since +"), std::string::npos) << ev;
    }
    if (c.style != Style::kUtcClock) {
      EXPECT_EQ(ev.find("UTC"), std::string::npos) << ev;
    }
  }
}

TEST(LeakEngine, PlateauWithEvalSpikesIsNotALeak) {
  LeakEngine e = CardEngine();
  // +4 GiB for 5 minutes every 30 minutes, +1.5 GiB checkpoint for 2 minutes every 50 minutes.
  auto shape = [](double t) {
    double v = Ramp(t, 30000);
    if (t > 900 && std::fmod(t, 1800) < 300) v += 4096;
    if (t > 900 && std::fmod(t + 700, 3000) < 120) v += 1536;
    return v;
  };
  const Trace run = Feed(e, shape, 9 * kHour, 2.0, 5);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_EQ(run.last.verdict, Verdict::kPlateau) << AllEvidence(run.last);
  ASSERT_TRUE(run.last.peak_bytes);
  EXPECT_GE(*run.last.peak_bytes, (30000 + 4096 - 20) * kMiB);  // the peak keeps the spikes
}

TEST(LeakEngine, AllocatorStaircaseThatThinsOutIsSettling) {
  LeakEngine e = CardEngine();
  // Records of a stationary demand: step k at 120·(e^{k/4} − 1) s, so steps thin out like ln t;
  // sizes cycle 2, 20, 20, 2, 64 MiB.
  const double sizes[] = {2, 20, 20, 2, 64};
  auto shape = [&](double t) {
    double v = Ramp(t, 12000);
    for (int k = 1; 120 * (std::exp(k / 4.0) - 1) <= t; ++k) v += sizes[k % 5];
    return v;
  };
  const Trace run = Feed(e, shape, 10 * kHour, 1.0, 2);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("settling, not a leak"), std::string::npos) << AllEvidence(run.last);
}

TEST(LeakEngine, OneOffModelReloadStepIsNotALeak) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) { return Ramp(t, 25000) + (t > 4 * kHour ? 3072 : 0); };
  const Trace run = Feed(e, shape, 9 * kHour, 1.0, 4);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_NE(run.last.verdict, Verdict::kLeak);
}

TEST(LeakEngine, ExponentialSettlingIsNotALeak) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) { return Ramp(t, 20000) + 6000 * (1 - std::exp(-t / (1.5 * kHour))); };
  const Trace run = Feed(e, shape, 10 * kHour, 1.0, 3);
  EXPECT_EQ(LeakChecks(run), 0);
}

TEST(LeakEngine, PreallocatedPoolAt95PercentIsAPlateau) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) { return Ramp(t, 0.95 * 81920); };
  const Trace run = Feed(e, shape, 5 * kHour, 1.0, 1);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_EQ(run.last.verdict, Verdict::kPlateau);
  EXPECT_NE(AllEvidence(run.last).find("pre-allocated"), std::string::npos) << AllEvidence(run.last);
}

TEST(LeakEngine, APlateauSaysHowFarItsFloorStrayed) {
  // A floor that never moved is "at" its level (a real 60 s log held 10.3 GiB to the MiB), one that
  // moved a little is "within" so much of its low, and a wide one "between" its two ends.
  auto plateau_sentence = [](double noise_mib) {
    LeakEngine e = CardEngine();
    const Trace run = Feed(
        e, [](double t) { return std::min(40000.0, 40000 * t / 300); }, 5 * kHour, 1.0, noise_mib);
    EXPECT_EQ(run.last.verdict, Verdict::kPlateau) << AllEvidence(run.last);
    return AllEvidence(run.last);
  };
  EXPECT_NE(plateau_sentence(0).find("The floor stayed at 39.1 GiB over the last"), std::string::npos)
      << plateau_sentence(0);
  EXPECT_NE(plateau_sentence(5).find("The floor stayed within "), std::string::npos) << plateau_sentence(5);
}

TEST(LeakEngine, OscillatingServingLoadIsNotALeak) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) { return Ramp(t, 30000) + 4000 * (1 + std::sin(2 * M_PI * t / 2400)); };
  const Trace run = Feed(e, shape, 10 * kHour, 1.0, 10);
  EXPECT_EQ(LeakChecks(run), 0);
}

TEST(LeakEngine, LeakUnderOscillatingLoadIsFoundWithTheCycleRemoved) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) {
    return Ramp(t, 30000) + 3000 * (1 + std::sin(2 * M_PI * t / 1800)) + (t > kHour ? 1000 * (t - kHour) / kHour : 0);
  };
  const Trace run = Feed(e, shape, 7 * kHour, 1.0, 5);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("period of about 30m"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 1000, 150);
}

TEST(LeakEngine, LeakUnderIrregularOscillationIsFoundOnTheEnvelope) {
  // The load's period wanders between about 17 and 60 minutes: no single cycle to remove, but the
  // troughs still rise.
  LeakEngine e = CardEngine();
  auto shape = [](double t) {
    const double phase = t / 1800 + 1.5 * std::sin(2 * M_PI * t / 9000);
    return Ramp(t, 30000) + 3000 * (1 + std::sin(2 * M_PI * phase)) + (t > kHour ? 1000 * (t - kHour) / kHour : 0);
  };
  const Trace run = Feed(e, shape, 7 * kHour, 1.0, 5);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("lower envelope"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 1000, 200);
}

// A serving load: a KV-cache cycle of `period` seconds (0 to `amp` MiB) plus batch-size swings
// (a level uniform in [0, swing] MiB held for exponentially distributed times, mean 120 s), on a
// 30 GiB base, with a leak of `leak_mib_h` MiB/h from `leak_start` seconds on.
Shape ServingLoad(double amp, double period, double swing, double leak_mib_h, uint64_t seed, double duration,
                  double leak_start = kHour) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> hold(1.0 / 120);
  std::uniform_real_distribution<double> level(0, swing);
  auto swings = std::make_shared<std::vector<std::pair<double, double>>>();
  for (double t = 0; t < duration + 600; t += hold(rng)) swings->push_back({t, std::round(level(rng))});
  return [=](double t) {
    auto it = std::upper_bound(swings->begin(), swings->end(), std::make_pair(t, 1e300));
    const double s = it == swings->begin() ? 0 : std::prev(it)->second;
    return Ramp(t, 30000) + 0.5 * amp * (1 + std::sin(2 * M_PI * t / period)) + s +
           (t > leak_start ? leak_mib_h * (t - leak_start) / kHour : 0);
  };
}

TEST(LeakEngine, LeakUnderServingSwingsIsFoundWithTheCycleRemoved) {
  // A 6 GiB cycle every 25 minutes with swings up to 3 GiB hide a 400 MiB/h leak from the floor
  // and its lower envelopes; with the cycle removed the growth shows.
  LeakEngine e = CardEngine();
  const double duration = 9 * kHour;
  const Trace run = Feed(e, ServingLoad(6000, 1500, 3000, 400, 3, duration), duration, 1.0, 5);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("period of about 25m"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("cycle removed"), std::string::npos);
  EXPECT_NE(AllEvidence(run.last).find("on the 10-minute means of the cycle-free floor"), std::string::npos);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 400, 120);
  ASSERT_TRUE(run.last.rate_lo_bps && run.last.rate_hi_bps);
  EXPECT_LT(*run.last.rate_lo_bps * kHour / kMiB, 400);
  EXPECT_GT(*run.last.rate_hi_bps * kHour / kMiB, 400);
}

// A leak of 1400 MiB/h that begins an hour into a serving job, under a 5 GiB cycle every 17 minutes
// and swings up to 2.5 GiB: in the job's first three settled hours the young-job rules ask a steady
// pace that the swings break, so it is no leak yet at 2h 50m; but the cycle-free floor rose clearly
// (p ≤ watch_alpha) and the assessment says so, with the rate of the window it rose over (which
// starts before the leak, so under 1400). With watch_alpha 0 the same samples give the same
// assessment without it. A healthy load under the same cycle and swings never carries it.
TEST(LeakEngine, RiseUnderServingSwingsTooEarlyForALeakIsWorthWatching) {
  const double start = kHour, duration = 2 * kHour + 50 * 60;
  const Shape shape = ServingLoad(5000, 1020, 2500, 1400, 1, duration, start);
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, duration, 1.0, 5, 1, 600);
  const std::string ev = AllEvidence(run.last);
  ASSERT_NE(run.last.verdict, Verdict::kLeak) << ev;
  ASSERT_TRUE(run.last.load_rise_bps) << ev;
  EXPECT_GT(*run.last.load_rise_bps * kHour / kMiB, 700) << ev;
  EXPECT_LT(*run.last.load_rise_bps * kHour / kMiB, 1400) << ev;
  const std::regex note(
      R"(Worth watching: the load oscillates with a period of about 1[67]m [0-9]+s \([0-9.]+ GiB from trough to peak\), )"
      R"(and with it removed the floor averaged over each 10m 0s rose over the last 2h [0-9]+m at ([0-9]+) MiB/h )"
      R"(\(Sen's slope; Mann–Kendall z=[0-9.]+, p<0.001\)\. Under a load that swings that is not yet enough for a )"
      R"(leak verdict; look again in an hour or two\.)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ev, m, note)) << ev;
  EXPECT_NEAR(std::stod(m[1].str()), *run.last.load_rise_bps * kHour / kMiB, 1) << ev;
  for (const Assessment& c : run.checks) {
    if (c.end_t <= start) {
      EXPECT_FALSE(c.load_rise_bps) << "at " << c.end_t << ": " << AllEvidence(c);
    }
  }

  EngineConfig quiet;
  quiet.watch_alpha = 0;
  LeakEngine without = CardEngine(quiet);
  const Trace same = Feed(without, shape, duration, 1.0, 5, 1, 600);
  EXPECT_EQ(same.last.verdict, run.last.verdict);
  EXPECT_FALSE(same.last.load_rise_bps);
  ASSERT_EQ(same.last.evidence.size() + 1, run.last.evidence.size()) << AllEvidence(same.last);
  for (size_t i = 0; i < same.last.evidence.size(); ++i) EXPECT_EQ(same.last.evidence[i], run.last.evidence[i]);

  for (uint64_t seed : {1, 2, 3}) {
    LeakEngine healthy = CardEngine();
    const Trace h = Feed(healthy, ServingLoad(5000, 1020, 2500, 0, seed, 6 * kHour), 6 * kHour, 1.0, 5, seed, 300);
    for (const Assessment& c : h.checks) {
      EXPECT_FALSE(c.load_rise_bps) << seed << " at " << c.end_t << ": " << AllEvidence(c);
      EXPECT_NE(c.verdict, Verdict::kLeak) << seed << " at " << c.end_t;
    }
  }
}

TEST(LeakEngine, ATrendShortOfTheSwingingFloorsLevelSaysWhichLevelItMissed) {
  // A fast leak from 24 minutes on under a 26-minute cycle and batch swings: for a while the floor's
  // Mann–Kendall p lies between the swinging floor's level (0.001) and the usual one (0.01). The
  // evidence must then name the level it missed, never call p=0.003 "no significant trend".
  const double duration = 1.6 * kHour;
  const Shape shape = ServingLoad(1400, 1560, 1100, 3800, 2, duration, 0.4 * kHour);
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, duration, 1.0, 7, 2, 60);
  const std::regex plain(R"(Mann–Kendall finds no significant trend \(z=-?[0-9.]+, p=([0-9.]+)\))");
  const std::regex stricter(
      R"(Mann–Kendall's trend \(z=[0-9.]+, p=([0-9.]+)\) is not significant at p<0.001, the level a floor that swings )"
      R"(with a load is held to: settling, not a leak\.)");
  int named = 0;
  for (const Assessment& c : run.checks) {
    for (const std::string& ev : c.evidence) {
      std::smatch m;
      if (std::regex_search(ev, m, plain)) EXPECT_GE(std::stod(m[1].str()), 0.01) << ev;
      if (std::regex_search(ev, m, stricter)) {
        ++named;
        EXPECT_GE(std::stod(m[1].str()), 0.001) << ev;
        EXPECT_LT(std::stod(m[1].str()), 0.01) << ev;
      }
    }
  }
  EXPECT_GT(named, 0);
}

TEST(LeakEngine, LateLeakUnderServingSwingsIsFoundOnAnIntermediateWindow) {
  // A leak that begins 5 h into an 11 h serving job: the 11 h window starts on the flat part and
  // fails the keeps-going tests, the 3 h window holds too few block means for the strict level;
  // the intermediate windows between them lie on the growth.
  const double duration = 11 * kHour;
  const Shape shape = ServingLoad(6000, 1500, 3000, 500, 1, duration, 5 * kHour);
  LeakEngine with = CardEngine();
  const Trace found = Feed(with, shape, duration, 1.0, 5);
  ASSERT_EQ(found.last.verdict, Verdict::kLeak) << AllEvidence(found.last);
  EXPECT_NE(AllEvidence(found.last).find("cycle removed"), std::string::npos) << AllEvidence(found.last);
  EXPECT_NEAR(*found.last.rate_bps * kHour / kMiB, 500, 250);
  EXPECT_GE(*found.last.leak_start_t, 4 * kHour);
  // The same samples with the intermediate windows turned off: found on the window from where the
  // growth began; with that off too, only on the rising lows of the cycle-free floor
  // (new_level.h); and with those off as well, not found.
  auto found_by = [&](const EngineConfig& config, const std::string& sentence) {
    LeakEngine e = CardEngine(config);
    const Trace run = Feed(e, shape, duration, 1.0, 5);
    const std::string ev = AllEvidence(run.last);
    ASSERT_EQ(run.last.verdict, Verdict::kLeak) << ev;
    EXPECT_NE(ev.find(sentence), std::string::npos) << ev;
    EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 500, 250) << ev;
  };
  EngineConfig no_intermediate;
  no_intermediate.oscillation_window_ratio = 0;
  found_by(no_intermediate, "That window starts where the growth began");
  no_intermediate.onset_alpha = 0;
  found_by(no_intermediate, "lowest floor of each 15m 0s block rose");
  no_intermediate.new_level_max_recent_blocks = 0;
  no_intermediate.rising_lows_alpha = 0;
  LeakEngine without(no_intermediate);
  without.SetCapacity(kCard);
  const Trace missed = Feed(without, shape, duration, 1.0, 5);
  EXPECT_NE(missed.last.verdict, Verdict::kLeak) << AllEvidence(missed.last);
}

TEST(LeakEngine, LeakThatJustBeganUnderServingSwingsIsANewLevel) {
  // 5000 MiB/h from 6 h on under a 6 GiB cycle every 45 minutes with swings up to 1.5 GiB: in its
  // first 50 minutes every window straddles the start (or holds under three periods), but the cycle-free
  // floor's lows have risen above every earlier low.
  const double start = 6 * kHour, duration = 7 * kHour;
  for (uint64_t seed : {1, 2}) {
    const Shape shape = ServingLoad(6000, 2700, 1500, 5000, seed, duration, start);
    LeakEngine with = CardEngine();
    // 50 minutes in, and the 10 minutes a leak on a swinging floor must hold (swing_persist_seconds).
    const Trace found = Feed(with, shape, start + 3600, 1.0, 5, 1, 300);
    ASSERT_EQ(found.last.verdict, Verdict::kLeak) << seed << ": " << AllEvidence(found.last);
    const std::string ev = AllEvidence(found.last);
    EXPECT_NE(ev.find("a level it never reached before"), std::string::npos) << ev;
    EXPECT_NE(ev.find("period of about 4"), std::string::npos) << ev;  // 44 or 45 minutes
    EXPECT_NEAR(*found.last.rate_bps * kHour / kMiB, 5000, 2500) << ev;
    EXPECT_GE(*found.last.leak_start_t, start - 1800) << ev;
    EXPECT_TRUE(found.last.tto_s) << ev;
    for (const Assessment& c : found.checks) {
      if (c.end_t < start) {
        EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;  // nothing before the leak
      }
    }
    // Without the new-level test (and the ramp test, which asks the same of a longer rise, and the
    // test of steady growth past the swings, which finds it too) the same samples are not a leak yet.
    EngineConfig off;
    off.new_level_max_recent_blocks = 0;
    off.ramp_max_blocks = 0;
    TurnOffFillTest(off);
    LeakEngine without(off);
    without.SetCapacity(kCard);
    const Trace missed = Feed(without, shape, start + 3600, 1.0, 5, 1, 300);
    EXPECT_EQ(LeakChecks(missed), 0) << AllEvidence(missed.last);
  }
}

// Under a load that swings, a leak found on all the data must also be found on the data up to
// swing_persist_seconds ago; a floor that does not swing is called at once. (The test of steady
// growth past the swings is off here: it finds this growth on the data 10 minutes before too, so
// the new level would be called at once.)
TEST(LeakEngine, ALeakOnASwingingFloorMustHoldForTenMinutes) {
  const double start = 6 * kHour;
  const Shape swinging = ServingLoad(6000, 2700, 1500, 5000, 1, 7 * kHour, start);
  EngineConfig no_fill;
  TurnOffFillTest(no_fill);
  EngineConfig at_once = no_fill;
  at_once.swing_persist_seconds = 0;
  // 50 minutes in the new level is found on all the data, not yet on the data up to 10 minutes ago.
  LeakEngine held_back = CardEngine(no_fill);
  const Assessment early = Feed(held_back, swinging, start + 3000, 1.0, 5, 1, 300).last;
  const std::string ev = AllEvidence(early);
  EXPECT_NE(early.verdict, Verdict::kLeak) << ev;
  EXPECT_FALSE(early.rate_bps) << ev;
  EXPECT_TRUE(early.summary.empty()) << ev;
  EXPECT_NE(ev.find("On all the data the tests find a leak: the load moved to a level"), std::string::npos) << ev;
  EXPECT_NE(ev.find("called only when the data up to 10m 0s earlier shows it too"), std::string::npos) << ev;
  LeakEngine immediate = CardEngine(at_once);
  EXPECT_EQ(Feed(immediate, swinging, start + 3000, 1.0, 5, 1, 300).last.verdict, Verdict::kLeak);
  // Ten minutes later both say leak.
  LeakEngine later = CardEngine(no_fill);
  EXPECT_EQ(Feed(later, swinging, start + 3600, 1.0, 5, 1, 300).last.verdict, Verdict::kLeak);
  // A steady floor: the first leak check is the same with and without the rule.
  auto first_leak = [](const Trace& run) {
    for (const Assessment& a : run.checks)
      if (a.verdict == Verdict::kLeak) return a.end_t;
    return -1.0;
  };
  const Shape steady = LeakAfterPlateau(20000, 400, 2 * kHour);
  LeakEngine steady_default = CardEngine(), steady_at_once = CardEngine(at_once);
  const double found = first_leak(Feed(steady_default, steady, 5 * kHour, 1.0, 3, 1, 300));
  EXPECT_GT(found, 2 * kHour);
  EXPECT_EQ(found, first_leak(Feed(steady_at_once, steady, 5 * kHour, 1.0, 3, 1, 300)));
}

TEST(LeakEngine, LeakThatRampedForAnHourUnderServingSwingsIsFound) {
  // 2500 MiB/h under a 6 GiB cycle every 25 minutes with swings up to 1.5 GiB, 1h 25m after it
  // began 3 or 4 hours into the job: the windows straddle its start, and each recent low is only a
  // block's growth above the one before (no new level), but the last two stand far above every low
  // before the rise.
  for (const double start : {3 * kHour, 4 * kHour}) {
    for (uint64_t seed : {1, 2}) {
      const Shape shape = ServingLoad(6000, 1500, 1500, 2500, seed, start + 2 * kHour, start);
      LeakEngine with = CardEngine();
      // 75 minutes in, and the 10 minutes a leak on a swinging floor must hold.
      const Trace found = Feed(with, shape, start + 5100, 1.0, 5, 1, 300);
      const std::string ev = AllEvidence(found.last);
      ASSERT_EQ(found.last.verdict, Verdict::kLeak) << start << " " << seed << ": " << ev;
      EXPECT_NE(ev.find("has been rising to a level it never reached before"), std::string::npos) << ev;
      EXPECT_NE(ev.find("period of about 2"), std::string::npos) << ev;  // 24 or 25 minutes
      EXPECT_NEAR(*found.last.rate_bps * kHour / kMiB, 2500, 1000) << ev;
      EXPECT_NEAR(*found.last.leak_start_t, start, 1800) << ev;
      for (const Assessment& c : found.checks) {
        if (c.end_t < start) {
          EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;  // nothing before the leak
        }
      }
      // Without the ramp test (and the test of steady growth past the swings, which finds this
      // one too) the same samples are not a leak yet.
      EngineConfig off;
      off.ramp_max_blocks = 0;
      TurnOffFillTest(off);
      LeakEngine without(off);
      without.SetCapacity(kCard);
      const Trace missed = Feed(without, shape, start + 5100, 1.0, 5, 1, 300);
      EXPECT_NE(missed.last.verdict, Verdict::kLeak) << start << " " << seed << ": " << AllEvidence(missed.last);
    }
  }
}

// 3000 MiB/h from 1h 20m under a 3 GiB cycle every 20 minutes with swings up to 500 MiB: the job
// is in its first three settled hours, where the young-job rules and the three periods the
// cycle-free windows need hold back every other test. The growth keeps one pace and leaves the
// swings far behind. On a 40 GiB card memory runs out within two hours, and at 2h 20m that is a
// leak. On an 80 GiB card (hours of room) the rise is past the swings at 2h 0m, while the growth
// (40 minutes) is short next to the stretch of swings before it; at 2h 20m, an hour of growth
// after about as long a stretch, that form no longer asks and the history rules have not yet
// called it. Without that rule (fill_runway_seconds and fill_swings_multiple 0) the same samples
// are no leak then. A healthy load never gets it.
TEST(LeakEngine, FastSteadyGrowthPastServingSwingsIsALeakInAYoungJob) {
  const double start = 80 * 60, seen = start + kHour;
  const Shape leak = ServingLoad(3072, 1200, 500, 3000, 1, seen, start);
  auto run_on = [&](const Shape& shape, double card, const EngineConfig& config, double until = 0) {
    LeakEngine e(config);
    e.SetCapacity(card);
    return Feed(e, shape, until > 0 ? until : seen, 1.0, 5, 1, 300);  // 0: until `seen`
  };
  const Trace found = run_on(leak, 40 * kGiB, {});
  ASSERT_EQ(found.last.verdict, Verdict::kLeak) << AllEvidence(found.last);
  const std::string ev = AllEvidence(found.last);
  EXPECT_NE(ev.find("Leak: memory runs out soon"), std::string::npos) << ev;
  EXPECT_NE(ev.find("times the range the load's swings covered"), std::string::npos) << ev;
  EXPECT_NE(ev.find("period of about 20m"), std::string::npos) << ev;
  EXPECT_NE(ev.find("the card is full in under 2h 0m either way"), std::string::npos) << ev;
  EXPECT_NEAR(*found.last.rate_bps * kHour / kMiB, 3000, 600) << ev;
  EXPECT_NEAR(*found.last.leak_start_t / 60, start / 60, 15) << ev;
  ASSERT_TRUE(found.last.tto_s) << ev;
  EXPECT_LT(*found.last.tto_s, 2 * kHour) << ev;
  EXPECT_GT(*found.last.tto_s, 30 * 60) << ev;
  EXPECT_EQ(found.last.summary.rfind("Leak: memory runs out soon", 0), 0u) << found.last.summary;
  for (const Assessment& c : found.checks) {
    if (c.end_t < start) {
      EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;
    }
  }
  EngineConfig off;
  TurnOffFillTest(off);
  EXPECT_EQ(LeakChecks(run_on(leak, 40 * kGiB, off)), 0);
  // 43 GiB of room: hours at this rate. A leak all the same 40 minutes in, past the swings; the
  // runway form alone does not call it.
  const double early = start + 40 * 60;
  const Trace roomy = run_on(leak, 80 * kGiB, {}, early);
  ASSERT_EQ(roomy.last.verdict, Verdict::kLeak) << AllEvidence(roomy.last);
  const std::string roomy_ev = AllEvidence(roomy.last);
  EXPECT_NE(roomy_ev.find("Leak: the floor has risen past the load's swings"), std::string::npos) << roomy_ev;
  EXPECT_NE(roomy_ev.find("leaves the load's own swings behind"), std::string::npos) << roomy_ev;
  EXPECT_EQ(roomy_ev.find("the card is full in under"), std::string::npos) << roomy_ev;
  ASSERT_TRUE(roomy.last.tto_s);
  EXPECT_GT(*roomy.last.tto_s, 5 * kHour) << roomy_ev;
  EngineConfig soon_only;
  soon_only.fill_swings_multiple = 0;
  EXPECT_EQ(LeakChecks(run_on(leak, 80 * kGiB, soon_only, early)), 0);
  EXPECT_EQ(run_on(leak, 40 * kGiB, soon_only).last.verdict, Verdict::kLeak);
  const Trace later = run_on(leak, 80 * kGiB, {});
  EXPECT_NE(later.last.verdict, Verdict::kLeak) << AllEvidence(later.last);
  EXPECT_EQ(AllEvidence(later.last).find("risen past the load's swings"), std::string::npos);
  for (uint64_t seed : {1, 2, 3}) {
    const Trace healthy = run_on(ServingLoad(3072, 1200, 500, 0, seed, 3 * kHour), 35 * kGiB, {});
    EXPECT_EQ(LeakChecks(healthy), 0) << "seed " << seed << ": " << AllEvidence(healthy.last);
  }
}

TEST(LeakEngine, HealthyServingSwingsAreNeverALeak) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    LeakEngine e = CardEngine();
    const double duration = 10 * kHour;
    const double period = 600 + 600.0 * static_cast<double>(seed);
    const Trace run = Feed(e, ServingLoad(8000, period, 4000, 0, seed, duration), duration, 1.0, 5);
    EXPECT_EQ(LeakChecks(run), 0) << "seed " << seed << ": " << AllEvidence(run.last);
  }
}

TEST(LeakEngine, ShortTraceIsInsufficientData) {
  LeakEngine e = CardEngine();
  EXPECT_EQ(e.Assess().verdict, Verdict::kInsufficientData);
  const Trace run = Feed(e, LeakAfterPlateau(20000, 5000, 0), 5 * 60, 1.0);
  EXPECT_EQ(run.last.verdict, Verdict::kInsufficientData);
  // 301 samples over 5 minutes are short of time, not of samples: the evidence says which.
  EXPECT_NE(
      AllEvidence(run.last).find("The samples span only 5m 0s (301 samples); the trend tests need 15m 0s or more."),
      std::string::npos)
      << AllEvidence(run.last);
  LeakEngine few = CardEngine();
  for (int i = 0; i < 5; ++i) few.Add(i * 600.0, 1e9);
  const Assessment sparse = few.Assess();
  EXPECT_EQ(sparse.verdict, Verdict::kInsufficientData);
  EXPECT_NE(AllEvidence(sparse).find("Only 5 samples (over 40m 0s); the trend tests need at least 10."),
            std::string::npos)
      << AllEvidence(sparse);
  LeakEngine both = CardEngine();
  for (int i = 0; i < 3; ++i) both.Add(i * 60.0, 1e9);
  EXPECT_NE(AllEvidence(both.Assess())
                .find("Only 3 samples over 2m 0s; the trend tests need at least 10 samples over 15m 0s or more."),
            std::string::npos)
      << AllEvidence(both.Assess());
}

TEST(LeakEngine, FastRampIsWarmup) {
  LeakEngine e = CardEngine();
  // 30 GiB approached with a 4-minute time constant: still ramping fast at 17 minutes.
  auto shape = [](double t) { return 300 + 30720 * (1 - std::exp(-t / 240)); };
  const Trace run = Feed(e, shape, 17 * 60, 1.0);
  EXPECT_EQ(run.last.verdict, Verdict::kWarmup) << AllEvidence(run.last);
  EXPECT_FALSE(run.last.settled_at);
  EXPECT_NE(AllEvidence(run.last).find("Still warming up"), std::string::npos);
}

// Settled, but under a trend test's minimum window: still rising is warm-up and says so, flat is
// a plateau so far.
TEST(LeakEngine, RiseSinceSettlingInTooShortAWindowIsWarmupAndSaysWhy) {
  LeakEngine rising = CardEngine();
  const Trace r = Feed(rising, LeakAfterPlateau(20000, 3000, 20 * 60), 35 * 60, 1.0, 3);
  ASSERT_EQ(r.last.verdict, Verdict::kWarmup) << AllEvidence(r.last);
  EXPECT_NE(AllEvidence(r.last).find("too short for a trend test (at least 30m 0s), and it has risen by +"),
            std::string::npos)
      << AllEvidence(r.last);
  EXPECT_NE(AllEvidence(r.last).find("since, more than 64 MiB: still warming up."), std::string::npos)
      << AllEvidence(r.last);
  LeakEngine flat = CardEngine();
  const Trace f = Feed(
      flat, [](double t) { return Ramp(t, 20000); }, 35 * 60, 1.0, 3);
  ASSERT_EQ(f.last.verdict, Verdict::kPlateau) << AllEvidence(f.last);
  EXPECT_NE(AllEvidence(f.last).find("too short for a trend test (at least 30m 0s)."), std::string::npos)
      << AllEvidence(f.last);
}

// A floor that rises steadily from the start (36 GiB/h, out of memory within two hours) passes
// the settling gate for rising steadily, at a point that may be a moment old: with no settled data
// to speak of it is never a plateau (a daemon learns a workload's baseline from one), but still
// rising, and says so.
TEST(LeakEngine, SteadyFastRiseIsNeverAPlateauBeforeItsFirstTrendTest) {
  LeakEngine e = CardEngine();
  auto shape = [](double t) { return 14336 + 36864 * t / kHour; };
  const Trace run = Feed(e, shape, 29 * 60, 1.0, 4, 1, 10);
  int plateaus = 0, rising = 0;
  for (const Assessment& a : run.checks) {
    plateaus += a.verdict == Verdict::kPlateau ? 1 : 0;
    for (const std::string& ev : a.evidence) rising += ev.find(": still rising.") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(plateaus, 0);
  EXPECT_GT(rising, 0) << "the evidence says why it is not a plateau";
}

// Sampled once a minute, an hour of data makes buckets of 4 minutes: too few in a window for a
// trend test. A floor rising 20 GiB/h steadily over that hour is still rising, not a plateau ("no
// action"); a flat one (48 minutes of it) is a plateau so far. Either way the evidence says why there is no test.
TEST(LeakEngine, TooFewBucketsForATrendTestIsWarmupWhileTheFloorRises) {
  for (double dt : {40.0, 60.0}) {
    LeakEngine rising = CardEngine();
    const Trace r = Feed(
        rising, [](double t) { return 10000 + 20000 * t / kHour; }, 59 * 60, dt);
    ASSERT_EQ(r.last.verdict, Verdict::kWarmup) << dt << ": " << AllEvidence(r.last);
    EXPECT_NE(AllEvidence(r.last).find("Too few buckets in the settled data for a trend test ("), std::string::npos)
        << AllEvidence(r.last);
    EXPECT_NE(AllEvidence(r.last).find("a window needs 12), and it has risen by +"), std::string::npos)
        << AllEvidence(r.last);
    for (const Assessment& a : r.checks) EXPECT_NE(a.verdict, Verdict::kPlateau) << dt << ": " << AllEvidence(a);
    LeakEngine flat = CardEngine();
    const Trace f = Feed(
        flat, [](double) { return 10000.0; }, 48 * 60, dt);
    ASSERT_EQ(f.last.verdict, Verdict::kPlateau) << dt << ": " << AllEvidence(f.last);
    EXPECT_NE(AllEvidence(f.last).find("a window needs 12)."), std::string::npos) << AllEvidence(f.last);
  }
}

TEST(LeakEngine, SteadyRiseInAYoungJobNeedsLessRateOverLongerWindows) {
  // 150 MiB/h from the start. In the first three settled hours the interval's lower end must reach
  // 500 MiB/h over 1 h, falling with the square of the window: 222 MiB/h over 1h 30m (not yet),
  // 87 MiB/h over 2h 24m (a leak, where three settled hours used to be needed).
  auto shape = [](double t) { return Ramp(t, 10000) + 150 * t / kHour; };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 1.6 * kHour, 1.0, 2);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("young job"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("above 500 MiB/h over 1h 0m, 125 MiB/h over 2h 0m"), std::string::npos)
      << AllEvidence(run.last);
  // Held back by the young-job rule: whatever its pace, a leak verdict may come three settled hours
  // after the floor settled. The leak verdict carries no such time.
  ASSERT_TRUE(run.last.held_until_t && run.last.settled_at) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.held_until_t - *run.last.settled_at, 3 * kHour, 60);
  LeakEngine later = CardEngine();
  const Trace longer = Feed(later, shape, 2.5 * kHour, 1.0, 2);
  ASSERT_EQ(longer.last.verdict, Verdict::kLeak) << AllEvidence(longer.last);
  EXPECT_NEAR(*longer.last.rate_bps * kHour / kMiB, 150, 10);
  EXPECT_FALSE(longer.last.held_until_t);
}

TEST(LeakEngine, ASettlingCurveThatSlowsByThirdsIsNotALeakInAYoungJob) {
  // A young job's floor settling with a 3.2 h time constant: over an hour the second half keeps
  // 86 % of the first half's pace (e^(−0.5/3.2)), but the last third's rate (its level centres 0.58
  // of the window after the first's) only 83 % of the first's (e^(−0.58/3.2)): the last third is
  // what tells the curve from a fast leak.
  auto shape = [](double t) { return Ramp(t, 20000) + 3500 * (1 - std::exp(-t / (3.2 * kHour))); };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 2 * kHour, 1.0, 2, 1, 300);
  EXPECT_EQ(LeakChecks(run), 0) << AllEvidence(run.last);
  // Without the thirds rule it is called a leak.
  EngineConfig halves_only;
  halves_only.young_third_ratio = 0;
  LeakEngine loose = CardEngine(halves_only);
  EXPECT_GT(LeakChecks(Feed(loose, shape, 2 * kHour, 1.0, 2, 1, 300)), 0);
}

TEST(LeakEngine, FastLeakInAYoungJobIsFoundBeforeAFullHourHasSettled) {
  // 1 GiB/h from the start. The window of a young job must be at least 85 % of the first one
  // (51 minutes): 72 minutes into the job, 55 minutes after the floor settled, that holds.
  auto shape = [](double t) { return Ramp(t, 10000) + 1024 * t / kHour; };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 72 * 60, 1.0, 2);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  ASSERT_TRUE(run.last.settled_at);
  // The window that passed is under the hour (the fitted line runs from where the ramp joined it).
  const auto passed = std::find_if(run.last.window_fits.begin(), run.last.window_fits.end(),
                                   [](const TrendFit& f) { return f.passed; });
  ASSERT_NE(passed, run.last.window_fits.end()) << AllEvidence(run.last);
  EXPECT_LT(passed->window_seconds, 0.98 * kHour);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 1024, 30);
}

TEST(LeakEngine, SlowStepGrowthNeedsFiveSettledHours) {
  // 45 MiB/h from the start in 20 MiB steps: as fast as a caching allocator's staircase still steps
  // hours into a run, so it is a leak only once five settled hours show it keeps going (some sixth
  // of the window stays flat, so the steady-growth exception does not apply).
  auto shape = [](double t) { return Ramp(t, 10000) + 20 * std::floor(45 * (t + 600) / kHour / 20); };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 4.5 * kHour, 1.0, 2);
  EXPECT_EQ(LeakChecks(run), 0);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("called a leak only after 5h 0m of settled data"), std::string::npos)
      << AllEvidence(run.last);
  LeakEngine later = CardEngine();
  const Trace longer = Feed(later, shape, 7 * kHour, 1.0, 2);
  ASSERT_EQ(longer.last.verdict, Verdict::kLeak) << AllEvidence(longer.last);
  EXPECT_NEAR(*longer.last.rate_bps * kHour / kMiB, 45, 5);
  // A faster leak in the same steps is not held back by this rule.
  LeakEngine fast = CardEngine();
  auto faster = [](double t) { return Ramp(t, 10000) + 20 * std::floor(130 * (t + 600) / kHour / 20); };
  EXPECT_EQ(Feed(fast, faster, 4.5 * kHour, 1.0, 2).last.verdict, Verdict::kLeak);
}

TEST(LeakEngine, SameAnswerAt100msAnd10sSampling) {
  const Shape shape = LeakAfterPlateau(16000, 300, 1.5 * kHour);
  LeakEngine fast = CardEngine(), slow = CardEngine();
  const Trace a = Feed(fast, shape, 6 * kHour, 0.1);
  const Trace b = Feed(slow, shape, 6 * kHour, 10.0);
  ASSERT_EQ(a.last.verdict, Verdict::kLeak) << AllEvidence(a.last);
  ASSERT_EQ(b.last.verdict, Verdict::kLeak) << AllEvidence(b.last);
  EXPECT_NEAR(*a.last.rate_bps / *b.last.rate_bps, 1, 0.02);
  EXPECT_NEAR(*a.last.leak_start_t, *b.last.leak_start_t, 10 * 60);
  EXPECT_EQ(fast.bucket_width(), slow.bucket_width());
  ASSERT_EQ(a.checks.size(), b.checks.size());
  for (size_t i = 0; i < a.checks.size(); ++i) EXPECT_EQ(a.checks[i].verdict, b.checks[i].verdict) << "check " << i;
  EXPECT_EQ(fast.samples(), 216001u);
  EXPECT_LE(fast.buckets().size(), 361u);  // memory is bounded by buckets, not samples
}

TEST(LeakEngine, RunwayUsesCapacityMinusReserved) {
  const double reserved = 2 * kGiB;
  LeakEngine e = CardEngine(reserved);
  const Trace run = Feed(e, LeakAfterPlateau(30000, 1000, kHour), 5 * kHour, 1.0, 2);
  const Assessment& a = run.last;
  ASSERT_EQ(a.verdict, Verdict::kLeak) << AllEvidence(a);
  ASSERT_TRUE(a.capacity_bytes && a.peak_bytes && a.tto_s && a.tto_lo_s && a.tto_hi_s);
  EXPECT_DOUBLE_EQ(*a.capacity_bytes, kCard - reserved);
  const double room = kCard - reserved - *a.peak_bytes;
  EXPECT_NEAR(*a.tto_s, room / *a.rate_bps, 1e-6);
  EXPECT_NEAR(*a.tto_lo_s, room / *a.rate_hi_bps, 1e-6);
  EXPECT_NEAR(*a.tto_hi_s, room / *a.rate_lo_bps, 1e-6);
  EXPECT_LE(*a.tto_lo_s, *a.tto_s);
  EXPECT_GE(*a.tto_hi_s, *a.tto_s);
  // About (78 GiB − 34 GiB) / 1000 MiB/h ≈ 45 h.
  EXPECT_NEAR(*a.tto_s / kHour, (78 * 1024.0 - (30000 + 4000)) / 1000, 2);
  EXPECT_NE(AllEvidence(a).find("usable capacity"), std::string::npos);

  LeakEngine unknown;  // no capacity: no runway, and the evidence says why
  const Trace r2 = Feed(unknown, LeakAfterPlateau(30000, 1000, kHour), 5 * kHour, 1.0, 2);
  ASSERT_EQ(r2.last.verdict, Verdict::kLeak);
  EXPECT_FALSE(r2.last.tto_s);
  EXPECT_NE(AllEvidence(r2.last).find("capacity is unknown"), std::string::npos);
}

TEST(LeakEngine, RateIntervalContainsTrueRate) {
  int covered = 0, total = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const double rate = seed % 2 ? 120 : 450;
    LeakEngine e = CardEngine();
    const Trace run = Feed(e, LeakAfterPlateau(20000, rate, 1.5 * kHour), 6 * kHour, 2.0, 20, seed);
    ASSERT_EQ(run.last.verdict, Verdict::kLeak) << "seed " << seed << "\n" << AllEvidence(run.last);
    const double lo = *run.last.rate_lo_bps * kHour / kMiB, hi = *run.last.rate_hi_bps * kHour / kMiB;
    covered += lo <= rate && rate <= hi;
    ++total;
    EXPECT_LT(hi - lo, 0.3 * rate) << "seed " << seed;  // and the interval is informative
  }
  EXPECT_GE(covered, 8) << covered << " of " << total;
}

TEST(LeakEngine, DropResetsSegment) {
  LeakEngine e = CardEngine();
  // A leak for 3 h, then a restart: memory falls to 300 MiB and ramps to a flat 20 GiB.
  const double restart = 4 * kHour;
  auto shape = [&](double t) {
    if (t < restart) return Ramp(t, 20000) + (t > kHour ? 800 * (t - kHour) / kHour : 0);
    return Ramp(t - restart, 20000);
  };
  const Trace run = Feed(e, shape, 8 * kHour, 1.0, 3);
  bool leaked_before = false;
  for (const Assessment& c : run.checks) {
    if (c.end_t < restart && c.verdict == Verdict::kLeak) leaked_before = true;
  }
  EXPECT_TRUE(leaked_before);
  const Assessment& a = run.last;
  ASSERT_TRUE(a.segment_start_t);
  EXPECT_NEAR(*a.segment_start_t, restart, 120);
  EXPECT_NE(a.verdict, Verdict::kLeak) << AllEvidence(a);
  EXPECT_NE(AllEvidence(a).find("Memory fell from"), std::string::npos) << AllEvidence(a);
}

// An alert's description is the summary: the leak's trend and growth sentences, not the first
// sentence of the evidence, which after a restart says where the analysis starts.
TEST(LeakEngine, LeakSummaryIsTheTrendThenTheGrowth) {
  const double restart = 2 * kHour;
  auto leak_after_restart = [&](double t) {
    if (t < restart) return Ramp(t, 20000);
    return Ramp(t - restart, 20000) + (t > restart + kHour ? 300 * (t - restart - kHour) / kHour : 0);
  };
  const double start = 6 * kHour;
  const Shape new_level = ServingLoad(6000, 2700, 1500, 5000, 1, 7 * kHour, start);
  struct Case {
    const char* name;
    Shape shape;
    double duration;
    const char* trend;  // how the trend sentence begins
  };
  for (const Case& c : {Case{"floor after a restart", leak_after_restart, 9 * kHour, "Leak: the floor rose by "},
                        Case{"new level under a serving load", new_level, start + 3600,
                             "Leak: the load moved to a level it never reached before."}}) {
    LeakEngine e = CardEngine();
    const Trace run = Feed(e, c.shape, c.duration, 1.0, 5, 1, 300);
    const Assessment& a = run.last;
    ASSERT_EQ(a.verdict, Verdict::kLeak) << c.name << ": " << AllEvidence(a);
    EXPECT_EQ(a.summary.rfind(c.trend, 0), 0u) << c.name << ": " << a.summary;
    const size_t growing = a.summary.find(" Growing since ");
    ASSERT_NE(growing, std::string::npos) << c.name << ": " << a.summary;
    // Both halves are sentences of the evidence, word for word.
    const std::string first = a.summary.substr(0, growing), second = a.summary.substr(growing + 1);
    EXPECT_NE(std::find(a.evidence.begin(), a.evidence.end(), first), a.evidence.end()) << c.name << ": " << first;
    EXPECT_NE(std::find(a.evidence.begin(), a.evidence.end(), second), a.evidence.end()) << c.name << ": " << second;
    EXPECT_EQ(a.summary.find("Memory fell"), std::string::npos) << c.name << ": " << a.summary;
    if (c.duration == 9 * kHour) {
      EXPECT_EQ(a.evidence.front().rfind("Memory fell from", 0), 0u) << AllEvidence(a);  // what it must skip
    }
  }
  // Every other verdict has none.
  LeakEngine e = CardEngine();
  const Trace plateau = Feed(
      e, [](double t) { return Ramp(t, 20000); }, 3 * kHour, 1.0, 5, 1, 300);
  for (const Assessment& c : plateau.checks) {
    ASSERT_NE(c.verdict, Verdict::kLeak) << AllEvidence(c);
    EXPECT_TRUE(c.summary.empty()) << VerdictName(c.verdict) << ": " << c.summary;
  }
}

TEST(LeakEngine, OutOfOrderSamplesAreCountedAndIgnored) {
  LeakEngine e;
  e.Add(100, 1e9);
  e.Add(50, 2e9);
  e.Add(std::nan(""), 1e9);
  e.Add(101, 1e9);
  EXPECT_EQ(e.samples(), 2u);
  EXPECT_EQ(e.out_of_order(), 2u);
  ASSERT_TRUE(e.first_out_of_order_t().has_value());
  EXPECT_DOUBLE_EQ(*e.first_out_of_order_t(), 50.0);  // the first one, not a later one
  EXPECT_DOUBLE_EQ(*e.first_out_of_order_after_t(), 100.0);
  e.Add(20, 1e9);
  EXPECT_DOUBLE_EQ(*e.first_out_of_order_t(), 50.0);
  EXPECT_FALSE(LeakEngine().first_out_of_order_t().has_value());
}

TEST(LeakEngine, BucketsAreCappedByMergingNeighbours) {
  EngineConfig config;
  config.max_buckets = 32;
  LeakEngine e(config);
  for (int i = 0; i <= 4 * 3600; ++i) e.Add(i, (1000 + i / 60.0) * kMiB);  // +1 MiB per minute
  EXPECT_LE(e.buckets().size(), 32u);
  EXPECT_GE(e.bucket_width(), 4 * 3600.0 / 32);
  size_t counted = 0;
  for (size_t i = 0; i < e.buckets().size(); ++i) {
    counted += e.buckets()[i].count;
    if (i > 0) {
      EXPECT_GT(e.buckets()[i].floor_bytes, e.buckets()[i - 1].floor_bytes);
    }
  }
  EXPECT_LE(counted, e.samples());
  EXPECT_GT(counted, e.samples() - static_cast<size_t>(e.bucket_width()) - 1);  // all but the open bucket
}

TEST(LeakEngine, SlowSamplingWidensBuckets) {
  LeakEngine e;
  for (int i = 0; i < 200; ++i) e.Add(i * 30.0, 1e9);
  EXPECT_EQ(e.bucket_width(), 120);
  for (const Bucket& b : e.buckets()) EXPECT_GE(b.count, 4u);
}

TEST(LeakEngine, BucketFloorIsALowQuantileAndPeakTheMaximum) {
  LeakEngine e;
  for (int i = 0; i < 60; ++i) e.Add(i, (i == 30 ? 5000 : 1000 + i % 10) * kMiB);
  e.Add(61, 1000 * kMiB);  // closes the first bucket
  ASSERT_EQ(e.buckets().size(), 1u);
  const Bucket& b = e.buckets().front();
  EXPECT_EQ(b.count, 60u);
  EXPECT_DOUBLE_EQ(b.peak_bytes, 5000 * kMiB);
  EXPECT_DOUBLE_EQ(b.min_bytes, 1000 * kMiB);
  // Offsets 0..9 six times each, one 0 replaced by the spike: sorted positions 5..10 hold 1, and
  // p10 interpolates at position 0.1·59 = 5.9.
  EXPECT_DOUBLE_EQ(b.floor_bytes, 1001 * kMiB);
  EXPECT_DOUBLE_EQ(b.last_bytes, 1009 * kMiB);
}

TEST(LeakEngine, ARunwayIsCriticalUnderTheLimitAtItsPessimisticEnd) {
  const double day = kCriticalRunwaySeconds;
  EXPECT_TRUE(RunwayIsCritical(day - 1, 3 * day, day));  // the lower end decides
  EXPECT_FALSE(RunwayIsCritical(day, day - 1, day));     // at the limit is not under it
  EXPECT_TRUE(RunwayIsCritical(std::nullopt, day / 2, day));
  EXPECT_FALSE(RunwayIsCritical(std::nullopt, 2 * day, day));
  EXPECT_FALSE(RunwayIsCritical(std::nullopt, std::nullopt, day));  // capacity unknown
  EXPECT_TRUE(RunwayIsCritical(0.0, 0.0, day));                     // no room left
  EXPECT_FALSE(RunwayIsCritical(0.0, 0.0, 0));                      // a limit of 0: never
}

TEST(LeakEngine, VerdictNamesAreStable) {
  EXPECT_EQ(VerdictName(Verdict::kInsufficientData), "insufficient_data");
  EXPECT_EQ(VerdictName(Verdict::kWarmup), "warmup");
  EXPECT_EQ(VerdictName(Verdict::kSettling), "settling");
  EXPECT_EQ(VerdictName(Verdict::kPlateau), "plateau");
  EXPECT_EQ(VerdictName(Verdict::kLeak), "leak");
}

TEST(LeakEngine, SlowLeakAfterAFlatHourIsALeakInAYoungJob) {
  // 75 MiB/h from 1h 30m into a job that settled within minutes. 3h 36m in (under three and a half
  // settled hours) the history rules would hold it back as a young job's own growth (slow growth
  // waits for five settled hours, three and a half when it rises at one pace); but the floor held
  // flat for over an hour first, which a settling curve does not, and it rose at one pace since
  // (which an allocator's staircase, pausing and stepping again, does not).
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, LeakAfterPlateau(20000, 75, 90 * 60), 3.6 * kHour, 5.0, 20);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("held flat for 1h"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 75, 10);
  // The same growth from the start of the job is held back.
  LeakEngine from_start = CardEngine();
  const Trace early = Feed(from_start, LeakAfterPlateau(20000, 75, 10 * 60), 2.33 * kHour, 5.0, 20);
  EXPECT_EQ(LeakChecks(early), 0) << AllEvidence(early.last);
  EXPECT_EQ(early.last.verdict, Verdict::kSettling) << AllEvidence(early.last);
  // Without the rule the late growth is held back too.
  EngineConfig off;
  off.late_onset_flat_seconds = 0;
  LeakEngine held = CardEngine(off);
  EXPECT_EQ(Feed(held, LeakAfterPlateau(20000, 75, 90 * 60), 3.6 * kHour, 5.0, 20).last.verdict, Verdict::kSettling);
}

TEST(LeakEngine, AFewLargeAllocatorStepsAreNotALeak) {
  // A settled floor that holds flat for two hours, then takes five steps of 120–240 MiB about half
  // an hour apart (+1000 MiB in 2h 5m): a caching allocator's large blocks. No single step carries
  // a quarter of the 3-hour window's rise, but the three largest carry 72 % of it.
  auto shape = [](double t) {
    double v = Ramp(t, 20000);
    const double steps[][2] = {{145, 240}, {175, 160}, {210, 240}, {240, 120}, {270, 240}};  // minute, MiB
    for (const auto& [minute, mib] : steps)
      if (t >= minute * 60) v += mib;
    return v;
  };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 4 * kHour + 55 * 60, 5.0, 2);
  EXPECT_EQ(LeakChecks(run), 0) << AllEvidence(run.last);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  // The 3-hour window fails on its few steps (the longest, from the flat stretch, came late).
  auto three_hours = [](const Assessment& a) {
    const auto it = std::find_if(a.window_fits.begin(), a.window_fits.end(),
                                 [](const TrendFit& f) { return std::abs(f.window_seconds - 3 * kHour) < 1; });
    return it == a.window_fits.end() ? std::string("(no 3-hour window)") : it->failed;
  };
  EXPECT_EQ(three_hours(run.last), "a few steps carry most of the rise");
  // What holds it back: without the few-steps test that window passes and the floor is a leak.
  EngineConfig any_steps;
  any_steps.top_jumps = 0;
  LeakEngine loose = CardEngine(any_steps);
  const Trace l = Feed(loose, shape, 4 * kHour + 55 * 60, 5.0, 2);
  EXPECT_EQ(l.last.verdict, Verdict::kLeak) << AllEvidence(l.last);
  EXPECT_EQ(three_hours(l.last), "");
}

TEST(LeakEngine, AStaircaseThatPausesAnHourIsNotALeakInAYoungJob) {
  // An allocator's late steps after an hour's pause, 20 MiB every 25 minutes (48 MiB/h): the pause
  // lifts the young-job rule, but slow growth in steps still waits for the slow-growth rule.
  auto shape = [](double t) {
    double v = Ramp(t, 20000);
    for (double s = 70 * 60; s <= t; s += 25 * 60) v += 20;
    return v;
  };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 3.4 * kHour, 5.0, 2);
  EXPECT_EQ(LeakChecks(run), 0) << AllEvidence(run.last);
  EXPECT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  // What holds it back: without the slow-growth rule it is called a leak.
  EngineConfig no_slow_rule;
  no_slow_rule.slow_history_seconds = 0;
  LeakEngine loose = CardEngine(no_slow_rule);
  EXPECT_GT(LeakChecks(Feed(loose, shape, 3.4 * kHour, 5.0, 2)), 0);
}

TEST(LeakEngine, SettlingEvidenceExplainsTheWindowThatPassedAndWasHeldBack) {
  // Steps of 20 MiB every 25 minutes from 2 h on, 4h 24m in: the window over the whole settled
  // floor starts on the flat stretch and its rate is too low, but the 3-hour window passes the
  // tests and is held by the slow-growth rule. The evidence names that rule.
  auto shape = [](double t) {
    double v = Ramp(t, 20000);
    for (double s = 2 * kHour; s <= t; s += 25 * 60) v += 20;
    return v;
  };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 4.4 * kHour, 5.0, 2);
  ASSERT_EQ(run.last.verdict, Verdict::kSettling) << AllEvidence(run.last);
  ASSERT_FALSE(run.last.window_fits.back().passed);
  EXPECT_NE(AllEvidence(run.last).find("over the last 3h 0m"), std::string::npos) << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("growth slower than 100 MiB/h is called a leak only after 5h 0m"),
            std::string::npos)
      << AllEvidence(run.last);
  // ... and says from when the rule lets it be called a leak: five hours after the floor settled.
  ASSERT_TRUE(run.last.held_until_t && run.last.settled_at) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.held_until_t - *run.last.settled_at, 5 * kHour, 60);
}

TEST(LeakEngine, SlowSteadyLeakIsFoundBeforeFiveSettledHours) {
  // 50 MiB/h from 30 minutes on under 30 MiB of noise: after 4 hours (3h 42m settled) it rose in
  // every sixth of the window, which no late allocator staircase does.
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, LeakAfterPlateau(20000, 50, 0.5 * kHour), 4 * kHour, 5.0, 30);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  ASSERT_TRUE(run.last.rate_bps);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 50, 5);
  EXPECT_NE(AllEvidence(run.last).find("Called before 5h 0m of settled data although it grows at under 100 MiB/h: "
                                       "since the growth began the floor rose in each sixth of the window at one pace"),
            std::string::npos)
      << AllEvidence(run.last);
  // At 3.5 hours (3h 12m settled) the same leak waits, and says until when.
  LeakEngine early = CardEngine();
  const Trace waited = Feed(early, LeakAfterPlateau(20000, 50, 0.5 * kHour), 3.5 * kHour, 5.0, 30);
  EXPECT_EQ(LeakChecks(waited), 0);
  EXPECT_NE(
      AllEvidence(waited.last).find("or after 3h 30m when the floor rises in each sixth of the window at one pace"),
      std::string::npos)
      << AllEvidence(waited.last);
}

TEST(LeakEngine, SlowContinuousGrowthIsALeakAfterThreeSettledHours) {
  // 70 MiB/h from 40 minutes on under 2 MiB of noise, at 3h 20m: slower than 100 MiB/h, and three
  // and a half settled hours have not passed, but no step above the noise carries much of its rise
  // (an allocator's staircase is all steps), so the slow-growth rule does not hold it back.
  const auto leak = LeakAfterPlateau(20000, 70, 40 * 60);
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, leak, 3 * kHour + 20 * 60, 5.0, 2);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 70, 5);
  EXPECT_NE(AllEvidence(run.last).find("Called before 5h 0m of settled data although it grows at under 100 MiB/h: it "
                                       "grew continuously ("),
            std::string::npos)
      << AllEvidence(run.last);
  // Without the exemption it waits.
  EngineConfig held;
  held.continuous_share = 0;
  LeakEngine waiting = CardEngine(held);
  EXPECT_EQ(LeakChecks(Feed(waiting, leak, 3 * kHour + 20 * 60, 5.0, 2)), 0);
  // The same rise in 20 MiB steps is not continuous, and waits too.
  auto stepped = [](double t) {
    return Ramp(t, 20000) + (t > 40 * 60 ? 20 * std::floor(70 * (t - 40 * 60) / kHour / 20) : 0);
  };
  LeakEngine steps = CardEngine();
  EXPECT_EQ(LeakChecks(Feed(steps, stepped, 3 * kHour + 20 * 60, 5.0, 2)), 0);
}

TEST(LeakEngine, ASlowLeakOfOneBufferPerPeriodIsALeakBeforeFiveHours) {
  // One 64 MiB buffer every 48 minutes (80 MiB/h) from 30 minutes on, under 2 MiB of noise, at
  // 3h 50m: four equal steps in the 3-hour window, which the few-steps test alone would call an
  // allocator's large blocks and the slow-growth rule would hold back until 5 hours.
  auto buffers = [](double mib) {
    return [=](double t) { return Ramp(t, 20000) + (t > 1800 ? mib * std::floor((t - 1800) / (48 * 60)) : 0); };
  };
  const double at = 3 * kHour + 50 * 60;
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, buffers(64), at, 5.0, 2);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 80, 15);
  EXPECT_NE(AllEvidence(run.last).find("It rose in 4 equal steps of about 64 MiB, one every 48m"), std::string::npos)
      << AllEvidence(run.last);
  EXPECT_NE(AllEvidence(run.last).find("although it grows at under 100 MiB/h: it grew in equal steps at a regular "
                                       "pace (above)."),
            std::string::npos)
      << AllEvidence(run.last);
  // Not asked, the same steps are no leak yet.
  EngineConfig unasked;
  unasked.regular_min_step_bytes = 0;
  LeakEngine plain = CardEngine(unasked);
  EXPECT_EQ(LeakChecks(Feed(plain, buffers(64), at, 5.0, 2)), 0);
  // Steps of the allocator's own 20 MiB blocks at the same pace are never regular.
  LeakEngine blocks = CardEngine();
  const Trace small = Feed(blocks, buffers(20), at, 5.0, 2);
  EXPECT_EQ(LeakChecks(small), 0) << AllEvidence(small.last);
}

TEST(LeakEngine, LeakThatBeganInsideEveryWindowIsTestedFromItsStart) {
  // A settled job, then 150 MiB/h from 6 h on. At 7h 40m the 1-hour window is too noisy to pass
  // and the 3-hour and whole windows start on the plateau, so their first third is flat; the
  // window from where the growth began rises in every third.
  const Shape shape = LeakAfterPlateau(20000, 150, 6 * kHour);
  EngineConfig without;
  without.onset_alpha = 0;
  LeakEngine plain(without);
  plain.SetCapacity(kCard);
  const Trace before = Feed(plain, shape, 7.67 * kHour, 5.0, 40);
  EXPECT_NE(before.last.verdict, Verdict::kLeak) << AllEvidence(before.last);
  // Growth that came late is not called settling.
  EXPECT_NE(AllEvidence(before.last).find("the growth came late in the window: rises per third"), std::string::npos)
      << AllEvidence(before.last);
  EXPECT_NE(AllEvidence(before.last).find("not a leak (yet)."), std::string::npos) << AllEvidence(before.last);

  LeakEngine e = CardEngine();
  const Trace run = Feed(e, shape, 7.67 * kHour, 5.0, 40);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  ASSERT_TRUE(run.last.rate_bps && run.last.leak_start_t);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 150, 20);
  EXPECT_NEAR(*run.last.leak_start_t, 6 * kHour, 15 * 60);
  EXPECT_NE(AllEvidence(run.last).find(
                "That window starts where the growth began: the longer windows start on the level before it"),
            std::string::npos)
      << AllEvidence(run.last);
  for (const Assessment& c : run.checks) {
    if (c.end_t < 6 * kHour) {
      EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;
    }
  }
}

// A fast leak in a settled job is found once it has run half an hour: the window from where it
// began needs only fast_onset_min_seconds when its rate's interval stays above fast_rate_bps. The
// 1-hour window still starts on the level before it, so its first third is flat.
TEST(LeakEngine, FastLeakInASettledJobIsFoundAfterHalfAnHour) {
  const double start = 5 * kHour, at = start + 35 * 60;
  EngineConfig without;
  without.fast_onset_min_seconds = 0;
  for (double rate : {1000.0, 3000.0}) {
    const Shape shape = LeakAfterPlateau(20000, rate, start);
    LeakEngine plain(without);
    plain.SetCapacity(kCard);
    const Trace late = Feed(plain, shape, at, 5.0, 20, 1, 300);
    EXPECT_NE(late.last.verdict, Verdict::kLeak) << rate << ": " << AllEvidence(late.last);

    LeakEngine e = CardEngine();
    const Trace run = Feed(e, shape, at, 5.0, 20, 1, 300);
    ASSERT_EQ(run.last.verdict, Verdict::kLeak) << rate << ": " << AllEvidence(run.last);
    EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, rate, 0.1 * rate);
    EXPECT_NEAR(*run.last.leak_start_t, start, 5 * 60);
    EXPECT_NE(AllEvidence(run.last).find("That window starts where the growth began"), std::string::npos)
        << AllEvidence(run.last);
    for (const Assessment& c : run.checks)  // none before the growth had run half an hour
      if (c.end_t < start + 30 * 60) EXPECT_NE(c.verdict, Verdict::kLeak) << rate << " at " << c.end_t;
  }
  // Slower growth waits for the hour: its interval does not reach fast_rate_bps.
  LeakEngine slow = CardEngine();
  const Trace run = Feed(slow, LeakAfterPlateau(20000, 300, start), at, 5.0, 20, 1, 300);
  EXPECT_NE(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
}

TEST(LeakEngine, ALeakOfOneBufferPerPeriodStaysALeakBetweenItsSteps) {
  // A settled job, then one 64 MiB buffer every 72 minutes from 6 h on (53 MiB/h; steps at 7h 12m
  // to 10h 48m), checked every 5 minutes. At 11h 45m the last step is 57 minutes old: the 1-hour
  // window is flat, as it is between any two steps, and the 3-hour window starts on the level
  // before the growth. The window from where the growth began holds four equal steps, still
  // stepping at its end, and stays a leak.
  auto buffers = [](double t) {
    return Ramp(t, 20000) + (t > 6 * kHour ? 64 * std::min(4.0, std::floor((t - 6 * kHour) / 4320)) : 0);
  };
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, buffers, 11.75 * kHour, 5.0, 2, 1, 300);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, 53, 8);
  const std::string ev = AllEvidence(run.last);
  EXPECT_NE(ev.find("That window starts where the growth began"), std::string::npos) << ev;
  EXPECT_NE(ev.find("equal steps of about 64 MiB, one every 1h 12m"), std::string::npos) << ev;
  // When the buffers stop, once more than a period has passed since the last step (at 12h 5m,
  // 77 minutes), the steps are no longer regular at the window's end and the flat hour says the
  // growth stopped.
  LeakEngine stopped = CardEngine();
  const Trace after = Feed(stopped, buffers, 12 * kHour + 5 * 60, 5.0, 2, 1, 300);
  EXPECT_NE(after.last.verdict, Verdict::kLeak) << AllEvidence(after.last);
}

// An eval or checkpoint spike at the very end of a leak: the keeps-going tests on all the data see
// one jump at the end, but the leak found on the data before it stands while the floor goes on
// rising. (A fall since then ends the hold: DepartedHolder.ASignificantTrendIsNeverCalledAPlateau;
// so does growth that stopped: GrowthThatBeganMidJobAndStoppedIsNotALeak.)
TEST(LeakEngine, ALeakIsHeldThroughASpikeAtTheEnd) {
  const double start = 2 * kHour, spike = 8 * kHour - 20 * 60, end = 8 * kHour;
  auto leak = LeakAfterPlateau(20000, 400, start);
  auto spiked = [&](double t) { return leak(t) + (t >= spike ? 3000 : 0); };
  EngineConfig no_hold;
  no_hold.hold_seconds = 0;
  LeakEngine without(no_hold);
  without.SetCapacity(kCard);
  const Trace cut = Feed(without, spiked, end, 5.0, 10);
  ASSERT_EQ(cut.last.verdict, Verdict::kSettling) << AllEvidence(cut.last);  // what the hold is for

  LeakEngine e = CardEngine();
  const Trace held = Feed(e, spiked, end, 5.0, 10);
  ASSERT_EQ(held.last.verdict, Verdict::kLeak) << AllEvidence(held.last);
  EXPECT_NEAR(*held.last.rate_bps * kHour / kMiB, 400, 40);
  const std::string ev = AllEvidence(held.last);
  EXPECT_NE(ev.find("These tests ran on the data up to +7h 29m. On all of it "), std::string::npos) << ev;
  EXPECT_NE(ev.find("a rise at the end that cannot yet be told from a spike or a step does not undo the leak"),
            std::string::npos)
      << ev;
  // The sentence says by how much the floor rose from the level at the cut: the 3000 MiB spike plus
  // about 25 minutes of the leak at 400 MiB/h (the last quarter's median against the level of the
  // five buckets before the cut).
  std::smatch m;
  const std::regex rise(R"(over the last 7m 30s, \+([0-9.]+ [KMG]?i?B) from the level at the cut\))");
  ASSERT_TRUE(std::regex_search(ev, m, rise)) << ev;
  const auto by = ParseSize(m[1].str());
  ASSERT_TRUE(by.ok()) << m[0];
  EXPECT_GT(*by / kMiB, 3000 + 100) << m[0];
  EXPECT_LT(*by / kMiB, 3000 + 300) << m[0];
  // The runway is counted from the end, above the spike's peak.
  ASSERT_TRUE(held.last.peak_bytes && held.last.tto_s);
  EXPECT_GT(*held.last.peak_bytes, (20000 + 400 * 6 + 2900) * kMiB);
}

// Under a serving load the hold also reads the load's lows: the lowest floor since the cut against
// the lowest of the same span before it. Growth of 2 GiB/h that stops after two hours is found
// only as it stops, and the lows since a cut then wander by hundreds of MiB. They must not hold the
// leak when they fell: the sentence that holds it says they stayed above, and by how much (two
// sizes rounded to 0.1 GiB can read equal), which must not be less than zero and must agree with
// the two sizes it compares.
TEST(LeakEngine, GrowthThatStoppedUnderServingSwingsIsNotHeldByLowsThatFell) {
  const double start = kHour, stop = 3 * kHour, duration = 6 * kHour, rate = 2000;
  const std::regex held(
      R"(its lowest floor \(([0-9.]+ [KMG]?i?B)\) stayed above the lowest of the [^(]* \(([0-9.]+ [KMG]?i?B)\), )"
      R"(by ([+-])([0-9.]+ [KMG]?i?B))");
  int holds = 0;
  for (double period : {900.0, 1500.0, 2700.0}) {
    for (uint64_t seed : {1, 2, 3}) {
      const Shape grow = ServingLoad(6000, period, 3000, rate, seed, duration, start);
      const Shape stopped = [=](double t) { return grow(t) - (t > stop ? rate * (t - stop) / kHour : 0); };
      LeakEngine e = CardEngine();
      const Trace run = Feed(e, stopped, duration, 1.0, 5, seed, 600);
      for (const Assessment& c : run.checks) {
        const std::string ev = AllEvidence(c);
        std::smatch m;
        if (!std::regex_search(ev, m, held)) continue;
        ++holds;
        const auto since = ParseSize(m[1].str()), before = ParseSize(m[2].str()), by = ParseSize(m[4].str());
        ASSERT_TRUE(since.ok() && before.ok() && by.ok()) << m[0];
        EXPECT_GE(*since, *before) << period << " " << seed << " at " << c.end_t << ": " << ev;
        EXPECT_EQ(m[3].str(), "+") << m[0];
        // The sizes are rounded (0.1 GiB, or whole MiB): their difference within that of `by`.
        EXPECT_NEAR(*since - *before, *by, 0.11 * kGiB) << m[0];
      }
      if (period == 1500 && seed == 1) {
        // 90 minutes after the stop the lows since the cut fell by about 500 MiB: no longer held.
        const Assessment& at = run.checks[26];
        ASSERT_NEAR(at.end_t, stop + 90 * 60, 60);
        EXPECT_NE(at.verdict, Verdict::kLeak) << AllEvidence(at);
      }
    }
  }
  EXPECT_GT(holds, 0);  // the lows did hold a leak where they rose
}

// Growth from the job's first minutes: the warm-up gate lets the trend tests start only after a
// settle window of steady growth (here at 17 to 20 minutes), but the growth runs from where the
// fast ramp joined its line, and "Growing since" says so. The ramp (2-minute time constant to
// 20 GiB) is within 15 MiB of the line from about 14 minutes on.
TEST(LeakEngine, GrowthFromTheFirstMinutesIsDatedFromThem) {
  for (double rate : {300.0, 1000.0, 3000.0}) {
    LeakEngine e = CardEngine();
    const Trace run = Feed(e, LeakAfterPlateau(20000, rate, 0), 4 * kHour, 2.0, 5);
    ASSERT_EQ(run.last.verdict, Verdict::kLeak) << rate << ": " << AllEvidence(run.last);
    ASSERT_TRUE(run.last.leak_start_t && run.last.settled_at);
    EXPECT_LE(*run.last.leak_start_t, 15 * 60) << rate << ": " << AllEvidence(run.last);
    EXPECT_LT(*run.last.leak_start_t, *run.last.settled_at) << rate;
    EXPECT_NEAR(*run.last.rate_bps * kHour / kMiB, rate, 0.05 * rate);
  }
  // After a plateau the start stays where the growth began, not at the ramp.
  LeakEngine late = CardEngine();
  const Trace run = Feed(late, LeakAfterPlateau(20000, 1000, kHour), 4 * kHour, 2.0, 5);
  ASSERT_EQ(run.last.verdict, Verdict::kLeak) << AllEvidence(run.last);
  EXPECT_NEAR(*run.last.leak_start_t, kHour, 10 * 60);
}

// Growth that begins in a settled job and then stops or saturates is not a leak once it stopped:
// the window from where it began must not outvote the shorter windows that show it flat.
TEST(LeakEngine, GrowthThatBeganMidJobAndStoppedIsNotALeak) {
  // 12 steps of 128 MiB every 20 minutes from 4 h (the last at 7h 40m), then flat to 10 h.
  auto stairs = [](double t) {
    const int k = t < 4 * kHour ? 0 : std::min(12, static_cast<int>((t - 4 * kHour) / 1200) + 1);
    return Ramp(t, 20000) + 128.0 * k;
  };
  const double last_step = 7 * kHour + 40 * 60;
  LeakEngine e = CardEngine();
  const Trace run = Feed(e, stairs, 10 * kHour, 10.0, 30, 1, 300);
  for (const Assessment& c : run.checks) {
    // 20 minutes after the last step the 1-hour window's slope is far under the window from the
    // growth's start: that window no longer passes.
    if (c.end_t >= last_step + 20 * 60 && c.verdict == Verdict::kLeak) {
      EXPECT_EQ(AllEvidence(c).find("That window starts where the growth began"), std::string::npos)
          << "at " << c.end_t << ": " << AllEvidence(c);
    }
    // An hour after it the 3-hour window's last third is flat too: not a leak at all.
    if (c.end_t >= last_step + kHour) {
      EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t << ": " << AllEvidence(c);
    }
  }
}

// A leak that began two hours ago under a serving load: every window of the cycle-free floor
// starts on the level before it (the 3 h one by an hour) and fails the keeps-going tests; from
// where the growth began its block means rise in every third. The tests on the cycle-free lows
// (new level, ramp, rising lows) and the test of steady growth past the swings are off, so the
// window from the growth's start is what finds it.
TEST(LeakEngine, ALeakThatBeganInsideEveryCycleFreeWindowIsTestedFromItsStart) {
  const double start = 4 * kHour, end = 6 * kHour;
  const Shape shape = ServingLoad(6000, 1500, 1500, 1500, 2, end, start);
  EngineConfig lows_off;
  lows_off.new_level_max_recent_blocks = 0;
  lows_off.ramp_max_blocks = 0;
  lows_off.rising_lows_alpha = 0;
  TurnOffFillTest(lows_off);
  LeakEngine with = CardEngine(lows_off);
  const Trace found = Feed(with, shape, end, 1.0, 5, 1, 300);
  const std::string ev = AllEvidence(found.last);
  ASSERT_EQ(found.last.verdict, Verdict::kLeak) << ev;
  EXPECT_NE(ev.find("means of the cycle-free floor"), std::string::npos) << ev;
  EXPECT_NE(ev.find("That window starts where the growth began"), std::string::npos) << ev;
  EXPECT_NEAR(*found.last.rate_bps * kHour / kMiB, 1500, 600) << ev;
  EXPECT_NEAR(*found.last.leak_start_t, start, 1800) << ev;
  for (const Assessment& c : found.checks) {
    if (c.end_t < start) {
      EXPECT_NE(c.verdict, Verdict::kLeak) << "at " << c.end_t;  // nothing before the leak
    }
  }
  // Without that window the same samples are not a leak yet.
  EngineConfig off = lows_off;
  off.onset_alpha = 0;
  LeakEngine without = CardEngine(off);
  EXPECT_NE(Feed(without, shape, end, 1.0, 5, 1, 300).last.verdict, Verdict::kLeak);
}

}  // namespace
}  // namespace vw::detection
