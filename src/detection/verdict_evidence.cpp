#include "detection/verdict_evidence.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "core/time.h"
#include "core/units.h"

namespace vw::detection {
namespace {

// The rises the evidence names, in each third of a window and over all of it: the floor's rise
// between its levels at the window's ends and thirds' boundaries (GrowthWindow::boundary_level_bytes)
// as a rate, times the stretch the sentence names (a third of `seconds`, or all of it). So they add
// up, and a floor rising at a constant rate r reads r × the named span. Where a level is missing,
// the test's own figures.
struct RiseFigures {
  std::array<double, 3> thirds{};
  double total = 0;
};

RiseFigures RisesOf(const GrowthWindow& w, double seconds) {
  const double span = w.t1 - w.t0;
  if (!w.boundary_levels || !(span > 0) || !(seconds > 0)) return {w.third_rise_bytes, w.rise_bytes};
  RiseFigures r;
  const double scale = seconds / span;
  for (size_t k = 0; k < 3; ++k) {
    r.thirds[k] = (w.boundary_level_bytes[k + 1] - w.boundary_level_bytes[k]) * scale;
    r.total += r.thirds[k];
  }
  return r;
}

std::string ThirdsText(const GrowthWindow& w, double seconds) {
  const RiseFigures r = RisesOf(w, seconds);
  return fmt::format("{}, {}, {}", Signed(r.thirds[0]), Signed(r.thirds[1]), Signed(r.thirds[2]));
}

// Whether a window failed the keeps-going tests because its growth came late: each third rose
// faster than the one before (a leak that began inside the window, or one not yet long enough).
bool CameLate(const GrowthWindow& w) {
  return (!w.every_third || !w.keeps_pace) && w.third_rate_bps[0] < w.third_rate_bps[1] &&
         w.third_rate_bps[1] < w.third_rate_bps[2] && w.third_rate_bps[2] > 0;
}

}  // namespace

std::string BucketWords(double w) {
  const auto s = static_cast<long long>(std::llround(w));
  if (s % 3600 == 0) return fmt::format("{}-hour", s / 3600);
  if (s % 60 == 0) return fmt::format("{}-minute", s / 60);
  return fmt::format("{}-second", s);
}

std::string PText(double p) {
  return p < 0.001 ? "p<0.001" : fmt::format("p={:.3f}", p);
}

std::string Signed(double bytes) {
  return (bytes >= 0 ? "+" : "-") + FormatBytes(std::fabs(bytes));
}

std::string At(double t, double start, EngineConfig::EvidenceTimes style) {
  switch (style) {
    case EngineConfig::EvidenceTimes::kUtcClock: return FormatClock(t) + " UTC";
    case EngineConfig::EvidenceTimes::kWallClock: return FormatClock(t);
    case EngineConfig::EvidenceTimes::kTraceTime: return "t+" + FormatDuration(t);
    case EngineConfig::EvidenceTimes::kOffset: break;
  }
  return "+" + FormatDuration(t - start);
}

std::string Rate(double bps) {
  return FormatRate(bps);
}

std::string PartName(int n) {
  static constexpr std::array<std::string_view, 9> kNames = {"",      "whole", "half",    "third", "quarter",
                                                             "fifth", "sixth", "seventh", "eighth"};
  return n >= 1 && n < static_cast<int>(kNames.size()) ? std::string(kNames[static_cast<size_t>(n)])
                                                       : fmt::format("1/{}", n);
}

std::string TestedThirdsText(const GrowthWindow& w, double seconds) {
  const double third = seconds / 3;
  return fmt::format("{}, {}, {}", Signed(w.third_rate_bps[0] * third), Signed(w.third_rate_bps[1] * third),
                     Signed(w.third_rate_bps[2] * third));
}

std::string KeptRisingText(const GrowthWindow& w, double seconds) {
  const RiseFigures r = RisesOf(w, seconds);
  if (r.thirds[0] > 0 && r.thirds[1] > 0 && r.thirds[2] > 0) return ThirdsText(w, seconds);
  return TestedThirdsText(w, seconds) + ", between its medians around the thirds' ends";
}

std::string TrendSentence(const Window& w, double bucket_s, double block_s, bool tested) {
  const std::string series = block_s > 0 ? fmt::format("{} means of the cycle-free floor", BucketWords(block_s))
                                         : fmt::format("{} floor", BucketWords(bucket_s));
  const GrowthWindow& g = w.test;
  const double rise = tested ? (g.third_rate_bps[0] + g.third_rate_bps[1] + g.third_rate_bps[2]) * w.seconds / 3
                             : RisesOf(g, w.seconds).total;
  return fmt::format("the floor rose by {} over the last {} (Mann–Kendall z={:.1f}, {} on the {})", Signed(rise),
                     FormatDuration(w.seconds), g.mk->z, PText(g.mk->p), series);
}

std::string NotALeak(const GrowthWindow& w) {
  return CameLate(w) ? "not a leak (yet)" : "settling, not a leak";
}

bool WhyNotNamesThirds(const GrowthWindow& w) {
  return w.fast_enough && w.large_enough && (CameLate(w) || !w.every_third || !w.keeps_pace);
}

std::string WhyNot(const GrowthWindow& w, double seconds, const EngineConfig& c) {
  if (!w.fast_enough)
    return fmt::format("Sen's slope {} (interval {} to {}) is below {} or not clearly above zero", Rate(w.sen->slope),
                       Rate(w.sen->low_slope), Rate(w.sen->high_slope), Rate(c.min_rate_bps));
  if (!w.large_enough)
    return fmt::format("a rise of {} is no more than a few allocator steps (under {})", Signed(w.rise_bytes),
                       FormatBytes(c.min_growth_bytes));
  if (CameLate(w))
    return fmt::format("the growth came late in the window: rises per third {}", TestedThirdsText(w, seconds));
  if (!w.every_third || !w.keeps_pace)
    return fmt::format("the growth did not keep going: rises per third {}", TestedThirdsText(w, seconds));
  if (!w.not_slowing && w.first_half && w.second_half)
    return fmt::format("the growth slowed down: {} in the first half, {} in the second", Rate(w.first_half->slope),
                       Rate(w.second_half->slope));
  if (w.few_steps && w.consistent && w.no_big_jump && w.rise_bytes > 0)  // the test that failed first
    return fmt::format(
        "its {} largest steps ({} together) carry {:.0f}% of its rise of {}: an allocator's large blocks lift a floor "
        "in a few steps, a leak in many",
        c.top_jumps, FormatBytes(w.top_jumps_bytes), 100 * w.top_jumps_bytes / w.rise_bytes, Signed(w.rise_bytes));
  return w.failed;
}

std::string WhyOf(const std::vector<std::string>& evidence) {
  for (auto it = evidence.rbegin(); it != evidence.rend(); ++it) {
    const size_t but = it->find(", but ");
    const size_t end = it->rfind(": ");
    if (but != std::string::npos && end != std::string::npos && end > but) return it->substr(but + 6, end - but - 6);
  }
  return "a keeps-going test fails";
}

std::string DepartureSentence(const Assessment& a, EngineConfig::EvidenceTimes style) {
  const Departure& d = *a.last_departed;
  const std::string when =
      d.gone_t - d.last_seen_t < 60
          ? "at " + At(d.gone_t, a.start_t, style)
          : fmt::format("between {} and {}", At(d.last_seen_t, a.start_t, style), At(d.gone_t, a.start_t, style));
  const std::string who = d.pid ? fmt::format("PID {}", *d.pid) : "";
  if (a.departures_explained == 1)
    return fmt::format(
        "{} left this GPU {} holding {}: the fall of {} it left at {} is taken off the samples before it, so the "
        "series is judged as if that memory had never been held and another job's exit does not cut it.",
        who.empty() ? "A process" : who, when, FormatBytes(d.held_bytes), FormatBytes(a.departed_bytes),
        At(*a.last_departure_t, a.start_t, style));
  return fmt::format(
      "{} processes left this GPU, the last{} {} holding {}: the {} their falls freed is taken off the samples "
      "before each, so the series is judged as if that memory had never been held and another job's exit does not "
      "cut it.",
      a.departures_explained, who.empty() ? "" : " (" + who + ")", when, FormatBytes(d.held_bytes),
      FormatBytes(a.departed_bytes));
}

std::string CycleSentence(const Oscillation& o) {
  return fmt::format("The load oscillates with a period of about {} ({} from trough to peak)",
                     FormatDuration(o.period_seconds), FormatBytes(o.amplitude_bytes));
}

void AddRunway(Assessment& a) {
  if (!a.capacity_bytes || !a.peak_bytes) {
    a.evidence.push_back("The card's capacity is unknown: no time-to-OOM.");
    return;
  }
  const double room = *a.capacity_bytes - *a.peak_bytes;
  // A process series: what the GPU's (or its MIG instance's) other holders use is not there for it.
  const std::string capacity =
      a.held_by_others_bytes && *a.held_by_others_bytes > 0
          ? fmt::format("{} after the {} other holders of this {} use", FormatBytes(*a.capacity_bytes),
                        FormatBytes(*a.held_by_others_bytes), a.on_mig_instance ? "MIG instance" : "GPU")
          : FormatBytes(*a.capacity_bytes);
  if (room <= 0) {
    a.tto_s = a.tto_lo_s = a.tto_hi_s = 0.0;
    a.evidence.push_back(fmt::format("The recent peak of {} already reaches the usable capacity of {}.",
                                     FormatBytes(*a.peak_bytes), capacity));
    return;
  }
  a.tto_s = room / *a.rate_bps;
  a.tto_lo_s = room / *a.rate_hi_bps;
  a.tto_hi_s = *a.rate_lo_bps > 0 ? room / *a.rate_lo_bps : std::numeric_limits<double>::infinity();
  const auto [lo, hi] = FormatDurationRange(*a.tto_lo_s, *a.tto_hi_s);
  a.evidence.push_back(fmt::format(
      "At this rate the {} left above the recent peak of {} (usable capacity {}) is gone in {} (between {} and {}).",
      FormatBytes(room), FormatBytes(*a.peak_bytes), capacity, FormatDuration(*a.tto_s), lo, hi));
}

}  // namespace vw::detection
