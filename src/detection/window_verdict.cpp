#include "detection/window_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "detection/verdict_evidence.h"
#include "detection/window_choice.h"

namespace vw::detection {
namespace {

// The series a leak verdict rests on: the swinging load's that passed in the floor's stead (its
// points), else the settled floor; its windows, and the chosen one.
struct LeakSeries {
  std::span<const FloorPoint> points;
  const std::vector<Window>& windows;
  size_t leak_at = 0;
};

// Precondition: a window was chosen (on swing.passed, or else f.v.leak_at set).
LeakSeries LeakSeriesOf(const SettledFloor& settled, const FloorTests& f, const SwingTests& swing) {
  if (swing.passed) return {swing.passed_points, swing.passed->windows, *swing.passed->leak_at};
  return {settled.analysed, f.v.windows, *f.v.leak_at};
}

// The sentences after "Growing since" of a leak on window `w`: how it rose (in equal steps, or in
// every third), that the window starts where the growth began, which history rules it passed (a flat
// stretch before the growth; slow growth that grew continuously, in regular steps or at one pace),
// and that it did not slow down.
void AddLeakReasons(Assessment& a, const SettledFloor& settled, const FloorTests& f, const SwingTests& swing,
                    const Window& w) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const double span_a = settled.span_s;
  const SettledAge& age = settled.age;
  const TestedWindows& floor_v = f.v;
  const bool late_onset = f.late_onset;
  const std::optional<TestedWindows>& env_v = swing.passed;
  const GrowthWindow& g = w.test;
  if (g.regular)
    a.evidence.push_back(fmt::format(
        "It rose in {} equal steps of about {}, one every {}: one buffer leaked per period, where an allocator's "
        "staircase steps in blocks of random size ever more rarely.",
        g.regular->steps, FormatBytes(g.regular->step_bytes), FormatDuration(g.regular->period_seconds)));
  else
    a.evidence.push_back(
        fmt::format("The floor kept rising in every third of the window: {}.", KeptRisingText(g, w.seconds)));
  const TestedWindows& chosen = env_v ? *env_v : floor_v;  // only the floor and the cycle-free floor add one
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
}

// Settling on the window the evidence explains, when there is one: why it is no leak (held back by
// the history rules, by a longer window slowing down, unconfirmed on the cycle-free floor, or the
// test it failed) and when the floor last stepped up. Returns whether there was one.
bool CallSettlingWindow(Assessment& a, const SettledFloor& settled, const FloorTests& f,
                        const std::optional<Unconfirmed>& unconfirmed) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const double span_a = settled.span_s;
  const SettledAge& age = settled.age;
  const SettledAge& floor_age = f.age;
  const std::vector<Window>& windows = f.v.windows;
  const std::optional<size_t>& vetoed_by = f.v.vetoed_by;
  // The window the evidence explains: the longest that passed the tests but was held back (by the
  // history rules or a slowing longer window), else the longest whose floor rose significantly.
  std::optional<size_t> grew;
  for (size_t i = windows.size(); i-- > 0 && !grew;)
    if (windows[i].test.leak) grew = i;
  for (size_t i = windows.size(); i-- > 0 && !grew;)
    if (windows[i].test.significant && windows[i].test.rise_bytes >= c.min_growth_bytes) grew = i;
  if (!grew) return false;
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
        Rate(w.test.sen->slope), Rate(c.slow_rate_bps), FormatDuration(c.slow_history_seconds), FormatDuration(span_a),
        steady);
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
  std::string s = TrendSentence(w, settled.bucket_s, 0, names_thirds);
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
  if (settled.last_t - last_high_t > 0.25 * w.seconds)
    a.evidence.push_back(fmt::format("The floor last stepped up at {} and has not risen since ({} ago).",
                                     At(last_high_t, settled.first_t, c.evidence_times),
                                     FormatDuration(settled.last_t - last_high_t)));
  return true;
}

// The lowest and highest floor of `analysed` over its last `seconds` (bytes).
std::pair<double, double> RangeOf(std::span<const FloorPoint> analysed, double seconds) {
  double lo = analysed.front().floor, hi = lo;
  bool any = false;
  for (const FloorPoint& p : analysed)
    if (p.t >= analysed.back().t - seconds) {
      lo = any ? std::min(lo, p.floor) : p.floor;
      hi = any ? std::max(hi, p.floor) : p.floor;
      any = true;
    }
  return std::pair<double, double>{lo, hi};
}

// A significant upward trend whose rise did not last (the floor went up and fell back, or ended
// near where it began) is not a plateau: settling, saying what the test found and why it is no leak.
// Returns whether some window showed one.
bool CallTrendThatDidNotLast(Assessment& a, const SettledFloor& settled, const FloorTests& f) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const GrowthOptions& go = settled.go;
  const GrowthOptions& floor_go = f.go;
  const bool oscillating = f.oscillating;
  const std::vector<Window>& windows = f.v.windows;
  for (size_t i = windows.size(); i-- > 0;) {
    const Window& w = windows[i];
    // Either test saying "up" at a leak's rate is a trend: Mann–Kendall with Sen's slope at least
    // min_rate_bps, or Sen's interval above zero there (fast_enough). A slower significant trend is
    // a plateau whose sentence says so.
    if (!(w.test.significant && w.test.sen->slope >= c.min_rate_bps) && !w.test.fast_enough) continue;
    a.verdict = Verdict::kSettling;
    a.trend = FitOf(w);
    const auto [lo, hi] = RangeOf(analysed, w.seconds);
    const std::string lead =
        w.test.significant
            ? fmt::format(
                  "Mann–Kendall finds an upward trend over the last {} (z={:.1f}, {} on the {} floor; Sen's "
                  "slope {})",
                  FormatDuration(w.seconds), w.test.mk->z, PText(w.test.mk->p), BucketWords(settled.bucket_s),
                  Rate(w.test.sen->slope))
            : fmt::format("Sen's slope over the last {} is {} ({:.0f}% interval {} to {}, on the {} floor)",
                          FormatDuration(w.seconds), Rate(w.test.sen->slope), 100 * c.ci_level,
                          Rate(w.test.sen->low_slope), Rate(w.test.sen->high_slope), BucketWords(settled.bucket_s));
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
    return true;
  }
  return false;
}

// A plateau: the floor's range and trend over the longest window `longest_w`, and a note when memory
// sits near the capacity (a pre-allocated pool).
void CallPlateau(Assessment& a, const SettledFloor& settled, const Window& longest_w) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  a.verdict = Verdict::kPlateau;
  const auto [lo, hi] = RangeOf(analysed, longest_w.seconds);
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
}

}  // namespace

std::optional<LeakRateFit> GrowthRate(const SettledFloor& settled, const FloorTests& f, const SwingTests& swing) {
  const EngineConfig& c = settled.c;
  const LeakSeries l = LeakSeriesOf(settled, f, swing);
  const std::span<const FloorPoint> leak_series = l.points;
  const std::vector<Window>& leak_windows = l.windows;
  const Window& w = leak_windows[l.leak_at];
  std::optional<LeakRateFit> rate;
  const double from = leak_series.back().t - leak_windows.back().seconds - 1e-9;
  auto first = std::lower_bound(leak_series.begin(), leak_series.end(), from,
                                [](const FloorPoint& p, double t) { return p.t < t; });
  rate = FitLeakRate(std::span<const FloorPoint>(first, leak_series.end()), std::min(c.min_window_seconds, w.seconds),
                     c.ci_level, c.max_trend_points);
  if (rate && rate->sen.low_slope <= 0) rate.reset();
  return rate;
}

bool BelowRateFloor(Assessment& a, const SettledFloor& settled, const FloorTests& f, const SwingTests& swing,
                    const std::optional<LeakRateFit>& rate) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const SettledAge& age = settled.age;
  const SettledAge& floor_age = f.age;
  const TestedWindows& floor_v = f.v;
  const std::optional<TestedWindows>& env_v = swing.passed;
  const std::optional<Oscillation>& cycle = swing.cycle;
  const double block_s = swing.block_s;
  const double envelope_s = swing.envelope_s;
  const LeakSeries l = LeakSeriesOf(settled, f, swing);
  const Window& w = l.windows[l.leak_at];
  const bool slow_rule = (env_v ? age : floor_age).slow_young && !(floor_v.smooth && !env_v);
  const double floor_bps = slow_rule ? std::max(c.min_rate_bps, c.slow_rate_bps) : c.min_rate_bps;
  if (rate && rate->sen.slope < floor_bps) {
    a.verdict = Verdict::kSettling;
    a.trend = FitOf(w);
    std::string s = TrendSentence(w, settled.bucket_s, cycle ? block_s : 0);
    s[0] = static_cast<char>(std::toupper(s[0]));
    a.evidence.push_back(fmt::format(
        "{}, but the growth since {} runs at only {} (Sen's slope; {:.0f}% interval {} to {}), below the {} a "
        "leak verdict needs{}: settling, not a leak.",
        s, At(std::max(analysed.front().t, rate->start_t - envelope_s), settled.first_t, c.evidence_times),
        Rate(rate->sen.slope), 100 * c.ci_level, Rate(rate->sen.low_slope), Rate(rate->sen.high_slope), Rate(floor_bps),
        slow_rule ? fmt::format(" before {} of settled data", FormatDuration(c.slow_history_seconds)) : ""));
    return true;
  }
  return false;
}

void CallLeak(Assessment& a, const SettledFloor& settled, const FloorTests& f, const SwingTests& swing,
              const std::optional<LeakRateFit>& rate) {
  const EngineConfig& c = settled.c;
  const std::span<const FloorPoint> pts = settled.pts;
  const std::span<const FloorPoint> analysed = settled.analysed;
  const std::optional<TestedWindows>& env_v = swing.passed;
  const std::optional<Oscillation>& cycle = swing.cycle;
  const double block_s = swing.block_s;
  const double envelope_s = swing.envelope_s;
  const LeakSeries l = LeakSeriesOf(settled, f, swing);
  const Window& w = l.windows[l.leak_at];
  const GrowthWindow& g = w.test;
  a.verdict = Verdict::kLeak;
  a.trend = FitOf(w);
  a.leak_start_t = g.t0;
  a.rate_bps = g.sen->slope;
  a.rate_lo_bps = g.sen->low_slope;
  a.rate_hi_bps = g.sen->high_slope;
  a.evidence.push_back(fmt::format("Leak: {}.", TrendSentence(w, settled.bucket_s, cycle ? block_s : 0)));
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
                                   At(*a.leak_start_t, settled.first_t, c.evidence_times), Rate(*a.rate_bps),
                                   100 * c.ci_level, Rate(*a.rate_lo_bps), Rate(*a.rate_hi_bps)));
  a.summary = a.evidence[trend_sentence] + " " + a.evidence.back();
  AddLeakReasons(a, settled, f, swing, w);
  AddRunway(a);
}

void CallNoLeak(Assessment& a, const SettledFloor& settled, const FloorTests& f,
                const std::optional<Unconfirmed>& unconfirmed) {
  // Not a leak: settling when some window shows real growth, plateau otherwise.
  const Window& longest_w = f.v.windows.back();
  a.trend = FitOf(longest_w);
  if (CallSettlingWindow(a, settled, f, unconfirmed)) return;
  if (CallTrendThatDidNotLast(a, settled, f)) return;
  CallPlateau(a, settled, longest_w);
}

}  // namespace vw::detection
