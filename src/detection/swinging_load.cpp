#include "detection/swinging_load.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "core/units.h"
#include "detection/imminent_fill.h"
#include "detection/leak_rate.h"
#include "detection/new_level.h"
#include "detection/verdict_evidence.h"

namespace vw::detection {
namespace {

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

const LongestCycle& CycleOfLongest::Get() {
  const EngineConfig& c = settled_.c;
  if (!longest_) {
    LongestCycle l;
    const std::span<const FloorPoint> longest_span = Tail(settled_.analysed, settled_.sizes.back());
    l.cycle = EstimateOscillation(longest_span, {.min_periods = c.oscillation_min_periods,
                                                 .min_autocorrelation = c.oscillation_min_autocorrelation});
    if (l.cycle) {
      l.cycle_free = RemoveOscillation(longest_span, *l.cycle);
      l.block_s = std::max(c.oscillation_block_seconds, l.cycle->period_seconds / c.oscillation_points_per_period);
    }
    longest_ = std::move(l);
  }
  return *longest_;
}

std::optional<MannKendallResult> CycleOfLongest::CycleFreeTrend(double w_s) {
  const EngineConfig& c = settled_.c;
  const LongestCycle& lc = Get();
  if (!lc.cycle || w_s < c.oscillation_min_periods * lc.cycle->period_seconds) return std::nullopt;
  std::vector<double> means;
  for (const FloorPoint& p : BlockMeans(Tail(lc.cycle_free, w_s), lc.block_s)) means.push_back(p.floor);
  return EngineMannKendall(means);
}

std::optional<Unconfirmed> ConfirmOnCycleFree(FloorTests& f, CycleOfLongest& cycles, const EngineConfig& c) {
  TestedWindows& floor_v = f.v;
  const bool oscillating = f.oscillating;
  std::optional<Unconfirmed> unconfirmed;
  if (floor_v.leak_at && oscillating && c.oscillating_confirm_z > 0) {
    const auto mk = cycles.CycleFreeTrend(floor_v.windows[*floor_v.leak_at].seconds);
    if (mk && mk->z < c.oscillating_confirm_z) {
      const LongestCycle& lc = cycles.Get();
      unconfirmed = Unconfirmed{*floor_v.leak_at, *lc.cycle, lc.block_s, *mk};
      floor_v.leak_at.reset();
    }
  }
  return unconfirmed;
}

void TestCycleFree(const SettledFloor& settled, const FloorTests& f, CycleOfLongest& cycles, SwingTests& swing) {
  const EngineConfig& c = settled.c;
  const std::vector<double>& sizes = settled.sizes;
  const GrowthOptions& go = settled.go;
  const SettledAge& age = settled.age;
  const TestedWindows& floor_v = f.v;
  std::optional<LoadRise>& watch = swing.watch;
  std::optional<Oscillation> osc = cycles.Get().cycle;
  if (!osc) return;
  swing.cycle_free = cycles.Get().cycle_free;
  swing.estimated = osc;
  const std::vector<FloorPoint>& removed = swing.cycle_free;
  swing.block_s = cycles.Get().block_s;
  const double block_s = swing.block_s;
  GrowthOptions cycle_go = go;
  cycle_go.alpha = c.oscillation_alpha;
  cycle_go.jump_net_of_slope = true;
  cycle_go.stop_when_not_significant = true;  // only a passing window is looked at ...
  cycle_go.read_alpha = c.watch_alpha;        // ... and a rise worth watching
  GrowthOptions intermediate_go = cycle_go;
  intermediate_go.alpha = c.oscillation_intermediate_alpha;
  TestedWindows v;
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
      if (mk && w.test.mk) swing.lows_unconfirmed = LowsUnconfirmed{w.seconds, lows_block_s, w.test.mk->z, mk->z};
      v.leak_at.reset();
    }
  }
  if (v.leak_at && c.oscillating_pre_rise_share > 0) {
    const double w_s = v.windows[*v.leak_at].seconds;
    if (auto r = PreRiseOf(removed, flats[*v.leak_at], w_s, block_s, c.oscillating_pre_min_seconds);
        r && r->Share() < c.oscillating_pre_rise_share) {
      swing.pre_rise = r;
      v.leak_at.reset();
    }
  }
  if (v.leak_at) {
    // The start and rate are fitted on the passing window's block means.
    swing.passed_points = std::move(flats[*v.leak_at]);
    v.windows.resize(*v.leak_at + 1);
    swing.passed = std::move(v);
    swing.cycle = std::move(osc);
  }
}

void TestEnvelopes(const SettledFloor& settled, CycleOfLongest& cycles, SwingTests& swing) {
  const EngineConfig& c = settled.c;
  const std::vector<double>& sizes = settled.sizes;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const GrowthOptions& go = settled.go;
  const SettledAge& age = settled.age;
  for (double span_s : c.envelope_seconds) {
    std::vector<double> env_sizes;
    for (double w : sizes)
      if (w >= 3 * span_s) env_sizes.push_back(w);
    if (env_sizes.empty()) continue;
    std::vector<FloorPoint> e = LowerEnvelope(analysed, span_s);
    GrowthOptions env_go = go;
    env_go.stop_when_not_significant = true;  // only a passing window is looked at
    TestedWindows v = TestSeries(e, env_sizes, env_go, c, age);
    if (v.leak_at && c.oscillating_confirm_z > 0) {
      const auto mk = cycles.CycleFreeTrend(v.windows[*v.leak_at].seconds);
      if (mk && mk->z < c.oscillating_confirm_z) continue;
    }
    if (v.leak_at) {
      swing.passed_points = std::move(e);
      swing.passed = std::move(v);
      swing.envelope_s = span_s;
      break;
    }
  }
}

bool LeakFromCycleFreeLows(Assessment& a, const SettledFloor& settled, const SwingTests& swing) {
  const EngineConfig& c = settled.c;
  const double span_a = settled.span_s;
  const bool young = settled.age.young;
  const std::vector<FloorPoint>& cycle_free = swing.cycle_free;
  const std::optional<Oscillation>& estimated = swing.estimated;
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
          At(moved->earlier_from_t, settled.first_t, c.evidence_times), FormatBytes(moved->earlier_high_bytes),
          Signed(moved->gap_bytes), moved->margin_sds, FormatBytes(moved->earlier_sd_bytes)));
    } else if (ramp) {
      const NewLevel& l = ramp->level;
      std::string lows;
      for (double v : l.recent_lows_bytes) lows += (lows.empty() ? "" : ", ") + FormatBytes(v);
      a.evidence.push_back(fmt::format(
          "Leak: the load has been rising to a level it never reached before. With its cycle removed, the lowest "
          "floor of each {} block since {} stayed above the highest low of the {} blocks from {} to {} ({}), and "
          "the last {} ({}) stand above it by {}: {:.1f} times the standard deviation of those lows ({}).",
          FormatDuration(c.new_level_block_seconds), At(ramp->above_t, settled.first_t, c.evidence_times),
          l.earlier_blocks, At(l.earlier_from_t, settled.first_t, c.evidence_times),
          At(ramp->from_t, settled.first_t, c.evidence_times), FormatBytes(l.earlier_high_bytes),
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
    SetLeakFromFit(a, *rate, rise, trend_sentence, settled.first_t, c.evidence_times, c.ci_level);
    return true;
  }
  return false;
}

bool LeakFromImminentFill(Assessment& a, const SettledFloor& settled, const SwingTests& swing) {
  const EngineConfig& c = settled.c;
  const std::vector<FloorPoint>& cycle_free = swing.cycle_free;
  const std::optional<Oscillation>& estimated = swing.estimated;
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
        At(r.start_t, settled.first_t, c.evidence_times), Signed(fill->rise_bytes), fill->mk.z, PText(fill->mk.p),
        BucketWords(settled.bucket_s), fill->before_range_bytes > 0 ? fill->rise_bytes / fill->before_range_bytes : 0.0,
        FormatDuration(fill->before_seconds), FormatBytes(fill->before_range_bytes)));
    const size_t trend_sentence = a.evidence.size() - 1;
    a.evidence.push_back(fmt::format(
        "{}, so the test ran on the floor with that cycle removed. Under a swinging load growth is otherwise called "
        "a leak only after hours of history (a young job's warm-up can look like this), but {}.",
        CycleSentence(*estimated),
        fill->runs_out_soon
            ? fmt::format("at this rate the card is full in under {} either way", FormatDuration(c.fill_runway_seconds))
            : std::string("growth that keeps one pace and leaves the load's own swings behind is "
                          "not how a load settles")));
    SetLeakFromFit(a, r, fill->rise_bytes, trend_sentence, settled.first_t, c.evidence_times, c.ci_level);
    return true;
  }
  return false;
}

void AddLoadNotes(Assessment& a, const SwingTests& swing, const EngineConfig& c) {
  const double block_s = swing.block_s;
  const std::optional<LoadRise>& watch = swing.watch;
  const std::optional<Oscillation>& estimated = swing.estimated;
  const std::optional<LowsUnconfirmed>& lows_unconfirmed = swing.lows_unconfirmed;
  const std::optional<PreRise>& pre_rise = swing.pre_rise;
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
  if (!watch) return;
  std::string cycle_s = CycleSentence(*estimated);  // set with `watch`
  cycle_s[0] = static_cast<char>(std::tolower(cycle_s[0]));
  a.load_rise_bps = watch->slope_bps;
  a.evidence.push_back(fmt::format(
      "Worth watching: {}, and with it removed the floor averaged over each {} rose over the last {} at {} "
      "(Sen's slope; Mann–Kendall z={:.1f}, {}). Under a load that swings that is not yet enough for a leak "
      "verdict; look again in an hour or two.",
      cycle_s, FormatDuration(block_s), FormatDuration(watch->window_seconds), Rate(watch->slope_bps), watch->mk.z,
      PText(watch->mk.p)));
}

}  // namespace vw::detection
