// `vramwatch analyze FILE...`: offline analysis of recorded traces.
// Reads each file as a stream (format auto-detected), feeds one SeriesBuilder per GPU (and per
// GPU+PID where the trace lists processes), then prints the text report or the JSON object.
// Here: the flags, the checks on the series read, and the report (text or JSON on `out`, --plot,
// --html) with the exit code. Reading: cli/analyze_settings.h (the flags resolved, --gpu),
// cli/analyze_file.h (a trace file), cli/analyze_prometheus.h (--prometheus).
#include "cli/analyze_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/analyze_file.h"
#include "cli/analyze_framework.h"
#include "cli/analyze_prometheus.h"
#include "cli/analyze_settings.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "core/printable.h"
#include "core/time.h"
#include "core/units.h"
#include "outputs/analyze_report.h"
#include "outputs/framework_report.h"
#include "outputs/json_text.h"
#include "outputs/report_files.h"
#include "sources/prometheus/prometheus_reader.h"

namespace vw::cli {
namespace {

// Series that cannot be reported as they are: used memory above the card's size on every sample
// (columns in the wrong order, a wrong --total), or more samples out of time order than in order
// (a file written newest first): an error naming the cause, never a verdict on them.
Status CheckSeries(const outputs::AnalyzedSeries& s, const AnalyzeFlags& flags) {
  const detection::SeriesAnalysis& a = s.analysis;
  const std::string name = SeriesName(a.gpu, a.pid);
  // Used memory above the card's total, on `how_many` samples: a wrong reading of the file, named
  // with the flag to check.
  auto above_total = [&](double total, double least, const std::string& how_many) {
    std::string hint;
    if (!flags.prometheus_url.empty()) {
      hint = flags.total.empty() ? "is --unit right?" : fmt::format("is --total {} the card's size?", flags.total);
    } else if (!flags.columns.empty()) {
      hint = fmt::format(
          "are the --columns in the file's order? --columns {} reads memory.used and memory.total from those places",
          flags.columns);
    } else if (!flags.total.empty()) {
      hint = fmt::format("is --total {} the card's size?", flags.total);
    } else {
      hint = "are the memory.used and memory.total columns swapped?";
    }
    return Status::InvalidArgument(
        fmt::format("{}: {}: memory used is above the card's total ({}) on {} (the least is {}): {}", s.source, name,
                    FormatBytes(total), how_many, FormatBytes(least), hint));
  };
  // Samples above the total they came with are left out by the builder (SeriesAnalysis::above_total):
  // a few are a garbled line, reported; more of them than samples kept is a wrong reading of the file.
  if (a.above_total > 0 && a.above_total > a.assessment.samples && a.first_above_total) {
    return above_total(static_cast<double>(a.first_above_total->total_bytes),
                       static_cast<double>(a.least_above_total_bytes),
                       a.assessment.samples == 0
                           ? std::string("every sample")
                           : fmt::format("{} of {} samples", a.above_total, a.above_total + a.assessment.samples));
  }
  // The samples kept, against the card's latest total (a total that changed within the file).
  if (a.total_bytes && !a.raw.empty()) {
    double least = a.raw.front().used_bytes;
    for (const detection::SeriesPoint& p : a.raw) least = std::min(least, p.used_bytes);
    if (least > static_cast<double>(*a.total_bytes)) {
      return above_total(static_cast<double>(*a.total_bytes), least, "every sample");
    }
  }
  if (a.out_of_order > a.assessment.samples) {
    std::string first;
    if (a.first_out_of_order_t && a.first_out_of_order_after_t) {
      auto shown = [&](double t) {
        return a.synthetic_time ? fmt::format("t+{}", FormatDuration(t)) : FormatIso8601(t, a.has_zone);
      };
      first = fmt::format(" (the first, at {}, came after {})", shown(*a.first_out_of_order_t),
                          shown(*a.first_out_of_order_after_t));
    }
    return Status::InvalidArgument(fmt::format(
        "{}: {}: the samples run backwards in time: {} of {} are older than the sample before them{}; {}", s.source,
        name, a.out_of_order, a.out_of_order + a.assessment.samples, first,
        a.ClockWentBackAnHour() ? detection::kDaylightSavingAdvice
                                : "is the file written newest first, or logs joined in the wrong order? Sort it by "
                                  "time and run again"));
  }
  return Status::Ok();
}

}  // namespace

int RunAnalyze(const AnalyzeFlags& flags, std::FILE* out) {
  auto settings = ResolveAnalyzeFlags(flags);
  if (!settings.ok()) {
    std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(settings.status().message()).c_str());
    return kExitUnknown;
  }
  std::vector<outputs::AnalyzedSeries> all;
  if (flags.files.empty() == flags.prometheus_url.empty()) {
    std::fprintf(stderr, "vramwatch analyze: give trace FILEs or --prometheus URL (one of the two)\n");
    return kExitUnknown;
  }
  // Flags of the other mode would be silently ignored: say so instead.
  static constexpr const char* kPrometheusOnly[] = {
      "--query", "--range", "--end", "--unit", "--timeout", "--bearer-token-file", "--basic-auth-file", "--ca-file"};
  static constexpr const char* kFileOnly[] = {"--format", "--columns", "--interval", "--lenient"};
  for (const char* flag : flags.prometheus_url.empty()
                              ? std::vector<const char*>(std::begin(kPrometheusOnly), std::end(kPrometheusOnly))
                              : std::vector<const char*>(std::begin(kFileOnly), std::end(kFileOnly))) {
    if (flags.given.count(flag) == 0) continue;
    std::fprintf(stderr, "vramwatch analyze: %s %s; leave it out\n", flag,
                 flags.prometheus_url.empty() ? "is for --prometheus (it says what to ask the server)"
                                              : "says how to read a trace file and has no effect with --prometheus");
    return kExitUnknown;
  }
  if (!flags.prometheus_url.empty()) {
    auto series = AnalyzePrometheus(flags, *settings);
    if (!series.ok()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(series.status().message()).c_str());
      return kExitUnknown;
    }
    all = std::move(*series);
  }
  std::vector<outputs::FrameworkReport> framework;
  // With several files, --gpu may name a GPU that only some of them hold: the others are left out
  // with a note, and it is an error only when no file holds it.
  std::vector<std::string> without_gpu;
  bool any_file_matched = false;
  for (const std::string& path : flags.files) {
    if (IsFrameworkLogFile(path, flags.format)) {
      bool no_device_matched = false;
      auto report = AnalyzeFrameworkLog(path, flags, *settings, &no_device_matched);
      if (!report.ok() && no_device_matched && flags.files.size() > 1) {
        without_gpu.push_back(report.status().message());
        continue;
      }
      if (!report.ok()) {
        std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(report.status().message()).c_str());
        return kExitUnknown;
      }
      framework.push_back(std::move(*report));
      continue;
    }
    bool no_gpu_matched = false;
    auto series = AnalyzeFile(path, flags, *settings, &no_gpu_matched);
    if (!series.ok() && no_gpu_matched && flags.files.size() > 1) {
      without_gpu.push_back(series.status().message());
      continue;
    }
    if (!series.ok()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(series.status().message()).c_str());
      return kExitUnknown;
    }
    any_file_matched = true;
    for (auto& s : *series) all.push_back(std::move(s));
  }
  if (!without_gpu.empty() && !any_file_matched && framework.empty()) {
    for (const std::string& m : without_gpu) std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(m).c_str());
    return kExitUnknown;
  }
  for (const std::string& m : without_gpu) AddNote(*settings, m + " (left out)");
  // A series that cannot be judged stops a file's analysis; from a Prometheus server, where one
  // query reads a fleet, it is left out with a note and the others are judged (when none is left,
  // each says why).
  std::vector<std::string> left_out;
  for (auto it = all.begin(); it != all.end();) {
    Status st = CheckSeries(*it, flags);
    if (st.ok()) {
      ++it;
      continue;
    }
    if (flags.prometheus_url.empty()) {
      std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(st.message()).c_str());
      return kExitUnknown;
    }
    left_out.push_back(st.message());
    it = all.erase(it);
  }
  if (!left_out.empty() && all.empty()) {
    for (const std::string& m : left_out) std::fprintf(stderr, "vramwatch analyze: %s\n", Printable(m).c_str());
    return kExitUnknown;
  }
  for (const std::string& m : left_out) AddNote(*settings, m + " (left out)");
  if (!flags.plot_path.empty() || !flags.html_path.empty()) {
    std::vector<detection::SeriesAnalysis> analyses;
    std::vector<std::string> sources;  // each series' file: named where they differ
    for (const auto& s : all) {
      analyses.push_back(s.analysis);
      sources.push_back(s.source);
    }
    outputs::Theme theme = flags.theme == "light"  ? outputs::Theme::kLight
                           : flags.theme == "dark" ? outputs::Theme::kDark
                                                   : outputs::Theme::kAuto;
    if (!flags.plot_path.empty()) {
      outputs::SvgOptions svg;
      svg.theme = theme;
      Status st = outputs::WriteSvgPlot(flags.plot_path, analyses, svg, framework, sources);
      if (!st.ok()) {
        std::fprintf(stderr, "vramwatch analyze: --plot: %s\n", st.message().c_str());
        return kExitUnknown;
      }
    }
    if (!flags.html_path.empty()) {
      outputs::HtmlReportOptions html;
      html.theme = theme;
      for (const std::string& f : flags.files) html.source += (html.source.empty() ? "" : ", ") + f;
      html.sources = sources;
      if (!flags.prometheus_url.empty()) {
        html.source =
            fmt::format("{} {} over {}", prometheus::UrlForMessages(flags.prometheus_url), flags.query, flags.range);
      }
      Status st = outputs::WriteHtmlReport(flags.html_path, analyses, html, framework);
      if (!st.ok()) {
        std::fprintf(stderr, "vramwatch analyze: --html: %s\n", st.message().c_str());
        return kExitUnknown;
      }
    }
  }
  if (flags.json) {
    nlohmann::json j = outputs::RenderAnalyzeJson(all, settings->report);
    if (!framework.empty()) j["framework"] = outputs::FrameworkJson(framework);
    std::fputs(outputs::JsonText(j, 2).c_str(), out);
    std::fputs("\n", out);
  } else {
    // GPU names, commands and sources come from the files: their control characters are written out.
    if (!all.empty() || framework.empty()) {
      std::fputs(PrintableLines(outputs::RenderAnalyzeText(all, settings->report)).c_str(), out);
    }
    std::fputs(PrintableLines(outputs::FrameworkText(framework)).c_str(), out);
  }
  Severity worst = Severity::kOk;
  bool any_judged = false;
  for (const outputs::FrameworkReport& r : framework) {
    for (const detection::FrameworkSplit& d : r.devices) {
      worst = std::max(worst, outputs::FrameworkSeverity(d));
      if (d.verdict != detection::FrameworkVerdict::kTooShort) any_judged = true;
    }
  }
  for (const auto& s : all) {
    Severity sev = outputs::SeverityOf(s.analysis, settings->report);
    if (sev > worst) worst = sev;
    if (s.analysis.assessment.verdict != detection::Verdict::kInsufficientData) any_judged = true;
  }
  if (!any_judged) return kExitUnknown;
  return ExitCodeFor(worst);
}

CommandRunner AddAnalyzeCommand(CLI::App& app) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Analyse recorded GPU memory traces: leak or plateau, leak rate with its range, time to OOM, and why.\n"
      "Reads nvidia-smi --query-gpu CSV (any fields, with or without header/units), a bare memory.used loop,\n"
      "nvidia-smi dmon/pmon logs, repeated full nvidia-smi tables, and vramwatch recordings.\n"
      "A training log that prints PyTorch's memory_allocated()/memory_reserved() (or memory_summary() tables)\n"
      "is judged step by step: which layer grows, the application's tensors, the allocator's cache, or memory\n"
      "below PyTorch.\n"
      "Examples:\n"
      "  vramwatch analyze gpu.csv\n"
      "  vramwatch analyze --json --gpu 0 run1.csv run2.csv\n"
      "  vramwatch analyze --format values --interval 300s --total 80GiB used.log\n"
      "  vramwatch analyze train.log                # a log with torch.cuda.memory_allocated() prints\n"
      "  vramwatch analyze --prometheus http://prometheus:9090 --query DCGM_FI_DEV_FB_USED --range 12h\n"
      "Exit codes: 0 no leak, 1 leak, 2 leak with runway under --critical-runway, 3 bad input or no verdict.");
  cmd->add_option("files", flags->files, "Trace files to read ('-' for standard input)");
  cmd->add_option("--prometheus", flags->prometheus_url,
                  "Analyse series from this Prometheus server instead of files, e.g. http://prometheus:9090");
  cmd->add_option("--query", flags->query,
                  "PromQL for used memory with --prometheus, e.g. DCGM_FI_DEV_FB_USED or "
                  "vramwatch_gpu_memory_used_bytes{hostname=\"node-7\"}")
      ->capture_default_str();
  cmd->add_option("--range", flags->range, "How far back to read with --prometheus")->capture_default_str();
  cmd->add_option("--end", flags->end, "End of the --range (ISO 8601 or epoch seconds; default now)");
  cmd->add_option("--unit", flags->unit,
                  "Unit of the --query values: bytes, KiB, MiB, GiB, or auto (MiB for DCGM_FI_DEV_FB_*, bytes for "
                  "names ending in _bytes; any other name stops and asks for --unit)")
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout,
                  "With --prometheus: how long to wait for each answer, from the request to its last byte")
      ->capture_default_str();
  cmd->add_option("--bearer-token-file", flags->bearer_token_file,
                  "With --prometheus: send the token in this file as 'Authorization: Bearer' (for a user and "
                  "password: --basic-auth-file, or http://USER:PASSWORD@HOST:PORT)");
  cmd->add_option("--basic-auth-file", flags->basic_auth_file,
                  "With --prometheus: basic auth from this file's one line USER:PASSWORD (a password in the URL "
                  "shows in ps and in shell history)");
  cmd->add_option("--ca-file", flags->ca_file,
                  "With --prometheus over https: verify the server with the PEM certificates in this file");
  cmd->add_option("--format", flags->format,
                  "Input format: auto, query-csv, values, dmon, pmon, smi-table, recording, or torch (a training log "
                  "that prints PyTorch's allocated/reserved memory; auto finds it too)")
      ->capture_default_str();
  cmd->add_option("--columns", flags->columns,
                  "Column names of a CSV written with noheader, e.g. timestamp,index,memory.used,memory.total");
  cmd->add_option("--interval", flags->interval, "Sample spacing for files without timestamps, e.g. 5s, 300s");
  cmd->add_option("--total", flags->total, "Card memory size when the file lacks it, e.g. 80GiB, 24576MiB");
  cmd->add_option("--gpu", flags->gpus, "Only this GPU (index, UUID or PCI bus id); repeatable")
      ->type_size(1)
      ->allow_extra_args(false)
      ->expected(1, 1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--since", flags->since, "Ignore samples before this time (as written in the trace)");
  cmd->add_option("--until", flags->until, "Ignore samples after this time");
  cmd->add_option("--critical-runway", flags->critical_runway,
                  "A leak is CRITICAL when the pessimistic time to OOM is shorter than this")
      ->capture_default_str();
  cmd->add_option("--plot", flags->plot_path,
                  "Also write the charts as one SVG file (several GPUs, and each device of a PyTorch memory log, as "
                  "small multiples)");
  cmd->add_option("--html", flags->html_path,
                  "Also write a self-contained HTML report (charts, verdicts, evidence; no network needed)");
  cmd->add_option("--theme", flags->theme, "Colours of --plot/--html: auto (follows the viewer), light, dark")
      ->check(CLI::IsMember({"auto", "light", "dark"}))
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "Print the vramwatch.analyze/1 JSON object instead of text");
  cmd->add_flag("--lenient", flags->lenient, "Skip malformed lines (they are counted and shown) instead of failing");
  cmd->add_flag("--no-processes", flags->no_processes, "Do not analyse per-process series");
  cmd->add_flag_callback(
      "--no-progress", [flags] { flags->progress = false; }, "Never show a progress bar on stderr");
  return [flags, cmd] {
    flags->given = FlagsGiven(*cmd);
    return RunAnalyze(*flags, stdout);
  };
}

}  // namespace vw::cli
