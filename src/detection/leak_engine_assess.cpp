// LeakEngine::Assess(): settling gate, multi-window growth tests, verdict, runway and evidence.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>

#include "core/time.h"
#include "core/units.h"
#include "detection/floor_shape.h"
#include "detection/growth_window.h"
#include "detection/imminent_fill.h"
#include "detection/leak_engine.h"
#include "detection/leak_rate.h"
#include "detection/mann_kendall.h"
#include "detection/new_level.h"
#include "detection/oscillation.h"
#include "detection/quantile.h"
#include "detection/verdict_evidence.h"
#include "detection/window_choice.h"

namespace vw::detection {
namespace {

// A window that passed on a swinging load's floor but whose cycle-free floor did not rise.
struct Unconfirmed {
  size_t window = 0;         // index in the floor's windows
  Oscillation cycle;         // the cycle removed
  double block_seconds = 0;  // the cycle-free floor was averaged over blocks of this
  MannKendallResult mk;      // on those block means
};

// A window that passed on a swinging load's cycle-free block means but whose lows did not rise.
struct LowsUnconfirmed {
  double window_seconds = 0;
  double lows_block_seconds = 0;
  double means_z = 0;  // Mann–Kendall on the block means
  double lows_z = 0;   // ... and on the lows
};

// A rise of a swinging load's cycle-free floor that no test called a leak (EngineConfig::watch_alpha),
// on the block means of one of its windows (the cycle and block width are the floor's own).
struct LoadRise {
  double window_seconds = 0;
  MannKendallResult mk;
  double slope_bps = 0;  // Sen's slope of the block means
};

// A leak verdict from a rate fit of the cycle-free floor (the tests on its lows, the imminent fill):
// the trend, start, rate and interval, the "Growing since" sentence, the summary (the sentence at
// `trend_sentence`, then that one) and the runway. `rise_bytes`: the rise the test measured, if any.
void SetLeakFromFit(Assessment& a, const LeakRateFit& r, std::optional<double> rise_bytes, size_t trend_sentence,
                    double first_t, EngineConfig::EvidenceTimes times, double ci_level) {
  a.verdict = Verdict::kLeak;
  TrendFit f;
  f.window_seconds = r.t_end - r.start_t;
  f.t0 = r.start_t;
  f.y0_bytes = r.sen.intercept;
  f.slope_bps = r.sen.slope;
  f.slope_lo_bps = r.sen.low_slope;
  f.slope_hi_bps = r.sen.high_slope;
  if (rise_bytes) f.rise_bytes = *rise_bytes;
  f.passed = true;
  a.trend = f;
  a.leak_start_t = r.start_t;
  a.rate_bps = r.sen.slope;
  a.rate_lo_bps = r.sen.low_slope;
  a.rate_hi_bps = r.sen.high_slope;
  a.evidence.push_back(fmt::format("Growing since {} at {} (Sen's slope; {:.0f}% interval {} to {}).",
                                   At(r.start_t, first_t, times), Rate(r.sen.slope), 100 * ci_level,
                                   Rate(r.sen.low_slope), Rate(r.sen.high_slope)));
  a.summary = a.evidence[trend_sentence] + " " + a.evidence.back();
  AddRunway(a);
}

}  // namespace

Assessment LeakEngine::Assess() const {
  const EngineConfig& c = config_;
  Assessment a;
  a.samples = samples_;
  a.bucket_seconds = width_;
  if (samples_ == 0) {
    a.evidence.push_back("No samples yet.");
    return a;
  }
  a.start_t = first_t_;
  a.end_t = last_t_;
  a.segment_start_t = segment_start_t_;
  if (total_bytes_) a.capacity_bytes = *total_bytes_ - reserved_bytes_ - held_by_others_.value_or(0);
  a.held_by_others_bytes = held_by_others_;
  a.departures_explained = departures_explained_;
  a.departed_bytes = departed_bytes_;
  a.last_departure_t = last_departure_t_;
  a.last_departed = last_departed_;
  a.last_used_bytes = open_.count > 0 ? open_.last_bytes : buckets_.back().last_bytes;
  const double span = last_t_ - first_t_;
  if (samples_ < c.min_samples || span < c.min_span_seconds) {
    a.evidence.push_back(fmt::format("Only {} samples over {}; the trend tests need at least {} samples over {}.",
                                     samples_, FormatDuration(span), c.min_samples,
                                     FormatDuration(c.min_span_seconds)));
    return a;
  }

  // The current segment's points; the open bucket counts once it covers half a width.
  std::vector<FloorPoint> pts;
  std::optional<double> peak;
  for (const Bucket& b : buckets_) {
    if (b.t_start < segment_start_t_) continue;
    pts.push_back({(b.t_start + b.t_end) / 2, b.floor_bytes});
    if (b.t_end >= last_t_ - c.peak_lookback_seconds) peak = std::max(peak.value_or(b.peak_bytes), b.peak_bytes);
  }
  if (open_.count > 0) {
    peak = std::max(peak.value_or(open_.peak_bytes), open_.peak_bytes);
    if (open_.count >= 2 && open_.t_end - open_.t_start >= 0.5 * width_ && open_.t_start >= segment_start_t_) {
      std::vector<double> values = open_values_;
      pts.push_back({(open_.t_start + open_.t_end) / 2, *Quantile(values, c.floor_quantile)});
    }
  }
  a.peak_bytes = peak;
  if (!pts.empty()) {
    std::vector<double> recent;
    for (size_t i = pts.size() - std::min<size_t>(pts.size(), 3); i < pts.size(); ++i) recent.push_back(pts[i].floor);
    a.floor_bytes = *std::min_element(recent.begin(), recent.end());
  }
  Assessment now = JudgePersistent(a, pts);
  if (now.verdict != Verdict::kSettling || !(c.hold_seconds > 0)) return now;
  // Held: the data up to hold_seconds ago said leak, and what came since neither fell back nor
  // stopped: no floor since is below the level at the cut by more than three noise deviations, and
  // the median of the hold's last quarter is at least half the growth that leak's rate brings
  // above that level (less the same margin).
  const double cut = last_t_ - c.hold_seconds;
  const auto after = std::find_if(pts.begin(), pts.end(), [cut](const FloorPoint& p) { return p.t > cut; });
  const auto before =
      std::find_if(pts.begin(), after, [&](const FloorPoint& p) { return p.t >= cut - c.hold_seconds; });
  if (after - before < 5 || pts.end() - after < 4) return now;
  std::vector<double> at_cut;
  for (auto it = after - 5; it != after; ++it) at_cut.push_back(it->floor);
  const double level = *Median(at_cut);
  const double tol = 3 * FloorNoise(std::span<const FloorPoint>(before, after));
  std::vector<double> last;
  double low_since = std::numeric_limits<double>::infinity(), low_before = low_since;
  for (auto it = before; it != after; ++it) low_before = std::min(low_before, it->floor);
  for (auto it = after; it != pts.end(); ++it) {
    low_since = std::min(low_since, it->floor);
    if (it->t >= last_t_ - c.hold_seconds / 4) last.push_back(it->floor);
  }
  if (last.empty()) return now;
  const double last_median = *Median(last);
  const double since_s = last_t_ - (after - 1)->t;
  // The rise asked for is half of what max(min_rate_bps, the leak's rate) brings: from the level
  // at the cut to the median of the hold's last quarter, or (for a floor that swings with a load)
  // from the lowest floor of the hold before the cut to the lowest since, which must not fall: on a
  // swinging floor three noise deviations are the load's own swings. Checked at min_rate_bps
  // before the second judgement, which costs as much as the first.
  auto rose = [&](double bps) { return low_since >= level - tol && last_median >= level + 0.5 * bps * since_s - tol; };
  auto lows_rose = [&](double bps) {
    return low_since >= low_before + std::max(0.0, 0.5 * bps * c.hold_seconds - tol);
  };
  if (!rose(c.min_rate_bps) && !lows_rose(c.min_rate_bps)) return now;
  Assessment then = JudgePersistent(a, std::vector<FloorPoint>(pts.begin(), after));
  if (then.verdict != Verdict::kLeak || !then.rate_bps) return now;
  const double bps = std::max(c.min_rate_bps, *then.rate_bps);
  const std::string since =
      rose(bps) ? fmt::format(
                      "the floor has stayed above {} and went on rising (median {} over the last {}, {} from the "
                      "level at the cut)",
                      FormatBytes(level - tol), FormatBytes(last_median), FormatDuration(c.hold_seconds / 4),
                      Signed(last_median - level))
      : lows_rose(bps) ? fmt::format("its lowest floor ({}) stayed above the lowest of the {} before ({}), by {}",
                                     FormatBytes(low_since), FormatDuration(c.hold_seconds), FormatBytes(low_before),
                                     Signed(low_since - low_before))
                       : "";
  if (since.empty()) return now;
  then.evidence.push_back(fmt::format(
      "These tests ran on the data up to {}. On all of it {}; but since then {}: a rise at the end that cannot yet "
      "be told from a spike or a step does not undo the leak found before it.",
      At((after - 1)->t, first_t_, config_.evidence_times), WhyOf(now.evidence), since));
  return then;
}

Assessment LeakEngine::JudgePersistent(const Assessment& base, const std::vector<FloorPoint>& pts) const {
  Assessment now = base;
  const bool swinging = Judge(now, pts);
  const double persist = config_.swing_persist_seconds;
  if (now.verdict != Verdict::kLeak || !swinging || !(persist > 0) || pts.empty()) return now;
  // The data up to persist seconds before the last point: the buckets whose middle is no later.
  const double cut = pts.back().t - persist;
  const auto after = std::find_if(pts.begin(), pts.end(), [cut](const FloorPoint& p) { return p.t > cut; });
  Assessment then = base;
  Judge(then, std::vector<FloorPoint>(pts.begin(), after));
  if (then.verdict == Verdict::kLeak) return now;
  // The summary is "Leak: <trend> Growing since ...": said again without its "Leak: ".
  constexpr std::string_view kLeakPrefix = "Leak: ";
  const std::string found =
      now.summary.rfind(kLeakPrefix, 0) == 0 ? now.summary.substr(kLeakPrefix.size()) : now.summary;
  then.evidence.push_back(fmt::format(
      "On all the data the tests find a leak: {} On the data up to {} they do not, and under a load that swings a "
      "leak is called only when the data up to {} earlier shows it too: each test is asked again at every check, "
      "and a healthy load's wander can pass one of them for a moment.",
      found, At(after == pts.begin() ? cut : (after - 1)->t, first_t_, config_.evidence_times),
      FormatDuration(persist)));
  return then;
}

bool LeakEngine::Judge(Assessment& a, const std::vector<FloorPoint>& pts) const {
  const EngineConfig& c = config_;
  if (last_drop_ && last_drop_->t == segment_start_t_) {
    a.evidence.push_back(fmt::format(
        "Memory fell from a floor of {} to {} at {} (a restart or an emptied cache): the analysis starts there.",
        FormatBytes(last_drop_->from_bytes), FormatBytes(last_drop_->to_bytes),
        At(last_drop_->t, first_t_, config_.evidence_times)));
  }
  if (departures_explained_ > 0 && last_departed_) a.evidence.push_back(DepartureSentence(a, config_.evidence_times));
  if (pts.size() < 3) {
    a.evidence.push_back("Too little data since the segment began for a trend test.");
    return false;
  }

  // Settling gate: the floor's rise over the last settle window must be small, or no longer
  // falling (steady growth is not a warm-up ramp).
  const double level = a.capacity_bytes.value_or(pts.back().floor);
  const double fast = std::max(c.settle_min_bytes, c.settle_fraction * level);
  const double ws = c.settle_window_seconds;
  std::optional<size_t> settled;
  double last_rise = 0;
  {
    size_t j = 0;
    std::optional<double> prev_rise;  // rise one settle window earlier
    std::vector<double> rises(pts.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < pts.size(); ++i) {
      if (pts[i].t - pts.front().t < ws) continue;
      while (j + 1 < i && pts[j + 1].t <= pts[i].t - ws) ++j;
      rises[i] = pts[i].floor - pts[j].floor;
      last_rise = rises[i];
      prev_rise.reset();
      if (!std::isnan(rises[j])) prev_rise = rises[j];
      const bool quiet = rises[i] < fast;
      const bool steady = prev_rise && rises[i] > 0 && rises[i] >= 0.5 * *prev_rise;
      if (quiet || steady) {
        settled = i;
        break;
      }
    }
  }
  if (!settled) {
    a.verdict = Verdict::kWarmup;
    a.evidence.push_back(fmt::format(
        "Still warming up: the floor rose by {} in the last {}; the leak tests start once it rises by less than {} "
        "per {}.",
        Signed(last_rise), FormatDuration(ws), FormatBytes(fast), FormatDuration(ws)));
    return false;
  }
  a.settled_at = pts[*settled].t;
  const std::span<const FloorPoint> analysed(pts.begin() + static_cast<std::ptrdiff_t>(*settled), pts.end());
  const double span_a = analysed.back().t - analysed.front().t;

  // Windows: each configured one the data covers, plus all the settled data when it falls between.
  std::vector<double> sizes;
  std::vector<double> configured = c.windows_seconds;
  std::sort(configured.begin(), configured.end());
  for (double w : configured)
    if (w > 0 && span_a >= 0.98 * w) sizes.push_back(w);
  const double longest = configured.empty() ? span_a : configured.back();
  if (span_a >= c.min_window_seconds && span_a < longest &&
      (sizes.empty() || span_a > sizes.back() + c.min_window_seconds / 2))
    sizes.push_back(span_a);
  if (sizes.empty()) {
    // Too short for a trend test: still rising is warm-up, else a plateau so far.
    const double since = analysed.back().floor - analysed.front().floor;
    a.verdict = since > c.min_growth_bytes ? Verdict::kWarmup : Verdict::kPlateau;
    a.evidence.push_back(fmt::format(
        "The floor settled at {} ({}); {} of settled data is too short for a trend test "
        "(at least {}){}.",
        At(*a.settled_at, first_t_, config_.evidence_times), FormatBytes(analysed.front().floor),
        FormatDuration(span_a), FormatDuration(c.min_window_seconds),
        a.verdict == Verdict::kWarmup ? fmt::format(", and it has risen by {} since, more than {}: still warming up",
                                                    Signed(since), FormatBytes(c.min_growth_bytes))
                                      : ""));
    return false;
  }
  const GrowthOptions go{.alpha = c.alpha,
                         .ci_level = c.ci_level,
                         .min_rate_bps = c.min_rate_bps,
                         .min_growth_bytes = c.min_growth_bytes,
                         .third_fraction = c.third_fraction,
                         .late_fraction = c.late_fraction,
                         .slowdown_ratio = c.slowdown_ratio,
                         .strong_slowdown_ratio = c.strong_slowdown_ratio,
                         .third_balance = c.third_balance,
                         .rise_consistency = c.rise_consistency,
                         .max_jump_share = c.max_jump_share,
                         .max_points = c.max_trend_points};
  const bool young = span_a < c.min_history_seconds;
  const SettledAge age{.young = young,
                       .slow_young = span_a < c.slow_history_seconds,
                       .smooth_young = span_a < std::max(c.min_history_seconds, c.smooth_history_seconds),
                       .first_window = configured.empty() ? c.min_window_seconds : configured.front()};
  SettledAge floor_age = age;
  floor_age.floor = analysed;
  // The tests run on the floor with short spikes removed; the rate is fitted on the floor itself.
  const std::vector<FloorPoint> opened = Opening(analysed, c.spike_seconds);
  // Whether the floor swings with a load: it fell below an earlier high by much more than its noise.
  bool oscillating = false;
  {
    const std::span<const FloorPoint> longest_span = Tail(opened, sizes.back());
    oscillating = MaxDrawdown(longest_span) > std::max(c.oscillation_min_bytes, 8 * FloorNoise(longest_span));
  }
  GrowthOptions floor_go = go;
  if (oscillating) {
    floor_go.alpha = std::min(go.alpha, c.oscillating_floor_alpha);
  } else {  // a steady floor's growth must come in more than a few steps (a swinging one's always does)
    floor_go.top_jumps = c.top_jumps;
    floor_go.max_top_jumps_share = c.max_top_jumps_share;
    floor_go.regular_min_step_bytes = c.regular_min_step_bytes;
    floor_go.regular_min_steps = c.regular_min_steps;
    floor_go.regular_size_tolerance = c.regular_size_tolerance;
    floor_go.regular_chance = c.regular_chance;
    floor_go.regular_gap_ratio = c.regular_gap_ratio;
    floor_go.regular_carry = c.regular_carry;
  }
  SeriesVerdict floor_v = TestSeries(opened, sizes, floor_go, c, floor_age);
  // Growth that began after the settled floor held flat is no settling curve (asked only when a
  // window grew: the history rules hold back nothing else).
  const bool late_onset = age.slow_young && !oscillating && AnyWindowGrew(floor_v) && BeganAfterFlat(opened, c);
  if (late_onset) {
    floor_age.young = floor_age.smooth_young = false;
    floor_v.leak_at.reset();
    floor_v.vetoed_by.reset();
    floor_v.smooth = false;
    ChooseWindow(floor_v, c, floor_age);
  }
  // A window from where the growth began, unless the floor swings (a load's rising half-cycle would
  // pass from its trough).
  if (!oscillating) AddOnsetWindow(floor_v, opened, floor_go, c, floor_age);
  // The regular cycle of the floor over the longest window, estimated once when first needed: the
  // cycle, the floor with it removed, and the blocks that floor is averaged over.
  struct LongestCycle {
    std::optional<Oscillation> cycle;
    std::vector<FloorPoint> cycle_free;
    double block_s = 0;
  };
  std::optional<LongestCycle> longest_cycle;
  auto cycle_of_longest = [&]() -> const LongestCycle& {
    if (!longest_cycle) {
      LongestCycle l;
      const std::span<const FloorPoint> longest_span = Tail(analysed, sizes.back());
      l.cycle = EstimateOscillation(longest_span, {.min_periods = c.oscillation_min_periods,
                                                   .min_autocorrelation = c.oscillation_min_autocorrelation});
      if (l.cycle) {
        l.cycle_free = RemoveOscillation(longest_span, *l.cycle);
        l.block_s = std::max(c.oscillation_block_seconds, l.cycle->period_seconds / c.oscillation_points_per_period);
      }
      longest_cycle = std::move(l);
    }
    return *longest_cycle;
  };
  // A swinging load's growth that passed on its floor or its lower envelope is confirmed on the
  // cycle-free floor when a cycle is found (the floor alone can wander for hours with the load while
  // its cycle as a whole stays put): Mann–Kendall over the window on that floor's block means, or
  // nullopt when no cycle is found or the window holds too few periods to ask.
  auto cycle_free_trend = [&](double w_s) -> std::optional<MannKendallResult> {
    const LongestCycle& lc = cycle_of_longest();
    if (!lc.cycle || w_s < c.oscillation_min_periods * lc.cycle->period_seconds) return std::nullopt;
    std::vector<double> means;
    for (const FloorPoint& p : BlockMeans(Tail(lc.cycle_free, w_s), lc.block_s)) means.push_back(p.floor);
    return EngineMannKendall(means);
  };
  std::optional<Unconfirmed> unconfirmed;
  if (floor_v.leak_at && oscillating && c.oscillating_confirm_z > 0) {
    const auto mk = cycle_free_trend(floor_v.windows[*floor_v.leak_at].seconds);
    if (mk && mk->z < c.oscillating_confirm_z) {
      const LongestCycle& lc = cycle_of_longest();
      unconfirmed = Unconfirmed{*floor_v.leak_at, *lc.cycle, lc.block_s, *mk};
      floor_v.leak_at.reset();
    }
  }
  const std::vector<Window>& windows = floor_v.windows;
  for (const Window& w : windows) a.window_fits.push_back(FitOf(w));
  if (windows.empty()) {
    a.verdict = Verdict::kPlateau;
    a.evidence.push_back("Too few buckets in the settled data for a trend test.");
    return oscillating;
  }
  std::optional<size_t> leak_at = floor_v.leak_at, vetoed_by = floor_v.vetoed_by;
  // Under an oscillating load the floor swings with it: test the lower envelope as well, over
  // windows at least three envelope spans long.
  std::vector<FloorPoint> envelope;
  std::optional<SeriesVerdict> env_v;
  double envelope_s = 0;
  // First a regular cycle: estimated over the longest window, removed (the median floor at each phase
  // subtracted) and the rest averaged over blocks, then tested at the stricter oscillation_alpha (a
  // second series tested at every check, with noise that stays serially correlated at the block
  // scale). Besides the configured windows, intermediate ones (consecutive sizes at most
  // oscillation_window_ratio apart, above min_history_seconds) are tested at
  // oscillation_intermediate_alpha: a leak that began hours into a job fails the keeps-going tests
  // on a window that starts long before it, and three hours of block means are often too few.
  std::optional<Oscillation> cycle;
  double block_s = 0;
  std::optional<Oscillation> estimated;  // the cycle found, whether or not a window passed on it
  std::vector<FloorPoint> cycle_free;    // the floor over the longest window with that cycle removed
  std::optional<LoadRise> watch;         // the most significant rise of its block means (watch_alpha)
  std::optional<LowsUnconfirmed> lows_unconfirmed;
  std::optional<PreRise> pre_rise;
  // Every verdict other than a leak after this point returns through here: it says what the
  // cycle-free floor showed when it rose without a leak verdict.
  auto not_a_leak = [&]() {
    if (lows_unconfirmed) {
      const LowsUnconfirmed& u = *lows_unconfirmed;
      a.evidence.push_back(fmt::format(
          "With the load's cycle removed the floor averaged over each {} rose over the last {} (Mann–Kendall "
          "z={:.1f}), but its lowest over each {} did not (z={:.1f}; a leak needs {:.3f}): a leak lifts every level "
          "the load swings between, the lowest too, while batch levels that happen to run high for a while lift "
          "only the means.",
          FormatDuration(block_s), FormatDuration(u.window_seconds), u.means_z, FormatDuration(u.lows_block_seconds),
          u.lows_z, c.oscillating_lows_z));
    }
    if (pre_rise) {
      const PreRise& r = *pre_rise;
      a.evidence.push_back(fmt::format(
          "With the load's cycle removed the floor averaged over each {} rose {} over the last {}, but its end is only "
          "{} against its level over the {} before (a leak needs {:.0f} % of the rise above that level): a load's "
          "level coming back from a dip, where a leak's rise stands above what came before it.",
          FormatDuration(block_s), FormatBytes(r.high - r.low), FormatDuration(r.window_seconds),
          Signed(r.high - r.before), FormatDuration(r.before_seconds), 100 * c.oscillating_pre_rise_share));
    }
    if (!watch) return oscillating;
    std::string cycle_s = CycleSentence(*estimated);  // set with `watch`
    cycle_s[0] = static_cast<char>(std::tolower(cycle_s[0]));
    a.load_rise_bps = watch->slope_bps;
    a.evidence.push_back(fmt::format(
        "Worth watching: {}, and with it removed the floor averaged over each {} rose over the last {} at {} "
        "(Sen's slope; Mann–Kendall z={:.1f}, {}). Under a load that swings that is not yet enough for a leak "
        "verdict; look again in an hour or two.",
        cycle_s, FormatDuration(block_s), FormatDuration(watch->window_seconds), Rate(watch->slope_bps), watch->mk.z,
        PText(watch->mk.p)));
    return oscillating;
  };
  if (!leak_at && oscillating) {
    if (std::optional<Oscillation> osc = cycle_of_longest().cycle) {
      cycle_free = cycle_of_longest().cycle_free;
      estimated = osc;
      const std::vector<FloorPoint>& removed = cycle_free;
      block_s = cycle_of_longest().block_s;
      GrowthOptions cycle_go = go;
      cycle_go.alpha = c.oscillation_alpha;
      cycle_go.jump_net_of_slope = true;
      cycle_go.stop_when_not_significant = true;  // only a passing window is looked at ...
      cycle_go.read_alpha = c.watch_alpha;        // ... and a rise worth watching
      GrowthOptions intermediate_go = cycle_go;
      intermediate_go.alpha = c.oscillation_intermediate_alpha;
      SeriesVerdict v;
      std::vector<std::vector<FloorPoint>> flats;  // each tested window's block means
      for (const auto& [w, intermediate] : CycleWindows(sizes, c)) {
        if (w < c.oscillation_min_periods * osc->period_seconds) continue;
        std::vector<FloorPoint> flat = BlockMeans(Tail(removed, w), block_s);
        auto test = TestGrowthWindow(flat, intermediate ? intermediate_go : cycle_go);
        if (!test) continue;
        if (c.watch_alpha > 0 && test->mk && test->mk->z > 0 && test->mk->p <= c.watch_alpha &&
            (!watch || test->mk->z > watch->mk.z))
          if (auto sen = SenOfFloor(flat, flat.front().t, c.ci_level);
              sen && sen->slope >= c.min_rate_bps && sen->slope * w >= c.min_growth_bytes)
            watch = LoadRise{w, *test->mk, sen->slope};
        v.windows.push_back({w, *test});
        flats.push_back(std::move(flat));
      }
      ChooseWindow(v, c, age);
      AddCycleOnsetWindow(v, flats, removed, osc->period_seconds, block_s, cycle_go, AnyWindowGrew(floor_v), c, age);
      if (v.leak_at && c.oscillating_lows_z > 0) {
        const Window& w = v.windows[*v.leak_at];
        const double lows_block_s = std::max(c.oscillating_lows_block_seconds, block_s);
        std::vector<double> lows;
        for (const FloorPoint& p : BlockLows(Tail(removed, w.seconds), lows_block_s, 3)) lows.push_back(p.floor);
        const auto mk = EngineMannKendall(lows);
        if (!mk || mk->z < c.oscillating_lows_z) {
          if (mk && w.test.mk) lows_unconfirmed = LowsUnconfirmed{w.seconds, lows_block_s, w.test.mk->z, mk->z};
          v.leak_at.reset();
        }
      }
      if (v.leak_at && c.oscillating_pre_rise_share > 0) {
        const double w_s = v.windows[*v.leak_at].seconds;
        if (auto r = PreRiseOf(removed, flats[*v.leak_at], w_s, block_s, c.oscillating_pre_min_seconds);
            r && r->Share() < c.oscillating_pre_rise_share) {
          pre_rise = r;
          v.leak_at.reset();
        }
      }
      if (v.leak_at) {
        // The start and rate are fitted on the passing window's block means.
        envelope = std::move(flats[*v.leak_at]);
        v.windows.resize(*v.leak_at + 1);
        env_v = std::move(v);
        cycle = std::move(osc);
      }
    }
  }
  if (!leak_at && oscillating && !env_v) {
    for (double span_s : c.envelope_seconds) {
      std::vector<double> env_sizes;
      for (double w : sizes)
        if (w >= 3 * span_s) env_sizes.push_back(w);
      if (env_sizes.empty()) continue;
      std::vector<FloorPoint> e = LowerEnvelope(analysed, span_s);
      GrowthOptions env_go = go;
      env_go.stop_when_not_significant = true;  // only a passing window is looked at
      SeriesVerdict v = TestSeries(e, env_sizes, env_go, c, age);
      if (v.leak_at && c.oscillating_confirm_z > 0) {
        const auto mk = cycle_free_trend(v.windows[*v.leak_at].seconds);
        if (mk && mk->z < c.oscillating_confirm_z) continue;
      }
      if (v.leak_at) {
        envelope = std::move(e);
        env_v = std::move(v);
        envelope_s = span_s;
        break;
      }
    }
  }
  // Last, with a cycle found and no window passing: has the cycle-free floor just moved to a level it
  // never reached before, are its block lows rising (a settled job only, for both), or has it ramped
  // up to a new level after a long stretch below it (any job)? The rate is fitted on the cycle-free
  // floor.
  if (!leak_at && !env_v && estimated) {
    const double slow_floor_bps =
        span_a < c.slow_history_seconds ? std::max(c.min_rate_bps, c.slow_rate_bps) : c.min_rate_bps;
    std::optional<NewLevel> moved;
    std::optional<RisingLows> rising;
    std::optional<Ramp> ramp;
    if (!young) {
      moved = FindNewLevel(cycle_free, {.block_seconds = c.new_level_block_seconds,
                                        .min_recent_blocks = c.new_level_min_recent_blocks,
                                        .max_recent_blocks = c.new_level_max_recent_blocks,
                                        .min_earlier_blocks = c.new_level_min_earlier_blocks,
                                        .margin_sds = c.new_level_margin_sds,
                                        .min_gap_bytes = c.min_growth_bytes});
      if (!moved)
        rising = FindRisingLows(cycle_free, {.block_seconds = c.new_level_block_seconds,
                                             .alpha = c.rising_lows_alpha,
                                             .min_rate_bps = slow_floor_bps,
                                             .ci_level = c.ci_level});
    }
    if (!moved && !rising && c.ramp_max_blocks > 0)
      ramp = FindRampToNewLevel(cycle_free, {.block_seconds = c.new_level_block_seconds,
                                             .min_ramp_blocks = c.ramp_min_blocks,
                                             .max_ramp_blocks = c.ramp_max_blocks,
                                             .min_earlier_blocks = c.new_level_min_earlier_blocks,
                                             .margin_sds = c.new_level_margin_sds,
                                             .min_gap_bytes = c.min_growth_bytes});
    const double since = moved ? moved->since_t : rising ? rising->from_t : ramp ? ramp->from_t : 0;
    auto rate = moved || rising || ramp
                    ? FitLeakRate(cycle_free, std::min(c.min_window_seconds, cycle_free.back().t - since), c.ci_level,
                                  c.max_trend_points)
                    : std::nullopt;
    // A ramp also needs the lower end of its rate's interval at the rate floor (no other test bounds
    // its rate).
    if (ramp && rate && rate->sen.low_slope < slow_floor_bps) rate.reset();
    if (rate && rate->sen.slope > 0) {
      a.verdict = Verdict::kLeak;
      const size_t trend_sentence = a.evidence.size();
      if (moved) {
        std::string lows;
        for (double l : moved->recent_lows_bytes) lows += (lows.empty() ? "" : ", ") + FormatBytes(l);
        a.evidence.push_back(fmt::format(
            "Leak: the load moved to a level it never reached before. With its cycle removed, the lowest floor of "
            "each of the last {} blocks of {} ({}) is above the highest low of the {} blocks before, since {} ({}), "
            "by {}: {:.1f} times the standard deviation of those lows ({}).",
            moved->recent_lows_bytes.size(), FormatDuration(c.new_level_block_seconds), lows, moved->earlier_blocks,
            At(moved->earlier_from_t, first_t_, config_.evidence_times), FormatBytes(moved->earlier_high_bytes),
            Signed(moved->gap_bytes), moved->margin_sds, FormatBytes(moved->earlier_sd_bytes)));
      } else if (ramp) {
        const NewLevel& l = ramp->level;
        std::string lows;
        for (double v : l.recent_lows_bytes) lows += (lows.empty() ? "" : ", ") + FormatBytes(v);
        a.evidence.push_back(fmt::format(
            "Leak: the load has been rising to a level it never reached before. With its cycle removed, the lowest "
            "floor of each {} block since {} stayed above the highest low of the {} blocks from {} to {} ({}), and "
            "the last {} ({}) stand above it by {}: {:.1f} times the standard deviation of those lows ({}).",
            FormatDuration(c.new_level_block_seconds), At(ramp->above_t, first_t_, config_.evidence_times),
            l.earlier_blocks, At(l.earlier_from_t, first_t_, config_.evidence_times),
            At(ramp->from_t, first_t_, config_.evidence_times), FormatBytes(l.earlier_high_bytes),
            l.recent_lows_bytes.size(), lows, Signed(l.gap_bytes), l.margin_sds, FormatBytes(l.earlier_sd_bytes)));
      } else {
        a.evidence.push_back(fmt::format(
            "Leak: with its cycle removed, the lowest floor of each {} block rose over the last {} (Mann–Kendall "
            "z={:.1f}, {} on {} block lows; Sen's slope of the lows {}, {:.0f}% interval {} to {}).",
            FormatDuration(c.new_level_block_seconds), FormatDuration(rising->window_seconds), rising->mk.z,
            PText(rising->mk.p), rising->blocks, Rate(rising->sen.slope), 100 * c.ci_level, Rate(rising->sen.low_slope),
            Rate(rising->sen.high_slope)));
      }
      a.evidence.push_back(fmt::format(
          "{}, so the test ran on the floor with that cycle removed (the median floor at each phase subtracted): a "
          "serving load's batches only add memory on top of its floor, and a healthy load's lows keep coming back "
          "to it.",
          CycleSentence(*estimated)));
      std::optional<double> rise;
      if (moved) {
        rise = moved->gap_bytes;
      } else if (ramp) {
        rise = ramp->level.gap_bytes;
      }
      SetLeakFromFit(a, *rate, rise, trend_sentence, first_t_, config_.evidence_times, c.ci_level);
      return oscillating;
    }
  }
  // Growth under the cycle that no test called, steady and running into the card soon or past the
  // load's swings.
  if (!leak_at && !env_v && estimated) {  // FindImminentFill returns at once when neither form is asked
    std::optional<double> room;
    if (a.capacity_bytes && a.peak_bytes) room = *a.capacity_bytes - *a.peak_bytes;
    if (auto fill = FindImminentFill(cycle_free, room,
                                     {.min_growth_seconds = c.fill_min_growth_seconds,
                                      .min_before_seconds = c.fill_min_before_seconds,
                                      .alpha = c.fill_alpha,
                                      .pace_ratio = c.fill_pace_ratio,
                                      .max_runway_seconds = c.fill_runway_seconds,
                                      .range_multiple = c.fill_range_multiple,
                                      .swings_range_multiple = c.fill_swings_multiple,
                                      .min_before_per_growth = c.fill_min_before_per_growth,
                                      .ci_level = c.ci_level,
                                      .max_points = c.max_trend_points})) {
      const LeakRateFit& r = fill->rate;
      a.evidence.push_back(fmt::format(
          "Leak: {}. With its cycle removed, the floor has risen since {} by {} (Mann–Kendall z={:.1f}, {} on its {} "
          "points), {:.1f} times the range the load's swings covered in the {} before it ({}), at one pace in both "
          "halves.",
          fill->runs_out_soon ? "memory runs out soon" : "the floor has risen past the load's swings",
          At(r.start_t, first_t_, config_.evidence_times), Signed(fill->rise_bytes), fill->mk.z, PText(fill->mk.p),
          BucketWords(width_), fill->before_range_bytes > 0 ? fill->rise_bytes / fill->before_range_bytes : 0.0,
          FormatDuration(fill->before_seconds), FormatBytes(fill->before_range_bytes)));
      const size_t trend_sentence = a.evidence.size() - 1;
      a.evidence.push_back(fmt::format(
          "{}, so the test ran on the floor with that cycle removed. Under a swinging load growth is otherwise called "
          "a leak only after hours of history (a young job's warm-up can look like this), but {}.",
          CycleSentence(*estimated),
          fill->runs_out_soon ? fmt::format("at this rate the card is full in under {} either way",
                                            FormatDuration(c.fill_runway_seconds))
                              : std::string("growth that keeps one pace and leaves the load's own swings behind is "
                                            "not how a load settles")));
      SetLeakFromFit(a, r, fill->rise_bytes, trend_sentence, first_t_, config_.evidence_times, c.ci_level);
      return oscillating;
    }
  }
  const std::span<const FloorPoint> leak_series = env_v ? std::span<const FloorPoint>(envelope) : analysed;
  const std::vector<Window>& leak_windows = env_v ? env_v->windows : windows;
  if (env_v) leak_at = env_v->leak_at;

  // The rate from where the growth began (the window may start on the plateau before it), over the
  // longest window tested. A window can pass at the rate floor while the growth since its start runs
  // slower (a staircase's late steps): such a leak would be reported below the floor it must reach.
  std::optional<LeakRateFit> rate;
  if (leak_at) {
    const Window& w = leak_windows[*leak_at];
    const double from = leak_series.back().t - leak_windows.back().seconds - 1e-9;
    auto first = std::lower_bound(leak_series.begin(), leak_series.end(), from,
                                  [](const FloorPoint& p, double t) { return p.t < t; });
    rate = FitLeakRate(std::span<const FloorPoint>(first, leak_series.end()), std::min(c.min_window_seconds, w.seconds),
                       c.ci_level, c.max_trend_points);
    if (rate && rate->sen.low_slope <= 0) rate.reset();
    const bool slow_rule = (env_v ? age : floor_age).slow_young && !(floor_v.smooth && !env_v);
    const double floor_bps = slow_rule ? std::max(c.min_rate_bps, c.slow_rate_bps) : c.min_rate_bps;
    if (rate && rate->sen.slope < floor_bps) {
      a.verdict = Verdict::kSettling;
      a.trend = FitOf(w);
      std::string s = TrendSentence(w, width_, cycle ? block_s : 0);
      s[0] = static_cast<char>(std::toupper(s[0]));
      a.evidence.push_back(fmt::format(
          "{}, but the growth since {} runs at only {} (Sen's slope; {:.0f}% interval {} to {}), below the {} a "
          "leak verdict needs{}: settling, not a leak.",
          s, At(std::max(analysed.front().t, rate->start_t - envelope_s), first_t_, config_.evidence_times),
          Rate(rate->sen.slope), 100 * c.ci_level, Rate(rate->sen.low_slope), Rate(rate->sen.high_slope),
          Rate(floor_bps),
          slow_rule ? fmt::format(" before {} of settled data", FormatDuration(c.slow_history_seconds)) : ""));
      return not_a_leak();
    }
  }
  if (leak_at) {
    const Window& w = leak_windows[*leak_at];
    const GrowthWindow& g = w.test;
    a.verdict = Verdict::kLeak;
    a.trend = FitOf(w);
    a.leak_start_t = g.t0;
    a.rate_bps = g.sen->slope;
    a.rate_lo_bps = g.sen->low_slope;
    a.rate_hi_bps = g.sen->high_slope;
    a.evidence.push_back(fmt::format("Leak: {}.", TrendSentence(w, width_, cycle ? block_s : 0)));
    const size_t trend_sentence = a.evidence.size() - 1;
    if (cycle)
      a.evidence.push_back(fmt::format(
          "{}, so the test ran on the floor with that cycle removed (the median floor at each phase of the cycle "
          "subtracted) and averaged over {}: the whole cycle, its troughs and its peaks alike, moved up.",
          CycleSentence(*cycle), FormatDuration(block_s)));
    else if (env_v)
      a.evidence.push_back(
          fmt::format("The load oscillates, so the test ran on the lower envelope: the lowest floor over each {}.",
                      FormatDuration(envelope_s)));
    if (rate) {
      // The envelope lags the floor by its span: growth it shows from s began about a span earlier.
      a.leak_start_t = std::max(analysed.front().t, rate->start_t - envelope_s);
      a.rate_bps = rate->sen.slope;
      a.rate_lo_bps = rate->sen.low_slope;
      a.rate_hi_bps = rate->sen.high_slope;
      a.trend->t0 = *a.leak_start_t;
      a.trend->y0_bytes = rate->sen.intercept;
      a.trend->slope_bps = rate->sen.slope;
      a.trend->slope_lo_bps = rate->sen.low_slope;
      a.trend->slope_hi_bps = rate->sen.high_slope;
      a.trend->window_seconds = rate->t_end - rate->start_t;
      // Growth from about the settled point on may have begun before it: the warm-up gate passes
      // steady growth only after a settle window of it. The start moves back over the earlier
      // floors while they stay on the growth's line (within three noise deviations).
      if (!env_v && rate->start_t <= analysed.front().t + c.settle_window_seconds) {
        const double tol = 3 * std::max(FloorNoise(analysed), kMiB);
        const auto from = std::lower_bound(pts.begin(), pts.end(), rate->start_t,
                                           [](const FloorPoint& p, double t) { return p.t < t; });
        for (size_t i = static_cast<size_t>(from - pts.begin()); i-- > 0;) {
          const double line = rate->sen.intercept + rate->sen.slope * (pts[i].t - rate->start_t);
          if (std::fabs(pts[i].floor - line) > tol) break;
          a.leak_start_t = pts[i].t;
        }
        a.trend->t0 = *a.leak_start_t;
        a.trend->y0_bytes = rate->sen.intercept + rate->sen.slope * (*a.leak_start_t - rate->start_t);
        a.trend->window_seconds = rate->t_end - *a.leak_start_t;
      }
    }
    a.evidence.push_back(fmt::format("Growing since {} at {} (Sen's slope; {:.0f}% interval {} to {}).",
                                     At(*a.leak_start_t, first_t_, config_.evidence_times), Rate(*a.rate_bps),
                                     100 * c.ci_level, Rate(*a.rate_lo_bps), Rate(*a.rate_hi_bps)));
    a.summary = a.evidence[trend_sentence] + " " + a.evidence.back();
    if (g.regular)
      a.evidence.push_back(fmt::format(
          "It rose in {} equal steps of about {}, one every {}: one buffer leaked per period, where an allocator's "
          "staircase steps in blocks of random size ever more rarely.",
          g.regular->steps, FormatBytes(g.regular->step_bytes), FormatDuration(g.regular->period_seconds)));
    else
      a.evidence.push_back(
          fmt::format("The floor kept rising in every third of the window: {}.", KeptRisingText(g, w.seconds)));
    const SeriesVerdict& chosen = env_v ? *env_v : floor_v;  // only the floor and the cycle-free floor add one
    if (chosen.onset && chosen.leak_at == chosen.onset)
      a.evidence.push_back(
          "That window starts where the growth began: the longer windows start on the level before it, so their "
          "first third stayed flat.");
    if (late_onset && !env_v) {
      SettledAge without_late_onset = age;  // did the flat stretch change the verdict?
      without_late_onset.floor = analysed;
      bool smooth_then = false;
      if (TooYoung(w, c, without_late_onset, &smooth_then))
        a.evidence.push_back(fmt::format(
            "Called after only {} of settled data: the floor held flat for {} after it settled before this growth "
            "began, which a job's settling curve does not (it rises from the start, fastest first).",
            FormatDuration(span_a), FormatDuration(*a.leak_start_t - analysed.front().t)));
    }
    if (floor_v.smooth && !env_v) {
      // Why the slow-growth rule let it through: it grew continuously, in regular steps, or at one pace.
      std::string why;
      if (Continuous(g, c) && g.top_jumps_bytes > 0)
        why = fmt::format(
            "it grew continuously (its {} largest steps above the noise carry {} of its rise of {}, {:.0f}%), where "
            "an allocator's staircase is all steps",
            c.top_jumps, FormatBytes(g.top_jumps_bytes), Signed(g.rise_bytes), 100 * g.top_jumps_bytes / g.rise_bytes);
      else if (Continuous(g, c))
        why = "it grew continuously (no step rose above the noise), where an allocator's staircase is all steps";
      else if (g.regular)
        why = "it grew in equal steps at a regular pace (above)";
      else
        why = fmt::format(
            "since the growth began the floor rose in each {} of the window at one pace, which an allocator's "
            "staircase does not (its late steps leave a stretch flat)",
            PartName(c.smooth_parts));
      a.evidence.push_back(fmt::format("Called before {} of settled data although it grows at under {}: {}.",
                                       FormatDuration(c.slow_history_seconds), Rate(c.slow_rate_bps), why));
    }
    if (g.first_half && g.second_half)
      a.evidence.push_back(fmt::format("It did not slow down: {} in the first half, {} in the second.",
                                       Rate(g.first_half->slope), Rate(g.second_half->slope)));
    AddRunway(a);
    return oscillating;
  }

  // Not a leak: settling when some window shows real growth, plateau otherwise.
  const Window& longest_w = windows.back();
  a.trend = FitOf(longest_w);
  // The window the evidence explains: the longest that passed the tests but was held back (by the
  // history rules or a slowing longer window), else the longest whose floor rose significantly.
  std::optional<size_t> grew;
  for (size_t i = windows.size(); i-- > 0 && !grew;)
    if (windows[i].test.leak) grew = i;
  for (size_t i = windows.size(); i-- > 0 && !grew;)
    if (windows[i].test.significant && windows[i].test.rise_bytes >= c.min_growth_bytes) grew = i;
  if (grew) {
    const Window& w = windows[*grew];
    a.verdict = Verdict::kSettling;
    std::string why, ending = "settling, not a leak";
    bool names_thirds = false;  // the rise is then stated from the same figures
    if (unconfirmed && unconfirmed->window == *grew) {
      std::string cycle_s = CycleSentence(unconfirmed->cycle);
      cycle_s[0] = static_cast<char>(std::tolower(cycle_s[0]));
      why = fmt::format(
          "{}, and with it removed the floor averaged over each {} does not rise (Mann–Kendall z={:.1f}, {}): the "
          "floor of a load that swings wanders with it while the cycle as a whole stayed put",
          cycle_s, FormatDuration(unconfirmed->block_seconds), unconfirmed->mk.z, PText(unconfirmed->mk.p));
      ending = "not a leak";
    } else if (w.test.leak && !vetoed_by && floor_age.slow_young && w.test.sen->slope < c.slow_rate_bps) {
      const std::string steady =
          c.smooth_parts < 1 ? ""
          : floor_age.smooth_young
              ? fmt::format(", or after {} when the floor rises in each {} of the window at one pace",
                            FormatDuration(std::max(c.min_history_seconds, c.smooth_history_seconds)),
                            PartName(c.smooth_parts))
              : fmt::format(", and this floor did not rise in each {} of the window at one pace",
                            PartName(c.smooth_parts));
      why = fmt::format(
          "it grows at only {}, and growth slower than {} is called a leak only after {} of settled data ({} so "
          "far){}; a caching allocator's staircase keeps stepping this slowly for hours",
          Rate(w.test.sen->slope), Rate(c.slow_rate_bps), FormatDuration(c.slow_history_seconds),
          FormatDuration(span_a), steady);
      a.held_until_t = analysed.front().t + c.slow_history_seconds;
    } else if (floor_age.young && w.test.leak && !vetoed_by) {
      why = fmt::format(
          "only {} have passed since the floor settled, and a young job's growth is usually its allocator "
          "settling (a leak verdict needs {}, or steady growth whose interval stays above {} over {}, {} over {})",
          FormatDuration(span_a), FormatDuration(c.min_history_seconds), Rate(c.fast_rate_bps),
          FormatDuration(age.first_window), Rate(YoungRate(c, age.first_window, 2 * age.first_window)),
          FormatDuration(2 * age.first_window));
      a.held_until_t = analysed.front().t + c.min_history_seconds;
    } else if (vetoed_by) {
      why = fmt::format("the {} window shows it slowing down (rises per third {})",
                        FormatDuration(windows[*vetoed_by].seconds),
                        TestedThirdsText(windows[*vetoed_by].test, windows[*vetoed_by].seconds));
    } else {
      why = WhyNot(w.test, w.seconds, c);
      ending = NotALeak(w.test);
      names_thirds = WhyNotNamesThirds(w.test);
    }
    std::string s = TrendSentence(w, width_, 0, names_thirds);
    s[0] = static_cast<char>(std::toupper(s[0]));
    a.evidence.push_back(fmt::format("{}, but {}: {}.", s, why, ending));
    // When did the floor last reach a new high? (Steps that stopped.)
    double high = analysed.front().floor, last_high_t = analysed.front().t;
    const double step = std::max(2 * kMiB, 0.25 * c.min_growth_bytes);
    for (const FloorPoint& p : analysed)
      if (p.floor > high + step) {
        high = p.floor;
        last_high_t = p.t;
      }
    if (last_t_ - last_high_t > 0.25 * w.seconds)
      a.evidence.push_back(fmt::format("The floor last stepped up at {} and has not risen since ({} ago).",
                                       At(last_high_t, first_t_, config_.evidence_times),
                                       FormatDuration(last_t_ - last_high_t)));
    return not_a_leak();
  }
  // A significant upward trend whose rise did not last (the floor went up and fell back, or ended
  // near where it began) is not a plateau: say what the test found and why it is no leak.
  auto range_of = [&](double seconds) {
    double lo = analysed.front().floor, hi = lo;
    bool any = false;
    for (const FloorPoint& p : analysed)
      if (p.t >= analysed.back().t - seconds) {
        lo = any ? std::min(lo, p.floor) : p.floor;
        hi = any ? std::max(hi, p.floor) : p.floor;
        any = true;
      }
    return std::pair<double, double>{lo, hi};
  };
  for (size_t i = windows.size(); i-- > 0;) {
    const Window& w = windows[i];
    // Either test saying "up" at a leak's rate is a trend: Mann–Kendall with Sen's slope at least
    // min_rate_bps, or Sen's interval above zero there (fast_enough). A slower significant trend is
    // a plateau whose sentence says so.
    if (!(w.test.significant && w.test.sen->slope >= c.min_rate_bps) && !w.test.fast_enough) continue;
    a.verdict = Verdict::kSettling;
    a.trend = FitOf(w);
    const auto [lo, hi] = range_of(w.seconds);
    const std::string lead =
        w.test.significant
            ? fmt::format(
                  "Mann–Kendall finds an upward trend over the last {} (z={:.1f}, {} on the {} floor; Sen's "
                  "slope {})",
                  FormatDuration(w.seconds), w.test.mk->z, PText(w.test.mk->p), BucketWords(width_),
                  Rate(w.test.sen->slope))
            : fmt::format("Sen's slope over the last {} is {} ({:.0f}% interval {} to {}, on the {} floor)",
                          FormatDuration(w.seconds), Rate(w.test.sen->slope), 100 * c.ci_level,
                          Rate(w.test.sen->low_slope), Rate(w.test.sen->high_slope), BucketWords(width_));
    std::string why, ending = "settling, not a leak";
    if (w.test.rise_bytes < c.min_growth_bytes) {
      const std::string ended = w.test.rise_bytes < 0
                                    ? fmt::format("{} below where it began", FormatBytes(-w.test.rise_bytes))
                                    : fmt::format("only {} above where it began (a leak rises by {})",
                                                  Signed(w.test.rise_bytes), FormatBytes(c.min_growth_bytes));
      why = fmt::format("the floor ended {}, having moved between {} and {}: the growth did not last", ended,
                        FormatBytes(lo), FormatBytes(hi));
    } else if (!w.test.significant && oscillating && w.test.mk->z > 0 && w.test.mk->p < go.alpha) {
      // Significant at the usual level (go), not at the swinging floor's stricter one (floor_go): say which.
      why = fmt::format(
          "Mann–Kendall's trend (z={:.1f}, {}) is not significant at p<{:g}, the level a floor that swings with a "
          "load is held to",
          w.test.mk->z, PText(w.test.mk->p), floor_go.alpha);
    } else if (!w.test.significant) {
      why = fmt::format("Mann–Kendall finds no significant trend (z={:.1f}, {})", w.test.mk->z, PText(w.test.mk->p));
    } else {
      why = WhyNot(w.test, w.seconds, c);
      ending = NotALeak(w.test);
    }
    a.evidence.push_back(fmt::format("{}, but {}: {}.", lead, why, ending));
    return not_a_leak();
  }
  a.verdict = Verdict::kPlateau;
  const auto [lo, hi] = range_of(longest_w.seconds);
  a.evidence.push_back(fmt::format(
      "The floor stayed {} over the last {} (Sen's slope {}, Mann–Kendall z={:.1f}, {}): {}.",
      hi == lo         ? fmt::format("at {}", FormatBytes(lo))
      : hi - lo < kGiB ? fmt::format("within {} of {}", FormatBytes(hi - lo), FormatBytes(lo))
                       : fmt::format("between {} and {}", FormatBytes(lo), FormatBytes(hi)),
      FormatDuration(longest_w.seconds), Rate(longest_w.test.sen->slope), longest_w.test.mk->z,
      PText(longest_w.test.mk->p),
      longest_w.test.significant
          ? fmt::format("a significant trend, but under the {} a leak needs: no sustained growth", Rate(c.min_rate_bps))
          : "no sustained growth"));
  if (a.capacity_bytes && a.peak_bytes && *a.peak_bytes > 0.9 * *a.capacity_bytes)
    a.evidence.push_back(
        fmt::format("Memory sits at {:.0f}% of the usable capacity but does not grow: a "
                    "pre-allocated pool looks like this.",
                    100 * *a.peak_bytes / *a.capacity_bytes));
  return not_a_leak();
}

}  // namespace vw::detection
