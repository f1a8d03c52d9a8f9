#include "report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

#include "core/units.h"

namespace vw::evaluate {
namespace {

constexpr int kLabelWidth = 44;
constexpr int kCellWidth = 19;
constexpr double kMiBPerHour = 3600.0 / kMiB;

double RateMiBPerHour(const TraceResult& r) {
  return r.label.leak_rate_bps * kMiBPerHour;
}
double LeakRan(const TraceResult& r) {
  return r.label.duration_s - r.label.leak_start_s.value_or(0);
}

std::string BandName(size_t band) {
  constexpr auto& e = kBandEdgesMiBPerHour;
  if (band == 0) return fmt::format("<{:g} MiB/h", e[0]);
  if (band == std::size(e)) return fmt::format(">={:g} MiB/h", e[band - 1]);
  return fmt::format("{:g}-{:g} MiB/h", e[band - 1], e[band]);
}

size_t BandOf(double mib_per_hour) {
  size_t b = 0;
  while (b < std::size(kBandEdgesMiBPerHour) && mib_per_hour >= kBandEdgesMiBPerHour[b]) ++b;
  return b;
}

std::string Percent(size_t hits, size_t n) {
  if (n == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(hits) / static_cast<double>(n));
}

class Table {
 public:
  void Header() {
    std::string line = fmt::format("{:<{}}", "", kLabelWidth);
    for (size_t d = 0; d < kDetectorCount; ++d) line += fmt::format("{:>{}}", DetectorName(d), kCellWidth);
    lines_.push_back(line);
  }
  void Section(const std::string& title) { lines_.push_back(title); }
  void Row(const std::string& label, const std::array<std::string, kDetectorCount>& cells) {
    std::string line = fmt::format("  {:<{}}", label, kLabelWidth - 2);
    for (const std::string& c : cells) line += fmt::format("{:>{}}", c, kCellWidth);
    lines_.push_back(line);
  }
  void Text(const std::string& text) { lines_.push_back(text); }
  std::string str() const {
    std::string out;
    for (const std::string& l : lines_) out += l + "\n";
    return out;
  }

 private:
  std::vector<std::string> lines_;
};

using Filter = std::function<bool(const TraceResult&)>;
using Hit = std::function<bool(const TraceResult&, const DetectorOutcome&)>;

// One row: per detector, the share of the filtered traces for which `hit` holds.
// With `interval`, a second row gives each share's 95 % Wilson score interval.
void RecallRow(Table& t, const std::vector<TraceResult>& results, const std::string& label, const Filter& filter,
               const Hit& hit, bool interval = false) {
  size_t n = 0;
  std::array<size_t, kDetectorCount> hits{};
  for (const TraceResult& r : results) {
    if (!filter(r)) continue;
    ++n;
    for (size_t d = 0; d < kDetectorCount; ++d) hits[d] += hit(r, r.outcome[d]) ? 1 : 0;
  }
  std::array<std::string, kDetectorCount> cells;
  for (size_t d = 0; d < kDetectorCount; ++d) cells[d] = Percent(hits[d], n);
  t.Row(fmt::format("{:<28} n={}", label, n), cells);
  if (!interval || n == 0) return;
  for (size_t d = 0; d < kDetectorCount; ++d) {
    const auto [lo, hi] = WilsonInterval(hits[d], n);
    cells[d] = fmt::format("{:.1f}-{:.1f}%", lo * 100, hi * 100);
  }
  t.Row("  95% interval (Wilson)", cells);
}

// A setting's duration as its flag takes it: "10m", "2h", "15s", "1h30m".
std::string Knob(double seconds) {
  return FormatDurationFlag(seconds);
}

std::string DurationOrDash(const std::optional<double>& s) {
  return s ? FormatDuration(*s) : "-";
}

// One row of the q-quantile, per detector, of value(trace, outcome) (seconds) over the traces that
// pass `filter` and that detector alarmed at or after their leak's start.
void DurationQuantileRow(Table& t, const std::vector<TraceResult>& results, const std::string& label, double q,
                         const Filter& filter,
                         const std::function<double(const TraceResult&, const DetectorOutcome&)>& value) {
  std::array<std::string, kDetectorCount> cells;
  for (size_t d = 0; d < kDetectorCount; ++d) {
    std::vector<double> values;
    for (const TraceResult& r : results) {
      if (filter(r) && r.outcome[d].delay_s) values.push_back(value(r, r.outcome[d]));
    }
    cells[d] = DurationOrDash(Quantile(values, q));
  }
  t.Row(label, cells);
}

}  // namespace

std::pair<double, double> WilsonInterval(size_t hits, size_t n, double z) {
  if (n == 0) return {0, 1};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(hits) / nn;
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::optional<double> Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

std::string FormatReport(const std::vector<TraceResult>& results, const EvalOptions& eval, const ReportInfo& info) {
  size_t healthy = 0, leaks = 0, samples = 0;
  double healthy_hours = 0, leak_hours = 0, engine_s = 0, assess_s = 0;
  size_t assessments = 0, over_goal = 0;
  double assess_max_s = 0;
  for (const TraceResult& r : results) {
    samples += r.samples;
    engine_s += r.engine_cpu_seconds;
    assess_s += r.assess_cpu_seconds;
    assessments += r.assessments;
    assess_max_s = std::max(assess_max_s, r.assess_max_cpu_seconds);
    over_goal += r.assessments_over_goal;
    if (r.label.leak) {
      ++leaks;
      leak_hours += r.label.duration_s / 3600.0;
    } else {
      ++healthy;
      healthy_hours += r.label.duration_s / 3600.0;
    }
  }

  Table t;
  t.Text(fmt::format(
      "vw-evaluate: {} traces ({} healthy, {} leak), seed {}, {:.1f} M samples, {:.1f} healthy "
      "GPU-hours, {:.1f} leak GPU-hours",
      results.size(), healthy, leaks, info.seed, static_cast<double>(samples) / 1e6, healthy_hours, leak_hours));
  if (!info.shapes.empty()) t.Text(fmt::format("only the traces of these shapes: {}", fmt::join(info.shapes, ", ")));
  t.Text(fmt::format(
      "vramwatch assessed every {} (healthy) / {} (leak traces) and at the end, vramwatch_alert its "
      "leak alert at those checks after for: {}, vramwatch_critical that alert while the runway is under "
      "{}; baselines: scrape {}, rules every {}, for: {}",
      Knob(eval.healthy_step_s), Knob(eval.leak_step_s), Knob(eval.alert_for_s), Knob(eval.critical_runway_s),
      Knob(eval.prom.scrape_s), Knob(eval.prom.eval_s), Knob(eval.prom.for_s)));
  t.Text(
      fmt::format("wall time {:.1f} s on {} threads, {:.1f} s CPU; vramwatch engine {:.1f} s CPU: Add {:.0f} ns per "
                  "sample, Assess {:.0f} us per call ({} calls; the slowest {:.0f} us, {} over {:.0f} ms)",
                  info.wall_seconds, info.threads, info.cpu_seconds, engine_s,
                  samples > 0 ? (engine_s - assess_s) * 1e9 / static_cast<double>(samples) : 0.0,
                  assessments > 0 ? assess_s * 1e6 / static_cast<double>(assessments) : 0.0, assessments,
                  assess_max_s * 1e6, over_goal, kAssessGoalSeconds * 1e3));
  if (results.size() < 1000 || healthy_hours < 2000) {
    t.Text("note: smaller than the reference corpus (>= 1000 traces and >= 2000 healthy GPU-hours)");
  }
  t.Text("");
  t.Header();

  const Filter is_leak = [](const TraceResult& r) { return r.label.leak; };
  const size_t bands = std::size(kBandEdgesMiBPerHour) + 1;
  auto band_rows = [&](const Filter& base, const Hit& hit) {
    for (size_t b = 0; b < bands; ++b) {
      RecallRow(
          t, results, BandName(b), [&](const TraceResult& r) { return base(r) && BandOf(RateMiBPerHour(r)) == b; },
          hit);
    }
    RecallRow(t, results, "all rates", base, hit);
  };

  t.Section("Recall at the end of the trace (alarming at the last check)");
  band_rows(is_leak, [](const TraceResult&, const DetectorOutcome& o) { return o.alarm_at_end; });
  for (double h : eval.horizons_s) {
    t.Section(fmt::format("Recall within {} of the leak start (leaks that ran >= {})", Knob(h), Knob(h)));
    band_rows([h](const TraceResult& r) { return r.label.leak && LeakRan(r) >= h; },
              [h](const TraceResult&, const DetectorOutcome& o) { return o.delay_s && *o.delay_s <= h + 1e-6; });
  }

  t.Section("Goals");
  // Each goal over its leaks, then over those not under a serving load (the shape whose batch swings
  // hide a slow leak longest; docs/detection.md, "Known limits").
  const auto not_serving = [](const TraceResult& r) { return r.label.shape != Shape::kLeakUnderServing; };
  const auto goal_a = [](const TraceResult& r) {
    return r.label.leak && RateMiBPerHour(r) >= 40 && LeakRan(r) >= 7200;
  };
  const auto at_end = [](const TraceResult&, const DetectorOutcome& o) { return o.alarm_at_end; };
  RecallRow(t, results, ">=40 MiB/h, ran >=2h: at end", goal_a, at_end, true);
  RecallRow(
      t, results, "  not under a serving load", [&](const TraceResult& r) { return goal_a(r) && not_serving(r); },
      at_end);
  const auto goal_b = [](const TraceResult& r) {
    return r.label.leak && RateMiBPerHour(r) >= 500 && LeakRan(r) >= 3600;
  };
  const auto within_1h = [](const TraceResult&, const DetectorOutcome& o) {
    return o.delay_s && *o.delay_s <= 3600 + 1e-6;
  };
  RecallRow(t, results, ">=500 MiB/h: within 1h", goal_b, within_1h, true);
  RecallRow(
      t, results, "  not under a serving load", [&](const TraceResult& r) { return goal_b(r) && not_serving(r); },
      within_1h);

  t.Section("Detection delay after the leak start (leaks alarmed at or after their start)");
  RecallRow(t, results, "alarmed at any time", is_leak,
            [](const TraceResult&, const DetectorOutcome& o) { return o.delay_s.has_value(); });
  for (double q : {0.5, 0.9}) {
    DurationQuantileRow(t, results, fmt::format("delay p{:.0f}", q * 100), q, is_leak,
                        [](const TraceResult&, const DetectorOutcome& o) { return *o.delay_s; });
  }

  // Leaks whose trace was cut where the memory would have filled the card (capped "trace"): the job
  // would die of an out-of-memory error at the end. How long before it did each detector warn?
  t.Section("Leaks that fill the card (the trace ends where memory would run out)");
  {
    const Filter fills = [](const TraceResult& r) { return r.label.leak && r.label.capped == "trace"; };
    auto lead_s = [](const TraceResult& r, const DetectorOutcome& o) { return LeakRan(r) - *o.delay_s; };
    for (double before_s : {1800.0, 7200.0}) {
      RecallRow(
          t, results, fmt::format("warned >={} before full", Knob(before_s)), fills,
          [&](const TraceResult& r, const DetectorOutcome& o) { return o.delay_s && lead_s(r, o) >= before_s - 1e-6; });
    }
    DurationQuantileRow(t, results, "lead time p50 (those warned)", 0.5, fills, lead_s);
  }

  t.Section(fmt::format("False alarms on healthy traces ({:.1f} GPU-hours, {} traces)", healthy_hours, healthy));
  {
    std::array<std::string, kDetectorCount> per_khour, flagged, before;
    for (size_t d = 0; d < kDetectorCount; ++d) {
      size_t episodes = 0, flagged_n = 0, before_n = 0;
      for (const TraceResult& r : results) {
        if (r.label.leak) {
          before_n += r.outcome[d].alarm_before_leak ? 1 : 0;
        } else {
          episodes += static_cast<size_t>(r.outcome[d].episodes);
          flagged_n += r.outcome[d].alarmed_any ? 1 : 0;
        }
      }
      per_khour[d] =
          healthy_hours > 0 ? fmt::format("{:.2f}", 1000.0 * static_cast<double>(episodes) / healthy_hours) : "-";
      flagged[d] = fmt::format("{}/{}", flagged_n, healthy);
      before[d] = fmt::format("{}/{}", before_n, leaks);
    }
    t.Row("alarm episodes per 1000 GPU-hours", per_khour);
    t.Row("healthy traces flagged", flagged);
    std::map<int, std::vector<const TraceResult*>> by_shape;
    for (const TraceResult& r : results) {
      if (!r.label.leak) by_shape[static_cast<int>(r.label.shape)].push_back(&r);
    }
    for (const auto& [shape, list] : by_shape) {
      std::array<std::string, kDetectorCount> cells;
      for (size_t d = 0; d < kDetectorCount; ++d) {
        size_t k = 0;
        for (const TraceResult* r : list) k += r->outcome[d].alarmed_any ? 1 : 0;
        cells[d] = fmt::format("{}/{}", k, list.size());
      }
      t.Row(fmt::format("  {}", ShapeName(static_cast<Shape>(shape))), cells);
    }
    t.Row("leak traces alarmed before the leak began", before);
  }

  t.Section("Recall at the end per leak shape");
  for (Shape s : AllShapes()) {
    if (!IsLeak(s)) continue;
    RecallRow(
        t, results, std::string(ShapeName(s)), [s](const TraceResult& r) { return r.label.shape == s; },
        [](const TraceResult&, const DetectorOutcome& o) { return o.alarm_at_end; });
  }

  // A leak under a serving load is hidden by the batch level the load swings over (its cycle can be
  // subtracted, the batches cannot): what the leak adds in an hour against the range of those
  // swings (the generator's label). Only when the results hold such leaks.
  const auto serving = [](const TraceResult& r) {
    return r.label.shape == Shape::kLeakUnderServing && r.label.load_swing_mib > 0;  // the ratio divides by it
  };
  if (std::any_of(results.begin(), results.end(), serving)) {
    constexpr std::array<double, 4> kEdges = {0.125, 0.25, 0.5, 1};
    const auto ratio_band = [&](const TraceResult& r) {
      const double ratio = RateMiBPerHour(r) / r.label.load_swing_mib;
      size_t b = 0;
      while (b < kEdges.size() && ratio >= kEdges[b]) ++b;
      return b;
    };
    const auto band_label = [&](size_t b) {
      if (b == 0) return fmt::format("rise/h < {:g} x swings", kEdges[0]);
      if (b == kEdges.size()) return fmt::format("rise/h >= {:g} x swings", kEdges[b - 1]);
      return fmt::format("rise/h {:g}-{:g} x swings", kEdges[b - 1], kEdges[b]);
    };
    t.Section("Leaks under a serving load against its batch swings' range: at the end (>=40 MiB/h, ran >=2h)");
    for (size_t b = 0; b <= kEdges.size(); ++b) {
      RecallRow(
          t, results, band_label(b),
          [&](const TraceResult& r) { return serving(r) && goal_a(r) && ratio_band(r) == b; }, at_end);
    }
    t.Section("... and within 1h (>=500 MiB/h, ran >=1h)");
    for (size_t b = 0; b <= kEdges.size(); ++b) {
      RecallRow(
          t, results, band_label(b),
          [&](const TraceResult& r) { return serving(r) && goal_b(r) && ratio_band(r) == b; }, within_1h);
    }
  }

  t.Section("Leak rate (vramwatch only: leak traces whose last assessment is a leak with a rate)");
  {
    std::vector<double> errors;
    size_t covered = 0, with_ci = 0;
    for (const TraceResult& r : results) {
      if (!r.label.leak || r.label.leak_rate_bps <= 0 || !r.rate_bps) continue;
      errors.push_back(std::abs(*r.rate_bps - r.label.leak_rate_bps) / r.label.leak_rate_bps);
      if (r.rate_lo_bps && r.rate_hi_bps) {
        ++with_ci;
        covered += (*r.rate_lo_bps <= r.label.leak_rate_bps && r.label.leak_rate_bps <= *r.rate_hi_bps) ? 1 : 0;
      }
    }
    auto vw_only = [](std::string v) {
      std::array<std::string, kDetectorCount> cells;
      cells.fill("-");
      cells[0] = std::move(v);
      return cells;
    };
    auto pct = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v * 100) : "-"; };
    t.Row(fmt::format("{:<28} n={}", "rate error median", errors.size()), vw_only(pct(Quantile(errors, 0.5))));
    t.Row(fmt::format("{:<28} n={}", "rate error p90", errors.size()), vw_only(pct(Quantile(errors, 0.9))));
    t.Row(fmt::format("{:<28} n={}", "CI holds the true rate", with_ci), vw_only(Percent(covered, with_ci)));
  }
  return t.str();
}

}  // namespace vw::evaluate
