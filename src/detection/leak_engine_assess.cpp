// LeakEngine::Assess(): the segment's floor (the open bucket's too: CountedOpenBucket()), a leak
// held through a rise at the end, a leak under a swinging load held to the data of a while ago, and
// Judge, which runs the verdict's stages in order (settled_floor.h, swinging_load.h,
// window_verdict.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "detection/growth_window.h"
#include "detection/leak_engine.h"
#include "detection/leak_rate.h"
#include "detection/quantile.h"
#include "detection/settled_floor.h"
#include "detection/swinging_load.h"
#include "detection/verdict_evidence.h"
#include "detection/window_choice.h"
#include "detection/window_verdict.h"

namespace vw::detection {

std::optional<Bucket> LeakEngine::CountedOpenBucket() const {
  if (open_.count < 2 || open_.t_end - open_.t_start < 0.5 * width_) return std::nullopt;
  Bucket b = open_;
  std::vector<double> values = open_values_;
  b.floor_bytes = *Quantile(values, config_.floor_quantile);
  return b;
}

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
  a.on_mig_instance = on_mig_instance_;
  a.departures_explained = departures_explained_;
  a.departed_bytes = departed_bytes_;
  a.last_departure_t = last_departure_t_;
  a.last_departed = last_departed_;
  a.last_used_bytes = open_.count > 0 ? open_.last_bytes : buckets_.back().last_bytes;
  const double span = last_t_ - first_t_;
  if (samples_ < c.min_samples || span < c.min_span_seconds) {
    // Name the need that is not met: 1575 samples over 14m 53s are short of time, not of samples.
    const bool few = samples_ < c.min_samples, short_span = span < c.min_span_seconds;
    a.evidence.push_back(
        few && short_span
            ? fmt::format("Only {} samples over {}; the trend tests need at least {} samples over {} or more.",
                          samples_, FormatDuration(span), c.min_samples, FormatDuration(c.min_span_seconds))
        : short_span ? fmt::format("The samples span only {} ({} samples); the trend tests need {} or more.",
                                   FormatDuration(span), samples_, FormatDuration(c.min_span_seconds))
                     : fmt::format("Only {} samples (over {}); the trend tests need at least {}.", samples_,
                                   FormatDuration(span), c.min_samples));
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
    const std::optional<Bucket> open = CountedOpenBucket();
    if (open && open->t_start >= segment_start_t_) {
      pts.push_back({(open->t_start + open->t_end) / 2, open->floor_bytes});
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

  const std::optional<size_t> settled_at = SettleGate(a, pts, config_);
  if (!settled_at) return false;
  const std::optional<SettledFloor> settled = SettledWindows(a, pts, *settled_at, config_, first_t_, last_t_, width_);
  if (!settled) return false;
  // The floor's own windows; under a load that swings, one that passed there must also show on the
  // floor with the load's cycle removed.
  FloorTests floor = TestFloor(*settled);
  CycleOfLongest cycles(*settled);
  const std::optional<Unconfirmed> unconfirmed = ConfirmOnCycleFree(floor, cycles, config_);
  for (const Window& w : floor.v.windows) a.window_fits.push_back(FitOf(w));
  if (floor.v.windows.empty()) {  // sparse buckets (slow sampling): a rising floor is no plateau
    const RiseSoFar rise = RiseSinceSettled(a, settled->pts, settled->analysed, config_);
    a.verdict = rise.Rising() ? Verdict::kWarmup : Verdict::kPlateau;
    a.evidence.push_back(
        fmt::format("Too few buckets in the settled data for a trend test ({} buckets of {} over {}; a window "
                    "needs {}){}.",
                    settled->analysed.size(), FormatDuration(width_), FormatDuration(settled->span_s),
                    std::max<size_t>(floor.go.min_points, 6), RiseClause(rise, config_)));
    return floor.oscillating;
  }
  // Under a load that swings, when no floor window passed: the load's own series in the floor's
  // stead (the cycle-free floor, then the lower envelopes); failing those, with a cycle found, the
  // cycle-free floor's lows and an imminent fill.
  SwingTests swing;
  if (!floor.v.leak_at && floor.oscillating) {
    TestCycleFree(*settled, floor, cycles, swing);
    if (!swing.passed) TestEnvelopes(*settled, cycles, swing);
  }
  if (!floor.v.leak_at && !swing.passed && swing.estimated &&
      (LeakFromCycleFreeLows(a, *settled, swing) || LeakFromImminentFill(a, *settled, swing)))
    return floor.oscillating;
  // The verdict on the chosen window, or why there is none. Every verdict but a leak then says what
  // the cycle-free floor showed.
  const TestedWindows& chosen = swing.passed ? *swing.passed : floor.v;
  if (chosen.leak_at) {
    const std::optional<LeakRateFit> rate = GrowthRate(*settled, floor, swing);
    if (!BelowRateFloor(a, *settled, floor, swing, rate)) {
      CallLeak(a, *settled, floor, swing, rate);
      return floor.oscillating;
    }
  } else {
    CallNoLeak(a, *settled, floor, unconfirmed);
  }
  AddLoadNotes(a, swing, config_);
  return floor.oscillating;
}

}  // namespace vw::detection
