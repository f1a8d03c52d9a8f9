// `vramwatch analyze`: the flags and the runner, shared with `demo` (which analyses the bundled
// example traces with the same code a user runs).
#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "detection/leak_engine.h"

namespace vw::cli {

struct AnalyzeFlags {
  std::vector<std::string> files;
  std::string format = "auto";
  std::string columns;
  std::string interval;
  std::string total;
  std::vector<std::string> gpus;
  std::string since, until;
  std::string critical_runway = FormatDurationFlag(detection::kCriticalRunwaySeconds);
  std::string plot_path, html_path, theme = "auto";
  // --prometheus URL: analyse series pulled from a Prometheus server instead of files.
  std::string prometheus_url;
  std::string query = "vramwatch_gpu_memory_used_bytes";
  std::string range = "12h";
  std::string end;                // end of the range (ISO 8601 or epoch seconds); empty: now
  std::string unit = "auto";      // unit of the values: auto, bytes, KiB, MiB, GiB
  std::string timeout = "30s";    // the wait for each Prometheus answer
  std::string bearer_token_file;  // a token for "Authorization: Bearer"
  std::string basic_auth_file;    // USER:PASSWORD for basic auth
  std::string ca_file;            // certificates to verify an https Prometheus with
  std::set<std::string> given;    // the flags on the command line, long names ("--query")
  bool json = false;
  bool lenient = false;
  bool no_processes = false;
  bool progress = true;
};

// Analyses flags.files and prints the report to `out` (errors to stderr); returns the exit code
// (0/1/2/3).
int RunAnalyze(const AnalyzeFlags& flags, std::FILE* out);

}  // namespace vw::cli
