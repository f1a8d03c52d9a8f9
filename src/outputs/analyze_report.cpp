#include "outputs/analyze_report.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "core/printable.h"
#include "core/time.h"
#include "core/units.h"
#include "outputs/plot_geometry.h"

namespace vw::outputs {
namespace {

using detection::Assessment;
using detection::SeriesAnalysis;
using detection::Verdict;
using nlohmann::json;

json OptNum(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}
// Whole bytes, signed: a series judged net of departed holders can sit a little below zero, and a
// cast to unsigned would print that as 18 exabytes.
json OptBytes(const std::optional<double>& v) {
  return v ? json(static_cast<int64_t>(std::llround(*v))) : json(nullptr);
}

// "14:02:11 UTC" / "2026-05-01 14:02:11" / "t+1h 2m": an out-of-order sample to the second.
std::string SecondText(const SeriesAnalysis& a, double t) {
  if (a.synthetic_time) return fmt::format("t+{}", FormatDuration(t));
  std::string iso = FormatIso8601(std::floor(t), false);
  iso[10] = ' ';
  return iso + ZoneMark(a.has_zone, false);
}

std::string TimeIso(const SeriesAnalysis& a, double t) {
  if (a.synthetic_time) return fmt::format("{:.3f}", t);  // seconds from the start: no clock
  return FormatIso8601(t, a.has_zone);
}

std::string SeriesName(const AnalyzedSeries& s) {
  const SeriesAnalysis& a = s.analysis;
  std::string name = fmt::format("GPU {}", a.gpu.key);
  if (!a.gpu.name.empty()) name += fmt::format(" ({})", a.gpu.name);
  if (a.pid) name += fmt::format(" · PID {} {}", *a.pid, a.process_command);
  return name;
}

}  // namespace

Severity SeverityOf(const SeriesAnalysis& a, const AnalyzeReportOptions& options) {
  const Assessment& as = a.assessment;
  if (as.verdict != Verdict::kLeak) return Severity::kOk;
  if (detection::RunwayIsCritical(as.tto_lo_s, as.tto_s, options.critical_runway_s)) return Severity::kCritical;
  return Severity::kWarning;
}

std::vector<std::string> NextSteps(const SeriesAnalysis& a) {
  const Assessment& as = a.assessment;
  std::vector<std::string> steps;
  if (as.verdict != Verdict::kLeak && as.load_rise_bps) {
    // Not a leak, but a swinging load's memory rose with its cycle removed (the evidence says how):
    // neither "no action" nor "an allocator warming up" is the right advice.
    steps.push_back(fmt::format(
        "Watch this {}: with the load's cycle removed its memory rose at {}, not yet enough under the load's "
        "swings for a leak verdict. Record another hour or two (`vramwatch record`) and analyse again, or let "
        "`vramwatch watch` follow it{}.",
        a.pid ? "process" : "GPU", FormatRate(*as.load_rise_bps),
        a.pid ? "" : "; `vramwatch check` shows which process holds the memory"));
    return steps;
  }
  switch (as.verdict) {
    case Verdict::kLeak:
      steps.push_back(
          "Find the process that grows: run `vramwatch check` (or `nvidia-smi --query-compute-apps=pid,used_memory "
          "--format=csv -l 60`) and compare per-process memory over a few minutes.");
      steps.push_back(
          "Split the framework view from the driver view: log torch.cuda.memory_allocated() and "
          "memory_reserved() per step. Allocated rising: the application keeps tensors (lists of losses, "
          "graphs kept by .backward(retain_graph=True), caches). Allocated flat while reserved rises "
          "(reserved − allocated growing): fragmentation of the caching allocator's pool (try "
          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True). Reserved flat while driver used climbs: memory "
          "taken outside PyTorch's allocator, by a native extension or a library below the framework.");
      if (as.tto_lo_s) {
        steps.push_back(fmt::format(
            "Plan around the runway: at this rate the job can run out of memory in as little as {}; checkpoint "
            "before then or restart the job with the fix.",
            FormatDuration(*as.tto_lo_s)));
      }
      break;
    case Verdict::kPlateau:
      steps.push_back(
          "No action: memory is held at a steady level. A high plateau is normal for caching "
          "allocators and pre-allocating servers; do not alert on percentage used.");
      break;
    case Verdict::kSettling:
      if (as.held_until_t) {
        // The growth passed the tests but the job is young (or the growth slow) for a leak verdict.
        steps.push_back(fmt::format(
            "Look again after {}: the floor grows steadily, but growth this early in a job (or this slow) is "
            "called a leak only with more settled data, since an allocator warming up looks the same until then. "
            "Keep recording (`vramwatch record`) or let `vramwatch watch` follow it.",
            ReportTime(a, *as.held_until_t)));
        break;
      }
      // Settling covers growth that slowed or stopped (an allocator warming up), and a rise too
      // slow, too short or too uncertain to call: the evidence says which. "A longer recording"
      // is an hour or more, or, for a recording already that long, longer than this one.
      {
        const double span_s = as.end_t - as.start_t;
        steps.push_back(fmt::format(
            "Wait and look again: the floor rose, but not the way a leak does (the evidence says why: the "
            "growth slowed down or stopped, as an allocator warming up does, or it is too slow or too short to "
            "call). {}",
            span_s >= 3600 ? fmt::format("Keep recording (`vramwatch record`, or let `vramwatch watch` follow it) and "
                                         "re-run `vramwatch analyze` on a recording longer than this one's {}.",
                                         FormatDuration(span_s))
                           : std::string("Re-run `vramwatch analyze` on a longer recording (an hour or more).")));
      }
      break;
    case Verdict::kWarmup:
      steps.push_back(
          "Too early to judge: the run is still ramping up. Record for at least an hour after the "
          "ramp ends (`vramwatch record`) and analyse again.");
      break;
    case Verdict::kInsufficientData:
      steps.push_back(
          "Record longer or more often: at least 15 minutes with a memory.used sample every few "
          "seconds (`vramwatch record`, or nvidia-smi --query-gpu=timestamp,index,memory.used,"
          "memory.total --format=csv -l 5).");
      break;
  }
  return steps;
}

std::string RenderAnalyzeText(const std::vector<AnalyzedSeries>& series, const AnalyzeReportOptions& options) {
  // Names, commands, sources and the words built from them come from the files: each value's
  // control characters are written out (core/printable.h), so a newline in a GPU name or a command
  // cannot add a line to the report.
  std::string out;
  for (const AnalyzedSeries& s : series) {
    const SeriesAnalysis& a = s.analysis;
    const Assessment& as = a.assessment;
    Severity sev = SeverityOf(a, options);
    out +=
        fmt::format("{} — {}  [{}]\n", Printable(SeriesName(s)), detection::VerdictName(as.verdict), SeverityName(sev));
    out += fmt::format("  source     {}\n", Printable(s.source));
    if (!a.gpu.uuid.empty() && !a.pid) out += fmt::format("  uuid       {}\n", Printable(a.gpu.uuid));
    if (as.samples > 0) {
      out += fmt::format("  span       {} → {} ({}, {} samples)\n", ReportTime(a, as.start_t), ReportTime(a, as.end_t),
                         FormatDuration(as.end_t - as.start_t), as.samples);
    } else {
      out += "  span       no memory samples\n";
    }
    if (a.out_of_order > 0) {
      out += fmt::format("  order      {} sample(s) out of time order were ignored", a.out_of_order);
      if (a.first_out_of_order_t && a.first_out_of_order_after_t) {
        out += fmt::format(" (the first, at {}, came after {})", SecondText(a, *a.first_out_of_order_t),
                           SecondText(a, *a.first_out_of_order_after_t));
      }
      if (a.ClockWentBackAnHour())
        out += fmt::format("; {}; the rate across it may be off", detection::kDaylightSavingAdvice);
      out += "\n";
    }
    if (s.samples_without_memory > 0) {
      out += fmt::format("  missing    {} samples had no memory value ([N/A]); they were skipped\n",
                         s.samples_without_memory);
    }
    if (a.above_total > 0 && a.first_above_total) {
      const detection::AboveTotalSample& f = *a.first_above_total;
      out += fmt::format(
          "  impossible {} sample(s) used more than the card's total and were ignored (the first, at {}: {} of {})\n",
          a.above_total, SecondText(a, f.t), FormatBytes(static_cast<double>(f.used_bytes)),
          FormatBytes(static_cast<double>(f.total_bytes)));
    }
    if (as.last_used_bytes) {
      out += fmt::format("  used       {}", FormatBytes(*as.last_used_bytes));
      if (a.total_bytes) {
        out += fmt::format(" of {} ({:.0f} %)", FormatBytes(static_cast<double>(*a.total_bytes)),
                           100.0 * *as.last_used_bytes / static_cast<double>(*a.total_bytes));
        if (a.mig_gpu_instance_id) out += fmt::format(" of MIG GPU instance {}", *a.mig_gpu_instance_id);
      } else {
        out += " (card size unknown: pass --total)";
      }
      out += "\n";
    }
    if (as.floor_bytes && as.peak_bytes) {
      out += fmt::format("  floor/peak {} / {}\n", FormatBytes(*as.floor_bytes), FormatBytes(*as.peak_bytes));
    }
    if (as.rate_bps) out += fmt::format("  rate       {}\n", RateText(as));
    if (as.tto_s) {
      out += fmt::format("  OOM in     {}\n", OomText(a));
    } else if (as.verdict == Verdict::kLeak) {
      out += "  OOM in     unknown: the card size is not in the trace (pass --total 80GiB)\n";
    }
    if (!as.evidence.empty()) {
      out += "  evidence\n";
      for (const std::string& e : as.evidence) out += fmt::format("    - {}\n", Printable(e));
    }
    out += "  next\n";
    for (const std::string& step : NextSteps(a)) out += fmt::format("    - {}\n", Printable(step));
    out += "\n";
  }
  if (options.skipped_lines > 0) {
    out += fmt::format("Skipped {} malformed line(s) (--lenient):\n", options.skipped_lines);
    for (const std::string& e : options.skipped_examples) out += fmt::format("  {}\n", Printable(e));
  }
  return out;
}

json RenderAnalyzeJson(const std::vector<AnalyzedSeries>& series, const AnalyzeReportOptions& options) {
  json gpus = json::array();
  for (const AnalyzedSeries& s : series) {
    const SeriesAnalysis& a = s.analysis;
    const Assessment& as = a.assessment;
    json g;
    g["gpu"] = a.gpu.key;
    g["source"] = s.source;
    g["uuid"] = a.gpu.uuid.empty() ? json(nullptr) : json(a.gpu.uuid);
    g["pci_bus_id"] = a.gpu.pci_bus_id.empty() ? json(nullptr) : json(a.gpu.pci_bus_id);
    g["name"] = a.gpu.name.empty() ? json(nullptr) : json(a.gpu.name);
    g["pid"] = a.pid ? json(*a.pid) : json(nullptr);
    if (a.pid) g["command"] = a.process_command;
    g["verdict"] = detection::VerdictName(as.verdict);
    g["severity"] = SeverityName(SeverityOf(a, options));
    g["memory_total_bytes"] = a.total_bytes ? json(*a.total_bytes) : json(nullptr);
    g["memory_reserved_bytes"] = a.reserved_bytes ? json(*a.reserved_bytes) : json(nullptr);
    g["mig_gpu_instance_id"] = a.mig_gpu_instance_id ? json(*a.mig_gpu_instance_id) : json(nullptr);
    g["memory_used_bytes"] = OptBytes(as.last_used_bytes);
    g["floor_bytes"] = OptBytes(as.floor_bytes);
    g["peak_bytes"] = OptBytes(as.peak_bytes);
    g["leak_rate_bytes_per_second"] = OptNum(as.rate_bps);
    g["leak_rate_ci_bytes_per_second"] =
        as.rate_lo_bps && as.rate_hi_bps ? json::array({*as.rate_lo_bps, *as.rate_hi_bps}) : json(nullptr);
    g["leak_start"] = as.leak_start_t ? json(TimeIso(a, *as.leak_start_t)) : json(nullptr);
    g["load_rise_bytes_per_second"] = OptNum(as.load_rise_bps);
    g["held_until"] = as.held_until_t ? json(TimeIso(a, *as.held_until_t)) : json(nullptr);
    g["time_to_oom_seconds"] = OptNum(as.tto_s);
    g["time_to_oom_ci_seconds"] = as.tto_lo_s ? json::array({*as.tto_lo_s, OptNum(as.tto_hi_s)}) : json(nullptr);
    g["oom_at"] = as.tto_s ? json(TimeIso(a, as.end_t + *as.tto_s)) : json(nullptr);
    g["samples"] = as.samples;
    g["samples_without_memory"] = s.samples_without_memory;
    g["samples_out_of_order"] = a.out_of_order;
    g["first_out_of_order"] = a.first_out_of_order_t ? json(TimeIso(a, *a.first_out_of_order_t)) : json(nullptr);
    g["samples_above_total"] = a.above_total;
    g["first_above_total"] = a.first_above_total ? json(TimeIso(a, a.first_above_total->t)) : json(nullptr);
    g["start"] = as.samples ? json(TimeIso(a, as.start_t)) : json(nullptr);
    g["end"] = as.samples ? json(TimeIso(a, as.end_t)) : json(nullptr);
    g["clock"] = a.synthetic_time ? "synthetic" : (a.has_zone ? "utc" : "wall");
    g["evidence"] = as.evidence;
    g["next_steps"] = NextSteps(a);
    gpus.push_back(std::move(g));
  }
  json out;
  out["schema"] = "vramwatch.analyze/1";
  out["gpus"] = std::move(gpus);
  out["skipped_lines"] = options.skipped_lines;
  out["skipped_examples"] = options.skipped_examples;
  out["notes"] = options.notes;
  return out;
}

}  // namespace vw::outputs
