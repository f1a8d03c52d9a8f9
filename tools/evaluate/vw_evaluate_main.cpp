// vw-evaluate: generates a seeded corpus of labelled GPU memory traces, runs vramwatch's leak
// engine and the usual Prometheus rules over them, and prints the side-by-side report
// (see README.md in this folder).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/exit_codes.h"
#include "core/units.h"
#include "detection/alerts.h"
#include "evaluation.h"
#include "report.h"

namespace {

// CLI11 validator for durations like "10m".
std::string CheckDuration(const std::string& text) {
  auto d = vw::ParseDuration(text);
  if (!d.ok()) return d.status().message();
  return *d > 0 ? std::string() : "the step must be longer than zero";
}

// The same for a `for:` duration, which may be zero (an alarm at the first leak verdict).
std::string CheckForDuration(const std::string& text) {
  auto d = vw::ParseDuration(text);
  if (!d.ok()) return d.status().message();
  return *d >= 0 ? std::string() : "the duration must not be negative";
}

// Every shape's name, in the order trace ids cycle through them.
std::string ShapeList() {
  std::string known;
  for (vw::evaluate::Shape s : vw::evaluate::AllShapes())
    known += fmt::format("{}{}", known.empty() ? "" : ", ", vw::evaluate::ShapeName(s));
  return known;
}

// CLI11 validator for one shape name of --shapes.
std::string CheckShape(const std::string& name) {
  if (vw::evaluate::ShapeFromName(name)) return {};
  return fmt::format("unknown shape '{}'; the shapes are {}", name, ShapeList());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Evaluates vramwatch's leak detector and the usual Prometheus rules on a seeded corpus of "
      "labelled traces and prints recall, false alarms, delays and rate errors side by side.",
      "vw-evaluate"};
  vw::evaluate::RunOptions run;
  uint64_t seed = 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  run.threads = static_cast<int>(cores);
  std::string csv_out, healthy_step = "10m", leak_step = "5m",
                       alert_for = vw::FormatDurationFlag(vw::detection::kLeakAlertForSeconds),
                       critical_runway = vw::FormatDurationFlag(vw::detection::kCriticalRunwaySeconds);
  bool quiet = false;
  std::optional<int> explain;
  std::vector<std::string> shapes;
  app.add_option("--traces", run.traces, "Number of traces in the corpus")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", seed, "Seed of the corpus (same seed, same traces)");
  app.add_option("--threads", run.threads, "Worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  app.add_option("--csv-out", csv_out, "Write one row of results per trace to this CSV file");
  app.add_option("--write-csv", run.write_csv_dir,
                 "Write every trace as an nvidia-smi CSV file, plus labels.csv, into this folder");
  app.add_option("--healthy-step", healthy_step, "Assess vramwatch this often on healthy traces")->check(CheckDuration);
  app.add_option("--leak-step", leak_step, "Assess vramwatch this often on leak traces")->check(CheckDuration);
  app.add_option("--alert-for", alert_for,
                 "How long vramwatch's leak verdict must hold at the checks before the vramwatch_alert column "
                 "fires, as `vramwatch watch --for` (0: at the first leak verdict)")
      ->capture_default_str()
      ->check(CheckForDuration);
  app.add_option("--critical-runway", critical_runway,
                 "The vramwatch_critical column is the leak alert while the pessimistic time to OOM is under this, "
                 "as `vramwatch watch --critical-runway` grades it")
      ->capture_default_str()
      ->check(CheckForDuration);
  app.add_option("--shapes", shapes,
                 "Evaluate only the traces of these shapes, comma-separated (e.g. serving,leak_under_serving); "
                 "each keeps its id in the full corpus, where trace i has shape number i mod 12 of: " +
                     ShapeList())
      ->delimiter(',')
      ->check(CheckShape);
  app.add_flag("--quiet", quiet, "No progress on stderr");
  app.add_option("--explain", explain,
                 "Evaluate only trace ID of the corpus and print every assessment, the evidence and the "
                 "baselines' alarms")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : vw::kExitUnknown;
  }
  run.generator.seed = seed;
  for (const std::string& name : shapes) run.shapes.push_back(*vw::evaluate::ShapeFromName(name));
  run.eval.healthy_step_s = vw::ParseDuration(healthy_step).value();
  run.eval.leak_step_s = vw::ParseDuration(leak_step).value();
  run.eval.alert_for_s = vw::ParseDuration(alert_for).value();
  run.eval.critical_runway_s = vw::ParseDuration(critical_runway).value();
  if (!run.write_csv_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(run.write_csv_dir, ec);
    if (ec) {
      fmt::print(stderr, "vw-evaluate: cannot create {}: {}\n", run.write_csv_dir, ec.message());
      return vw::kExitUnknown;
    }
  }

  if (explain) {
    const vw::evaluate::TraceGenerator generator(run.generator);
    fmt::print("{}", vw::evaluate::ExplainTrace(generator.Generate(*explain), run.eval));
    return vw::kExitOk;
  }

  const auto started = std::chrono::steady_clock::now();
  std::mutex progress_mu;
  auto progress = [&](int done, int total) {
    if (quiet || (done % 50 != 0 && done != total)) return;
    std::lock_guard lock(progress_mu);
    fmt::print(stderr, "{}/{} traces evaluated\n", done, total);
  };
  auto results = vw::evaluate::RunEvaluation(run, progress);
  if (!results.ok()) {
    fmt::print(stderr, "vw-evaluate: {}\n", results.status().ToString());
    return vw::kExitUnknown;
  }
  if (results->empty()) {
    fmt::print(stderr,
               "vw-evaluate: none of the {} traces is of the shapes asked for ({}): trace i has shape number i mod {} "
               "of {}\n",
               run.traces, fmt::join(shapes, ", "), vw::evaluate::AllShapes().size(), ShapeList());
    return vw::kExitUnknown;
  }
  vw::evaluate::ReportInfo info;
  info.seed = seed;
  info.threads = run.threads;
  info.shapes = shapes;
  info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  info.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  fmt::print("{}", vw::evaluate::FormatReport(*results, run.eval, info));
  if (!csv_out.empty()) {
    vw::Status s = vw::evaluate::WriteResultsCsv(*results, csv_out);
    if (!s.ok()) {
      fmt::print(stderr, "vw-evaluate: {}\n", s.ToString());
      return vw::kExitUnknown;
    }
  }
  return vw::kExitOk;
}
