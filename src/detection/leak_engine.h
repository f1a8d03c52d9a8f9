// LeakEngine: the streaming leak detector for one memory series (a GPU's used memory, or one
// process's). The heart of vramwatch; see docs/detection.md.
//
// Feed samples in time order with Add(); ask Assess() at any time. Add() is O(1) amortised and the
// memory held is bounded by the number of time buckets (a few thousand at most), never by the
// number of samples. `analyze` (files) and `watch` (NVML) use this same class, so the same samples
// always get the same answer.
//
// Units: times are seconds (any epoch, non-decreasing), sizes are bytes, rates are bytes/second.
// Threading: one instance is used by one thread at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vw::detection {

struct FloorPoint;

enum class Verdict {
  kInsufficientData,  // too few samples or too short a span to say anything
  kWarmup,            // still in the initial ramp
  kSettling,          // growth that is slowing down (allocator staircase, settling curve)
  kPlateau,           // flat (possibly high, with spikes): healthy
  kLeak,              // sustained growth that keeps going
};

std::string_view VerdictName(Verdict v);  // "insufficient_data", "warmup", "settling", "plateau", "leak"

struct EngineConfig {
  double bucket_seconds = 60;    // width of one time bucket
  double floor_quantile = 0.10;  // floor = this quantile of the samples in a bucket
  // Trend windows evaluated (seconds); the longest that the data covers decides, shorter ones
  // give an earlier answer when the growth is fast.
  std::vector<double> windows_seconds = {3600, 3 * 3600, 12 * 3600};
  double min_span_seconds = 15 * 60;  // less history than this -> insufficient_data
  size_t min_samples = 10;
  double alpha = 0.01;        // significance level of the trend test
  double ci_level = 0.90;     // confidence level of the slope interval
  size_t max_buckets = 2048;  // when exceeded, neighbouring buckets are merged (width doubles)

  // --- Added knobs (docs/detection.md says why each default) ---
  // Leak tests on one window (see growth_window.h).
  double min_rate_bps = 38 * 1048576.0 / 3600;  // slower growth is never a leak (38 MiB/h)
  double min_growth_bytes = 64 * 1048576.0;     // a leak window rises by more than this
  double third_fraction = 0.35;                 // each third's rate >= this share of the window's slope
  double late_fraction = 0.5;                   // last third's rate >= this share of the first third's
  double third_balance = 0.25;                  // smallest third's rise >= this share of the largest's
  double rise_consistency = 2.0;                // measured rise per time within this factor of Sen's slope
  double max_jump_share = 0.25;                 // largest jump at most this share of the rise (unless in noise)
  // On a floor that does not swing, the top_jumps largest steps above the noise together at most
  // this share of the rise: an allocator's large blocks lift the floor in a few steps, a leak in
  // many (0 steps: no such test).
  size_t top_jumps = 3;
  double max_top_jumps_share = 0.6;
  // ... and when those steps carry at most this share of it, the growth is continuous: no
  // allocator staircase, so the slow-growth rule (slow_history_seconds) does not hold it back
  // (0: always held).
  double continuous_share = 0.3;
  // ... and when they are equal steps at a regular pace above this height (GrowthOptions'
  // regular_*), they are one buffer leaked per period: the tests of how the rise spreads over the
  // window are not asked, nor does the slow-growth rule hold it back. A caching allocator's own
  // blocks (2 and 20 MiB) step a healthy staircase in equal steps, so steps up to this height are
  // never called regular (0: never asked).
  double regular_min_step_bytes = 20 * 1048576.0;
  size_t regular_min_steps = 3;
  double regular_size_tolerance = 0.05;  // each step's height within this share of their median (+ noise)
  double regular_chance = 0.01;          // heights spread by d need n steps: (d / height)^(n−1) ≤ this
  double regular_gap_ratio = 1.25;       // longest gap at most this times the shortest (± a point)
  double regular_carry = 0.8;            // the steps carry this to 1/this of the rise at Sen's slope
  double slowdown_ratio = 0.8;           // 2nd-half slope < this × 1st with disjoint intervals: slowing
  double strong_slowdown_ratio = 0.6;    // ... or < this × 1st whatever the intervals
  size_t max_trend_points = 120;         // longer windows are thinned to this many points
  // Lower envelopes (lowest floor over the preceding span) are also tested, for oscillating
  // loads; each on windows at least three spans long.
  std::vector<double> envelope_seconds = {900, 3600};
  // ... only when the floor oscillates: it fell below an earlier high by more than
  // max(oscillation_min_bytes, 8 noise deviations) within the longest window.
  double oscillation_min_bytes = 256 * 1048576.0;
  // ... and its own windows are then tested at this level instead of alpha: a load's swings make
  // the floor wander for hours, and a slow wander passes a test meant for a steady floor.
  double oscillating_floor_alpha = 0.001;
  // ... and when a regular cycle is found there (see below), a window that passes on the floor or on
  // its lower envelope must also show the cycle-free floor, averaged over the same blocks as below,
  // rising over that window (Mann–Kendall z at least this; 3.090 is one-sided 0.1 %, the floor's own
  // level above): the floor of a load that swings can wander for hours while the cycle as a whole
  // stays put. 0: no such check.
  double oscillating_confirm_z = 3.090;
  // Before the envelopes, a periodic oscillation (autocorrelation peak of at least
  // oscillation_min_autocorrelation at a period of 4–90 min) is removed: the median floor at each
  // phase of the cycle is subtracted, and the result tested on windows of at least
  // oscillation_min_periods periods.
  double oscillation_min_autocorrelation = 0.3;
  double oscillation_min_periods = 3;
  double oscillation_points_per_period = 4;  // the cycle-free floor is averaged over blocks of
                                             // period / this before the tests
  double oscillation_block_seconds = 600;    // ... and over at least this
  double oscillation_alpha = 0.00001;        // Mann–Kendall level on that series
  // Between two windows more than this factor apart (the shorter at least min_history_seconds),
  // the cycle-free floor is also tested on intermediate windows at geometric steps ...
  double oscillation_window_ratio = 1.5;
  double oscillation_intermediate_alpha = 0.00001;  // ... at this level (more tests of one series)
  // A window that passes on those block means must show in the cycle-free floor's lows as well: the
  // lowest value of each oscillating_lows_block_seconds over the same window rising at Mann–Kendall
  // z at least oscillating_lows_z (Hamed–Rao-corrected; 1.645 is one-sided 5 %). A leak lifts every
  // level a serving load's batches swing between, the lowest too; batch levels that happen to lift
  // the means for hours leave the low ones where they were (0: no such check).
  double oscillating_lows_z = 1.645;
  double oscillating_lows_block_seconds = 1800;
  // ... and its end (the median of the last sixth of those block means) must stand above the level
  // before the window (their median over the window's length before it, at least
  // oscillating_pre_min_seconds of it) by at least this share of the window's rise (from the median
  // of its first sixth). A leak only adds, so all of its rise stands above what came before; a
  // load's batch levels that wandered down for hours and came back rise as much, and end where they
  // had been. 0.6 is just above the 0.46–0.57 that the one healthy load on record it catches reads
  // (seed 684's trace 114 of the evaluation). 0: no such check.
  double oscillating_pre_rise_share = 0.6;
  double oscillating_pre_min_seconds = 3600;
  // When no window passes, the cycle-free floor (once min_history_seconds are settled) is also
  // asked whether it just moved to a level it never reached before (new_level.h): the lowest value
  // in each of the last 2–4 blocks of new_level_block_seconds, never falling, above the highest low
  // of at least new_level_min_earlier_blocks earlier blocks by more than new_level_margin_sds
  // standard deviations of those lows (and min_growth_bytes).
  double new_level_block_seconds = 900;
  size_t new_level_min_recent_blocks = 2;
  size_t new_level_max_recent_blocks = 4;
  size_t new_level_min_earlier_blocks = 8;
  double new_level_margin_sds = 6;
  // ... and whether those block lows rise over the last 3 h to 12 h (Mann–Kendall at this level,
  // Sen's slope at least min_rate_bps, or slow_rate_bps before slow_history_seconds).
  double rising_lows_alpha = 1e-5;
  // ... and, in a job of any age, whether it ramped up to such a level (new_level.h,
  // FindRampToNewLevel): over the last ramp_min_blocks to ramp_max_blocks blocks every low after the
  // first stayed above the highest low of the (at least new_level_min_earlier_blocks) blocks before,
  // and the last two stand above it by new_level_margin_sds of those lows; the lower end of the
  // interval of the rate fitted from there must be at least min_rate_bps (slow_rate_bps before
  // slow_history_seconds). A leak that has run for an hour or two lifts each low only a block's
  // growth above the one before, which the new-level test cannot see, and it follows hours of lows
  // that stayed below it, which a young job's settling curve (rising from its start) does not
  // (0 max blocks: never).
  size_t ramp_min_blocks = 3;
  size_t ramp_max_blocks = 8;
  double spike_seconds = 600;  // upward excursions of the floor narrower than this are removed
                               // (morphological opening) before the tests
  // Which windows and when.
  double min_window_seconds = 1800;    // shortest stretch a trend test runs on
  double min_history_seconds = 10800;  // settled history needed before a leak verdict: a young
                                       // job's growth is usually its allocator settling
  // ... unless the growth is fast and steady: over a window at least young_window_fraction of the
  // first configured window long, the lower end of the slope's interval is at least fast_rate_bps ×
  // (first window / window)^young_rate_exponent (500 MiB/h over 1 h, 125 MiB/h over 2 h), the
  // second half kept at least young_pace_ratio of the first half's slope, and the last third's rate
  // at least young_third_ratio of the first third's (0: not asked).
  double fast_rate_bps = 500 * 1048576.0 / 3600;
  double young_rate_exponent = 2;
  double young_window_fraction = 0.85;
  double young_pace_ratio = 0.85;
  double young_third_ratio = 0.85;
  // Growth slower than slow_rate_bps is called a leak only after slow_history_seconds of settled
  // data: a caching allocator's staircase slows like 1/t and keeps stepping at 40–100 MiB/h for
  // hours (docs/detection.md, "Results").
  double slow_rate_bps = 100 * 1048576.0 / 3600;
  double slow_history_seconds = 5 * 3600;
  // ... unless the floor (spikes kept) rose all through the window since the growth began, at one
  // pace: in each of smooth_parts stretches of equal time, Sen's slope with its ci_level interval
  // above zero and its smooth_agree_level interval holding the slope of the whole. A staircase's
  // late steps leave some stretch flat or steeper than the rest; a steady leak rises in every one
  // at its rate. Each stretch is thinned to smooth_max_points. 0 parts: no exception.
  int smooth_parts = 6;
  double smooth_history_seconds = 3.5 * 3600;  // ... and only after this much settled data
  double smooth_agree_level = 0.99;
  size_t smooth_max_points = 60;
  // When no window passes but one shows significant growth, one more window from where the growth
  // began (at least onset_min_seconds, at most onset_max_share of the longest window) is tested at
  // onset_alpha (0: never): a leak that began inside every configured window leaves their first
  // third flat. Not on a floor that swings with a load: its cycle-free floor gets one instead,
  // from where that floor's growth began, at least oscillation_min_periods periods long, its block
  // means at oscillation_alpha (or onset_alpha if stricter).
  double onset_alpha = 0.001;
  double onset_min_seconds = 3600;
  double onset_max_share = 0.8;
  // ... and when that window finds nothing, one from where growth began at least
  // fast_onset_min_seconds ago, on a floor that does not swing, whose rate's interval must also
  // stay above fast_rate_bps: a fast leak that began 30 minutes ago fills only the last half of
  // the shortest configured window (0: never).
  double fast_onset_min_seconds = 1800;
  // The history rules above hold back a young job's own growth, which begins with the job and is
  // steepest first (a settling curve, an allocator's staircase). Growth that began only after the
  // settled floor held flat for late_onset_flat_seconds (where the level-then-line fit puts its
  // start; before it Sen's slope at most late_onset_flat_share of the growth's, and a rise under
  // min_growth_bytes) is not a settling curve: the floor's windows are then judged without the
  // young-job rule, and growth slower than slow_rate_bps needs only to rise at one pace (the
  // smooth_* test) instead of also smooth_history_seconds. A staircase can pause for an hour and
  // step again, so slow growth still needs that test (0: never). Not on a floor that swings.
  double late_onset_flat_seconds = 3600;
  double late_onset_flat_share = 0.2;
  // Growth whose Sen slope (bytes/s) is at least late_onset_fast_bps needs only
  // late_onset_fast_flat_seconds of flat floor: the allocator staircases seen to pause under an
  // hour stepped on at 100–130 MiB/h, and a fast leak would otherwise wait for the young-job
  // rule's hour-long window.
  double late_onset_fast_bps = 250 * 1048576.0 / 3600;
  double late_onset_fast_flat_seconds = 2700;
  // A leak is held through a rise at the end that the keeps-going tests cannot yet tell from a
  // spike or a step: when the series is only settling now but the same tests on the data up to
  // hold_seconds ago found a leak, and the floor went on rising since (by half of what that
  // leak's rate adds, less three noise deviations: from the level at the cut without falling
  // below it, or, under a load's cycle, from the lowest floor before the cut to the lowest
  // since, which must not be lower), the verdict stays a leak, judged on that data (0: never).
  double hold_seconds = 1800;
  // Under a load whose floor swings (the oscillation test above), a leak verdict must also hold on
  // the data up to swing_persist_seconds ago: each of the tests on such a load is asked again at
  // every check, and a healthy load's wander can pass one of them at one moment only. Else the
  // verdict is the one on that earlier data, with the later finding in its evidence (0: no check).
  double swing_persist_seconds = 600;
  // Under a load with a regular cycle, when no leak is called but the cycle-free floor's block means
  // rose over one of its windows at Mann–Kendall p ≤ watch_alpha, by at least min_growth_bytes at
  // min_rate_bps or more, the assessment says so (Assessment::load_rise_bps and a sentence): no
  // verdict, a reason to look again. A load's swings hide a leak of a few percent of the card for
  // hours from the tests' levels (0: never).
  double watch_alpha = 1e-4;
  // Under a load with a regular cycle, when no test calls a leak: growth of the cycle-free floor
  // is a leak whatever the history rules say when it has run fill_min_growth_seconds after at least
  // fill_min_before_seconds of floor before it, is significant at fill_alpha (Mann–Kendall,
  // Hamed–Rao-corrected), rises at one pace (each half's slope above zero and at least
  // fill_pace_ratio of the other's), and is far enough past the range the floor covered before it
  // by either of two forms (imminent_fill.h):
  // - runs out soon: a rise of fill_range_multiple times that range, and the room above the recent
  //   peak gone within fill_runway_seconds at the lower end of the rate's interval (0: not asked);
  // - past the swings: a rise of fill_swings_multiple times that range, with no runway asked, where
  //   the floor before the growth covers at least fill_min_before_per_growth times the growth's own
  //   stretch, so that the swings' range is measured over as long a time (0: not asked).
  // A fast leak under a serving load otherwise waits hours for a young job's rules or for enough
  // cycles to test, and can fill the card first.
  double fill_runway_seconds = 7200;
  double fill_range_multiple = 2;
  double fill_swings_multiple = 1.5;
  double fill_min_before_per_growth = 1.5;
  double fill_min_growth_seconds = 1800;
  double fill_min_before_seconds = 1800;
  double fill_alpha = 1e-5;
  double fill_pace_ratio = 0.6;
  // Warm-up gate: settled once the floor's rise over settle_window_seconds is under
  // max(settle_min_bytes, settle_fraction × capacity), or no longer falling.
  double settle_window_seconds = 600;
  double settle_min_bytes = 256 * 1048576.0;
  double settle_fraction = 0.01;
  // Segmentation: a bucket whose minimum is below the lowest floor of the last
  // drop_lookback_seconds by more than drop_fraction of it and drop_min_bytes starts a segment.
  double drop_fraction = 0.2;
  double drop_min_bytes = 512 * 1048576.0;
  double drop_lookback_seconds = 7200;
  double peak_lookback_seconds = 3600;  // recent peak (runway) = highest over this
  // Departed holders (NoteDeparture): a fall of the series of at least departure_match_share of
  // the memory a process that left held, within departure_match_seconds of its going, is explained
  // by it, and everything before the fall is judged net of the memory that fall freed, when every
  // earlier sample of the segment held at least that much (else the fall is a drop as any other:
  // a GPU that runs one job after another). Falls smaller than departure_min_bytes are not tracked.
  double departure_match_seconds = 60;
  double departure_match_share = 0.5;
  double departure_min_bytes = 64 * 1048576.0;
  // ... and when the caller says the holder was first listed after the series began, only the
  // samples from this long after that are checked and lowered: the holder's own ramp stays (an
  // excursion the spike removal takes off), and what came before it is not touched.
  double departure_ramp_seconds = 300;
  double min_bucket_samples = 4;  // slower sampling widens buckets (doubling) to hold this many
  // How evidence sentences name a moment ("Growing since ..."): an offset from the series' first
  // sample ("+1h 5m"), the time itself on a trace without a clock, whose times are seconds from
  // its first sample ("t+1h 5m", as analyze's report writes them), or the clock time when the
  // times are epoch seconds: UTC ("2026-11-30 02:15 UTC": the live daemon, a trace that named its
  // zone) or a zone-less trace's wall clock as written ("2026-11-30 02:15"). EvidenceTimesFor()
  // picks it from a trace's clock; LeakEngine::SetEvidenceTimes() changes it later.
  enum class EvidenceTimes { kOffset, kTraceTime, kUtcClock, kWallClock };
  EvidenceTimes evidence_times = EvidenceTimes::kOffset;
};

// How evidence names moments on a trace's clock (core/time.h): a trace whose times named their
// zone gets UTC clock times, one without a zone its wall clock as written, and one without a clock
// at all (`synthetic_time`: times are seconds from the trace's first sample) those times.
inline EngineConfig::EvidenceTimes EvidenceTimesFor(bool has_zone, bool synthetic_time) {
  if (synthetic_time) return EngineConfig::EvidenceTimes::kTraceTime;
  return has_zone ? EngineConfig::EvidenceTimes::kUtcClock : EngineConfig::EvidenceTimes::kWallClock;
}

// One time bucket of the series.
struct Bucket {
  double t_start = 0;      // seconds
  double t_end = 0;        // seconds (time of the last sample in the bucket)
  double floor_bytes = 0;  // low quantile of the samples in the bucket
  double peak_bytes = 0;   // maximum
  double last_bytes = 0;   // last sample
  size_t count = 0;
  double min_bytes = 0;  // minimum (drop detection)
};

// A fitted trend on the floor: used(t) ≈ y0_bytes + slope * (t - t0).
struct TrendFit {
  double window_seconds = 0;  // length of history the fit used
  double t0 = 0;              // start of the fitted stretch (seconds)
  double y0_bytes = 0;        // fitted floor at t0
  double slope_bps = 0;       // Sen's slope, bytes/second
  double slope_lo_bps = 0;    // lower end of the ci_level interval
  double slope_hi_bps = 0;    // upper end
  double mk_z = 0;            // Mann–Kendall statistic (tie- and autocorrelation-corrected)
  double mk_p = 1;            // its two-sided p-value
  // Added: the keeps-going numbers behind the verdict for this window.
  double rise_bytes = 0;                       // measured rise of the floor over the window
  std::array<double, 3> third_rise_bytes{};    // rise of the floor in each third
  std::optional<double> first_half_slope_bps;  // Sen's slope of each half
  std::optional<double> second_half_slope_bps;
  bool passed = false;  // this window alone passed every leak test
  std::string failed;   // else the first test it failed, in words
};

// A process that left a series' GPU (LeakEngine::NoteDeparture): who, what it held and between
// which moments it went.
struct Departure {
  std::optional<int64_t> pid;          // when the caller knows it
  double held_bytes = 0;               // its memory when last seen
  double last_seen_t = 0;              // last listed (seconds)
  double gone_t = 0;                   // first found gone (seconds)
  std::optional<double> first_seen_t;  // first listed (seconds), when the caller knows it
};

// A holder still listed on the GPU when another left (LeakEngine::NoteDeparture).
struct ListedHolder {
  double first_seen_t = 0;  // first listed (seconds)
  double bytes = 0;         // its memory now
};

// A leak is critical when its pessimistic time to OOM (Assessment::tto_lo_s) is under this, in
// seconds: the default of `analyze --critical-runway` and `watch --critical-runway`, and of the
// evaluation's vramwatch_critical column.
inline constexpr double kCriticalRunwaySeconds = 24 * 3600.0;

// Whether a leak's runway (seconds) makes it critical: its pessimistic time to OOM, or the time to
// OOM where no range is known, under critical_runway_s. No runway (capacity unknown): never.
bool RunwayIsCritical(const std::optional<double>& tto_lo_s, const std::optional<double>& tto_s,
                      double critical_runway_s);

struct Assessment {
  Verdict verdict = Verdict::kInsufficientData;
  size_t samples = 0;
  double start_t = 0;                     // first sample (seconds)
  double end_t = 0;                       // last sample (seconds)
  std::optional<double> capacity_bytes;   // total − reserved, when known
  std::optional<double> last_used_bytes;  // last sample
  std::optional<double> floor_bytes;      // recent floor
  std::optional<double> peak_bytes;       // recent peak
  std::optional<double> settled_at;       // when warm-up/settling ended (seconds), if it has
  std::optional<TrendFit> trend;          // the fit behind a leak verdict (or the measured slope)
  std::optional<double> leak_start_t;     // where the sustained growth began (seconds)
  // Leak rate and its interval (bytes/second); set only for a leak verdict.
  std::optional<double> rate_bps, rate_lo_bps, rate_hi_bps;
  // Time to OOM from end_t (seconds): (capacity − recent peak) / rate, with the range from the
  // rate's interval. Set only for a leak with known capacity.
  std::optional<double> tto_s, tto_lo_s, tto_hi_s;
  std::vector<std::string> evidence;  // sentences a person can check against the plot
  // A leak verdict in its own words, for an alert's description: the trend sentence ("Leak: ...")
  // then where the growth began and its rate ("Growing since ..."), both also in `evidence`.
  // Empty for every other verdict.
  std::string summary;
  // Added: where the current segment starts (after the last large drop; else the first sample).
  std::optional<double> segment_start_t;
  double bucket_seconds = 0;  // bucket width in use (after adaptation and merging)
  // Every trend window tested, shortest first (the one behind `trend` included).
  std::vector<TrendFit> window_fits;
  // Added: memory other holders of the same GPU use (bytes), taken off the capacity of a process
  // series (SetHeldByOthers); unset for a GPU series. `on_mig_instance`: the capacity and those
  // holders are the process's MIG GPU instance's, not the card's.
  std::optional<double> held_by_others_bytes;
  bool on_mig_instance = false;
  // Added: falls explained by processes that left (NoteDeparture): how many, the memory their
  // falls freed (bytes), when the last fall happened (seconds) and the process behind it. The
  // buckets before each fall are kept net of it.
  size_t departures_explained = 0;
  double departed_bytes = 0;
  std::optional<double> last_departure_t;
  std::optional<Departure> last_departed;
  // Added: under a load that swings with a regular cycle and without a leak verdict, the rate
  // (bytes/second, Sen's slope of the cycle-free floor's block means) of a rise that Mann–Kendall
  // finds at p ≤ EngineConfig::watch_alpha on one of its windows (the evidence names it); unset
  // otherwise.
  std::optional<double> load_rise_bps;
  // Added: for a settling verdict whose growth passed the tests but was held back by the history
  // rules (a young job, or slow growth before slow_history_seconds), the time (seconds) from which
  // they let it be called a leak if it goes on; unset otherwise.
  std::optional<double> held_until_t;
};

class LeakEngine {
 public:
  explicit LeakEngine(EngineConfig config = {});

  // One sample. Samples older than the last one are ignored and counted (out_of_order()).
  // Inline for the common case (a finite value at or after the last sample, in the open bucket's
  // cell); everything else, with the same result, in AddSlow.
  void Add(double t, double used_bytes) {
    if (open_.count != 0 && t >= last_t_ && t < open_grid_start_ + width_ && std::isfinite(used_bytes) &&
        used_bytes >= open_.last_bytes - config_.departure_min_bytes) {
      AppendToOpen(t, used_bytes);
      return;
    }
    AddSlow(t, used_bytes);
  }

  // A sample the caller left out for being out of time order: at `t` (seconds), in the input after
  // the sample at `after_t`. Counted as Add() counts one older than the last (out_of_order(), and
  // the first one's times); the engine's samples are unchanged.
  void CountOutOfOrder(double t, double after_t);

  // Card capacity: total and the driver-reserved part (bytes). May be called again when it changes.
  void SetCapacity(double total_bytes, double reserved_bytes = 0);
  // For a process series: the memory the GPU's other holders use now (bytes; unset: unknown). It
  // is taken off the capacity, so the runway is the time until the whole GPU runs out.
  // `on_mig_instance`: the capacity (SetCapacity) and `bytes` are the process's MIG GPU
  // instance's; only the evidence's words change.
  void SetHeldByOthers(std::optional<double> bytes, bool on_mig_instance = false) {
    held_by_others_ = bytes;
    on_mig_instance_ = on_mig_instance;
  }
  // How the evidence of later Assess() calls names moments (EngineConfig::evidence_times); it
  // changes only the wording, never a verdict or a number.
  void SetEvidenceTimes(EngineConfig::EvidenceTimes style) { config_.evidence_times = style; }

  // A holder of this series' memory (a process listed on the GPU) left: it was last seen at
  // `last_seen_t` and found gone at `now_t` (seconds), holding `bytes`. A fall of the series
  // after last_seen_t (already added, or within departure_match_seconds after now_t) of at least
  // departure_match_share × bytes is explained by it: every earlier sample is lowered by the
  // fall (at most `bytes`), as if that memory had never been held, so a leak that goes on is not
  // cut by another job's exit. With `first_seen_t` (when the holder was first listed) only the
  // samples from departure_ramp_seconds after it are lowered; without it, the whole segment's.
  // Not when one of those samples held less than the fall takes off (a GPU that runs one job after
  // another: nothing of the job went on), nor when holders first listed within those samples and
  // still listed (`still_listed`: the holders the GPU's list names as this one leaves) hold at
  // least departure_match_share of it: jobs that share a GPU and end in turn, each replaced by
  // another (lowering the samples for each job that left, while the newer ones stay in, made a
  // steady GPU a staircase up). A fall no departure explains is a drop as before.
  void NoteDeparture(double last_seen_t, double now_t, double bytes, std::optional<int64_t> pid = std::nullopt,
                     std::optional<double> first_seen_t = std::nullopt,
                     const std::vector<ListedHolder>& still_listed = {});

  // The current assessment; cost bounded by the bucket count (≤ 1 ms for a 12 h window).
  Assessment Assess() const;

  const std::deque<Bucket>& buckets() const { return buckets_; }
  // The open (last, not yet closed) bucket as it would close now, its floor the floor_quantile of
  // its samples, once Assess() counts it in the floor: two samples or more over half a width or
  // more. Nothing before that. The charts draw it after buckets(), so the floor and peak drawn
  // reach the samples the printed floor and peak come from.
  std::optional<Bucket> CountedOpenBucket() const;
  size_t samples() const { return samples_; }
  // Time of the newest sample taken (seconds); meaningful when samples() > 0.
  double last_t() const { return last_t_; }
  size_t out_of_order() const { return out_of_order_; }
  // The first sample ignored for being older than the one before it: its time and the time of the
  // sample it came after (seconds); unset while none was.
  std::optional<double> first_out_of_order_t() const { return first_out_of_order_t_; }
  std::optional<double> first_out_of_order_after_t() const { return first_out_of_order_after_t_; }
  const EngineConfig& config() const { return config_; }
  double bucket_width() const { return width_; }  // seconds, after adaptation and merging

 private:
  // The verdict, evidence and fits of `a` (its header, peak and floor set by Assess) from the
  // segment's bucket floors `pts` (seconds, bytes), oldest first.
  // Returns whether the floor swings with a load (the oscillation test).
  bool Judge(Assessment& a, const std::vector<FloorPoint>& pts) const;
  // Judge(), and for a leak on a swinging floor the swing_persist_seconds check: `base` is the
  // assessment with its header set; `pts` as for Judge().
  Assessment JudgePersistent(const Assessment& base, const std::vector<FloorPoint>& pts) const;
  void AddSlow(double t, double used_bytes);
  // The sample joins the open bucket (its cell is the sample's; the bucket is started).
  void AppendToOpen(double t, double used_bytes) {
    open_.t_end = t;
    open_.peak_bytes = std::max(open_.peak_bytes, used_bytes);
    open_.min_bytes = std::min(open_.min_bytes, used_bytes);
    open_.last_bytes = used_bytes;
    ++open_.count;
    open_values_.push_back(used_bytes);
    ++samples_;
    last_t_ = t;
  }

  EngineConfig config_;
  std::deque<Bucket> buckets_;
  size_t samples_ = 0;
  size_t out_of_order_ = 0;
  std::optional<double> first_out_of_order_t_, first_out_of_order_after_t_;
  std::optional<double> total_bytes_;
  double reserved_bytes_ = 0;
  double first_t_ = 0;
  double last_t_ = 0;
  // The open bucket: its samples (kept only while it is open) and running summary.
  std::vector<double> open_values_;
  Bucket open_;
  double open_grid_start_ = 0;  // grid cell [open_grid_start_, + width_) of the open bucket
  double width_ = 0;            // current bucket width (seconds)
  bool width_fixed_ = false;    // sampling-interval adaptation done
  double segment_start_t_ = 0;
  struct Drop {
    double t = 0, from_bytes = 0, to_bytes = 0;
  };
  std::optional<Drop> last_drop_;
  std::optional<double> held_by_others_;
  bool on_mig_instance_ = false;
  // The largest recent fall between consecutive samples (at least departure_min_bytes): when, by
  // how much, and where the first sample after it sits (its bucket's start; its index among the
  // open bucket's values while that bucket is open).
  struct Fall {
    double t = 0, bytes = 0, bucket_t_start = 0;
    size_t open_index = 0;
    bool in_open = false;
  };
  std::optional<Fall> recent_fall_;
  // Memory of departed holders not yet matched to a fall, and until when it may be.
  double pending_departed_bytes_ = 0;
  double pending_until_t_ = 0;
  double pending_after_t_ = 0;
  Departure pending_departure_;                     // the last one noted of those pending
  std::vector<ListedHolder> pending_still_listed_;  // ... and the holders listed when it went
  size_t departures_explained_ = 0;
  double departed_bytes_ = 0;
  std::optional<double> last_departure_t_;
  std::optional<Departure> last_departed_;
  std::optional<double> segment_start_before_drop_;  // to undo a segment a departure explains

  void CloseOpenBucket();
  void MergeBuckets();
  void CheckDrop(const Bucket& closed);
  // A sample at `t` of `used_bytes` fell from the previous one: record it, or explain it by a
  // pending departure.
  void NoteFall(double t, double used_bytes, double prev_bytes);
  // From when the samples before the fall `f` are judged net of `who` (seconds): the start of the
  // segment that holds them (the current one, or the one the fall ended when it was a drop), or,
  // when `who` was first listed after the series' first sample, departure_ramp_seconds after that,
  // whichever is later.
  double HeldFrom(const Fall& f, const Departure& who) const;
  // Lower every sample from HeldFrom() to the fall `f` by `bytes` (net of a departed holder);
  // forgets the recent fall.
  void ShiftBefore(const Fall& f, double bytes, const Departure& who);
  // Whether every sample from HeldFrom() to the fall `f` held at least `bytes`, less
  // departure_min_bytes. When the GPU runs one job after another, the job's own ramp from the
  // empty GPU fails this, and lowering the samples would take them below zero. And whether the
  // holders of `still_listed` first listed after HeldFrom() and before the fall hold less than
  // departure_match_share × `bytes`: else the job that left was replaced by them, and lowering
  // the samples before the fall while theirs stay would turn the rotation into a rise.
  bool HeldThrough(const Fall& f, double bytes, const Departure& who,
                   const std::vector<ListedHolder>& still_listed) const;
};

// What the GPU's other holders use, for a process series' runway (LeakEngine::SetHeldByOthers;
// bytes): the GPU's used memory less the process's own when the GPU's is known; else the memory of
// the other processes listed with it (`others_listed_bytes`, their sum: a pmon log lists
// processes only), a lower bound.
inline double HeldByOthers(std::optional<uint64_t> gpu_used_bytes, uint64_t own_bytes, uint64_t others_listed_bytes) {
  if (gpu_used_bytes) return std::max(0.0, static_cast<double>(*gpu_used_bytes) - static_cast<double>(own_bytes));
  return static_cast<double>(others_listed_bytes);
}

}  // namespace vw::detection
